"""OffsetDelete (key 47), version 0 (KIP-496).

Deletes a group's committed offsets for partitions of topics the group is not subscribed to
(GROUP_SUBSCRIBED_TO_TOPIC per partition otherwise). Group-level errors come alone at the top, with no
topics: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (a classic group that is not Empty and has no consumer
protocol), INVALID_GROUP_ID, NOT_COORDINATOR. As in Kafka's KafkaApis, partitions of topics this broker
does not have answer UNKNOWN_TOPIC_OR_PARTITION and do not reach the coordinator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context, merge_topics, split_hosted
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k47_offset_delete import OffsetDeleteRequest, OffsetDeleteResponse

KEY = 47


async def handle(ctx: RequestContext, request: Incoming[OffsetDeleteRequest]) -> OffsetDeleteResponse:
    body = request.body
    authz.require(ctx, authz.DELETE, authz.GROUP, body["group_id"])
    service = ctx.groups
    error = service.coordinator_error(body["group_id"], ctx.node_id)
    if error is not ErrorCode.NONE:
        return cast("OffsetDeleteResponse", error_response(request, error, None))
    known, unknown = split_hosted(ctx.broker, body["topics"], authz.denied_topics(ctx, authz.READ, body["topics"]))
    context = core_context(request.version, ctx.client_id, ctx.client.host)
    response = service.run(lambda coordinator: coordinator.offset_delete({**body, "topics": known}, context))
    if response["error_code"] != ErrorCode.NONE:
        return cast("OffsetDeleteResponse", error_response(request, response["error_code"], None))
    return {"error_code": ErrorCode.NONE, "topics": merge_topics(unknown, response["topics"])}


error_response = error_responder(KEY)
