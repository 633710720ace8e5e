"""The records the group coordinator journals to `__consumer_offsets`, and replays at start-up.

Each is a key dict and a value dict (None for a tombstone) named by Kafka's coordinator record schema
(`OffsetCommitKey`/`OffsetCommitValue` is type "OffsetCommit", and so on), with the schema's field names in
snake_case. Transactional offset commits carry the producer id and epoch that wrote them: Kafka writes them
as transactional records, made visible (or discarded) by the COMMIT/ABORT marker of that producer.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any, NamedTuple

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


class RecordType(StrEnum):
    # The key schema's version is the record type's number in __consumer_offsets.
    OFFSET_COMMIT = "OffsetCommit"  # key version 0/1
    GROUP_METADATA = "GroupMetadata"  # 2
    CONSUMER_GROUP_METADATA = "ConsumerGroupMetadata"  # 3
    CONSUMER_GROUP_PARTITION_METADATA = "ConsumerGroupPartitionMetadata"  # 4
    CONSUMER_GROUP_MEMBER_METADATA = "ConsumerGroupMemberMetadata"  # 5
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = "ConsumerGroupTargetAssignmentMetadata"  # 6
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = "ConsumerGroupTargetAssignmentMember"  # 7
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = "ConsumerGroupCurrentMemberAssignment"  # 8
    # KIP-932 share groups (Kafka 4.3).
    SHARE_GROUP_MEMBER_METADATA = "ShareGroupMemberMetadata"  # 10
    SHARE_GROUP_METADATA = "ShareGroupMetadata"  # 11
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = "ShareGroupTargetAssignmentMetadata"  # 12
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = "ShareGroupTargetAssignmentMember"  # 13
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = "ShareGroupCurrentMemberAssignment"  # 14
    SHARE_GROUP_STATE_PARTITION_METADATA = "ShareGroupStatePartitionMetadata"  # 15
    # KIP-1071 streams groups (Kafka 4.3).
    STREAMS_GROUP_METADATA = "StreamsGroupMetadata"  # 17
    STREAMS_GROUP_MEMBER_METADATA = "StreamsGroupMemberMetadata"  # 19
    STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA = "StreamsGroupTargetAssignmentMetadata"  # 20
    STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER = "StreamsGroupTargetAssignmentMember"  # 21
    STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT = "StreamsGroupCurrentMemberAssignment"  # 22
    STREAMS_GROUP_TOPOLOGY = "StreamsGroupTopology"  # 23


class CoordinatorRecord(NamedTuple):
    key: dict[str, Any]
    value: dict[str, Any] | None
    type: str
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH

    @property
    def is_tombstone(self) -> bool:
        return self.value is None

    @property
    def is_transactional(self) -> bool:
        return self.producer_id != NO_PRODUCER_ID


Journal = Callable[[CoordinatorRecord], None]


def discard(record: CoordinatorRecord) -> None:
    """The journal of a coordinator that persists nothing."""


# Partition sets per topic id, as the consumer-group records and responses carry them.
TopicPartitionMap = Mapping[uuid.UUID, frozenset[int]]


def topic_partitions_field(assignment: TopicPartitionMap) -> list[dict[str, Any]]:
    return [
        {"topic_id": topic_id, "partitions": sorted(partitions)}
        for topic_id, partitions in sorted(assignment.items(), key=lambda item: str(item[0]))
        if partitions
    ]


def topic_partitions_from_field(entries: Iterable[Mapping[str, Any]] | None) -> dict[uuid.UUID, frozenset[int]]:
    result: dict[uuid.UUID, frozenset[int]] = {}
    for entry in entries or ():
        partitions = frozenset(entry["partitions"])
        if partitions:
            result[entry["topic_id"]] = result.get(entry["topic_id"], frozenset()) | partitions
    return result


# ---- offsets ----------------------------------------------------------------------------------------

def offset_commit_key(group: str, topic: str, partition: int) -> dict[str, Any]:
    return {"group": group, "topic": topic, "partition": partition}


# ---- classic groups ---------------------------------------------------------------------------------

def group_metadata_key(group: str) -> dict[str, Any]:
    return {"group": group}


# ---- consumer groups (KIP-848) ----------------------------------------------------------------------

def consumer_group_key(group_id: str) -> dict[str, Any]:
    return {"group_id": group_id}


def consumer_group_member_key(group_id: str, member_id: str) -> dict[str, Any]:
    return {"group_id": group_id, "member_id": member_id}


def consumer_group_epoch_record(group_id: str, epoch: int) -> CoordinatorRecord:
    return CoordinatorRecord(consumer_group_key(group_id), {"epoch": epoch}, RecordType.CONSUMER_GROUP_METADATA)


def consumer_group_epoch_tombstone(group_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(consumer_group_key(group_id), None, RecordType.CONSUMER_GROUP_METADATA)


def target_assignment_epoch_record(group_id: str, epoch: int) -> CoordinatorRecord:
    return CoordinatorRecord(
        consumer_group_key(group_id), {"assignment_epoch": epoch},
        RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
    )


def target_assignment_epoch_tombstone(group_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(
        consumer_group_key(group_id), None, RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA
    )


def target_assignment_member_record(
    group_id: str, member_id: str, assignment: TopicPartitionMap
) -> CoordinatorRecord:
    return CoordinatorRecord(
        consumer_group_member_key(group_id, member_id),
        {"topic_partitions": topic_partitions_field(assignment)},
        RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    )


def target_assignment_member_tombstone(group_id: str, member_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(
        consumer_group_member_key(group_id, member_id), None, RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER
    )


def current_assignment_tombstone(group_id: str, member_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(
        consumer_group_member_key(group_id, member_id), None, RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT
    )


def member_metadata_tombstone(group_id: str, member_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(
        consumer_group_member_key(group_id, member_id), None, RecordType.CONSUMER_GROUP_MEMBER_METADATA
    )


def partition_metadata_tombstone(group_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(consumer_group_key(group_id), None, RecordType.CONSUMER_GROUP_PARTITION_METADATA)
