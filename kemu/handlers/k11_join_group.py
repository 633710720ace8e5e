"""JoinGroup (key 11), versions 0-9.

v0 has no rebalance timeout (the session timeout serves); v1 adds it; v2 throttle time; v4 makes a new
dynamic member come back with the member id the broker gives it (MEMBER_ID_REQUIRED, KIP-394); v5
`group_instance_id` for static members (KIP-345); v6 flexible; v7 returns the protocol type and lets the
protocol name be null; v8 adds a reason; v9 `skip_assignment` for a returning static leader.

The request waits (detached from the connection's queue) until the group's rebalance completes, the
member is removed, or a timer fires; the coordinator's timers run on the broker's housekeeping. A group
whose `__consumer_offsets` partition this broker does not lead (none before the topic exists) gets
NOT_COORDINATOR. Without READ on the group: GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context, wait_for_result
from kemu.handlers.context import RequestContext
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k11_join_group import JoinGroupRequest, JoinGroupResponse

KEY = 11
# A join waits for the rebalance to complete.
SUSPENDS = True


async def handle(ctx: RequestContext, request: Incoming[JoinGroupRequest]) -> JoinGroupResponse:
    body, version = request.body, request.version
    authz.require(ctx, authz.READ, authz.GROUP, body["group_id"])
    service = ctx.groups
    error = service.coordinator_error(body["group_id"], ctx.node_id)
    if error is not ErrorCode.NONE:
        return _error(version, error, body["member_id"])
    context = core_context(version, ctx.client_id, ctx.client.host)
    pending = service.run(lambda coordinator: coordinator.join_group(body, context))
    # The groups core answers with a dict of this response's fields (kemu.groups speaks dict[str, Any]).
    return cast("JoinGroupResponse", await wait_for_result(pending, ctx.detach))


def _error(version: int, code: ErrorCode, member_id: str) -> JoinGroupResponse:
    # Kafka's coordinator answers a refused join with the member id it was sent.
    return {"error_code": code, "generation_id": -1, "protocol_type": None,
            "protocol_name": None if version >= 7 else "", "leader": "", "skip_assignment": False,
            "member_id": member_id, "members": []}


def error_response(request: Incoming[Any], code: ErrorCode, message: str | None) -> JoinGroupResponse:
    """Kafka's JoinGroupRequest.getErrorResponse: no generation, no leader, no member id."""
    return _error(request.version, code, "")
