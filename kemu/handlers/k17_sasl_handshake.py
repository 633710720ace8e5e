"""SaslHandshake (key 17), versions 0-1.

kemu's one listener is PLAINTEXT. A Kafka broker answers a SaslHandshake that reaches it on such a
listener (where no authenticator took it first) with ILLEGAL_SASL_STATE and no mechanisms, so a client
configured for SASL learns at once that this listener does not speak it. v1 only changed what follows a
successful handshake (SaslAuthenticate framing), which never happens here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k17_sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse

KEY = 17


async def handle(ctx: RequestContext, request: Incoming[SaslHandshakeRequest]) -> SaslHandshakeResponse:
    return {"error_code": int(ErrorCode.ILLEGAL_SASL_STATE), "mechanisms": []}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """SaslHandshakeRequest.getErrorResponse: the code and no mechanisms (what a SASL listener answers to a
    second handshake before the first one's exchange is done)."""
    return {"error_code": int(code), "mechanisms": []}
