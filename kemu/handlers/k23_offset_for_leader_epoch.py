"""OffsetForLeaderEpoch (key 23), versions 2-4 (Kafka 4 dropped 0-1).

v2 current_leader_epoch (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH) and throttle time; v3 replica_id
(-2 for consumers, who use this API since KIP-320 to detect log truncation after a leader change); v4
flexible.

As ReplicaManager.lastOffsetForLeaderEpoch answers: for the requested epoch, the largest epoch at or
below it that the leader knows and that epoch's end offset (the start of the next epoch, or the log end
offset for the latest); an epoch below every known one is error NONE with epoch and end offset -1.
Unknown topics and partitions are UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers._leadership import leads
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.log import LogClosedError
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k23_offset_for_leader_epoch import (
        OffsetForLeaderEpochRequest,
        OffsetForLeaderEpochResponse,
        OffsetForLeaderEpochResponseTopics,
        OffsetForLeaderEpochResponseTopicsPartitions,
    )

KEY = 23
VERSIONS = NARROWED[KEY]

NO_EPOCH = -1


async def handle(ctx: RequestContext, request: Incoming[OffsetForLeaderEpochRequest]) -> OffsetForLeaderEpochResponse:
    broker = ctx.broker
    topics: list[OffsetForLeaderEpochResponseTopics] = []
    for entry in request.body["topics"]:
        topic = broker.topics.get(entry["topic"])
        partitions: list[OffsetForLeaderEpochResponseTopicsPartitions] = []
        for wanted in entry["partitions"]:
            index = wanted["partition"]
            if not authz.allowed(ctx, authz.DESCRIBE, authz.TOPIC, entry["topic"]):
                partitions.append(_result(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            if topic is None or not 0 <= index < len(topic.partitions) or not topic.partitions[index].is_open:
                partitions.append(_result(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            partition = topic.partitions[index]
            # A consumer validating its position may ask the in-sync follower it fetches from (KIP-392).
            if not leads(ctx.node_id, partition) and ctx.node_id not in partition.isr:
                partitions.append(_result(index, ErrorCode.NOT_LEADER_OR_FOLLOWER))
                continue
            current = wanted["current_leader_epoch"]
            if current != NO_EPOCH and current != partition.leader_epoch:
                partitions.append(_result(index, ErrorCode.FENCED_LEADER_EPOCH if partition.leader_epoch > current
                                          else ErrorCode.UNKNOWN_LEADER_EPOCH))
                continue
            try:
                epoch, end_offset = partition.end_offset_for_epoch(wanted["leader_epoch"])
            except LogClosedError:
                partitions.append(_result(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            partitions.append(_result(index, ErrorCode.NONE, epoch, end_offset))
        topics.append({"topic": entry["topic"], "partitions": partitions})
    return {"topics": topics}


def _result(index: int, code: ErrorCode, epoch: int = -1,
            end_offset: int = -1) -> OffsetForLeaderEpochResponseTopicsPartitions:
    return {"error_code": int(code), "partition": index, "leader_epoch": epoch, "end_offset": end_offset}


# OffsetsForLeaderEpochRequest.getErrorResponse: the error on every partition; epoch and end offset -1.
error_response = error_responder(KEY, topics=each("topics", topic="topic", partitions=each(
    "partitions", partition="partition")))
