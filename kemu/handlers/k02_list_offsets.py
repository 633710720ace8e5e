"""ListOffsets (key 2), versions 1-11 (Kafka 4 dropped v0 and its old_style_offsets).

v1 one offset per partition, with its timestamp; v2 isolation_level (read_committed: "latest" is the last
stable offset, timestamp lookups stop below it); v4 current_leader_epoch (FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH) and the leader epoch of the answer; v6 flexible; v7 -3 = the offset of the max
timestamp; v8 -4 = earliest local offset (the log start without tiered storage); v9 -5 = latest tiered
offset (-1: nothing is tiered); v10 timeout_ms, moot without remote storage; v11 -6 = the earliest offset
pending upload to tiered storage (KIP-1023; -1 with leader epoch -1 without remote storage, as Kafka's
UnifiedLog answers). A negative timestamp older than its version, or none of these, is UNSUPPORTED_VERSION
(after the duplicate and authorization checks).

As KafkaApis/ReplicaManager answer: -2 earliest (the log start offset), -1 latest (high watermark, or LSO
for read_committed), else the first offset whose record timestamp is at least the one asked for; no such
offset is error NONE with offset and timestamp -1. A partition named twice is INVALID_REQUEST (each
time); unknown topics and partitions UNKNOWN_TOPIC_OR_PARTITION. Only a consumer (replica_id -1) gets
its isolation level applied; replica ids -2 (debugging) and followers read up to the log end.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers._leadership import leads
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.log import FetchIsolation, ListOffsetsTimestamp, LogClosedError, LogError
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k02_list_offsets import (
        ListOffsetsRequest,
        ListOffsetsResponse,
        ListOffsetsResponseTopics,
        ListOffsetsResponseTopicsPartitions,
    )

KEY = 2
VERSIONS = NARROWED[KEY]

CONSUMER_REPLICA_ID = -1
READ_COMMITTED = 1
NO_EPOCH = -1
# ReplicaManager.timestampMinSupportedVersion: the first version that knows each special timestamp. Any other
# negative timestamp, or one asked at an older version, is UNSUPPORTED_VERSION for that partition.
# Keyed by the request's timestamp, an int.
SPECIAL_TIMESTAMP_SINCE: dict[int, int] = {
    ListOffsetsTimestamp.EARLIEST: 1, ListOffsetsTimestamp.LATEST: 1, ListOffsetsTimestamp.MAX_TIMESTAMP: 7,
    ListOffsetsTimestamp.EARLIEST_LOCAL: 8, ListOffsetsTimestamp.LATEST_TIERED: 9,
    ListOffsetsTimestamp.EARLIEST_PENDING_UPLOAD: 11}


async def handle(ctx: RequestContext, request: Incoming[ListOffsetsRequest]) -> ListOffsetsResponse:
    broker, body, version = ctx.broker, request.body, request.version
    counts = Counter((t["name"], p["partition_index"]) for t in body["topics"] for p in t["partitions"])
    isolation: FetchIsolation | None = None
    if body["replica_id"] == CONSUMER_REPLICA_ID:
        isolation = (FetchIsolation.TXN_COMMITTED if body["isolation_level"] == READ_COMMITTED
                     else FetchIsolation.HIGH_WATERMARK)
    topics: list[ListOffsetsResponseTopics] = []
    for entry in body["topics"]:
        name = entry["name"]
        topic = broker.topics.get(name)
        partitions: list[ListOffsetsResponseTopicsPartitions] = []
        for wanted in entry["partitions"]:
            index = wanted["partition_index"]
            if counts[(name, index)] > 1:
                partitions.append(_error(index, ErrorCode.INVALID_REQUEST))
                continue
            if not authz.allowed(ctx, authz.DESCRIBE, authz.TOPIC, name):
                partitions.append(_error(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            timestamp = wanted["timestamp"]
            if timestamp < 0 and version < SPECIAL_TIMESTAMP_SINCE.get(timestamp, VERSIONS[1] + 1):
                partitions.append(_error(index, ErrorCode.UNSUPPORTED_VERSION))
                continue
            if topic is None or not 0 <= index < len(topic.partitions) or not topic.partitions[index].is_open:
                partitions.append(_error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            partition = topic.partitions[index]
            if not leads(ctx.node_id, partition):
                partitions.append(_error(index, ErrorCode.NOT_LEADER_OR_FOLLOWER))
                continue
            requested_epoch = wanted["current_leader_epoch"]
            if requested_epoch != NO_EPOCH and partition.leader_epoch != requested_epoch:
                partitions.append(_error(index, ErrorCode.FENCED_LEADER_EPOCH
                                         if partition.leader_epoch > requested_epoch
                                         else ErrorCode.UNKNOWN_LEADER_EPOCH))
                continue
            try:
                found = partition.offset_for_timestamp(timestamp, isolation)
            except LogClosedError:
                partitions.append(_error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            except LogError as exc:
                partitions.append(_error(index, exc.code))
                continue
            if found is None:
                partitions.append(_error(index, ErrorCode.NONE))
                continue
            answer: ListOffsetsResponseTopicsPartitions = {
                "partition_index": index, "error_code": 0, "timestamp": found.timestamp, "offset": found.offset,
                "leader_epoch": -1}
            if found.leader_epoch is not None and version >= 4:
                answer["leader_epoch"] = found.leader_epoch
            partitions.append(answer)
        topics.append({"name": name, "partitions": partitions})
    return {"topics": topics}


def _error(index: int, code: ErrorCode) -> ListOffsetsResponseTopicsPartitions:
    return {"partition_index": index, "error_code": int(code), "timestamp": -1, "offset": -1, "leader_epoch": -1}


# ListOffsetsRequest.getErrorResponse: the error on every partition; offset and timestamp are the defaults, -1.
error_response = error_responder(KEY, topics=each("topics", name="name", partitions=each(
    "partitions", partition_index="partition_index")))
