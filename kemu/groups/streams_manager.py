"""KIP-1071 streams groups: StreamsGroupHeartbeat, StreamsGroupDescribe, fencing and the group's timers.

A heartbeat does what Kafka 4.3's streamsGroupHeartbeat does: (1) update the member (any change of its
metadata bumps the group epoch); (2) initialize the group's topology from the first member's, or check a
joining member's against it; (3) configure the topology against the topics that exist (the internal topics'
partition counts, or the status saying what is missing), again whenever the required topics change, bumping
the epoch then; (4) if the group epoch is ahead of the target assignment, run the sticky task assignor — unless
the group's initial rebalance delay (group.streams.initial.rebalance.delay.ms, from the first member's join) or
the assignment interval holds it back (ASSIGNMENT_DELAYED); (5) move the member towards its target, revoking
before assigning. Every change is a record, journaled and replayed into the state.

Internal topics the topology needs and that do not exist are handed back with the response
(`StreamsHeartbeat.topics_to_create`): creating topics is the broker's business, as Kafka's coordinator hands
them to the broker's auto-topic-creation manager. The heartbeat that finds them missing answers
MISSING_INTERNAL_TOPICS; a later one finds them and assigns the tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kemu.groups.classic_group import ClassicGroup
from kemu.groups.context import CoordinatorState, GroupRequestContext
from kemu.groups.errors import GroupError
from kemu.groups.records import CoordinatorRecord
from kemu.groups.share_manager import metadata_hash
from kemu.groups.streams_assignor import StreamsMemberSpec, SubtopologySpec, TaskAssignorError
from kemu.groups.streams_assignor import assign as sticky_assign
from kemu.groups.streams_group import (
    EMPTY_TASKS,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    StreamsGroup,
    StreamsGroupMember,
    StreamsMemberState,
    TasksTuple,
    metadata_record,
    remove_member_records,
    target_assignment_metadata_record,
    target_assignment_record,
    task_ids,
    topology_record,
)
from kemu.groups.streams_reconciliation import TaskOwners, reconcile
from kemu.groups.streams_topology import (
    ConfiguredTopology,
    CreatableTopic,
    Status,
    StreamsTopology,
    configure_topics,
)
from kemu.groups.topics import TopicsView
from kemu.hashing import java_hash_map_order
from kemu.wire.errors import ErrorCode

AUTHORIZED_OPERATIONS_OMITTED = -2147483648
STANDBY_REPLICAS_CONFIG = "num.standby.replicas"


@dataclass(slots=True)
class StreamsHeartbeat:
    """A StreamsGroupHeartbeat's answer, and the internal topics the broker is to create for the group."""

    response: dict[str, Any]
    topics_to_create: Mapping[str, CreatableTopic] = field(default_factory=dict)


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("streams-session", group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("streams-rebalance", group_id, member_id)


def initial_rebalance_key(group_id: str) -> tuple[str, str]:
    return ("streams-initial-rebalance", group_id)


def error_response(code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's error answer: the code and message, every other field at its default."""
    return {"error_code": code, "error_message": message, "member_id": "", "member_epoch": 0,
            "heartbeat_interval_ms": 0, "acceptable_recovery_lag": 0, "task_offset_interval_ms": 0, "status": [],
            "active_tasks": None, "standby_tasks": None, "warmup_tasks": None, "endpoint_information_epoch": 0,
            "partitions_by_user_endpoint": None}


def status(code: Status, detail: str) -> dict[str, Any]:
    return {"status_code": int(code), "status_detail": detail}


def _invalid(message: str) -> GroupError:
    return GroupError(ErrorCode.INVALID_REQUEST, message)


def validate(request: Mapping[str, Any]) -> None:
    """Kafka's GroupCoordinatorService checks, in its order: the features 4.3 does not serve yet
    (throwIfStreamsGroupHeartbeatRequestIsUsingUnsupportedFeatures), then throwIfStreamsGroupHeartbeatRequestIsInvalid.
    A list "must be empty" when it is null or has an element (Kafka's throwIfNotEmptyCollection)."""
    topology = request.get("topology")
    if request.get("instance_id") is not None:
        raise _invalid("Static membership is not yet supported.")
    if request.get("task_offsets") is not None:
        raise _invalid("TaskOffsets are not supported yet.")
    if request.get("task_end_offsets") is not None:
        raise _invalid("TaskEndOffsets are not supported yet.")
    if request.get("warmup_tasks"):
        raise _invalid("WarmupTasks are not supported yet.")
    if topology is not None and any(sub.get("source_topic_regex") for sub in topology["subtopologies"]):
        raise _invalid("Regular expressions for source topics are not supported yet.")
    if not request["member_id"]:
        raise _invalid("MemberId can't be empty.")
    if not request["group_id"]:
        raise _invalid("GroupId can't be empty.")
    if request.get("rack_id") == "":
        raise _invalid("RackId can't be empty.")
    epoch = request["member_epoch"]
    kinds = ("active_tasks", "standby_tasks", "warmup_tasks")
    if epoch == 0:
        if request.get("rebalance_timeout_ms", -1) == -1:
            raise _invalid("RebalanceTimeoutMs must be provided in first request.")
        for kind, name in zip(kinds, ("ActiveTasks", "StandbyTasks", "WarmupTasks"), strict=True):
            if request.get(kind) is None or request[kind]:
                raise _invalid(f"{name} must be empty when (re-)joining.")
        if topology is None:
            raise _invalid("Topology must be non-null when (re-)joining.")
        for sub in topology["subtopologies"]:
            for changelog in sub["state_changelog_topics"]:
                if changelog["partitions"] != 0:
                    raise GroupError(ErrorCode.STREAMS_INVALID_TOPOLOGY,
                                     f"Changelog topic {changelog['name']} must have an undefined partition count, "
                                     f"but it is set to {changelog['partitions']}.")
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise _invalid("InstanceId can't be null.")  # a static member would have been refused above
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise _invalid(f"MemberEpoch is {epoch}, but must be greater than or equal to -2.")
    if any(request.get(kind) is not None for kind in kinds) and any(request.get(kind) is None for kind in kinds):
        raise _invalid("If one task-type is non-null, all must be non-null.")
    if epoch != 0 and topology is not None:
        raise _invalid("Topology can only be provided when (re-)joining.")


class StreamsGroupManager:
    def __init__(self, state: CoordinatorState) -> None:
        self.state = state
        self.config = state.config

    def group_or_error(self, group_id: str) -> StreamsGroup:
        group = self.state.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if not isinstance(group, StreamsGroup):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
        return group

    # ---- StreamsGroupHeartbeat --------------------------------------------------------------------
    def heartbeat(self, request: Mapping[str, Any], ctx: GroupRequestContext) -> StreamsHeartbeat:
        try:
            validate(request)
            if request["member_epoch"] == LEAVE_GROUP_MEMBER_EPOCH:
                return StreamsHeartbeat(self._leave(request))
            return self._heartbeat(request, ctx)
        except GroupError as error:
            return StreamsHeartbeat(error_response(error.code, error.message))

    def _heartbeat(self, request: Mapping[str, Any], ctx: GroupRequestContext) -> StreamsHeartbeat:
        group_id, member_id, epoch = request["group_id"], request["member_id"], request["member_epoch"]
        records: list[CoordinatorRecord] = []
        statuses: list[dict[str, Any]] = []
        topics = self.state.topics()
        joining = epoch == 0
        if joining:
            group = self._get_or_create_group(group_id, records)
            if len(group.members) >= self.config.streams_max_size:
                raise GroupError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                 f"The streams group has reached its maximum capacity of "
                                 f"{self.config.streams_max_size} members.")
        else:
            group = self._existing_group(group_id)
        member = group.members.get(member_id) if joining else group.member_or_error(member_id)
        member = member or StreamsGroupMember(member_id)
        self._check_epoch(member, epoch, request)

        # 1. The member's new metadata: any change bumps the group epoch.
        topology_field = request.get("topology")
        endpoint = request.get("user_endpoint")
        tags = request.get("client_tags")
        rebalance_timeout = request.get("rebalance_timeout_ms", -1)
        updated = replace(
            member,
            rack_id=request["rack_id"] if request.get("rack_id") is not None else member.rack_id,
            rebalance_timeout_ms=rebalance_timeout if rebalance_timeout != -1 else member.rebalance_timeout_ms,
            topology_epoch=topology_field["epoch"] if topology_field is not None else member.topology_epoch,
            client_id=ctx.client_id, client_host=ctx.client_host,
            process_id=request["process_id"] if request.get("process_id") is not None else member.process_id,
            client_tags={t["key"]: t["value"] for t in tags} if tags is not None else member.client_tags,
            user_endpoint=(endpoint["host"], endpoint["port"]) if endpoint is not None else member.user_endpoint,
        )
        bump = updated != member
        if bump:
            records.append(updated.metadata_record(group_id))

        # 2. The group's topology.
        topology = self._maybe_update_topology(group, topology_field, records)
        if group.topology is not None and updated.topology_epoch < group.topology.epoch:
            statuses.append(status(Status.STALE_TOPOLOGY,
                                   f"The member's topology epoch {updated.topology_epoch} is behind the group's "
                                   f"topology epoch {group.topology.epoch}."))

        # 3. The topology against the topics that exist. Kafka recomputes the hash when a required topic
        # changes; kemu has no topic notifications and computes it on every heartbeat, to the same effect.
        new_hash = metadata_hash(set(topology.required_topics()), topics)
        reconfigure = group.topology is None or new_hash != group.metadata_hash
        bump = bump or new_hash != group.metadata_hash
        configured = group.configured_topology
        if reconfigure or configured is None:
            configured = configure_topics(topology, new_hash, topics)
            group.configured_topology = configured

        validated_epoch = -1
        if configured.is_ready:
            validated_epoch = topology.epoch
            for kind in ("active_tasks", "standby_tasks", "warmup_tasks"):
                self._check_tasks(configured, request.get(kind))
        bump = bump or validated_epoch != group.validated_topology_epoch
        configs = self._assignment_configs(group_id)
        bump = bump or configs != group.last_assignment_configs
        group_epoch = group.group_epoch
        if bump:
            group_epoch += 1
            records.append(metadata_record(group_id, group_epoch, new_hash, validated_epoch, configs))

        # The first member of a group waits a moment for the others, so that they are assigned at once.
        if group.is_empty():
            delay = self.config.streams_initial_rebalance_delay(group_id)
            key = initial_rebalance_key(group_id)
            if delay > 0 and not self.state.timers.is_scheduled(key):
                self.state.schedule(key, delay, lambda: self._delayed_target_assignment(group_id))

        # 4. A new target assignment, when the group moved on and nothing holds it back.
        target_epoch, target = self._maybe_update_target_assignment(group, group_epoch, updated, configured,
                                                                    records, statuses, configs)

        # 5. The member moves towards its target.
        owned = None
        if all(request.get(kind) is not None for kind in ("active_tasks", "standby_tasks", "warmup_tasks")):
            owned = TasksTuple.from_fields(request["active_tasks"], request["standby_tasks"], request["warmup_tasks"])
        reconciled = self._maybe_reconcile(group, updated, target_epoch, target, owned, records)
        self._schedule_session_timeout(group_id, member_id)
        if request.get("shutdown_application") and group.shutdown_request_member_id is None:
            group.shutdown_request_member_id = member_id

        response: dict[str, Any] = {
            "error_code": ErrorCode.NONE, "error_message": None, "member_id": reconciled.member_id,
            "member_epoch": reconciled.member_epoch,
            "heartbeat_interval_ms": self.config.streams_heartbeat_interval(group_id),
            "acceptable_recovery_lag": 0, "task_offset_interval_ms": 0,  # Kafka 4.3 sets neither
            "active_tasks": None, "standby_tasks": None, "warmup_tasks": None, "endpoint_information_epoch": 0,
            "partitions_by_user_endpoint": None,
        }
        if joining or member.assigned != reconciled.assigned:
            response["active_tasks"] = task_ids(reconciled.assigned.active)
            response["standby_tasks"] = task_ids(reconciled.assigned.standby)
            response["warmup_tasks"] = task_ids(reconciled.assigned.warmup)
            if reconciled.user_endpoint is not None:
                group.endpoint_information_epoch += 1
        if group.endpoint_information_epoch != request.get("endpoint_information_epoch", 0):
            response["partitions_by_user_endpoint"] = self._endpoint_partitions(group, reconciled, topics)
        if self.state.groups.get(group_id) is group:
            # A group made by this heartbeat keeps no endpoint epoch: Kafka answers 0 for it.
            response["endpoint_information_epoch"] = group.endpoint_information_epoch
        to_create: Mapping[str, CreatableTopic] = {}
        if configured.error is not None:
            to_create = configured.topics_to_create
            statuses.append(status(configured.error.status, configured.error.message))
        if group.shutdown_request_member_id is not None:
            statuses.append(status(Status.SHUTDOWN_APPLICATION,
                                   f"Streams group member {group.shutdown_request_member_id} encountered a fatal "
                                   f"error and requested a shutdown for the entire application."))
        response["status"] = statuses
        self.state.append(records)
        return StreamsHeartbeat(response, to_create)

    def _get_or_create_group(self, group_id: str, records: list[CoordinatorRecord]) -> StreamsGroup:
        group = self.state.groups.get(group_id)
        if isinstance(group, StreamsGroup):
            return group
        if group is None:
            return StreamsGroup(group_id)
        if isinstance(group, ClassicGroup) and group.is_empty():
            # An empty classic group (one that only held offsets) gives way to the streams group.
            records.extend(group.tombstone_records())
            return StreamsGroup(group_id)
        raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")

    def _existing_group(self, group_id: str) -> StreamsGroup:
        group = self.state.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {group_id} not found.")
        if not isinstance(group, StreamsGroup):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
        return group

    @staticmethod
    def _check_epoch(member: StreamsGroupMember, epoch: int, request: Mapping[str, Any]) -> None:
        """Kafka's throwIfStreamsGroupMemberEpochIsInvalid; 0 (re)joins."""
        if epoch == 0:
            return
        if epoch > member.member_epoch:
            raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The streams group member has a greater member epoch ({epoch}) than the one known by "
                             f"the group coordinator ({member.member_epoch}). The member must abandon all its "
                             f"partitions and rejoin.")
        if epoch < member.member_epoch:
            # The previous epoch is accepted from a member holding no more than it was given: the answer that
            # bumped its epoch may have been lost.
            owned = TasksTuple.from_fields(request.get("active_tasks"), request.get("standby_tasks"),
                                           request.get("warmup_tasks"))
            assigned = member.assigned
            contained = (all(request.get(kind) is not None for kind in ("active_tasks", "standby_tasks",
                                                                         "warmup_tasks"))
                         and all(ps <= frozenset(assigned.active.get(s, {})) for s, ps in owned.active.items())
                         and all(ps <= assigned.standby.get(s, frozenset()) for s, ps in owned.standby.items())
                         and all(ps <= assigned.warmup.get(s, frozenset()) for s, ps in owned.warmup.items()))
            if epoch != member.previous_member_epoch or not contained:
                raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The streams group member has a smaller member epoch ({epoch}) than the one known "
                                 f"by the group coordinator ({member.member_epoch}). The member must abandon all its "
                                 f"partitions and rejoin.")

    @staticmethod
    def _maybe_update_topology(group: StreamsGroup, topology_field: Mapping[str, Any] | None,
                               records: list[CoordinatorRecord]) -> StreamsTopology:
        if topology_field is not None:
            sent = StreamsTopology.from_field(topology_field)
            if group.topology is None:
                records.append(topology_record(group.group_id, sent))
                return sent
            if group.topology.epoch > sent.epoch:
                return group.topology  # a member with a stale topology: told so by STALE_TOPOLOGY
            if group.topology != sent:
                raise _invalid("Topology updates are not supported yet.")
            return group.topology
        if group.topology is not None:
            return group.topology
        raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, "The topology is null and the group topology is also null.")

    @staticmethod
    def _check_tasks(configured: ConfiguredTopology, tasks: list[dict[str, Any]] | None) -> None:
        """Kafka's throwIfRequestContainsInvalidTasks: owned tasks must exist in the configured topology."""
        subtopologies = configured.subtopologies or {}
        for entry in tasks or ():
            sub = subtopologies.get(entry["subtopology_id"])
            if sub is None:
                raise _invalid(f"Subtopology {entry['subtopology_id']} does not exist in the topology.")
            for partition in entry["partitions"]:
                if not 0 <= partition < sub.number_of_tasks:
                    raise _invalid(f"Task {partition} for subtopology {entry['subtopology_id']} is invalid. Number "
                                   f"of tasks for this subtopology: {sub.number_of_tasks}")

    def _assignment_configs(self, group_id: str) -> dict[str, str]:
        return {STANDBY_REPLICAS_CONFIG: str(self.config.streams_standby_replicas(group_id))}

    # ---- the target assignment --------------------------------------------------------------------
    def _maybe_update_target_assignment(
        self, group: StreamsGroup, group_epoch: int, updated: StreamsGroupMember | None,
        configured: ConfiguredTopology, records: list[CoordinatorRecord], statuses: list[dict[str, Any]] | None,
        configs: Mapping[str, str],
    ) -> tuple[int, TasksTuple]:
        """Kafka's maybeUpdateStreamsTargetAssignment: the target epoch, and `updated`'s target."""
        def last() -> tuple[int, TasksTuple]:
            if updated is None:
                return group.assignment_epoch, EMPTY_TASKS
            return group.assignment_epoch, group.target_assignment.get(updated.member_id, EMPTY_TASKS)

        if self.state.timers.is_scheduled(initial_rebalance_key(group.group_id)):
            if statuses is not None:
                statuses.append(status(Status.ASSIGNMENT_DELAYED,
                                       "Assignment delayed due to the configured initial rebalance delay."))
            return group.assignment_epoch, EMPTY_TASKS
        if group.assignment_epoch >= group_epoch:
            return last()
        interval = self.config.streams_assignment_interval(group.group_id)
        now = self.state.now_ms()
        if group.assignment_timestamp_ms != 0 and interval != 0 and now < group.assignment_timestamp_ms + interval:
            if statuses is not None:
                statuses.append(status(Status.ASSIGNMENT_DELAYED,
                                       "Assignment delayed due to the configured assignment interval."))
            return last()

        members = dict(group.members)
        if updated is not None:
            members[updated.member_id] = updated
        try:
            new_target = self._assign(group, members, configured, configs)
        except TaskAssignorError as error:
            raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Failed to compute a new target assignment for epoch "
                                                             f"{group_epoch}: {error}") from error
        # Kafka writes the changed members' targets in its HashMap's order, then the epoch.
        for member_id in java_hash_map_order(members):
            old = group.target_assignment.get(member_id)
            if old is None or old != new_target[member_id]:
                records.append(target_assignment_record(group.group_id, member_id, new_target[member_id]))
        records.append(target_assignment_metadata_record(group.group_id, group_epoch, now))
        return group_epoch, new_target[updated.member_id] if updated is not None else EMPTY_TASKS

    def _assign(self, group: StreamsGroup, members: Mapping[str, StreamsGroupMember],
                configured: ConfiguredTopology, configs: Mapping[str, str]) -> dict[str, TasksTuple]:
        if not configured.is_ready or configured.subtopologies is None:
            return {member_id: EMPTY_TASKS for member_id in members}
        specs = {}
        for member_id, member in members.items():
            last = group.target_assignment.get(member_id, EMPTY_TASKS)
            specs[member_id] = StreamsMemberSpec(member.process_id, last.active, last.standby)
        subtopologies = {sub_id: SubtopologySpec(sub.number_of_tasks, sub.is_stateful)
                         for sub_id, sub in configured.subtopologies.items()}
        standbys = int(configs.get(STANDBY_REPLICAS_CONFIG, "0"))
        assigned = sticky_assign(specs, subtopologies, standbys)
        return {member_id: TasksTuple(a.active_tasks, a.standby_tasks, {}) for member_id, a in assigned.items()}

    def _delayed_target_assignment(self, group_id: str) -> None:
        """The initial rebalance delay is over: assign the members that joined meanwhile (Kafka's
        computeDelayedTargetAssignment)."""
        group = self.state.groups.get(group_id)
        if not isinstance(group, StreamsGroup) or group.is_empty():
            return
        if group.group_epoch <= group.assignment_epoch or group.configured_topology is None:
            return  # Kafka logs either and assigns nothing; the next heartbeat does
        records: list[CoordinatorRecord] = []
        self._maybe_update_target_assignment(group, group.group_epoch, None, group.configured_topology, records,
                                             None, group.last_assignment_configs)
        self.state.append(records)

    def _maybe_reconcile(self, group: StreamsGroup, member: StreamsGroupMember, target_epoch: int,
                         target: TasksTuple, owned: TasksTuple | None,
                         records: list[CoordinatorRecord]) -> StreamsGroupMember:
        if member.is_reconciled_to(target_epoch):
            return member
        owners = TaskOwners(group.active_process, group.standby_processes, group.warmup_processes)
        updated = reconcile(member, target_epoch, target, owners, owned)
        if updated != member:
            records.append(updated.current_assignment_record(group.group_id))
            if updated.state is StreamsMemberState.UNREVOKED_TASKS:
                self._schedule_rebalance_timeout(group.group_id, updated.member_id, updated.member_epoch,
                                                 updated.rebalance_timeout_ms)
            else:
                self.state.cancel(rebalance_key(group.group_id, updated.member_id))
        return updated

    @staticmethod
    def _endpoint_partitions(group: StreamsGroup, updated: StreamsGroupMember,
                             topics: TopicsView) -> list[dict[str, Any]]:
        """Kafka's buildEndpointToPartitions: for interactive queries, the input partitions of every member's
        active and standby tasks, by the member's endpoint (members without one are left out)."""
        members = [m for m in group.members.values() if m.member_id != updated.member_id] + [updated]
        configured = group.configured_topology
        subtopologies = configured.subtopologies if configured is not None else None
        result = []
        for member in members:
            if member.user_endpoint is None:
                continue

            def partitions(tasks: Mapping[str, frozenset[int]]) -> list[dict[str, Any]]:
                entries = []
                for sub_id, task_set in tasks.items():
                    sub = (subtopologies or {}).get(sub_id)
                    if sub is None:
                        continue
                    for topic in java_hash_map_order([*sub.source_topics, *sub.repartition_source_topics]):
                        found = topics.by_name.get(topic)
                        count = found.num_partitions if found is not None else 0
                        entries.append({"topic": topic, "partitions": sorted(task_set)[:count]})
                return entries

            result.append({"user_endpoint": {"host": member.user_endpoint[0], "port": member.user_endpoint[1]},
                           "active_partitions": partitions(member.assigned.active_task_set()),
                           "standby_partitions": partitions(member.assigned.standby)})
        return result

    # ---- leaving and fencing ----------------------------------------------------------------------
    def _leave(self, request: Mapping[str, Any]) -> dict[str, Any]:
        group = self.group_or_error(request["group_id"])
        if request.get("shutdown_application") and group.shutdown_request_member_id is None:
            group.shutdown_request_member_id = request["member_id"]
        member = group.member_or_error(request["member_id"])
        self.fence_member(group, member)
        response = error_response(ErrorCode.NONE, None)
        response.update(member_id=request["member_id"], member_epoch=request["member_epoch"])
        return response

    def fence_member(self, group: StreamsGroup, member: StreamsGroupMember) -> None:
        """Remove a member (left, or timed out) and bump the group epoch so the others get its tasks."""
        records = remove_member_records(group.group_id, member.member_id)
        records.append(metadata_record(group.group_id, group.group_epoch + 1, group.metadata_hash,
                                       group.validated_topology_epoch, group.last_assignment_configs))
        self.state.cancel(session_key(group.group_id, member.member_id))
        self.state.cancel(rebalance_key(group.group_id, member.member_id))
        self.state.append(records)

    # ---- timers -----------------------------------------------------------------------------------
    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        self.state.schedule(session_key(group_id, member_id), self.config.streams_session_timeout(group_id),
                            lambda: self._session_expired(group_id, member_id))

    def _session_expired(self, group_id: str, member_id: str) -> None:
        group = self.state.groups.get(group_id)
        if isinstance(group, StreamsGroup) and member_id in group.members:
            self.fence_member(group, group.members[member_id])

    def _schedule_rebalance_timeout(self, group_id: str, member_id: str, epoch: int, timeout_ms: int) -> None:
        def expired() -> None:
            group = self.state.groups.get(group_id)
            if not isinstance(group, StreamsGroup):
                return
            member = group.members.get(member_id)
            # Fenced only if it is still stuck revoking in the epoch the timer was set for.
            if member is not None and member.member_epoch == epoch:
                self.fence_member(group, member)

        self.state.schedule(rebalance_key(group_id, member_id), timeout_ms, expired)

    def on_loaded(self, group: StreamsGroup) -> None:
        for member in group.members.values():
            self._schedule_session_timeout(group.group_id, member.member_id)
            if member.state is StreamsMemberState.UNREVOKED_TASKS:
                self._schedule_rebalance_timeout(group.group_id, member.member_id, member.member_epoch,
                                                 member.rebalance_timeout_ms)

    # ---- StreamsGroupDescribe ---------------------------------------------------------------------
    def describe(self, group_ids: list[str]) -> list[dict[str, Any]]:
        described = []
        for group_id in group_ids:
            if not group_id:
                described.append(describe_error("", ErrorCode.INVALID_GROUP_ID, None))
                continue
            try:
                described.append(self.group_or_error(group_id).describe())
            except GroupError as error:
                described.append(describe_error(group_id, error.code, error.message))
        return described


def describe_error(group_id: str, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "group_id": group_id, "group_state": "",
            "group_epoch": 0, "assignment_epoch": 0, "topology": None, "members": [],
            "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED}
