"""ListGroups (key 16), versions 0-5.

v1 adds throttle time; v3 flexible; v4 `states_filter` (KIP-518) and each group's state; v5 `types_filter`
("classic", "consumer"; KIP-848) and each group's type. Filters compare without regard to case; an empty
filter lists everything.

Lists the groups of every `__consumer_offsets` partition this broker leads, which with one broker is every
group. Groups holding only offsets (committed outside group management) are listed with protocol type "".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k16_list_groups import ListGroupsRequest, ListGroupsResponse

KEY = 16


async def handle(ctx: RequestContext, request: Incoming[ListGroupsRequest]) -> ListGroupsResponse:
    context = core_context(request.version, ctx.client_id, ctx.client.host)
    service = ctx.groups
    listed = service.run(lambda coordinator: coordinator.list_groups(request.body, context))
    # The groups core answers with a dict of this response's fields (kemu.groups speaks dict[str, Any]).
    response = cast("ListGroupsResponse", listed)
    response["groups"] = [g for g in response["groups"]
                          if service.coordinator_error(g["group_id"], ctx.node_id) is ErrorCode.NONE]
    if not authz.allowed(ctx, authz.DESCRIBE, authz.CLUSTER):  # else only the groups it may describe
        describable = authz.allowed_names(ctx, authz.DESCRIBE, authz.GROUP, (g["group_id"] for g in response["groups"]))
        response["groups"] = [g for g in response["groups"] if g["group_id"] in describable]
    return response


error_response = error_responder(KEY)
