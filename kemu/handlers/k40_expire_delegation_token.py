"""ExpireDelegationToken (key 40), versions 1-2, as KafkaApis and the controller's
DelegationTokenControlManager.expireDelegationToken answer it.

Refused by the broker as CreateDelegationToken is (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, expiry -1); then
DELEGATION_TOKEN_AUTH_DISABLED, DELEGATION_TOKEN_NOT_FOUND, DELEGATION_TOKEN_OWNER_MISMATCH (expiry 0). A
negative period removes the token at once (expiry now), even an expired one; otherwise an expired token is
DELEGATION_TOKEN_EXPIRED, and a live one expires after the period, never past its max timestamp.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _tokens
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k40_expire_delegation_token import (
        ExpireDelegationTokenRequest,
        ExpireDelegationTokenResponse,
    )

KEY = 40


async def handle(ctx: RequestContext, request: Incoming[ExpireDelegationTokenRequest]) -> ExpireDelegationTokenResponse:
    return _tokens.new_expiry(ctx, request, "expiry_time_period_ms", ctx.broker.delegation_tokens.expire)


error_response = error_responder(KEY)
