"""ListPartitionReassignments (key 46), version 0: the reassignments in progress — none ever, since kemu's
reassignments complete at once (kemu.admin.reassignments). Needs DESCRIBE on the cluster."""

from __future__ import annotations

from typing import Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.codec import Request

KEY = 46


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    authz.require_cluster(ctx, authz.DESCRIBE)
    return {"error_code": 0, "error_message": None, "topics": []}


error_response = error_responder(KEY)
