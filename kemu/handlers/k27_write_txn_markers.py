"""WriteTxnMarkers (key 27), versions 1-2 (Kafka 4 dropped v0, KIP-896: a request for it closes the connection).

Kafka's coordinator sends this to partition leaders; admin tools send it too (kafka-transactions.sh abort,
to end a hanging transaction). Each marker is appended to each of its partitions through the same path as
a produce and as kemu's own coordinator writes markers (kemu.coordinators.txn_service), with the producer
checks: a marker of an epoch older than the producer's is INVALID_PRODUCER_EPOCH, of an older coordinator
epoch TRANSACTION_COORDINATOR_FENCED; a partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION. A
marker on `__consumer_offsets` completes the group coordinator's staged offsets of that producer (the group
service watches those logs). The answer groups the partitions by producer id, as Kafka's does. v1 is
flexible. v2 gives each marker its transaction version (KIP-1228): from 2 the coordinator has bumped the
epoch before writing markers, so a marker at the producer's own epoch is INVALID_PRODUCER_EPOCH too, unless
that producer's transaction on the partition is already over (a retry, KAFKA-19999), as Kafka's
ProducerAppendInfo checks it; v1 (transaction version 0) keeps the older check. Without an authorizer the
CLUSTER_ACTION check always passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.versions import NARROWED
from kemu.txn.state import TopicPartition
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k27_write_txn_markers import (
        WriteTxnMarkersRequest,
        WriteTxnMarkersResponse,
        WriteTxnMarkersResponseMarkers,
        WriteTxnMarkersResponseMarkersTopicsPartitions,
    )

KEY = 27
VERSIONS = NARROWED[KEY]


async def handle(ctx: RequestContext, request: Incoming[WriteTxnMarkersRequest]) -> WriteTxnMarkersResponse:
    authz.require_cluster(ctx, authz.CLUSTER_ACTION)
    by_producer: dict[int, dict[TopicPartition, ErrorCode]] = {}
    for marker in request.body["markers"]:
        partitions = [(topic["name"], index) for topic in marker["topics"] for index in topic["partition_indexes"]]
        errors = ctx.txn.write_markers(marker["producer_id"], marker["producer_epoch"], marker["transaction_result"],
                                       marker["coordinator_epoch"], partitions, marker["transaction_version"])
        by_producer.setdefault(marker["producer_id"], {}).update(errors)
    return _response(by_producer)


def _response(by_producer: dict[int, dict[TopicPartition, ErrorCode]]) -> WriteTxnMarkersResponse:
    markers: list[WriteTxnMarkersResponseMarkers] = []
    for producer_id, errors in by_producer.items():
        topics: dict[str, list[WriteTxnMarkersResponseMarkersTopicsPartitions]] = {}
        for (topic, index), error in errors.items():
            topics.setdefault(topic, []).append({"partition_index": index, "error_code": error})
        markers.append({"producer_id": producer_id,
                        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()]})
    return {"markers": markers}


def error_response(request: Request, code: ErrorCode, message: str | None) -> WriteTxnMarkersResponse:
    """Kafka's WriteTxnMarkersRequest.getErrorResponse: the error on every partition of every marker."""
    by_producer: dict[int, dict[TopicPartition, ErrorCode]] = {}
    for marker in request.body["markers"]:
        for topic in marker["topics"]:
            for index in topic["partition_indexes"]:
                by_producer.setdefault(marker["producer_id"], {})[(topic["name"], index)] = code
    return _response(by_producer)
