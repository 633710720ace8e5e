"""A KIP-848 consumer group and its members: Kafka's ConsumerGroup and ConsumerGroupMember.

The group is changed only by replaying its records (`apply_*`), exactly as Kafka's coordinator does, so
the journal and the state cannot drift apart. Members are immutable values; a heartbeat builds a new one
and the records it writes put it in place.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum, IntEnum
from typing import Any

from kemu.groups.errors import GroupError
from kemu.groups.offsets import OffsetAndMetadata
from kemu.groups.records import (
    CoordinatorRecord,
    RecordType,
    consumer_group_epoch_tombstone,
    consumer_group_member_key,
    current_assignment_tombstone,
    member_metadata_tombstone,
    partition_metadata_tombstone,
    target_assignment_epoch_tombstone,
    target_assignment_member_tombstone,
    topic_partitions_field,
    topic_partitions_from_field,
)
from kemu.groups.topics import TopicsView
from kemu.wire.errors import ErrorCode

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
CONSUMER_PROTOCOL_TYPE = "consumer"

Assignment = Mapping[uuid.UUID, frozenset[int]]
EMPTY_ASSIGNMENT: Assignment = {}


@functools.lru_cache(maxsize=256)
def compile_regex(regex: str) -> re.Pattern[str] | None:
    """A subscription regex (Kafka uses RE2/J; Python's syntax agrees on what clients send), None if invalid."""
    return None if regex_error(regex) is not None else re.compile(regex)


# Python's complaint (by how it starts) -> RE2/J's description of the same mistake, which Kafka's
# INVALID_REGULAR_EXPRESSION message quotes.
_RE2_DESCRIPTIONS = (
    ("unterminated character set", "missing closing ]"),
    ("missing ), unterminated subpattern", "missing closing )"),
    ("unbalanced parenthesis", "regexp/syntax: internal error"),  # RE2/J's own wording for a stray ")"
    ("nothing to repeat", "missing argument to repetition operator"),
    ("multiple repeat", "invalid nested repetition operator"),
    ("bad character range", "invalid character class range"),
    ("min repeat greater than max repeat", "invalid repeat count"),
    ("bad escape (end of pattern)", "trailing backslash at end of expression"),
    ("bad escape", "invalid escape sequence"),
)
# What Python accepts and RE2 does not: backreferences and lookarounds.
_BACKREFERENCE = re.compile(r"\\[1-9]")
_LOOKAROUND = re.compile(r"\(\?(?:=|!|<=|<!)")


def regex_error(regex: str) -> str | None:
    """RE2/J's description of why `regex` is not a valid subscription regex, or None if it is."""
    if _BACKREFERENCE.search(regex) is not None:
        return "invalid escape sequence"
    if _LOOKAROUND.search(regex) is not None:
        return "invalid or unsupported Perl syntax"
    try:
        re.compile(regex)
    except re.error as error:
        return next((re2 for python, re2 in _RE2_DESCRIPTIONS if error.msg.startswith(python)),
                    "invalid or unsupported Perl syntax")
    return None


class MemberState(IntEnum):
    STABLE = 0
    UNREVOKED_PARTITIONS = 1  # must give up partitions before moving to the next epoch
    UNRELEASED_PARTITIONS = 2  # at the target epoch, but waits for partitions others still hold
    UNKNOWN = 127

    @classmethod
    def from_value(cls, value: int) -> MemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


class ConsumerGroupState(Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    topic_id: uuid.UUID
    name: str
    num_partitions: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str | None = None
    server_assignor_name: str | None = None
    assigned_partitions: Assignment = field(default_factory=dict)
    partitions_pending_revocation: Assignment = field(default_factory=dict)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def with_epoch(self, epoch: int) -> ConsumerGroupMember:
        """Kafka's Builder.updateMemberEpoch: the current epoch becomes the previous one."""
        return replace(self, previous_member_epoch=self.member_epoch, member_epoch=epoch)

    def subscribed_topics(self, topics: TopicsView) -> set[str]:
        """Topic names subscribed by name, plus existing non-internal topics the regex matches in full."""
        names = set(self.subscribed_topic_names)
        pattern = compile_regex(self.subscribed_topic_regex) if self.subscribed_topic_regex else None
        if pattern is not None:
            names.update(name for name, topic in topics.by_name.items()
                         if not topic.internal and pattern.fullmatch(name))
        return names

    # ---- records ----------------------------------------------------------------------------------
    def metadata_record(self, group_id: str) -> CoordinatorRecord:
        value = {
            "instance_id": self.instance_id,
            "rack_id": self.rack_id,
            "client_id": self.client_id,
            "client_host": self.client_host,
            "subscribed_topic_names": sorted(self.subscribed_topic_names),
            "subscribed_topic_regex": self.subscribed_topic_regex,
            "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "server_assignor": self.server_assignor_name,
            "classic_member_metadata": None,
        }
        return CoordinatorRecord(consumer_group_member_key(group_id, self.member_id), value,
                                 RecordType.CONSUMER_GROUP_MEMBER_METADATA)

    def current_assignment_record(self, group_id: str) -> CoordinatorRecord:
        value = {
            "member_epoch": self.member_epoch,
            "previous_member_epoch": self.previous_member_epoch,
            "state": int(self.state),
            "assigned_partitions": topic_partitions_field(self.assigned_partitions),
            "partitions_pending_revocation": topic_partitions_field(self.partitions_pending_revocation),
        }
        return CoordinatorRecord(consumer_group_member_key(group_id, self.member_id), value,
                                 RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT)

    def updated_with_metadata(self, value: Mapping[str, Any]) -> ConsumerGroupMember:
        return replace(
            self,
            instance_id=value.get("instance_id"),
            rack_id=value.get("rack_id"),
            client_id=value.get("client_id") or "",
            client_host=value.get("client_host") or "",
            subscribed_topic_names=frozenset(value.get("subscribed_topic_names") or ()),
            subscribed_topic_regex=value.get("subscribed_topic_regex"),
            rebalance_timeout_ms=value.get("rebalance_timeout_ms", -1),
            server_assignor_name=value.get("server_assignor"),
        )

    def updated_with_current_assignment(self, value: Mapping[str, Any]) -> ConsumerGroupMember:
        return replace(
            self,
            member_epoch=value["member_epoch"],
            previous_member_epoch=value["previous_member_epoch"],
            state=MemberState.from_value(value["state"]),
            assigned_partitions=topic_partitions_from_field(value.get("assigned_partitions")),
            partitions_pending_revocation=topic_partitions_from_field(value.get("partitions_pending_revocation")),
        )


INITIAL_EPOCH = 1


class ConsumerGroup:
    group_type = "consumer"
    protocol_type = CONSUMER_PROTOCOL_TYPE

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        # Kafka 4.3 starts a group at epoch 1, its (empty) target assignment too: the first member's join
        # makes epoch 2.
        self.group_epoch = INITIAL_EPOCH
        self.members: dict[str, ConsumerGroupMember] = {}
        self.static_members: dict[str, str] = {}
        self.subscription_metadata: dict[str, TopicMetadata] = {}
        self.target_assignment_epoch = INITIAL_EPOCH
        # When the last target assignment was computed (wall clock, ms); 0 for never.
        self.assignment_timestamp_ms = 0
        self.target_assignment: dict[str, Assignment] = {}
        # topic id -> partition -> epoch of the member currently owning it (assigned or being revoked).
        self.partition_epochs: dict[uuid.UUID, dict[int, int]] = {}

    # ---- state ------------------------------------------------------------------------------------
    @property
    def state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.target_assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.target_assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def state_name(self) -> str:
        return self.state.value

    def is_empty(self) -> bool:
        return not self.members

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def static_member(self, instance_id: str | None) -> ConsumerGroupMember | None:
        member_id = None if instance_id is None else self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def current_partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.partition_epochs.get(topic_id, {}).get(partition, -1)

    def target_assignment_for(self, member_id: str, instance_id: str | None) -> Assignment:
        if member_id in self.target_assignment:
            return self.target_assignment[member_id]
        previous = None if instance_id is None else self.static_members.get(instance_id)
        if previous is not None:
            return self.target_assignment.get(previous, EMPTY_ASSIGNMENT)
        return EMPTY_ASSIGNMENT

    def subscribed_topic_names(
        self, topics: TopicsView, old: ConsumerGroupMember | None = None, new: ConsumerGroupMember | None = None
    ) -> Counter[str]:
        """How many members subscribe to each topic, with `old` replaced by `new` (or removed)."""
        counts: Counter[str] = Counter()
        for member_id, member in self.members.items():
            if old is not None and member_id == old.member_id:
                continue
            counts.update(member.subscribed_topics(topics))
        if new is not None:
            counts.update(new.subscribed_topics(topics))
        return counts

    def is_subscribed_to_topic(self, topic: str, topics: TopicsView) -> bool:
        return any(topic in member.subscribed_topics(topics) for member in self.members.values())

    def preferred_server_assignor(
        self, old: ConsumerGroupMember | None = None, new: ConsumerGroupMember | None = None
    ) -> str | None:
        counts: Counter[str] = Counter()
        for member_id, member in self.members.items():
            if old is not None and member_id == old.member_id:
                continue
            if member.server_assignor_name:
                counts[member.server_assignor_name] += 1
        if new is not None and new.server_assignor_name:
            counts[new.server_assignor_name] += 1
        if not counts:
            return None
        top = max(counts.values())
        return min(name for name, count in counts.items() if count == top)

    # ---- replay -----------------------------------------------------------------------------------
    def apply_member_metadata(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        if value is None:
            member = self.members.get(member_id)
            if member is None:
                return
            if member.member_epoch != LEAVE_GROUP_MEMBER_EPOCH or member_id in self.target_assignment:
                raise AssertionError(f"member {member_id} of {self.group_id} deleted before its assignments")
            self._remove_member(member_id)
            return
        old = self.members.get(member_id) or ConsumerGroupMember(member_id)
        self._update_member(old, old.updated_with_metadata(value))

    def apply_current_assignment(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        old = self.members.get(member_id)
        if value is None:
            if old is None:
                return
            new = replace(old, member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                          previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                          assigned_partitions={}, partitions_pending_revocation={})
        else:
            old = old or ConsumerGroupMember(member_id)
            new = old.updated_with_current_assignment(value)
        self._update_member(old, new)

    def apply_target_assignment(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        if value is None:
            self.target_assignment.pop(member_id, None)
        else:
            self.target_assignment[member_id] = topic_partitions_from_field(value.get("topic_partitions"))

    def apply_partition_metadata(self, value: Mapping[str, Any] | None) -> None:
        self.subscription_metadata = {}
        for topic in (value or {}).get("topics", ()):
            self.subscription_metadata[topic["topic_name"]] = TopicMetadata(
                topic["topic_id"], topic["topic_name"], topic["num_partitions"])

    def _update_member(self, old: ConsumerGroupMember, new: ConsumerGroupMember) -> None:
        previous = self.members.get(old.member_id)
        self.members[new.member_id] = new
        if previous is not None:
            self._remove_partition_epochs(previous)
        self._add_partition_epochs(new)
        if new.instance_id is not None:
            self.static_members[new.instance_id] = new.member_id

    def _remove_member(self, member_id: str) -> None:
        member = self.members.pop(member_id)
        self._remove_partition_epochs(member)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]

    def _remove_partition_epochs(self, member: ConsumerGroupMember) -> None:
        for assignment in (member.assigned_partitions, member.partitions_pending_revocation):
            for topic_id, partitions in assignment.items():
                epochs = self.partition_epochs.get(topic_id)
                if epochs is None:
                    continue
                for partition in partitions:
                    if epochs.get(partition) == member.member_epoch:
                        del epochs[partition]
                if not epochs:
                    del self.partition_epochs[topic_id]

    def _add_partition_epochs(self, member: ConsumerGroupMember) -> None:
        for assignment in (member.assigned_partitions, member.partitions_pending_revocation):
            for topic_id, partitions in assignment.items():
                epochs = self.partition_epochs.setdefault(topic_id, {})
                for partition in partitions:
                    if partition in epochs:
                        # Two members never own a partition at once: reconciliation waits for revocation.
                        raise AssertionError(f"{self.group_id}: partition {topic_id}-{partition} owned twice")
                    epochs[partition] = member.member_epoch

    # ---- deletion ---------------------------------------------------------------------------------
    def tombstone_records(self) -> list[CoordinatorRecord]:
        records = [current_assignment_tombstone(self.group_id, m) for m in self.members]
        records += [target_assignment_member_tombstone(self.group_id, m) for m in self.target_assignment]
        records.append(target_assignment_epoch_tombstone(self.group_id))
        records += [member_metadata_tombstone(self.group_id, m) for m in self.members]
        records.append(partition_metadata_tombstone(self.group_id))
        records.append(consumer_group_epoch_tombstone(self.group_id))
        return records

    # ---- offsets ----------------------------------------------------------------------------------
    def validate_offset_commit(
        self, member_id: str, instance_id: str | None, member_epoch: int, transactional: bool, api_version: int
    ) -> None:
        if member_epoch < 0 and not self.members:
            return  # the admin client, or a consumer without group management
        if transactional and member_epoch < 0 and not member_id and instance_id is None:
            return  # TxnOffsetCommit before v3 carries no member information
        member = self.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {self.group_id}.")
        if not transactional and api_version < 9:
            raise GroupError(ErrorCode.UNSUPPORTED_VERSION,
                             "OffsetCommit version 9 or above must be used by members using the consumer group "
                             "protocol")
        if member_epoch != member.member_epoch:
            raise GroupError(ErrorCode.STALE_MEMBER_EPOCH,
                             f"The member epoch {member_epoch} is stale; the current one is {member.member_epoch}.")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if member_id is None and member_epoch < 0:
            return
        member = self.members.get(member_id or "")
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {self.group_id}.")
        if member_epoch != member.member_epoch:
            raise GroupError(ErrorCode.STALE_MEMBER_EPOCH)

    def validate_offset_delete(self) -> None:
        return

    def validate_delete(self) -> None:
        if self.members:
            raise GroupError(ErrorCode.NON_EMPTY_GROUP)

    def offset_expiration_base(self, offset: OffsetAndMetadata) -> int | None:
        return offset.commit_timestamp


def subscription_metadata_record(group_id: str, metadata: Mapping[str, TopicMetadata]) -> CoordinatorRecord:
    topics = [
        {"topic_id": meta.topic_id, "topic_name": meta.name, "num_partitions": meta.num_partitions,
         "partition_metadata": []}
        for meta in sorted(metadata.values(), key=lambda m: m.name)
    ]
    return CoordinatorRecord({"group_id": group_id}, {"topics": topics},
                             RecordType.CONSUMER_GROUP_PARTITION_METADATA)


def compute_subscription_metadata(names: Counter[str] | set[str], topics: TopicsView) -> dict[str, TopicMetadata]:
    result: dict[str, TopicMetadata] = {}
    for name in names:
        topic = topics.by_name.get(name)
        if topic is not None:
            result[name] = TopicMetadata(topic.topic_id, name, topic.num_partitions)
    return result
