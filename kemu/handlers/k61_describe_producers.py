"""DescribeProducers (key 61), version 0 (KIP-664).

The active idempotent and transactional producers of each partition, as its leader's producer state
holds them: producer id, epoch, last sequence (-1 when only markers are known), last timestamp, the
coordinator epoch of its last marker, and the first offset of its open transaction (-1 if none). An
illegal topic name is INVALID_TOPIC_EXCEPTION with the message of Kafka's `Topic.validate`; a topic that does
not exist UNKNOWN_TOPIC_OR_PARTITION with that error's message, a partition missing from a topic that does
exist the same error without one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.broker.partition import Partition
from kemu.broker.topic_names import validate_message
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, each, error_responder
from kemu.log.producer_state import NO_SEQUENCE
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k61_describe_producers import (
        DescribeProducersRequest,
        DescribeProducersResponse,
        DescribeProducersResponseTopics,
        DescribeProducersResponseTopicsPartitions,
        DescribeProducersResponseTopicsPartitionsActiveProducers,
    )

KEY = 61


async def handle(ctx: RequestContext, request: Incoming[DescribeProducersRequest]) -> DescribeProducersResponse:
    topics: list[DescribeProducersResponseTopics] = []
    for entry in request.body["topics"]:
        name = entry["name"]
        reason = validate_message(name)
        error, message = ErrorCode.NONE, None
        # As KafkaApis: the name first, then authorization; a topic-level error carries its message (the
        # error's own, unless the name says why), a partition missing from a known topic none.
        if reason is not None:
            error, message = ErrorCode.INVALID_TOPIC_EXCEPTION, reason
        elif not authz.allowed(ctx, authz.READ, authz.TOPIC, name):
            error, message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED.message
        elif name not in ctx.broker.topics:
            error, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.message
        partitions: list[DescribeProducersResponseTopicsPartitions] = []
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


def _producers(partition: Partition) -> list[DescribeProducersResponseTopicsPartitionsActiveProducers]:
    return [{"producer_id": entry.producer_id, "producer_epoch": entry.epoch,
             "last_sequence": entry.batches[-1].last_seq if entry.batches else NO_SEQUENCE,
             "last_timestamp": entry.last_timestamp, "coordinator_epoch": entry.coordinator_epoch,
             "current_txn_start_offset": -1 if entry.txn_first_offset is None else entry.txn_first_offset}
            for entry in partition.producers.active_producers()]


error_response = error_responder(KEY, topics=each("topics", name="name", partitions=each(
    "partition_indexes", partition_index=ITEM)))
