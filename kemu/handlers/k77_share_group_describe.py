"""ShareGroupDescribe (key 77), version 1 (KIP-932).

Describes share groups: state (Empty or Stable), group and assignment epochs, the assignor ("simple"), and
every member with its rack, client, subscription and current assignment (topic ids with names). An unknown
group or one of another kind is GROUP_ID_NOT_FOUND with Kafka's message; "" is INVALID_GROUP_ID; a group this
broker does not coordinate NOT_COORDINATOR; one the client may not DESCRIBE GROUP_AUTHORIZATION_FAILED (those
first, as Kafka lists them). `include_authorized_operations` reports what the authorizer allows on the group.
A group whose members hold a topic the client may not DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED with
no members, as KafkaApis.handleShareGroupDescribe answers it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, each, error_responder
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k77_share_group_describe import (
        ShareGroupDescribeRequest,
        ShareGroupDescribeResponse,
        ShareGroupDescribeResponseGroups,
    )

KEY = 77
UNAUTHORIZED_TOPICS = "The group has described topic(s) that the client is not authorized to describe."


async def handle(ctx: RequestContext, request: Incoming[ShareGroupDescribeRequest]) -> ShareGroupDescribeResponse:
    body = request.body
    service = ctx.groups
    context = core_context(request.version, ctx.client_id, ctx.client.host)
    allowed = authz.allowed_names(ctx, authz.DESCRIBE, authz.GROUP, body["group_ids"])
    denied = [_group_error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
              for group_id in body["group_ids"] if group_id not in allowed]
    described: list[ShareGroupDescribeResponseGroups] = []
    for group_id in (group_id for group_id in body["group_ids"] if group_id in allowed):
        error = service.coordinator_error(group_id, ctx.node_id) if group_id else ErrorCode.NONE
        if error is not ErrorCode.NONE:
            described.append(_group_error(group_id, error, error.message))
            continue
        single = {"group_ids": [group_id], "include_authorized_operations": False}
        one = service.run(lambda coordinator: coordinator.share_group_describe(single, context))  # noqa: B023
        [group] = one["groups"]
        if group["error_code"] == ErrorCode.NONE:
            if body["include_authorized_operations"]:
                group["authorized_operations"] = authz.operations(ctx, authz.GROUP, group_id)
            held = {t["topic_name"] for m in group["members"] for t in m["assignment"]["topic_partitions"]}
            if held - authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC, held):
                group = _group_error(group_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED, UNAUTHORIZED_TOPICS)
        described.append(group)
    return {"groups": denied + described}


def _group_error(group_id: str, code: ErrorCode, message: str | None) -> ShareGroupDescribeResponseGroups:
    return {"error_code": code, "error_message": message, "group_id": group_id, "group_state": "",
            "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
            "authorized_operations": authz.NOT_REQUESTED}


_every_group = error_responder(KEY, groups=each("group_ids", group_id=ITEM))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return _every_group(request, code, code.message)
