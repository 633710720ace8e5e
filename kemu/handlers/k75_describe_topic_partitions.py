"""DescribeTopicPartitions (key 75), version 0 (KIP-966), as Kafka's DescribeTopicPartitionsRequestHandler
and KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse serve it.

An empty topic list means every topic. Only topics whose name sorts at or after the cursor's topic are
considered (Java's String order), and a named list must hold the cursor's topic, else the whole request is
INVALID_REQUEST. They are answered in name order; the cursor's topic starts at the cursor's partition, every
other at partition 0. The budget is the smaller of `response_partition_limit` and the broker's
`max.request.partition.size.limit` (2000), but at least 1: a topic that does not fit whole ends the answer
with the next cursor at its first partition left out, and a topic reached with the budget spent is the next
cursor at partition 0. Named topics that do not exist are UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an
illegal name); asked for all topics, there are none such.

Every topic carries its authorized operations (the request has no flag for it); with no authorizer that is
every topic operation, for the missing topics too. A topic the client may not DESCRIBE is left out, and, when
named, answered TOPIC_AUTHORIZATION_FAILED after the others (with no authorized operations). ELR lists are
empty: kemu does not elect from them.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kemu.broker.errors import ApiError
from kemu.broker.topic_names import invalid_name_reason, is_internal
from kemu.broker.topics import Topic
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k75_describe_topic_partitions import (
        DescribeTopicPartitionsRequest,
        DescribeTopicPartitionsRequestCursor,
        DescribeTopicPartitionsResponse,
        DescribeTopicPartitionsResponseNextCursor,
        DescribeTopicPartitionsResponseTopics,
        DescribeTopicPartitionsResponseTopicsPartitions,
    )

KEY = 75

ZERO_UUID = uuid.UUID(int=0)


def java_order(name: str) -> bytes:
    """The sort key of Java's String.compareTo, which compares UTF-16 code units (Python compares code
    points: the two differ above U+FFFF)."""
    return name.encode("utf-16-be", "surrogatepass")


async def handle(ctx: RequestContext,
                 request: Incoming[DescribeTopicPartitionsRequest]) -> DescribeTopicPartitionsResponse:
    broker, body = ctx.broker, request.body
    cursor: DescribeTopicPartitionsRequestCursor | None = body["cursor"]
    cursor_topic = "" if cursor is None else cursor["topic_name"]
    after = java_order(cursor_topic)
    fetch_all = not body["topics"]
    candidates = [t.name for t in broker.topics] if fetch_all else [t["name"] for t in body["topics"]]
    names = {name for name in candidates if java_order(name) >= after}
    if not fetch_all and cursor is not None and cursor_topic not in names:
        raise ApiError(ErrorCode.INVALID_REQUEST,
                       f"DescribeTopicPartitionsRequest topic list should contain the cursor topic: {cursor_topic}")
    describable = authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC, names)
    denied = [] if fetch_all else sorted(names - describable, key=java_order)
    names = describable

    limit = max(min(broker.config.max_request_partition_size_limit, body["response_partition_limit"]), 1)
    topics: list[DescribeTopicPartitionsResponseTopics] = []
    next_cursor: DescribeTopicPartitionsResponseNextCursor | None = None
    for name in sorted(names, key=java_order):
        if limit == 0:
            next_cursor = {"topic_name": name, "partition_index": 0}
            break
        topic = broker.topics.get(name)
        if topic is None:
            if not fetch_all:
                topics.append(_missing(name))
            continue
        first = cursor["partition_index"] if cursor is not None and name == cursor_topic else 0
        partitions, next_index = _page(topic, first, limit)
        topics.append(_described(topic, partitions))
        if next_index is not None:
            next_cursor = {"topic_name": name, "partition_index": next_index}
            break
        limit -= len(partitions)
    for entry in topics:
        described = entry["name"]
        assert described is not None  # the wire's name is nullable; every entry here was made from a topic's
        entry["topic_authorized_operations"] = authz.operations(ctx, authz.TOPIC, described)
    topics.extend({**_missing(name), "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), "is_internal": False}
                  for name in denied)
    return {"topics": topics, "next_cursor": next_cursor}


def _page(topic: Topic, first: int,
          budget: int) -> tuple[list[DescribeTopicPartitionsResponseTopicsPartitions], int | None]:
    """The partitions from `first` that fit in `budget`, and the first one left out (None: none was).
    A start before 0 or past the end is taken as given, as Kafka's range over the partition map does."""
    count = len(topic.partitions)
    upper = min(count, first + budget)
    partitions: list[DescribeTopicPartitionsResponseTopicsPartitions] = [
        {"error_code": 0, "partition_index": p.index, "leader_id": p.leader_id, "leader_epoch": p.leader_epoch,
         "replica_nodes": list(p.replicas), "isr_nodes": list(p.isr), "eligible_leader_replicas": [],
         "last_known_elr": [], "offline_replicas": list(p.offline_replicas)}
        for p in topic.partitions[max(first, 0):upper]
    ]
    return partitions, (upper if upper < count else None)


def _described(topic: Topic, partitions: list[DescribeTopicPartitionsResponseTopicsPartitions],
               ) -> DescribeTopicPartitionsResponseTopics:
    return {"error_code": 0, "name": topic.name, "topic_id": topic.topic_id, "is_internal": topic.is_internal,
            "partitions": partitions}


def _missing(name: str) -> DescribeTopicPartitionsResponseTopics:
    code = ErrorCode.INVALID_TOPIC_EXCEPTION if invalid_name_reason(name) is not None \
        else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return {"error_code": int(code), "name": name, "topic_id": ZERO_UUID, "is_internal": is_internal(name),
            "partitions": []}


# Kafka's DescribeTopicPartitionsRequest.getErrorResponse: the error on every requested topic.
error_response = error_responder(KEY, topics=each("topics", name="name"))
