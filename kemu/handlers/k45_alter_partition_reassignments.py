"""AlterPartitionReassignments (key 45), version 0: new replica lists for partitions (kemu.admin.reassignments:
they complete at once). Per partition, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT with the
controller's message (an empty list, a broker named twice or not registered), NO_REASSIGNMENT_IN_PROGRESS
for a cancellation (null replicas). Needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED for the
whole request)."""

from __future__ import annotations

from typing import Any

from kemu.admin.reassignments import reassign
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.codec import Request

KEY = 45


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    authz.require_cluster(ctx, authz.ALTER)
    responses = []
    for topic in request.body["topics"]:
        partitions = []
        for wanted in topic["partitions"]:
            code, message = reassign(ctx.broker, topic["name"], wanted["partition_index"], wanted["replicas"])
            partitions.append({"partition_index": wanted["partition_index"], "error_code": int(code),
                               "error_message": message})
        responses.append({"name": topic["name"], "partitions": partitions})
    return {"error_code": 0, "error_message": None, "responses": responses}


error_response = error_responder(KEY)
