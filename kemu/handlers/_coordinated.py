"""The plain path of a request one group's coordinator answers on its own (Heartbeat, LeaveGroup,
ConsumerGroupHeartbeat): the coordinator check Kafka's KafkaApis makes first, then the coordinator's answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kemu.groups import GroupCoordinator
from kemu.groups import RequestContext as CoreContext
from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

Body = dict[str, Any]
Operation = Callable[[GroupCoordinator, Body, CoreContext], Body]
ErrorResponse = Callable[[Request, ErrorCode, str | None], Body]


def answer_in_group(ctx: RequestContext, request: Request, operation: Operation,
                    error_response: ErrorResponse) -> Body:
    """`error_response` for a group this broker does not coordinate (or not yet), else `operation`'s answer."""
    body = request.body
    authz.require(ctx, authz.READ, authz.GROUP, body["group_id"])
    service = ctx.groups
    error = service.coordinator_error(body["group_id"], ctx.node_id)
    if error is not ErrorCode.NONE:
        return error_response(request, error, error.message)
    context = core_context(request.version, ctx.client_id, ctx.client.host)
    return service.run(lambda coordinator: operation(coordinator, body, context))
