"""SyncGroup (key 14), versions 0-5.

v1 adds throttle time; v3 `group_instance_id` (KIP-345); v4 flexible; v5 the protocol type and name, which
the client must send (null in either is INCONSISTENT_GROUP_PROTOCOL, as Kafka's KafkaApis checks) and the
broker echoes.

A follower's SyncGroup waits (detached from the connection's queue) until the leader's brings the
assignment, or the rebalance is abandoned. NOT_COORDINATOR for a group this broker does not coordinate.
"""

from __future__ import annotations

from typing import Any

from kemu.handlers._shared import core_context, wait_for_result
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 14
FIRST_VERSION_WITH_PROTOCOL = 5


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    body, version = request.body, request.version
    if version >= FIRST_VERSION_WITH_PROTOCOL and (body["protocol_type"] is None or body["protocol_name"] is None):
        return _error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    service = ctx.groups
    error = service.coordinator_error(body["group_id"])
    if error is not ErrorCode.NONE:
        return _error(error)
    context = core_context(version, ctx.client_id, ctx.client.host)
    pending = service.run(lambda coordinator: coordinator.sync_group(body, context))
    response = await wait_for_result(pending, ctx.detach)
    return {"throttle_time_ms": 0, **response}


def _error(code: ErrorCode) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "protocol_type": None, "protocol_name": None,
            "assignment": b""}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's SyncGroupRequest.getErrorResponse: the error and an empty assignment."""
    return _error(code)
