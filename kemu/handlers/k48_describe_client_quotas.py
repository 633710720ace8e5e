"""DescribeClientQuotas (key 48), versions 0-1 (KIP-546); v1 is flexible, and nothing else changes.

As KafkaApis.handleDescribeClientQuotasRequest over ClientQuotasImage.describe: DESCRIBE_CONFIGS on the
cluster is required (else CLUSTER_AUTHORIZATION_FAILED); the filter's components each name a type once
(user, client-id or ip; another is UNSUPPORTED_VERSION), matched exactly, as the default entity, or as any
named one, ip never with the others (INVALID_REQUEST, with Kafka's message); `strict` leaves out entities of
more types than the filter names. A refused filter answers with its error and no entries (null).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.broker.client_quotas import QuotaError, entity_data, image_order
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k48_describe_client_quotas import DescribeClientQuotasRequest, DescribeClientQuotasResponse

KEY = 48


async def handle(ctx: RequestContext, request: Incoming[DescribeClientQuotasRequest]) -> DescribeClientQuotasResponse:
    authz.require_cluster(ctx, authz.DESCRIBE_CONFIGS)
    body = request.body
    try:
        found = ctx.broker.client_quotas.describe(body["components"], body["strict"])
    except QuotaError as refused:
        return error_response(request, refused.code, refused.message)
    return {"error_code": 0, "error_message": "", "entries": [
        {"entity": entity_data(image_order(entity)),
         "values": [{"key": key, "value": value} for key, value in values.items()]}
        for entity, values in found]}


def error_response(request: Incoming[Any], code: ErrorCode, message: str | None) -> DescribeClientQuotasResponse:
    """DescribeClientQuotasRequest.getErrorResponse: the error with the exception's message (none for a denied
    request), entries null."""
    return {"error_code": code, "error_message": message, "entries": None}
