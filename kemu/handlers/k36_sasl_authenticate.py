"""SaslAuthenticate (key 36), versions 0-2.

On kemu's PLAINTEXT listener there is no authenticator, so the request reaches the broker's request
handler, which (as Kafka's does) answers ILLEGAL_SASL_STATE with Kafka's message. v1 added
session_lifetime_ms (0 here), v2 is the flexible version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers.context import RequestContext
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k36_sasl_authenticate import SaslAuthenticateRequest, SaslAuthenticateResponse

KEY = 36


async def handle(ctx: RequestContext, request: Incoming[SaslAuthenticateRequest]) -> SaslAuthenticateResponse:
    return {
        "error_code": int(ErrorCode.ILLEGAL_SASL_STATE),
        "error_message": "SaslAuthenticate request received after successful authentication",
        "auth_bytes": b"",
        "session_lifetime_ms": 0,
    }
