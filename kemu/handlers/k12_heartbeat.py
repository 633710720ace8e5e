"""Heartbeat (key 12), versions 0-4.

v1 adds throttle time; v2 is the same; v3 `group_instance_id` (KIP-345, FENCED_INSTANCE_ID); v4 flexible.

Answers REBALANCE_IN_PROGRESS while the group rebalances (the member must rejoin), UNKNOWN_MEMBER_ID for a
member the group does not have (or that the session timeout removed), ILLEGAL_GENERATION for a stale
generation, NOT_COORDINATOR for a group this broker does not coordinate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.groups import GroupCoordinator
from kemu.handlers._coordinated import answer_in_group
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k12_heartbeat import HeartbeatRequest, HeartbeatResponse

KEY = 12


async def handle(ctx: RequestContext, request: Incoming[HeartbeatRequest]) -> HeartbeatResponse:
    return answer_in_group(ctx, request, GroupCoordinator.heartbeat, error_response)


error_response = error_responder(KEY)
