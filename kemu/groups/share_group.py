"""A KIP-932 share group and its members: Kafka 4.3's ShareGroup and ShareGroupMember.

As with consumer groups, the group changes only by replaying its records (`apply_*`), and members are
immutable values a heartbeat replaces. A share group differs from a consumer group where KIP-932 says so:
its states are only Empty and Stable; a partition may be assigned to several members at once, so there is
no revocation and a member moves to its target assignment in one step; only partitions whose share-partition
state has been initialized are assigned (`initialized`, the ShareGroupStatePartitionMetadata record).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from kemu.groups.consumer_group import MemberState
from kemu.groups.errors import GroupError
from kemu.groups.offsets import OffsetAndMetadata
from kemu.groups.records import (
    CoordinatorRecord,
    RecordType,
    topic_partitions_field,
    topic_partitions_from_field,
)
from kemu.groups.topics import TopicsView
from kemu.wire.errors import ErrorCode

SHARE_PROTOCOL_TYPE = "share"
LEAVE_GROUP_MEMBER_EPOCH = -1
INITIAL_EPOCH = 1  # Kafka's ModernGroup starts at group epoch 1, its target assignment too

Assignment = Mapping[uuid.UUID, frozenset[int]]
EMPTY_ASSIGNMENT: Assignment = {}


class ShareGroupState(Enum):
    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


def group_key(group_id: str) -> dict[str, Any]:
    return {"group_id": group_id}


def member_key(group_id: str, member_id: str) -> dict[str, Any]:
    return {"group_id": group_id, "member_id": member_id}


@dataclass(frozen=True, slots=True)
class ShareGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    assigned_partitions: Assignment = field(default_factory=dict)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def with_epoch(self, epoch: int) -> ShareGroupMember:
        return replace(self, previous_member_epoch=self.member_epoch, member_epoch=epoch)

    def metadata_record(self, group_id: str) -> CoordinatorRecord:
        value = {"rack_id": self.rack_id, "client_id": self.client_id, "client_host": self.client_host,
                 "subscribed_topic_names": sorted(self.subscribed_topic_names)}
        return CoordinatorRecord(member_key(group_id, self.member_id), value, RecordType.SHARE_GROUP_MEMBER_METADATA)

    def current_assignment_record(self, group_id: str) -> CoordinatorRecord:
        value = {"member_epoch": self.member_epoch, "previous_member_epoch": self.previous_member_epoch,
                 "state": int(self.state), "assigned_partitions": topic_partitions_field(self.assigned_partitions)}
        return CoordinatorRecord(member_key(group_id, self.member_id), value,
                                 RecordType.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT)


@dataclass(frozen=True, slots=True)
class StateTopic:
    """A topic in the ShareGroupStatePartitionMetadata record: its name and the partitions concerned."""

    name: str
    partitions: frozenset[int] = frozenset()


class ShareGroup:
    group_type = "share"
    protocol_type = SHARE_PROTOCOL_TYPE

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = INITIAL_EPOCH
        self.metadata_hash = 0
        self.members: dict[str, ShareGroupMember] = {}
        self.target_assignment_epoch = INITIAL_EPOCH
        # When the last target assignment was computed (wall clock, ms); 0 for never or not since a restart.
        self.assignment_timestamp_ms = 0
        self.target_assignment: dict[str, Assignment] = {}
        # The share-partition state of the group's topics (ShareGroupStatePartitionMetadata), by topic id.
        self.initializing: dict[uuid.UUID, StateTopic] = {}
        self.initialized: dict[uuid.UUID, StateTopic] = {}
        self.deleting: dict[uuid.UUID, StateTopic] = {}
        # Whether that record exists (Kafka's shareGroupStatePartitionMetadata holds the group), even empty.
        self.has_state_metadata = False

    # ---- state ------------------------------------------------------------------------------------
    @property
    def state(self) -> ShareGroupState:
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def state_name(self) -> str:
        return self.state.value

    def is_empty(self) -> bool:
        return not self.members

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def subscribed_topic_names(
        self, old: ShareGroupMember | None = None, new: ShareGroupMember | None = None
    ) -> Counter[str]:
        """How many members subscribe to each topic, with `old` replaced by `new` (or removed)."""
        counts: Counter[str] = Counter()
        for member_id, member in self.members.items():
            if old is not None and member_id == old.member_id:
                continue
            counts.update(member.subscribed_topic_names)
        if new is not None:
            counts.update(new.subscribed_topic_names)
        return counts

    def is_subscribed_to_topic(self, topic: str, topics: TopicsView) -> bool:
        return any(topic in member.subscribed_topic_names for member in self.members.values())

    # ---- replay -----------------------------------------------------------------------------------
    def apply_member_metadata(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        if value is None:
            self.members.pop(member_id, None)
            return
        old = self.members.get(member_id) or ShareGroupMember(member_id)
        self.members[member_id] = replace(
            old, rack_id=value.get("rack_id"), client_id=value.get("client_id") or "",
            client_host=value.get("client_host") or "",
            subscribed_topic_names=frozenset(value.get("subscribed_topic_names") or ()))

    def apply_current_assignment(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        old = self.members.get(member_id)
        if value is None:
            if old is not None:
                self.members[member_id] = replace(old, member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                                  previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                                  assigned_partitions={})
            return
        old = old or ShareGroupMember(member_id)
        self.members[member_id] = replace(
            old, member_epoch=value["member_epoch"], previous_member_epoch=value["previous_member_epoch"],
            state=MemberState.from_value(value["state"]),
            assigned_partitions=topic_partitions_from_field(value.get("assigned_partitions")))

    def apply_target_assignment(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        if value is None:
            self.target_assignment.pop(member_id, None)
        else:
            self.target_assignment[member_id] = topic_partitions_from_field(value.get("topic_partitions"))

    def apply_state_partition_metadata(self, value: Mapping[str, Any] | None) -> None:
        def topics(entries: Any) -> dict[uuid.UUID, StateTopic]:
            return {entry["topic_id"]: StateTopic(entry["topic_name"], frozenset(entry.get("partitions") or ()))
                    for entry in entries or ()}

        self.has_state_metadata = value is not None
        value = value or {}
        self.initializing = topics(value.get("initializing_topics"))
        self.initialized = topics(value.get("initialized_topics"))
        self.deleting = topics(value.get("deleting_topics"))

    # ---- deletion ---------------------------------------------------------------------------------
    def tombstone_records(self) -> list[CoordinatorRecord]:
        """Kafka's ShareGroup.createGroupTombstoneRecords, in its order."""
        g = self.group_id
        records = [CoordinatorRecord(member_key(g, m), None, RecordType.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT)
                   for m in self.members]
        records += [CoordinatorRecord(member_key(g, m), None, RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER)
                    for m in self.members]
        records.append(CoordinatorRecord(group_key(g), None, RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA))
        records += [CoordinatorRecord(member_key(g, m), None, RecordType.SHARE_GROUP_MEMBER_METADATA)
                    for m in self.members]
        records.append(CoordinatorRecord(group_key(g), None, RecordType.SHARE_GROUP_STATE_PARTITION_METADATA))
        records.append(CoordinatorRecord(group_key(g), None, RecordType.SHARE_GROUP_METADATA))
        return records

    # ---- what other APIs may do with a share group (Kafka's ShareGroup.validate*) ------------------
    def _not_a_consumer_group(self) -> GroupError:
        return GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is not a consumer group.")

    def validate_offset_commit(self, member_id: str, instance_id: str | None, member_epoch: int,
                               transactional: bool, api_version: int) -> None:
        raise self._not_a_consumer_group()

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        raise self._not_a_consumer_group()

    def validate_offset_delete(self) -> None:
        raise self._not_a_consumer_group()

    def validate_delete(self) -> None:
        if self.members:
            raise GroupError(ErrorCode.NON_EMPTY_GROUP)

    def offset_expiration_base(self, offset: OffsetAndMetadata) -> int | None:
        return None  # a share group has no committed offsets of its own, and never expires (shouldExpire false)


def epoch_record(group_id: str, epoch: int, metadata_hash: int) -> CoordinatorRecord:
    return CoordinatorRecord(group_key(group_id), {"epoch": epoch, "metadata_hash": metadata_hash},
                             RecordType.SHARE_GROUP_METADATA)


def target_assignment_epoch_record(group_id: str, epoch: int) -> CoordinatorRecord:
    return CoordinatorRecord(group_key(group_id), {"assignment_epoch": epoch},
                             RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA)


def target_assignment_member_record(group_id: str, member_id: str, assignment: Assignment) -> CoordinatorRecord:
    return CoordinatorRecord(member_key(group_id, member_id), {"topic_partitions": topic_partitions_field(assignment)},
                             RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER)


def remove_member_records(group_id: str, member_id: str) -> list[CoordinatorRecord]:
    """Kafka's shareGroupFenceMember tombstones, in its order: assignments before the member's metadata."""
    key = member_key(group_id, member_id)
    return [CoordinatorRecord(key, None, RecordType.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT),
            CoordinatorRecord(key, None, RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER),
            CoordinatorRecord(key, None, RecordType.SHARE_GROUP_MEMBER_METADATA)]


def state_partition_metadata_record(
    group_id: str, initializing: Mapping[uuid.UUID, StateTopic], initialized: Mapping[uuid.UUID, StateTopic],
    deleting: Mapping[uuid.UUID, StateTopic],
) -> CoordinatorRecord:
    def entries(topics: Mapping[uuid.UUID, StateTopic], with_partitions: bool = True) -> list[dict[str, Any]]:
        out = []
        for topic_id, topic in sorted(topics.items(), key=lambda item: item[1].name):
            entry: dict[str, Any] = {"topic_id": topic_id, "topic_name": topic.name}
            if with_partitions:
                entry["partitions"] = sorted(topic.partitions)
            out.append(entry)
        return out

    value = {"initializing_topics": entries(initializing), "initialized_topics": entries(initialized),
             "deleting_topics": entries(deleting, with_partitions=False)}
    return CoordinatorRecord(group_key(group_id), value, RecordType.SHARE_GROUP_STATE_PARTITION_METADATA)
