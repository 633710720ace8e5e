"""CreateDelegationToken (key 38), versions 1-3, as KafkaApis.handleCreateTokenRequest checks it and the
controller's DelegationTokenControlManager creates it.

The broker refuses first, with -1 timestamps, an empty token id and HMAC: a request it does not allow
(PLAINTEXT, 1-way SSL, a token-authenticated connection: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), a token for
another owner (v3) without CREATE_TOKENS on that USER (DELEGATION_TOKEN_AUTHORIZATION_FAILED), a renewer whose
type is not User (INVALID_PRINCIPAL_TYPE). The controller answers the rest, its errors with the response's
defaults (timestamps 0): DELEGATION_TOKEN_AUTH_DISABLED without delegation.token.secret.key. A token's
lifetime is max_lifetime_ms when positive and below delegation.token.max.lifetime.ms, and it expires after
delegation.token.expiry.time.ms unless renewed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.authorizer.acls import AclOperation, ResourceType
from kemu.handlers import _authorize as authz
from kemu.handlers import _tokens
from kemu.handlers.context import RequestContext
from kemu.security.tokens import NONE, USER_TYPE
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k38_create_delegation_token import (
        CreateDelegationTokenRequest,
        CreateDelegationTokenResponse,
    )

KEY = 38


def _answer(code: ErrorCode | str, owner: str, requester: str,
            timestamp: int = _tokens.ERROR_TIMESTAMP) -> CreateDelegationTokenResponse:
    """CreateDelegationTokenResponse.prepareResponse (the requester is dropped below v3 by the schema)."""
    owner_type, owner_name = _tokens.split_principal(owner)
    requester_type, requester_name = _tokens.split_principal(requester)
    return {"error_code": int(code if isinstance(code, ErrorCode) else ErrorCode[code]),
            "principal_type": owner_type, "principal_name": owner_name,
            "token_requester_principal_type": requester_type, "token_requester_principal_name": requester_name,
            "issue_timestamp_ms": timestamp, "expiry_timestamp_ms": timestamp, "max_timestamp_ms": timestamp,
            "token_id": "", "hmac": b""}


async def handle(ctx: RequestContext, request: Incoming[CreateDelegationTokenRequest]) -> CreateDelegationTokenResponse:
    body = request.body
    requester = ctx.client.principal
    owner_type, owner_name = body["owner_principal_type"], body["owner_principal_name"]
    if not owner_name:
        owner = requester
    elif owner_type is None:
        # KafkaPrincipal refuses a null type (a NullPointerException): Kafka's error response, ANONYMOUS both.
        return error_response(request, ErrorCode.UNKNOWN_SERVER_ERROR, None)
    else:
        owner = _tokens.principal(owner_type, owner_name)
    renewers = [_tokens.principal(r["principal_type"], r["principal_name"]) for r in body["renewers"]]
    if not _tokens.allow_token_requests(ctx):
        return _answer(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, owner, requester)
    if owner != requester and not authz.allowed(ctx, AclOperation.CREATE_TOKENS, ResourceType.USER, owner):
        return _answer(ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, owner, requester)
    if any(r["principal_type"] != USER_TYPE for r in body["renewers"]):
        return _answer(ErrorCode.INVALID_PRINCIPAL_TYPE, owner, requester)
    tokens = ctx.broker.delegation_tokens
    code, token = tokens.create(owner, requester, renewers, body["max_lifetime_ms"], ctx.clock.now_ms())
    if code != NONE or token is None:
        return _answer(code, owner, requester, 0)
    answer = _answer(code, owner, requester)
    answer |= {"issue_timestamp_ms": token.issue_ms, "expiry_timestamp_ms": token.expiry_ms,
               "max_timestamp_ms": token.max_ms, "token_id": token.token_id, "hmac": tokens.hmac(token.token_id)}
    return answer


def error_response(request: Incoming[Any], code: ErrorCode, message: str | None) -> CreateDelegationTokenResponse:
    """CreateDelegationTokenRequest.getErrorResponse: ANONYMOUS for owner and requester."""
    return _answer(code, _tokens.ANONYMOUS, _tokens.ANONYMOUS)
