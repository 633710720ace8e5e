"""DescribeDelegationToken (key 41), versions 1-3, as KafkaApis.handleDescribeTokensRequest answers it.

DELEGATION_TOKEN_REQUEST_NOT_ALLOWED where a token may not be created, DELEGATION_TOKEN_AUTH_DISABLED without
delegation.token.secret.key; an empty owner list describes nothing, null every token. Of the tokens of the
owners asked (as owner or renewer), the requester sees those it owns or renews, and others' with DESCRIBE
on the DELEGATION_TOKEN or DESCRIBE_TOKENS on the owner's USER (DelegationTokenManager.filterToken), in the
order of Kafka's token cache. A token expired and not yet swept is still listed, as on Kafka.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.authorizer.acls import AclOperation, ResourceType
from kemu.handlers import _authorize as authz
from kemu.handlers import _tokens
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k41_describe_delegation_token import (
        DescribeDelegationTokenRequest,
        DescribeDelegationTokenResponse,
        DescribeDelegationTokenResponseTokens,
    )

KEY = 41


async def handle(ctx: RequestContext,
                 request: Incoming[DescribeDelegationTokenRequest]) -> DescribeDelegationTokenResponse:
    if not _tokens.allow_token_requests(ctx):
        return {"error_code": int(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), "tokens": []}
    tokens = ctx.broker.delegation_tokens
    if not tokens.enabled:
        return {"error_code": int(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED), "tokens": []}
    asked = request.body["owners"]
    if asked is not None and not asked:
        return {"error_code": 0, "tokens": []}
    owners = None if asked is None else [_tokens.principal(o["principal_type"], o["principal_name"]) for o in asked]
    found = tokens.describe(
        ctx.client.principal, owners,
        lambda token_id: authz.allowed(ctx, AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, token_id),
        lambda owner: authz.allowed(ctx, AclOperation.DESCRIBE_TOKENS, ResourceType.USER, owner))
    described: list[DescribeDelegationTokenResponseTokens] = []
    for token in found:
        owner_type, owner_name = _tokens.split_principal(token.owner)
        requester_type, requester_name = _tokens.split_principal(token.requester)
        described.append({
            "principal_type": owner_type, "principal_name": owner_name,
            "token_requester_principal_type": requester_type, "token_requester_principal_name": requester_name,
            "issue_timestamp": token.issue_ms, "expiry_timestamp": token.expiry_ms, "max_timestamp": token.max_ms,
            "token_id": token.token_id, "hmac": tokens.hmac(token.token_id),
            "renewers": [{"principal_type": kind, "principal_name": name}
                         for kind, name in map(_tokens.split_principal, token.renewers)]})
    return {"error_code": 0, "tokens": described}


error_response = error_responder(KEY)
