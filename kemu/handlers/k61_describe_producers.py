"""DescribeProducers (key 61), version 0 (KIP-664).

The active idempotent and transactional producers of each partition, as its leader's producer state
holds them: producer id, epoch, last sequence (-1 when only markers are known), last timestamp, the
coordinator epoch of its last marker, and the first offset of its open transaction (-1 if none). An
illegal topic name is INVALID_TOPIC_EXCEPTION with Kafka's message; a topic or partition that does not
exist UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import Any

from kemu.broker.partition import Partition
from kemu.broker.topic_names import invalid_name_reason
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, each, error_responder
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
        if not authz.allowed(ctx, authz.READ, authz.TOPIC, name):
            # Kafka's ApiError without a message: the error's own, "Topic authorization failed.".
            error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            message = error.message
        elif reason is not None:
            error, message = ErrorCode.INVALID_TOPIC_EXCEPTION, reason
        elif name not in ctx.broker.topics:
            error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        partitions = []
        for index in entry["partition_indexes"]:
            partition = ctx.broker.partition(name, index) if error is ErrorCode.NONE else None
            if partition is None:
                partitions.append({"partition_index": index,
                                   "error_code": error if error is not ErrorCode.NONE
                                   else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                   "error_message": message, "active_producers": []})
            else:
                partitions.append({"partition_index": index, "error_code": 0, "error_message": None,
                                   "active_producers": _producers(partition)})
        topics.append({"name": name, "partitions": partitions})
    return {"topics": topics}


def _producers(partition: Partition) -> list[dict[str, Any]]:
    return [{"producer_id": entry.producer_id, "producer_epoch": entry.epoch,
             "last_sequence": entry.batches[-1].last_seq if entry.batches else NO_SEQUENCE,
             "last_timestamp": entry.last_timestamp, "coordinator_epoch": entry.coordinator_epoch,
             "current_txn_start_offset": -1 if entry.txn_first_offset is None else entry.txn_first_offset}
            for entry in partition.producers.active_producers()]


error_response = error_responder(KEY, topics=each("topics", name="name", partitions=each(
    "partition_indexes", partition_index=ITEM)))
