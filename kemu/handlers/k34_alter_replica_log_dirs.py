"""AlterReplicaLogDirs (key 34), versions 1-2 (Kafka 4 dropped v0, KIP-896); v2 is flexible.

As KafkaApis.handleAlterReplicaLogDirsRequest and ReplicaManager.alterReplicaLogDirs answer it: ALTER on the
cluster is required, else every partition of the request is CLUSTER_AUTHORIZATION_FAILED. The request is read as
Kafka reads it, into one destination per partition (a map: a partition named twice is answered once, for the
last directory named), and each partition is checked in Kafka's order:

- INVALID_TOPIC_EXCEPTION when the future replica's directory name, `<topic>-<partition>.<32 hex>-future`,
  would be longer than 255 characters (KAFKA-4893), whether or not the topic exists;
- LOG_DIR_NOT_FOUND when the path is not exactly the absolute path of a log directory of the broker;
- UNKNOWN_TOPIC_OR_PARTITION for a partition the cluster does not have; REPLICA_NOT_AVAILABLE (Kafka keeps it
  for NOT_LEADER_OR_FOLLOWER here) for one the receiving broker holds no replica of; KAFKA_STORAGE_ERROR for a
  replica whose files failed (offline until the broker restarts).

kemu's brokers have one log directory, the data directory (as DescribeLogDirs reports it), so a replica is
only ever asked to move to the directory it is in already: Kafka answers that with NONE and moves nothing.
Kafka lists the results in the order of its hash maps, which no client relies on; kemu lists the topics, and
their partitions, in the order the request first names them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k34_alter_replica_log_dirs import (
        AlterReplicaLogDirsRequest,
        AlterReplicaLogDirsResponse,
        AlterReplicaLogDirsResponseResultsPartitions,
    )

KEY = 34

MAX_DIR_NAME = 255  # a file name's length on the file systems Kafka supports
# What the future replica's directory name adds to the topic and the partition: "-", ".", a UUID's 32 hex
# digits and "-future" (UnifiedLog.logFutureDirName).
FUTURE_DIR_EXTRA = len("-") + len(".") + 32 + len("-future")


async def handle(ctx: RequestContext, request: Incoming[AlterReplicaLogDirsRequest]) -> AlterReplicaLogDirsResponse:
    authz.require_cluster(ctx, authz.ALTER)
    destinations: dict[tuple[str, int], str] = {}
    for alter in request.body["dirs"]:
        for topic in alter["topics"]:
            for index in topic["partitions"]:
                destinations[(topic["name"], index)] = alter["path"]
    log_dir = str(ctx.broker.data_dir.absolute())  # as Kafka's File.getAbsolutePath: no link resolved
    results: dict[str, list[AlterReplicaLogDirsResponseResultsPartitions]] = {}
    for (name, index), path in destinations.items():
        code = _moved(ctx, name, index, path == log_dir)
        results.setdefault(name, []).append({"partition_index": index, "error_code": int(code)})
    return {"results": [{"topic_name": name, "partitions": partitions} for name, partitions in results.items()]}


def _moved(ctx: RequestContext, name: str, index: int, known_dir: bool) -> ErrorCode:
    if _java_length(name) + len(str(index)) + FUTURE_DIR_EXTRA > MAX_DIR_NAME:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    if not known_dir:
        return ErrorCode.LOG_DIR_NOT_FOUND
    topic = ctx.broker.topics.get(name)
    if topic is None or not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    partition = topic.partitions[index]
    if ctx.node_id not in partition.replicas or not partition.is_open:
        return ErrorCode.REPLICA_NOT_AVAILABLE
    if partition.storage_failure is not None:
        return ErrorCode.KAFKA_STORAGE_ERROR
    return ErrorCode.NONE  # already in its one directory: nothing to move


def _java_length(text: str) -> int:
    """Java's String.length: UTF-16 code units (a character outside the BMP counts twice)."""
    return len(text.encode("utf-16-le")) // 2


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """AlterReplicaLogDirsRequest.getErrorResponse: every partition of every directory's topics, as the request
    lists them (duplicates kept), with the error; the response carries no message."""
    return {"results": [{"topic_name": topic["name"],
                         "partitions": [{"partition_index": index, "error_code": int(code)}
                                        for index in topic["partitions"]]}
                        for alter in request.body["dirs"] for topic in alter["topics"]]}
