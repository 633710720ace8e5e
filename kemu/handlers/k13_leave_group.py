"""LeaveGroup (key 13), versions 0-5.

v0-2 name one member (`member_id`) and answer with one error; v1 adds throttle time; v3 batches members
(`members[]`, each with its `group_instance_id`, KIP-345) and answers per member; v4 flexible; v5 adds a
reason per member. A static member may be removed by its instance id alone (member id "").

NOT_COORDINATOR for a group this broker does not coordinate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.groups import GroupCoordinator
from kemu.handlers._coordinated import answer_in_group
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k13_leave_group import LeaveGroupRequest, LeaveGroupResponse

KEY = 13


async def handle(ctx: RequestContext, request: Incoming[LeaveGroupRequest]) -> LeaveGroupResponse:
    return answer_in_group(ctx, request, GroupCoordinator.leave_group, error_response)


error_response = error_responder(KEY)
