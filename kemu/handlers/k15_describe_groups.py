"""DescribeGroups (key 15), versions 0-6.

v1 adds throttle time; v3 `include_authorized_operations` (what the authorizer allows on the group;
every group operation without one); v4 each member's `group_instance_id`; v5 flexible; v6 an error message
per group (KIP-1043).

Classic groups only: an unknown group, or a KIP-848 consumer group (ConsumerGroupDescribe describes those),
is reported Dead, with no error before v6 and from v6 GROUP_ID_NOT_FOUND ("Group <id> not found.", or "Group
<id> is not a classic group."), as Kafka's GroupMetadataManager answers; so is "", an id like any other (only
a null id, which no version can carry, would be INVALID_GROUP_ID). Member metadata is shown once the group is
Stable, assignments always. A group this broker does not coordinate gets NOT_COORDINATOR in its entry;
one the client may not DESCRIBE, GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, Fixed, each, error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k15_describe_groups import (
        DescribeGroupsRequest,
        DescribeGroupsResponse,
        DescribeGroupsResponseGroups,
    )

KEY = 15
FIRST_VERSION_WITH_OPERATIONS = 3


async def handle(ctx: RequestContext, request: Incoming[DescribeGroupsRequest]) -> DescribeGroupsResponse:
    body, version = request.body, request.version
    service = ctx.groups
    context = core_context(version, ctx.client_id, ctx.client.host)
    with_operations = version >= FIRST_VERSION_WITH_OPERATIONS and body["include_authorized_operations"]
    # Kafka answers the groups the client may not DESCRIBE first, then the coordinator's results.
    allowed = authz.allowed_names(ctx, authz.DESCRIBE, authz.GROUP, body["groups"])
    denied = [_group_error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED) for group_id in body["groups"]
              if group_id not in allowed]
    described: list[DescribeGroupsResponseGroups] = []
    for group_id in (group_id for group_id in body["groups"] if group_id in allowed):
        error = service.coordinator_error(group_id, ctx.node_id) if group_id else ErrorCode.NONE
        if error is not ErrorCode.NONE:
            described.append(_group_error(group_id, error))
            continue
        single = {"groups": [group_id]}
        # run() calls the lambda at once, while `single` is still this group's.
        one = service.run(lambda coordinator: coordinator.describe_groups(single, context))  # noqa: B023
        [group] = one["groups"]
        if with_operations and group["error_code"] == ErrorCode.NONE:
            group["authorized_operations"] = authz.operations(ctx, authz.GROUP, group_id)
        described.append(group)
    return {"groups": denied + described}


def _group_error(group_id: str, code: ErrorCode) -> DescribeGroupsResponseGroups:
    return {"error_code": code, "group_id": group_id, "group_state": "", "protocol_type": "", "protocol_data": "",
            "members": [], "authorized_operations": authz.NOT_REQUESTED}


# DescribeGroupsRequest.getErrorResponse: the error on every group, with no message (v6's stays null).
error_response = error_responder(KEY, groups=each("groups", group_id=ITEM, error_message=Fixed(None)))
