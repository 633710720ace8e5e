"""ConsumerGroupDescribe (key 69), versions 0-1 (KIP-848).

Describes consumer groups: state, group and assignment epochs, the assignor, and every member with its
subscription, current assignment and target assignment (topic ids with names); v1 each member's type
(KIP-1099), 1 (the consumer protocol) for every member of kemu's, which joins no classic member to a
consumer group. A classic or unknown group
is GROUP_ID_NOT_FOUND; "" is INVALID_GROUP_ID; a group this broker does not coordinate NOT_COORDINATOR.
`include_authorized_operations` reports what the authorizer allows on the group (every group operation
without one); a group the client may not DESCRIBE is GROUP_AUTHORIZATION_FAILED.
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
    from kemu.wire.messages.k69_consumer_group_describe import (
        ConsumerGroupDescribeRequest,
        ConsumerGroupDescribeResponse,
        ConsumerGroupDescribeResponseGroups,
    )

KEY = 69


async def handle(ctx: RequestContext, request: Incoming[ConsumerGroupDescribeRequest]) -> ConsumerGroupDescribeResponse:
    body = request.body
    service = ctx.groups
    context = core_context(request.version, ctx.client_id, ctx.client.host)
    # As DescribeGroups: the groups the client may not DESCRIBE first, with no message (Kafka sets none).
    allowed = authz.allowed_names(ctx, authz.DESCRIBE, authz.GROUP, body["group_ids"])
    denied: list[ConsumerGroupDescribeResponseGroups] = [
        _group_error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED)
        for group_id in body["group_ids"] if group_id not in allowed]
    described: list[ConsumerGroupDescribeResponseGroups] = []
    for group_id in (group_id for group_id in body["group_ids"] if group_id in allowed):
        error = service.coordinator_error(group_id, ctx.node_id) if group_id else ErrorCode.NONE
        if error is not ErrorCode.NONE:
            described.append(_group_error(group_id, error))
            continue
        single = {"group_ids": [group_id], "include_authorized_operations": False}
        # run() calls the lambda at once, while `single` is still this group's.
        one = service.run(lambda coordinator: coordinator.consumer_group_describe(single, context))  # noqa: B023
        [group] = one["groups"]
        if body["include_authorized_operations"] and group["error_code"] == ErrorCode.NONE:
            group["authorized_operations"] = authz.operations(ctx, authz.GROUP, group_id)
        described.append(group)
    return {"groups": denied + described}


def _group_error(group_id: str, code: ErrorCode) -> ConsumerGroupDescribeResponseGroups:
    # ConsumerGroupDescribeRequest.getErrorDescribedGroupList sets the code only: no message.
    return {"error_code": code, "error_message": None, "group_id": group_id, "group_state": "",
            "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
            "authorized_operations": authz.NOT_REQUESTED}


_every_group = error_responder(KEY, groups=each("group_ids", group_id=ITEM))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Every group gets the error's default message, as `_group_error` gives it."""
    return _every_group(request, code, code.message)
