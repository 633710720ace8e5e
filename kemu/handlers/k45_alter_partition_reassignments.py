"""AlterPartitionReassignments (key 45), versions 0-1: new replica lists for partitions (kemu.admin.reassignments:
they complete at once). Per partition, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT with the
controller's messages (an empty list, a broker named twice or not registered), NO_REASSIGNMENT_IN_PROGRESS
for a cancellation (null replicas). v1's `allow_replication_factor_change` false (KIP-860) refuses a list of
another length than the current one with INVALID_REPLICATION_FACTOR and the controller's message, checked
after the list itself; the response echoes it. Needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED
for the whole request and each partition)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.admin.reassignments import reassign
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k45_alter_partition_reassignments import (
        AlterPartitionReassignmentsRequest,
        AlterPartitionReassignmentsResponse,
        AlterPartitionReassignmentsResponseResponses,
        AlterPartitionReassignmentsResponseResponsesPartitions,
    )

KEY = 45


async def handle(ctx: RequestContext,
                 request: Incoming[AlterPartitionReassignmentsRequest]) -> AlterPartitionReassignmentsResponse:
    authz.authorize_cluster_operation(ctx, request, authz.ALTER)
    allow_factor_change: bool = request.body["allow_replication_factor_change"]
    responses: list[AlterPartitionReassignmentsResponseResponses] = []
    for topic in request.body["topics"]:
        partitions: list[AlterPartitionReassignmentsResponseResponsesPartitions] = []
        for wanted in topic["partitions"]:
            code, message = reassign(ctx.broker, topic["name"], wanted["partition_index"], wanted["replicas"],
                                     allow_factor_change)
            partitions.append({"partition_index": wanted["partition_index"], "error_code": int(code),
                               "error_message": message})
        responses.append({"name": topic["name"], "partitions": partitions})
    return {"allow_replication_factor_change": allow_factor_change, "error_code": 0, "error_message": None,
            "responses": responses}


# AlterPartitionReassignmentsRequest.getErrorResponse: the error, and its message, on every partition too.
error_response = error_responder(KEY, responses=each("topics", name="name", partitions=each(
    "partitions", partition_index="partition_index")))
