"""StreamsGroupDescribe (key 89), version 0 (KIP-1071).

Describes streams groups: state (Empty, NotReady, Assigning, Reconciling, Stable), group and assignment epochs,
the topology (with its internal topics' partition counts once it is configured against the topics, as the
members sent it before), and every member with its process, client, endpoint, client tags, and current and
target assignment of active, standby and warm-up tasks. An unknown group or one of another kind is
GROUP_ID_NOT_FOUND with Kafka's message; "" is INVALID_GROUP_ID; a group this broker does not coordinate
NOT_COORDINATOR; one the client may not DESCRIBE GROUP_AUTHORIZATION_FAILED (those first, as Kafka lists them).
`include_authorized_operations` reports what the authorizer allows on the group. With an authorizer, a group
whose topology names a topic the client may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED with no members and no
topology, as KafkaApis.handleStreamsGroupDescribe answers it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.groups.streams_manager import describe_error
from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, each, error_responder
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k89_streams_group_describe import StreamsGroupDescribeRequest

KEY = 89
UNAUTHORIZED_TOPICS = "The described group uses topics that the client is not authorized to describe."


def _topology_topics(group: dict[str, Any]) -> set[str]:
    topics: set[str] = set()
    for sub in (group["topology"] or {}).get("subtopologies") or ():
        topics.update(sub["source_topics"], sub["repartition_sink_topics"])
        topics.update(t["name"] for t in sub["repartition_source_topics"])
        topics.update(t["name"] for t in sub["state_changelog_topics"])
    return topics


async def handle(ctx: RequestContext, request: Incoming[StreamsGroupDescribeRequest]) -> dict[str, Any]:
    # The groups are the groups core's, which speaks dict[str, Any].
    body = request.body
    service = ctx.groups
    context = core_context(request.version, ctx.client_id, ctx.client.host)
    allowed = authz.allowed_names(ctx, authz.DESCRIBE, authz.GROUP, body["group_ids"])
    denied = [describe_error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
              for group_id in body["group_ids"] if group_id not in allowed]
    described: list[dict[str, Any]] = []
    # Kafka answers the empty ids first (refused before the coordinator), then the groups it looked up.
    for group_id in sorted((g for g in body["group_ids"] if g in allowed), key=bool):
        error = service.coordinator_error(group_id, ctx.node_id) if group_id else ErrorCode.NONE
        if error is not ErrorCode.NONE:
            # StreamsGroupDescribeRequest.getErrorDescribedGroupList sets the code only: no message.
            described.append(describe_error(group_id, error, None))
            continue
        single = {"group_ids": [group_id], "include_authorized_operations": False}
        one = service.run(lambda coordinator: coordinator.streams_group_describe(single, context))  # noqa: B023
        [group] = one["groups"]
        if group["error_code"] == ErrorCode.NONE:
            if body["include_authorized_operations"]:
                group["authorized_operations"] = authz.operations(ctx, authz.GROUP, group_id)
            if ctx.broker.authorizer is not None:
                topics = _topology_topics(group)
                if topics - authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC, topics):
                    group = describe_error(group_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED, UNAUTHORIZED_TOPICS)
        described.append(group)
    return {"groups": denied + described}


_every_group = error_responder(KEY, groups=each("group_ids", group_id=ITEM))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return _every_group(request, code, code.message)
