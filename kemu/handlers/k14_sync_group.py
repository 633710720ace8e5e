"""SyncGroup (key 14), versions 0-5.

v1 adds throttle time; v3 `group_instance_id` (KIP-345); v4 flexible; v5 the protocol type and name, which
the client must send (null in either is INCONSISTENT_GROUP_PROTOCOL, as Kafka's KafkaApis checks) and the
broker echoes.

A follower's SyncGroup waits (detached from the connection's queue) until the leader's brings the
assignment, or the rebalance is abandoned. NOT_COORDINATOR for a group this broker does not coordinate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context, wait_for_result
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k14_sync_group import SyncGroupRequest

KEY = 14
# A follower's sync waits for the leader's assignment.
SUSPENDS = True
FIRST_VERSION_WITH_PROTOCOL = 5


async def handle(ctx: RequestContext, request: Incoming[SyncGroupRequest]) -> dict[str, Any]:
    # The response is the groups core's, or built from the response's declaration: dict[str, Any] both.
    body, version = request.body, request.version
    if version >= FIRST_VERSION_WITH_PROTOCOL and (body["protocol_type"] is None or body["protocol_name"] is None):
        return error_response(request, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, None)
    authz.require(ctx, authz.READ, authz.GROUP, body["group_id"])
    service = ctx.groups
    error = service.coordinator_error(body["group_id"], ctx.node_id)
    if error is not ErrorCode.NONE:
        return error_response(request, error, None)
    context = core_context(version, ctx.client_id, ctx.client.host)
    pending = service.run(lambda coordinator: coordinator.sync_group(body, context))
    return await wait_for_result(pending, ctx.detach)


error_response = error_responder(KEY)
