"""ListPartitionReassignments (key 46), version 0: the reassignments in progress — none ever, since kemu's
reassignments complete at once (kemu.admin.reassignments). Needs DESCRIBE on the cluster."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k46_list_partition_reassignments import (
        ListPartitionReassignmentsRequest,
        ListPartitionReassignmentsResponse,
    )

KEY = 46


async def handle(ctx: RequestContext,
                 request: Incoming[ListPartitionReassignmentsRequest]) -> ListPartitionReassignmentsResponse:
    authz.authorize_cluster_operation(ctx, request, authz.DESCRIBE)
    return {"error_code": 0, "error_message": None, "topics": []}


error_response = error_responder(KEY)
