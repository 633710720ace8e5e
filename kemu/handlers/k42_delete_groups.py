"""DeleteGroups (key 42), versions 0-2.

v1 is the same as v0; v2 is flexible. Each group is deleted with its committed offsets if it is Empty (or
Dead, or only holds offsets): NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND if unknown ("" too:
Kafka keeps INVALID_GROUP_ID for a null id, which no version can carry), NOT_COORDINATOR where this broker
does not coordinate it. A group named twice is answered once, as Kafka does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k42_delete_groups import (
        DeleteGroupsRequest,
        DeleteGroupsResponse,
        DeleteGroupsResponseResults,
    )

KEY = 42


async def handle(ctx: RequestContext, request: Incoming[DeleteGroupsRequest]) -> DeleteGroupsResponse:
    service = ctx.groups
    context = core_context(request.version, ctx.client_id, ctx.client.host)
    results: list[DeleteGroupsResponseResults] = []
    for group_id in dict.fromkeys(request.body["groups_names"]):
        error = authz.denied_code(ctx, authz.DELETE, authz.GROUP, group_id)
        if error is ErrorCode.NONE:
            error = service.coordinator_error(group_id, ctx.node_id)
        if error is not ErrorCode.NONE:
            results.append({"group_id": group_id, "error_code": error})
            continue
        single = {"groups_names": [group_id]}
        # run() calls the lambda at once, while `single` is still this group's.
        deleted = service.run(lambda coordinator: coordinator.delete_groups(single, context))  # noqa: B023
        results.extend(deleted["results"])
    return {"results": results}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"results": [{"group_id": g, "error_code": code} for g in dict.fromkeys(request.body["groups_names"])]}
