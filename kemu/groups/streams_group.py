"""A KIP-1071 streams group and its members: Kafka's StreamsGroup and StreamsGroupMember.

As a consumer group, the group is changed only by replaying its records (`apply_*`, the StreamsGroup* records
of `__consumer_offsets`), so the journal and the state cannot drift apart; members are immutable values. What
Kafka keeps beside the records is soft state here too: the topology as configured against the topics that
exist, the shutdown request, and the epoch of the endpoint information handed to interactive queries.

A member's tasks are (sub-topology id, partition) pairs of three kinds: active, standby and warm-up. Its active
tasks carry the epoch each was assigned in: an offset commit of a member one epoch behind is accepted for the
tasks it held then.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum, IntEnum
from typing import Any

from kemu.groups.errors import GroupError
from kemu.groups.offsets import OffsetAndMetadata
from kemu.groups.records import CoordinatorRecord, RecordType
from kemu.groups.streams_topology import ConfiguredTopology, StreamsTopology
from kemu.groups.topics import TopicsView
from kemu.hashing import java_hash_map_order
from kemu.wire.errors import ErrorCode

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
STREAMS_PROTOCOL_TYPE = "streams"
INITIAL_EPOCH = 1

TaskSet = Mapping[str, frozenset[int]]
ActiveTasks = Mapping[str, Mapping[int, int]]  # sub-topology -> partition -> epoch it was assigned in


class StreamsMemberState(IntEnum):
    """Kafka's streams MemberState ids (not the consumer group's)."""

    STABLE = 1
    UNREVOKED_TASKS = 2  # must give up tasks before moving to the next epoch
    UNRELEASED_TASKS = 3  # at the target epoch, but waits for tasks other members still hold
    UNKNOWN = 127

    @classmethod
    def from_value(cls, value: int) -> StreamsMemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


class StreamsGroupState(Enum):
    EMPTY = "Empty"
    NOT_READY = "NotReady"  # the topology's topics are missing or do not fit it
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value

    @property
    def lower_name(self) -> str:
        """ListGroups' filter spelling: "not_ready" for NotReady, lower case for the others."""
        return "not_ready" if self is StreamsGroupState.NOT_READY else self.value.lower()


@dataclass(frozen=True, slots=True)
class TasksTuple:
    """Tasks of the three kinds, without epochs: a target assignment, or what a member says it owns."""

    active: TaskSet = field(default_factory=dict)
    standby: TaskSet = field(default_factory=dict)
    warmup: TaskSet = field(default_factory=dict)

    @classmethod
    def from_fields(cls, active: Iterable[Mapping[str, Any]] | None, standby: Iterable[Mapping[str, Any]] | None,
                    warmup: Iterable[Mapping[str, Any]] | None) -> TasksTuple:
        return cls(task_set(active), task_set(standby), task_set(warmup))

    def contains_any(self, other: AssignedTasks) -> bool:
        """Kafka's TasksTuple.containsAny: a task of one kind also in `other` as that kind."""
        return (any(set(ps) & set(other.active.get(s, {})) for s, ps in self.active.items())
                or any(ps & other.standby.get(s, frozenset()) for s, ps in self.standby.items())
                or any(ps & other.warmup.get(s, frozenset()) for s, ps in self.warmup.items()))

    def record_value(self) -> dict[str, Any]:
        return {"active_tasks": task_ids(self.active), "standby_tasks": task_ids(self.standby),
                "warmup_tasks": task_ids(self.warmup)}

    def describe(self) -> dict[str, Any]:
        return self.record_value()


EMPTY_TASKS = TasksTuple()


@dataclass(frozen=True, slots=True)
class AssignedTasks:
    """Kafka's TasksTupleWithEpochs: a member's current tasks, its active ones with their assignment epochs."""

    active: ActiveTasks = field(default_factory=dict)
    standby: TaskSet = field(default_factory=dict)
    warmup: TaskSet = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.active and not self.standby and not self.warmup

    def merge(self, other: AssignedTasks) -> AssignedTasks:
        active = {s: dict(ps) for s, ps in self.active.items()}
        for s, ps in other.active.items():
            active.setdefault(s, {}).update(ps)
        return AssignedTasks(active, _merge(self.standby, other.standby), _merge(self.warmup, other.warmup))

    def record_fields(self, suffix: str = "") -> dict[str, Any]:
        return {f"active_tasks{suffix}": [{"subtopology_id": s, "partitions": sorted(ps),
                                           "assignment_epochs": [ps[p] for p in sorted(ps)]}
                                          for s, ps in sorted(self.active.items())],
                f"standby_tasks{suffix}": task_ids(self.standby), f"warmup_tasks{suffix}": task_ids(self.warmup)}

    @classmethod
    def from_record(cls, value: Mapping[str, Any], suffix: str, member_epoch: int) -> AssignedTasks:
        active: dict[str, dict[int, int]] = {}
        for entry in value.get(f"active_tasks{suffix}") or ():
            partitions = entry["partitions"]
            epochs = entry.get("assignment_epochs")
            if epochs is None or len(epochs) != len(partitions):
                # A record of an older Kafka, without epochs: the member's epoch, as Kafka takes it.
                epochs = [member_epoch] * len(partitions)
            active[entry["subtopology_id"]] = dict(zip(partitions, epochs, strict=True))
        return cls(active, task_set(value.get(f"standby_tasks{suffix}")),
                   task_set(value.get(f"warmup_tasks{suffix}")))

    def active_task_set(self) -> dict[str, frozenset[int]]:
        return {s: frozenset(ps) for s, ps in self.active.items()}


EMPTY_ASSIGNED = AssignedTasks()


def task_set(entries: Iterable[Mapping[str, Any]] | None) -> dict[str, frozenset[int]]:
    return {entry["subtopology_id"]: frozenset(entry["partitions"]) for entry in entries or ()}


def task_ids(tasks: Mapping[str, Iterable[int]]) -> list[dict[str, Any]]:
    """TaskIds entries sorted by sub-topology, each's partitions sorted, as Kafka writes and describes them."""
    return [{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items())]


def _merge(first: TaskSet, second: TaskSet) -> dict[str, frozenset[int]]:
    return {s: first.get(s, frozenset()) | second.get(s, frozenset()) for s in {*first, *second}}


Endpoint = tuple[str, int]


@dataclass(frozen=True, slots=True)
class StreamsGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: StreamsMemberState = StreamsMemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    process_id: str = ""
    user_endpoint: Endpoint | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    assigned: AssignedTasks = EMPTY_ASSIGNED
    pending_revocation: AssignedTasks = EMPTY_ASSIGNED

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is StreamsMemberState.STABLE and self.member_epoch == epoch

    def with_epoch(self, epoch: int) -> StreamsGroupMember:
        """Kafka's Builder.updateMemberEpoch: the current epoch becomes the previous one."""
        return replace(self, previous_member_epoch=self.member_epoch, member_epoch=epoch)

    # ---- records ----------------------------------------------------------------------------------
    def metadata_record(self, group_id: str) -> CoordinatorRecord:
        value = {
            "instance_id": self.instance_id, "rack_id": self.rack_id, "client_id": self.client_id,
            "client_host": self.client_host, "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "topology_epoch": self.topology_epoch, "process_id": self.process_id,
            "user_endpoint": None if self.user_endpoint is None else {"host": self.user_endpoint[0],
                                                                      "port": self.user_endpoint[1]},
            "client_tags": [{"key": k, "value": v} for k, v in sorted(self.client_tags.items())],
        }
        return CoordinatorRecord(member_key(group_id, self.member_id), value,
                                 RecordType.STREAMS_GROUP_MEMBER_METADATA)

    def current_assignment_record(self, group_id: str) -> CoordinatorRecord:
        value = {"member_epoch": self.member_epoch, "previous_member_epoch": self.previous_member_epoch,
                 "state": int(self.state), **self.assigned.record_fields(),
                 **self.pending_revocation.record_fields("_pending_revocation")}
        return CoordinatorRecord(member_key(group_id, self.member_id), value,
                                 RecordType.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT)

    def updated_with_metadata(self, value: Mapping[str, Any]) -> StreamsGroupMember:
        endpoint = value.get("user_endpoint")
        return replace(
            self, instance_id=value.get("instance_id"), rack_id=value.get("rack_id"),
            client_id=value.get("client_id") or "", client_host=value.get("client_host") or "",
            rebalance_timeout_ms=value.get("rebalance_timeout_ms", -1), topology_epoch=value.get("topology_epoch", -1),
            process_id=value.get("process_id") or "",
            user_endpoint=None if endpoint is None else (endpoint["host"], endpoint["port"]),
            client_tags={t["key"]: t["value"] for t in value.get("client_tags") or ()})

    def updated_with_current_assignment(self, value: Mapping[str, Any]) -> StreamsGroupMember:
        epoch = value["member_epoch"]
        return replace(self, member_epoch=epoch, previous_member_epoch=value["previous_member_epoch"],
                       state=StreamsMemberState.from_value(value["state"]),
                       assigned=AssignedTasks.from_record(value, "", epoch),
                       pending_revocation=AssignedTasks.from_record(value, "_pending_revocation", epoch))

    # ---- StreamsGroupDescribe ---------------------------------------------------------------------
    def describe(self, target: TasksTuple | None) -> dict[str, Any]:
        return {
            "member_id": self.member_id, "member_epoch": self.member_epoch, "instance_id": self.instance_id,
            "rack_id": self.rack_id, "client_id": self.client_id, "client_host": self.client_host,
            "topology_epoch": self.topology_epoch, "process_id": self.process_id,
            "user_endpoint": None if self.user_endpoint is None else {"host": self.user_endpoint[0],
                                                                      "port": self.user_endpoint[1]},
            # Kafka's member holds its tags in a HashMap and lists them in its order.
            "client_tags": [{"key": k, "value": self.client_tags[k]} for k in java_hash_map_order(self.client_tags)],
            "task_offsets": [], "task_end_offsets": [],
            "assignment": {"active_tasks": task_ids(self.assigned.active), "standby_tasks":
                           task_ids(self.assigned.standby), "warmup_tasks": task_ids(self.assigned.warmup)},
            "target_assignment": (target.describe() if target is not None
                                  else {"active_tasks": [], "standby_tasks": [], "warmup_tasks": []}),
            "is_classic": False,
        }


def member_key(group_id: str, member_id: str) -> dict[str, str]:
    return {"group_id": group_id, "member_id": member_id}


def group_key(group_id: str) -> dict[str, str]:
    return {"group_id": group_id}


def metadata_record(group_id: str, epoch: int, metadata_hash: int, validated_topology_epoch: int,
                    assignment_configs: Mapping[str, str]) -> CoordinatorRecord:
    configs = [{"key": k, "value": v} for k, v in sorted(assignment_configs.items())]
    return CoordinatorRecord(group_key(group_id), {"epoch": epoch, "metadata_hash": metadata_hash,
                                                   "validated_topology_epoch": validated_topology_epoch,
                                                   "last_assignment_configs": configs},
                             RecordType.STREAMS_GROUP_METADATA)


def topology_record(group_id: str, topology: StreamsTopology) -> CoordinatorRecord:
    return CoordinatorRecord(group_key(group_id), topology.to_record_value(), RecordType.STREAMS_GROUP_TOPOLOGY)


def target_assignment_record(group_id: str, member_id: str, tasks: TasksTuple) -> CoordinatorRecord:
    return CoordinatorRecord(member_key(group_id, member_id), tasks.record_value(),
                             RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER)


def target_assignment_metadata_record(group_id: str, epoch: int, timestamp_ms: int) -> CoordinatorRecord:
    return CoordinatorRecord(group_key(group_id), {"assignment_epoch": epoch, "assignment_timestamp": timestamp_ms},
                             RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA)


def remove_member_records(group_id: str, member_id: str) -> list[CoordinatorRecord]:
    """Kafka's removeStreamsMember tombstones, in its order: the assignments before the member's metadata."""
    key = member_key(group_id, member_id)
    return [CoordinatorRecord(key, None, RecordType.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT),
            CoordinatorRecord(key, None, RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER),
            CoordinatorRecord(key, None, RecordType.STREAMS_GROUP_MEMBER_METADATA)]


class StreamsGroup:
    group_type = "streams"
    protocol_type = STREAMS_PROTOCOL_TYPE

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        # Kafka 4.3 starts a streams group at epoch 1, its target assignment too.
        self.group_epoch = INITIAL_EPOCH
        self.members: dict[str, StreamsGroupMember] = {}
        self.static_members: dict[str, str] = {}
        self.validated_topology_epoch = 0
        self.metadata_hash = 0
        self.assignment_epoch = INITIAL_EPOCH
        self.assignment_timestamp_ms = 0  # wall clock of the last target assignment; 0 for never
        self.target_assignment: dict[str, TasksTuple] = {}
        self.topology: StreamsTopology | None = None
        self.last_assignment_configs: dict[str, str] = {}
        # Which process holds each task now (assigned, or being revoked): a task goes to its next owner only
        # once no other process holds it.
        self.active_task_process: dict[tuple[str, int], str] = {}
        self.standby_task_processes: dict[tuple[str, int], set[str]] = {}
        self.warmup_task_processes: dict[tuple[str, int], set[str]] = {}
        # Soft state, not in the records (Kafka's too): lost with the group object, rebuilt by the next
        # heartbeat.
        self.configured_topology: ConfiguredTopology | None = None
        self.shutdown_request_member_id: str | None = None
        self.endpoint_information_epoch = 0

    # ---- state ------------------------------------------------------------------------------------
    @property
    def state(self) -> StreamsGroupState:
        if not self.members:
            return StreamsGroupState.EMPTY
        if self.topology is None or self.topology.epoch != self.validated_topology_epoch:
            return StreamsGroupState.NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return StreamsGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return StreamsGroupState.RECONCILING
        return StreamsGroupState.STABLE

    def state_name(self) -> str:
        return self.state.value

    def is_empty(self) -> bool:
        return not self.members

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def member_or_error(self, member_id: str) -> StreamsGroupMember:
        member = self.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {self.group_id}.")
        return member

    def active_process(self, subtopology_id: str, partition: int) -> str | None:
        return self.active_task_process.get((subtopology_id, partition))

    def standby_processes(self, subtopology_id: str, partition: int) -> set[str]:
        return self.standby_task_processes.get((subtopology_id, partition), set())

    def warmup_processes(self, subtopology_id: str, partition: int) -> set[str]:
        return self.warmup_task_processes.get((subtopology_id, partition), set())

    # ---- replay -----------------------------------------------------------------------------------
    def apply_metadata(self, value: Mapping[str, Any]) -> None:
        self.group_epoch = value["epoch"]
        self.metadata_hash = value.get("metadata_hash", 0)
        self.validated_topology_epoch = value.get("validated_topology_epoch", -1)
        configs = value.get("last_assignment_configs")
        self.last_assignment_configs = {c["key"]: c["value"] for c in configs or ()}

    def apply_topology(self, value: Mapping[str, Any] | None) -> None:
        self.topology = None if value is None else StreamsTopology.from_field(value)

    def apply_member_metadata(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        if value is None:
            member = self.members.get(member_id)
            if member is None:
                return
            if member.member_epoch != LEAVE_GROUP_MEMBER_EPOCH or member_id in self.target_assignment:
                raise AssertionError(f"member {member_id} of {self.group_id} deleted before its assignments")
            self._remove_member(member_id)
            return
        old = self.members.get(member_id) or StreamsGroupMember(member_id)
        self._update_member(old.updated_with_metadata(value))

    def apply_current_assignment(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        old = self.members.get(member_id)
        if value is None:
            if old is None:
                return
            self._update_member(replace(old, member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                        previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                        assigned=EMPTY_ASSIGNED, pending_revocation=EMPTY_ASSIGNED))
            return
        self._update_member((old or StreamsGroupMember(member_id)).updated_with_current_assignment(value))

    def apply_target_assignment(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        if value is None:
            self.target_assignment.pop(member_id, None)
        else:
            self.target_assignment[member_id] = TasksTuple.from_fields(
                value.get("active_tasks"), value.get("standby_tasks"), value.get("warmup_tasks"))

    def apply_target_assignment_metadata(self, value: Mapping[str, Any] | None) -> None:
        if value is None:
            self.assignment_epoch, self.assignment_timestamp_ms = -1, 0
        else:
            self.assignment_epoch = value["assignment_epoch"]
            self.assignment_timestamp_ms = value.get("assignment_timestamp", 0)

    def _update_member(self, new: StreamsGroupMember) -> None:
        old = self.members.get(new.member_id)
        self.members[new.member_id] = new
        if old is not None:
            self._remove_task_processes(old)
        for tasks in (new.assigned, new.pending_revocation):
            self._add_task_processes(tasks, new.process_id)
        if new.instance_id is not None:
            self.static_members[new.instance_id] = new.member_id

    def _remove_member(self, member_id: str) -> None:
        member = self.members.pop(member_id)
        self._remove_task_processes(member)
        if member.instance_id is not None:
            self.static_members.pop(member.instance_id, None)
        if not self.members:
            self.shutdown_request_member_id = None  # Kafka clears it when the group empties

    def _add_task_processes(self, tasks: AssignedTasks, process_id: str | None) -> None:
        if process_id is None:
            return
        for s, ps in tasks.active.items():
            for p in ps:
                self.active_task_process[(s, p)] = process_id
        for kinds, table in ((tasks.standby, self.standby_task_processes), (tasks.warmup, self.warmup_task_processes)):
            for s, partitions in kinds.items():
                for p in partitions:
                    table.setdefault((s, p), set()).add(process_id)

    def _remove_task_processes(self, member: StreamsGroupMember) -> None:
        for tasks in (member.assigned, member.pending_revocation):
            for s, ps in tasks.active.items():
                for p in ps:
                    # Only if the process is still its owner: another may have taken it already.
                    if self.active_task_process.get((s, p)) == member.process_id:
                        del self.active_task_process[(s, p)]
            for kinds, table in ((tasks.standby, self.standby_task_processes),
                                 (tasks.warmup, self.warmup_task_processes)):
                for s, partitions in kinds.items():
                    for p in partitions:
                        holders = table.get((s, p))
                        if holders is not None:
                            holders.discard(member.process_id)
                            if not holders:
                                del table[(s, p)]

    # ---- deletion ---------------------------------------------------------------------------------
    def tombstone_records(self) -> list[CoordinatorRecord]:
        """Kafka's StreamsGroup.createGroupTombstoneRecords, in its order."""
        g = self.group_id
        records = [CoordinatorRecord(member_key(g, m), None, RecordType.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT)
                   for m in self.members]
        records += [CoordinatorRecord(member_key(g, m), None, RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER)
                    for m in self.members]
        records.append(CoordinatorRecord(group_key(g), None, RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA))
        records += [CoordinatorRecord(member_key(g, m), None, RecordType.STREAMS_GROUP_MEMBER_METADATA)
                    for m in self.members]
        records.append(CoordinatorRecord(group_key(g), None, RecordType.STREAMS_GROUP_METADATA))
        records.append(CoordinatorRecord(group_key(g), None, RecordType.STREAMS_GROUP_TOPOLOGY))
        return records

    # ---- what other APIs may do with a streams group (Kafka's StreamsGroup.validate*) -------------
    def validate_offset_commit(self, member_id: str, instance_id: str | None, member_epoch: int,
                               transactional: bool, api_version: int) -> None:
        """The group-wide checks; `validate_commit_partitions` the per-task ones of a member a step behind."""
        if member_epoch < 0 and not self.members:
            return  # the admin client, or a consumer outside group management, commits to an empty group
        if transactional and member_epoch < 0 and not member_id and instance_id is None:
            return  # TxnOffsetCommit before v3 carries no member information
        member = self.member_or_error(member_id)
        if not transactional and api_version < 9:
            raise GroupError(ErrorCode.UNSUPPORTED_VERSION,
                             "OffsetCommit version 9 or above must be used by members using the streams group "
                             "protocol")
        if member_epoch > member.member_epoch:
            raise GroupError(ErrorCode.STALE_MEMBER_EPOCH, f"Received member epoch {member_epoch} is newer than "
                                                           f"current member epoch {member.member_epoch}.")

    def commit_needs_partition_check(self, member_id: str, member_epoch: int) -> bool:
        """Whether a commit that passed `validate_offset_commit` is checked task by task: that of a member
        committing with an older epoch than its current one (Kafka's assignment-epoch validator)."""
        member = self.members.get(member_id)
        return member is not None and member_epoch < member.member_epoch

    def validate_commit_partitions(self, member_id: str, member_epoch: int,
                                   partitions: Iterable[tuple[str, int]]) -> None:
        """Each committed partition must be of a task the member holds (or is revoking) since an epoch no
        later than the one it commits with; else STALE_MEMBER_EPOCH with Kafka's message."""
        member = self.member_or_error(member_id)
        if self.topology is None:
            raise GroupError(ErrorCode.STALE_MEMBER_EPOCH, "Topology is not available for offset commit validation.")
        sources = self.topology.source_topic_map()
        for topic, partition in partitions:
            subtopology_id = sources.get(topic)
            if subtopology_id is None:
                raise GroupError(ErrorCode.STALE_MEMBER_EPOCH, f"Topic {topic} is not in the topology.")
            epoch = member.assigned.active.get(subtopology_id, {}).get(partition)
            if epoch is None:
                epoch = member.pending_revocation.active.get(subtopology_id, {}).get(partition)
            if epoch is None:
                raise GroupError(ErrorCode.STALE_MEMBER_EPOCH,
                                 f"Task {subtopology_id}-{partition} is not assigned or pending revocation for "
                                 f"member.")
            if member_epoch < epoch:
                raise GroupError(ErrorCode.STALE_MEMBER_EPOCH,
                                 f"Received member epoch {member_epoch} is older than assignment epoch {epoch} for "
                                 f"task {subtopology_id}-{partition}.")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if member_id is None and member_epoch < 0:
            return
        member = self.member_or_error(member_id or "")
        if member_epoch != member.member_epoch:
            raise GroupError(ErrorCode.STALE_MEMBER_EPOCH,
                             f"The received member epoch {member_epoch} does not match the expected member epoch "
                             f"{member.member_epoch}.")

    def validate_offset_delete(self) -> None:
        return

    def validate_delete(self) -> None:
        if self.state is not StreamsGroupState.EMPTY:
            raise GroupError(ErrorCode.NON_EMPTY_GROUP)

    def is_subscribed_to_topic(self, topic: str, topics: TopicsView) -> bool:
        # An empty group subscribes to nothing, so that its offsets may expire.
        if self.state in (StreamsGroupState.EMPTY, StreamsGroupState.DEAD) or self.topology is None:
            return False
        return topic in self.topology.source_topic_map()

    def offset_expiration_base(self, offset: OffsetAndMetadata) -> int | None:
        return offset.commit_timestamp

    # ---- StreamsGroupDescribe ---------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        configured = self.configured_topology
        if configured is not None and configured.is_ready:
            topology: dict[str, Any] | None = configured.describe()
        else:
            topology = None if self.topology is None else self.topology.describe()
        return {
            "error_code": ErrorCode.NONE, "error_message": None, "group_id": self.group_id,
            "group_state": self.state_name(), "group_epoch": self.group_epoch,
            "assignment_epoch": self.assignment_epoch, "topology": topology,
            "members": [m.describe(self.target_assignment.get(m.member_id)) for m in self.members.values()],
            "authorized_operations": -2147483648,
        }
