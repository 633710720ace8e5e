"""DescribeLogDirs (key 35), versions 1-5 (Kafka 4 dropped v0, KIP-896: a request for it closes the connection).

v1 is v0 on the wire (the response may come before throttling); v2 is flexible; v3 adds the top-level
error code; v4 each log directory's total and usable bytes (from the filesystem, as Kafka's FileStore); v5
whether the directory is cordoned (KIP-1066): never, as kemu does not cordon its directory
(`cordoned.log.dirs` is accepted only).

kemu has one log directory, its data directory, reported by its absolute path (as Kafka's
toAbsolutePath: symbolic links are not resolved), as `log.dirs` names it.
Each hosted partition (internal topics included) reports its segments' size, an offset lag of
max(high watermark - log end offset, 0) — 0 for a leader, as in Kafka — and is_future_key false (kemu
never moves replicas between directories). A null topic list asks for every partition; a requested
partition the broker does not host is left out, and a topic left with none is omitted, as in Kafka.
It needs DESCRIBE on the cluster (KafkaApis.handleDescribeLogDirsRequest): without it, no directory at all and,
from v3, CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from kemu.authorizer.acls import AclOperation, ResourceType
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.versions import NARROWED
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k35_describe_log_dirs import (
        DescribeLogDirsRequest,
        DescribeLogDirsResponse,
        DescribeLogDirsResponseResultsTopicsPartitions,
    )

KEY = 35
VERSIONS = NARROWED[KEY]


async def handle(ctx: RequestContext, request: Incoming[DescribeLogDirsRequest]) -> DescribeLogDirsResponse:
    if not authz.allowed(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER):
        return {"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "results": []}
    broker = ctx.broker
    requested = request.body["topics"]
    wanted = None if requested is None else {(t["topic"], p) for t in requested for p in t["partitions"]}
    by_topic: dict[str, list[DescribeLogDirsResponseResultsTopicsPartitions]] = {}
    for log in broker.storage.log_dir:
        if wanted is not None and (log.topic, log.partition) not in wanted:
            continue
        by_topic.setdefault(log.topic, []).append({
            "partition_index": log.partition,
            "partition_size": log.size_in_bytes,
            "offset_lag": max(log.high_watermark - log.log_end_offset, 0),
            "is_future_key": False,
        })
    usage = shutil.disk_usage(broker.data_dir)
    return {
        "error_code": 0,
        "results": [{
            "error_code": 0,
            "log_dir": str(broker.data_dir.absolute()),
            "topics": [{"name": name, "partitions": sorted(partitions, key=lambda p: p["partition_index"])}
                       for name, partitions in sorted(by_topic.items())],
            "total_bytes": usage.total,
            "usable_bytes": usage.free,
            "is_cordoned": False,
        }],
    }
