"""DeleteRecords (key 21), versions 0-2.

v1 is v0 (throttled responses come first); v2 is flexible.

As KafkaApis/ReplicaManager/Partition.deleteRecordsOnLeader do it: the log start offset moves up to the
requested offset (-1: the high watermark) and the answer is the partition's new low watermark. Beyond
the high watermark, or negative, is OFFSET_OUT_OF_RANGE; a topic whose cleanup.policy lacks "delete"
is POLICY_VIOLATION; internal topics are INVALID_TOPIC_EXCEPTION; unknown topics and partitions
UNKNOWN_TOPIC_OR_PARTITION — each with low watermark -1. With one replica the low watermark is reached at
once, so `timeout_ms` never expires. The segments wholly below the new start are removed by the next
retention pass, as in Kafka.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.broker.topic_names import is_internal
from kemu.handlers import _authorize as authz
from kemu.handlers._leadership import leads
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import Fixed, each, error_responder
from kemu.log import LogClosedError, LogError
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k21_delete_records import (
        DeleteRecordsRequest,
        DeleteRecordsResponse,
        DeleteRecordsResponseTopicsPartitions,
    )

KEY = 21

INVALID_LOW_WATERMARK = -1


async def handle(ctx: RequestContext, request: Incoming[DeleteRecordsRequest]) -> DeleteRecordsResponse:
    # A map, as Kafka's: a partition named twice is deleted up to its last offset and answered once.
    wanted: dict[tuple[str, int], int] = {}
    for topic in request.body["topics"]:
        for partition in topic["partitions"]:
            wanted[(topic["name"], partition["partition_index"])] = partition["offset"]
    responses: dict[str, list[DeleteRecordsResponseTopicsPartitions]] = {}
    deletable = authz.allowed_names(ctx, authz.DELETE, authz.TOPIC, (name for name, _ in wanted))
    for (name, index), offset in wanted.items():
        responses.setdefault(name, []).append(_delete(ctx, name, index, offset) if name in deletable
                                              else _result(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
    return {"topics": [{"name": name, "partitions": parts} for name, parts in responses.items()]}


def _delete(ctx: RequestContext, name: str, index: int, offset: int) -> DeleteRecordsResponseTopicsPartitions:
    partition = ctx.broker.partition(name, index)
    if partition is None:
        return _result(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if not leads(ctx.node_id, partition):
        return _result(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    if is_internal(name):
        return _result(index, ErrorCode.INVALID_TOPIC_EXCEPTION)
    if not partition.config.delete:
        return _result(index, ErrorCode.POLICY_VIOLATION)
    try:
        low_watermark = partition.delete_records(offset)
    except LogClosedError:
        return _result(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    except LogError as exc:
        return _result(index, exc.code)
    return _result(index, ErrorCode.NONE, low_watermark)


def _result(index: int, code: ErrorCode,
            low_watermark: int = INVALID_LOW_WATERMARK) -> DeleteRecordsResponseTopicsPartitions:
    return {"partition_index": index, "low_watermark": low_watermark, "error_code": int(code)}


# DeleteRecordsRequest.getErrorResponse: the error on every partition, low watermark -1.
error_response = error_responder(KEY, topics=each("topics", name="name", partitions=each(
    "partitions", partition_index="partition_index", low_watermark=Fixed(INVALID_LOW_WATERMARK))))
