"""DescribeShareGroupOffsets (key 90), versions 0-1 (KIP-932; the lag from v1, KIP-1226).

Each group's share-partition start offsets (SPSO), as KafkaApis.handleDescribeShareGroupOffsetsRequest and
GroupCoordinatorService answer them:
- DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED (no message);
- topics null: every share-partition the group coordinator has initialised, of topics that still exist,
  without the topics the client may not DESCRIBE; NOT_COORDINATOR (with its message) where this broker does
  not coordinate the group; an unknown group, or one of another kind, has none;
- topics named: each partition asked (Kafka asks its share coordinator, not the group's, so no coordinator
  check and no group lookup); an unknown topic answers topic id zero, a topic the client may not DESCRIBE
  TOPIC_AUTHORIZATION_FAILED per partition, after the others; the empty group id UNKNOWN_SERVER_ERROR (Kafka's
  persister refuses it);
- a partition with no state to tell (never initialised, or initialised and not read since) start offset -1
  and lag -1; else its start offset and lag = high watermark - start offset - records acknowledged or
  archived above it (Kafka's delivery-complete count). The leader epoch is 0.

kemu's start offset is the share-partition's own; Kafka's is the one its share coordinator last persisted,
which trails it by one state write (the start moves after each write), and stays -1 until the first
acknowledgement, release or lock expiry. The lag is the same either way.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kemu.coordinators.share_fetch import ShareFetchManager
from kemu.groups import ShareGroup
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k90_describe_share_group_offsets import (
        DescribeShareGroupOffsetsRequest,
        DescribeShareGroupOffsetsRequestGroups,
        DescribeShareGroupOffsetsRequestGroupsTopics,
        DescribeShareGroupOffsetsResponse,
        DescribeShareGroupOffsetsResponseGroups,
        DescribeShareGroupOffsetsResponseGroupsTopics,
        DescribeShareGroupOffsetsResponseGroupsTopicsPartitions,
    )

KEY = 90
ZERO_UUID = uuid.UUID(int=0)
NOT_KNOWN = -1  # Kafka's PartitionFactory.UNINITIALIZED_START_OFFSET and UNINITIALIZED_LAG


async def handle(ctx: RequestContext,
                 request: Incoming[DescribeShareGroupOffsetsRequest]) -> DescribeShareGroupOffsetsResponse:
    return {"groups": [_describe(ctx, group) for group in request.body["groups"]]}


def _describe(ctx: RequestContext,
              group: DescribeShareGroupOffsetsRequestGroups) -> DescribeShareGroupOffsetsResponseGroups:
    group_id, topics = group["group_id"], group["topics"]
    if not authz.allowed(ctx, authz.DESCRIBE, authz.GROUP, group_id):
        return _group(group_id, [], ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if topics is None:
        return _all_partitions(ctx, group_id)
    return _named_partitions(ctx, group_id, topics)


def _group(group_id: str, topics: list[DescribeShareGroupOffsetsResponseGroupsTopics], code: ErrorCode = ErrorCode.NONE,
           message: str | None = None) -> DescribeShareGroupOffsetsResponseGroups:
    return {"group_id": group_id, "topics": topics, "error_code": code, "error_message": message}


def _manager(ctx: RequestContext) -> ShareFetchManager | None:
    return ctx.coordinators.share if ctx.coordinators.share_made else None


def _partition(manager: ShareFetchManager | None, group_id: str, topic_id: uuid.UUID,
               index: int) -> DescribeShareGroupOffsetsResponseGroupsTopicsPartitions:
    start = None if manager is None else manager.start_offset(group_id, topic_id, index)
    lag = None if manager is None or start is None else manager.lag(group_id, topic_id, index)
    return {"partition_index": index, "start_offset": NOT_KNOWN if start is None else start, "leader_epoch": 0,
            "lag": NOT_KNOWN if lag is None else lag, "error_code": ErrorCode.NONE, "error_message": None}


def _all_partitions(ctx: RequestContext, group_id: str) -> DescribeShareGroupOffsetsResponseGroups:
    error = ctx.groups.coordinator_error(group_id, ctx.node_id)
    if error is not ErrorCode.NONE:
        return _group(group_id, [], error, error.message)
    group = ctx.groups.coordinator.group(group_id)
    if not isinstance(group, ShareGroup):
        return _group(group_id, [])
    manager = _manager(ctx)
    found: dict[str, tuple[uuid.UUID, list[int]]] = {}
    for topic_id, state in group.initialized.items():
        topic = ctx.broker.topics.by_id(topic_id)
        if topic is not None:
            found[topic.name] = (topic_id, sorted(state.partitions))
    describable = authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC, found)
    return _group(group_id, [
        {"topic_name": name, "topic_id": topic_id,
         "partitions": [_partition(manager, group_id, topic_id, index) for index in indexes]}
        for name, (topic_id, indexes) in sorted(found.items()) if name in describable])


def _named_partitions(ctx: RequestContext, group_id: str, topics: list[DescribeShareGroupOffsetsRequestGroupsTopics],
                      ) -> DescribeShareGroupOffsetsResponseGroups:
    if not topics:
        return _group(group_id, [])
    describable = authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC, (t["topic_name"] for t in topics))
    known: list[tuple[uuid.UUID, str, list[int]]] = []
    unknown: list[DescribeShareGroupOffsetsResponseGroupsTopics] = []
    denied: list[DescribeShareGroupOffsetsResponseGroupsTopics] = []
    for topic in topics:
        name = topic["topic_name"]
        if name not in describable:
            denied.append({"topic_name": name, "topic_id": ZERO_UUID, "partitions": [
                {"partition_index": index, "start_offset": NOT_KNOWN, "leader_epoch": 0, "lag": NOT_KNOWN,
                 "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                 "error_message": ErrorCode.TOPIC_AUTHORIZATION_FAILED.message} for index in topic["partitions"]]})
            continue
        found = ctx.broker.topics.get(name)
        if found is None:
            # Absent data rather than an error, as OffsetFetch answers it (GroupCoordinatorService).
            unknown.append({"topic_name": name, "topic_id": ZERO_UUID, "partitions": [
                {"partition_index": index, "start_offset": NOT_KNOWN, "leader_epoch": 0, "lag": NOT_KNOWN,
                 "error_code": ErrorCode.NONE, "error_message": None} for index in topic["partitions"]]})
        else:
            known.append((found.topic_id, name, sorted(set(topic["partitions"]))))
    if known and not group_id:
        return _group(group_id, [], ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.UNKNOWN_SERVER_ERROR.message)
    manager = _manager(ctx)
    described: list[DescribeShareGroupOffsetsResponseGroupsTopics] = [
        {"topic_name": name, "topic_id": topic_id,
         "partitions": [_partition(manager, group_id, topic_id, index) for index in indexes]}
        for topic_id, name, indexes in known]
    return _group(group_id, described + unknown + denied)


_every_group = error_responder(KEY, groups=each("groups", group_id="group_id"))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return _every_group(request, code, message or code.message)
