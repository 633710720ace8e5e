"""Rebuilding the coordinator's state from its records, at start-up and as each new record is applied.

Consumer-group and offset records are applied the moment they are written (the live path and the
start-up path are the same code). Classic GroupMetadata records are only replayed at start-up: the live
classic state machine holds more than the record (parked requests, timers), as in Kafka.
"""

from __future__ import annotations

from typing import Any

from kemu.clock import Clock
from kemu.groups.classic_group import ClassicGroup, ClassicGroupState, ClassicMember
from kemu.groups.consumer_group import ConsumerGroup
from kemu.groups.offsets import OffsetAndMetadata, OffsetStore
from kemu.groups.records import CoordinatorRecord, RecordType
from kemu.groups.share_group import ShareGroup
from kemu.groups.streams_group import StreamsGroup

Group = ClassicGroup | ConsumerGroup | ShareGroup | StreamsGroup


class Replayer:
    """Applies records to the groups and offsets of a `CoordinatorState`, which makes one of these for itself:
    its own records as it journals them, and the ones the coordinator reads back at start-up."""

    def __init__(self, groups: dict[str, Group], offsets: OffsetStore, clock: Clock) -> None:
        self.groups = groups
        self.offsets = offsets
        self.clock = clock

    def replay(self, record: CoordinatorRecord) -> None:
        kind = record.type
        if kind == RecordType.OFFSET_COMMIT:
            self._offset_commit(record)
        elif kind == RecordType.GROUP_METADATA:
            self._group_metadata(record.key["group"], record.value)
        elif kind in _CONSUMER_GROUP_TYPES:
            self._consumer_group(record)
        elif kind in _SHARE_GROUP_TYPES:
            self._share_group(record)
        elif kind in _STREAMS_GROUP_TYPES:
            self._streams_group(record)
        else:
            raise ValueError(f"not a group coordinator record: {kind!r}")

    # ---- offsets ----------------------------------------------------------------------------------
    def _offset_commit(self, record: CoordinatorRecord) -> None:
        group_id, topic, partition = record.key["group"], record.key["topic"], record.key["partition"]
        offsets = self.offsets
        if record.value is None:
            if record.is_transactional:
                offsets.unstage(record.producer_id, group_id, topic, partition)
            else:
                offsets.remove(group_id, topic, partition)
            return
        if group_id not in self.groups:
            # Offsets without a group record belong to a simple group (committed outside group management).
            self.groups[group_id] = ClassicGroup(group_id, self.clock.now_ms())
        offset = OffsetAndMetadata.from_value(record.value, offsets.next_seq())
        if record.is_transactional:
            offsets.stage(record.producer_id, group_id, topic, partition, offset)
        else:
            offsets.put(group_id, topic, partition, offset)

    # ---- classic groups ---------------------------------------------------------------------------
    def _group_metadata(self, group_id: str, value: dict[str, Any] | None) -> None:
        existing = self.groups.get(group_id)
        if value is None:
            if isinstance(existing, ClassicGroup):
                del self.groups[group_id]
                existing.state = ClassicGroupState.DEAD
            return
        members = value.get("members") or []
        state = ClassicGroupState.STABLE if members else ClassicGroupState.EMPTY
        timestamp = value.get("current_state_timestamp", -1)
        group = ClassicGroup(group_id, timestamp, state)
        if timestamp is None or timestamp < 0:
            group.current_state_timestamp = None
        group.protocol_type = value.get("protocol_type") or None
        group.protocol_name = value.get("protocol")
        group.generation_id = value.get("generation", 0)
        for m in members:
            member = ClassicMember(
                member_id=m["member_id"],
                group_instance_id=m.get("group_instance_id"),
                client_id=m["client_id"],
                client_host=m["client_host"],
                rebalance_timeout_ms=m.get("rebalance_timeout", -1),
                session_timeout_ms=m["session_timeout"],
                protocol_type=group.protocol_type or "",
                # Only the chosen protocol's metadata is persisted; that is all the member supports now.
                protocols=[(group.protocol_name or "", m["subscription"])],
                assignment=m["assignment"],
            )
            group.add(member, None)
        group.leader_id = value.get("leader")
        group.protocol_type = value.get("protocol_type") or None
        group.subscribed_topics = group.compute_subscribed_topics()
        self.groups[group_id] = group

    # ---- consumer groups --------------------------------------------------------------------------
    def _consumer_group(self, record: CoordinatorRecord) -> None:
        group_id = record.key["group_id"]
        value = record.value
        group = self.groups.get(group_id)
        if not isinstance(group, ConsumerGroup):
            if value is None:
                return
            if isinstance(group, ShareGroup) or (isinstance(group, ClassicGroup) and not group.is_simple_group()):
                raise AssertionError(f"consumer group record for {group.group_type} group {group_id}")
            # A simple group only held offsets; the consumer group takes its place.
            group = ConsumerGroup(group_id)
            self.groups[group_id] = group

        kind = record.type
        if kind == RecordType.CONSUMER_GROUP_METADATA:
            if value is None:
                if group.members:
                    raise AssertionError(f"consumer group {group_id} deleted with members")
                del self.groups[group_id]
            else:
                group.group_epoch = value["epoch"]
        elif kind == RecordType.CONSUMER_GROUP_PARTITION_METADATA:
            group.apply_partition_metadata(value)
        elif kind == RecordType.CONSUMER_GROUP_MEMBER_METADATA:
            group.apply_member_metadata(record.key["member_id"], value)
        elif kind == RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            group.target_assignment_epoch = -1 if value is None else value["assignment_epoch"]
        elif kind == RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
            group.apply_target_assignment(record.key["member_id"], value)
        elif kind == RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
            group.apply_current_assignment(record.key["member_id"], value)

    # ---- share groups -----------------------------------------------------------------------------
    def _share_group(self, record: CoordinatorRecord) -> None:
        group_id = record.key["group_id"]
        value = record.value
        group = self.groups.get(group_id)
        if not isinstance(group, ShareGroup):
            if value is None:
                return
            if group is not None:
                # Kafka's getOrMaybeCreatePersistedShareGroup: no other group ever becomes a share group.
                raise AssertionError(f"share group record for {group.group_type} group {group_id}")
            group = ShareGroup(group_id)
            self.groups[group_id] = group

        kind = record.type
        if kind == RecordType.SHARE_GROUP_METADATA:
            if value is None:
                if group.members:
                    raise AssertionError(f"share group {group_id} deleted with members")
                del self.groups[group_id]
            else:
                group.group_epoch = value["epoch"]
                group.metadata_hash = value.get("metadata_hash", 0)
        elif kind == RecordType.SHARE_GROUP_MEMBER_METADATA:
            group.apply_member_metadata(record.key["member_id"], value)
        elif kind == RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA:
            group.target_assignment_epoch = -1 if value is None else value["assignment_epoch"]
        elif kind == RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER:
            group.apply_target_assignment(record.key["member_id"], value)
        elif kind == RecordType.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT:
            group.apply_current_assignment(record.key["member_id"], value)
        elif kind == RecordType.SHARE_GROUP_STATE_PARTITION_METADATA:
            group.apply_state_partition_metadata(value)

    # ---- streams groups ---------------------------------------------------------------------------
    def _streams_group(self, record: CoordinatorRecord) -> None:
        group_id = record.key["group_id"]
        value = record.value
        group = self.groups.get(group_id)
        if not isinstance(group, StreamsGroup):
            if value is None:
                return
            if group is not None and not (isinstance(group, ClassicGroup) and group.is_simple_group()):
                # Kafka's getOrMaybeCreatePersistedStreamsGroup: only a group that held offsets gives way.
                raise AssertionError(f"streams group record for {group.group_type} group {group_id}")
            group = StreamsGroup(group_id)
            self.groups[group_id] = group

        kind = record.type
        if kind == RecordType.STREAMS_GROUP_METADATA:
            if value is None:
                if group.members:
                    raise AssertionError(f"streams group {group_id} deleted with members")
                del self.groups[group_id]
            else:
                group.apply_metadata(value)
        elif kind == RecordType.STREAMS_GROUP_TOPOLOGY:
            group.apply_topology(value)
        elif kind == RecordType.STREAMS_GROUP_MEMBER_METADATA:
            group.apply_member_metadata(record.key["member_id"], value)
        elif kind == RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA:
            group.apply_target_assignment_metadata(value)
        elif kind == RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER:
            group.apply_target_assignment(record.key["member_id"], value)
        elif kind == RecordType.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT:
            group.apply_current_assignment(record.key["member_id"], value)


_CONSUMER_GROUP_TYPES = frozenset({
    RecordType.CONSUMER_GROUP_METADATA,
    RecordType.CONSUMER_GROUP_PARTITION_METADATA,
    RecordType.CONSUMER_GROUP_MEMBER_METADATA,
    RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
    RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
})

_SHARE_GROUP_TYPES = frozenset({
    RecordType.SHARE_GROUP_MEMBER_METADATA,
    RecordType.SHARE_GROUP_METADATA,
    RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA,
    RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
    RecordType.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    RecordType.SHARE_GROUP_STATE_PARTITION_METADATA,
})

_STREAMS_GROUP_TYPES = frozenset({
    RecordType.STREAMS_GROUP_METADATA,
    RecordType.STREAMS_GROUP_TOPOLOGY,
    RecordType.STREAMS_GROUP_MEMBER_METADATA,
    RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA,
    RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER,
    RecordType.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT,
})
