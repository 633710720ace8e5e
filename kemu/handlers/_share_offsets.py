"""What AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92) share: the group checks Kafka's
GroupCoordinatorService makes before the group coordinator runs, and their answers to a refused request. (Each
handler puts the coordinator's answer together with the topics it refused itself.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ErrorResponder, error_responder

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
from kemu.wire.errors import ErrorCode


def refused_group(ctx: RequestContext, group_id: str) -> ErrorCode:
    """The empty group id INVALID_GROUP_ID, a group this broker does not coordinate NOT_COORDINATOR."""
    if not group_id:
        return ErrorCode.INVALID_GROUP_ID
    return ctx.groups.coordinator_error(group_id, ctx.node_id)


def top_level_responder(key: int) -> ErrorResponder:
    """Kafka's getErrorResponse: the code with the coordinator's message or the code's own, no topics."""
    plain = error_responder(key)

    def error_response(request: Incoming[Any], code: ErrorCode, message: str | None) -> dict[str, Any]:
        return plain(request, code, message or code.message)

    return error_response
