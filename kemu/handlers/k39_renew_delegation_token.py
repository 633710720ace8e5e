"""RenewDelegationToken (key 39), versions 1-2, as KafkaApis and the controller's
DelegationTokenControlManager.renewDelegationToken answer it.

Refused by the broker as CreateDelegationToken is (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, expiry -1); then
DELEGATION_TOKEN_AUTH_DISABLED, DELEGATION_TOKEN_NOT_FOUND (no token has that HMAC), DELEGATION_TOKEN_EXPIRED,
DELEGATION_TOKEN_OWNER_MISMATCH (neither its owner nor a renewer), each with expiry 0. A renewal moves the
expiry to now plus the period asked (when positive, at most delegation.token.expiry.time.ms), never past the
token's max timestamp.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _tokens
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k39_renew_delegation_token import RenewDelegationTokenRequest, RenewDelegationTokenResponse

KEY = 39


async def handle(ctx: RequestContext, request: Incoming[RenewDelegationTokenRequest]) -> RenewDelegationTokenResponse:
    return _tokens.new_expiry(ctx, request, "renew_period_ms", ctx.broker.delegation_tokens.renew)


error_response = error_responder(KEY)
