"""What the four delegation token handlers share: KafkaApis.allowTokenRequests, and principals as the wire
carries them (type and name) and as kemu keeps them ("Type:name")."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kemu.handlers.context import RequestContext

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k39_renew_delegation_token import RenewDelegationTokenResponse
from kemu.wire.errors import ErrorCode

ANONYMOUS = "User:ANONYMOUS"
ERROR_TIMESTAMP = -1  # DelegationTokenManager.ERROR_TIMESTAMP: what the broker's own refusals answer


def allow_token_requests(ctx: RequestContext) -> bool:
    """No token request over PLAINTEXT, over 1-way SSL (no client certificate: ANONYMOUS), or from a
    connection that authenticated with a delegation token."""
    client = ctx.client
    if client.token_authenticated or client.security_protocol == "PLAINTEXT":
        return False
    return not (client.security_protocol == "SSL" and client.principal == ANONYMOUS)


def principal(kind: str, name: str) -> str:
    return f"{kind}:{name}"


def split_principal(value: str) -> tuple[str, str]:
    """A principal as the wire carries it: (type, name)."""
    kind, _, name = value.partition(":")
    return kind, name


def new_expiry(ctx: RequestContext, request: Incoming[Any], period_field: str,
               change: Callable[[bytes, str, int, int], tuple[str, int]]) -> RenewDelegationTokenResponse:
    """RenewDelegationToken and ExpireDelegationToken: refused as every token request is, else the
    controller's outcome and the token's new expiry. Their responses have the same fields, so the one type
    is the other's too (TypedDicts compare by their keys)."""
    if not allow_token_requests(ctx):
        return {"error_code": int(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
                "expiry_timestamp_ms": ERROR_TIMESTAMP}
    code, expiry = change(bytes(request.body["hmac"]), ctx.client.principal, request.body[period_field],
                          ctx.clock.now_ms())
    return {"error_code": int(ErrorCode[code]), "expiry_timestamp_ms": expiry}
