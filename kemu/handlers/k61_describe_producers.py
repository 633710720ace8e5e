"""DescribeProducers (key 61), version 0 (KIP-664).

The active idempotent and transactional producers of each partition, as its leader's producer state
holds them: producer id, epoch, last sequence (-1 when only markers are known), last timestamp, the
coordinator epoch of its last marker, and the first offset of its open transaction (-1 if none). An
illegal topic name is INVALID_TOPIC_EXCEPTION with Kafka's message; a topic or partition that does not
exist UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import Any

from kemu.broker.topic_names import invalid_name_reason
from kemu.handlers.context import RequestContext
from kemu.txn.partition import TransactionalPartition
from kemu.txn.producer_state import NO_SEQUENCE
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 61


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    topics = []
    for entry in request.body["topics"]:
        name = entry["name"]
        reason = invalid_name_reason(name)
        error, message = ErrorCode.NONE, None
        if reason is not None:
            error, message = ErrorCode.INVALID_TOPIC_EXCEPTION, reason
        elif name not in ctx.broker.topics:
            error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        partitions = []
        for index in entry["partition_indexes"]:
            plog = ctx.broker.partition_log(name, index) if error is ErrorCode.NONE else None
            if plog is None:
                partitions.append({"partition_index": index,
                                   "error_code": error if error is not ErrorCode.NONE
                                   else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                   "error_message": message, "active_producers": []})
            else:
                partitions.append({"partition_index": index, "error_code": 0, "error_message": None,
                                   "active_producers": _producers(plog)})
        topics.append({"name": name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}


def _producers(plog: TransactionalPartition) -> list[dict[str, Any]]:
    return [{"producer_id": entry.producer_id, "producer_epoch": entry.epoch,
             "last_sequence": entry.batches[-1].last_seq if entry.batches else NO_SEQUENCE,
             "last_timestamp": entry.last_timestamp, "coordinator_epoch": entry.coordinator_epoch,
             "current_txn_start_offset": -1 if entry.txn_first_offset is None else entry.txn_first_offset}
            for entry in plog.producers.active_producers()]


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's DescribeProducersRequest.getErrorResponse: the error on every partition."""
    return {"throttle_time_ms": 0, "topics": [
        {"name": t["name"], "partitions": [{"partition_index": i, "error_code": code, "error_message": message,
                                            "active_producers": []} for i in t["partition_indexes"]]}
        for t in request.body["topics"]]}
