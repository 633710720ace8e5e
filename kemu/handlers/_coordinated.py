"""The plain path of a request one group's coordinator answers on its own (Heartbeat, LeaveGroup,
ConsumerGroupHeartbeat): the coordinator check Kafka's KafkaApis makes first, then the coordinator's answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from kemu.groups import GroupCoordinator
from kemu.groups import GroupRequestContext as CoreContext
from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ErrorResponder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming

# The operation's answer: its API's response TypedDict where the groups core is typed, else the core's
# dict[str, Any]. The operation takes the body as Any: the core checks what it reads of it against its own
# signature.
Answer = TypeVar("Answer")


def answer_in_group(ctx: RequestContext, request: Incoming[Any],
                    operation: Callable[[GroupCoordinator, Any, CoreContext], Answer],
                    error_response: ErrorResponder) -> Answer:
    """`error_response` for a group this broker does not coordinate (or not yet), else `operation`'s answer."""
    body = request.body
    authz.require(ctx, authz.READ, authz.GROUP, body["group_id"])
    service = ctx.groups
    error = service.coordinator_error(body["group_id"], ctx.node_id)
    if error is not ErrorCode.NONE:
        # GroupCoordinatorService's handleOperationException: ApiError.fromThrowable drops a generic message.
        # Built from the response declaration (kemu.handlers.error_responses), so of the operation's kind.
        return cast(Answer, error_response(request, error, None))
    context = core_context(request.version, ctx.client_id, ctx.client.host)
    return service.run(lambda coordinator: operation(coordinator, body, context))
