"""The classic group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and their timers.

Follows Kafka's GroupMetadataManager for classic groups step by step (the method names below are Kafka's,
in snake_case), including its quirks: the initial rebalance delay that stretches while members keep
arriving, static members replaced without a rebalance, members that miss the rebalance or sync deadline
dropped, JoinGroup v4+'s MEMBER_ID_REQUIRED handshake. Requests are the decoded request bodies; answers are
response bodies (without throttle_time_ms) for the request's version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kemu.groups.classic_group import (
    EMPTY_ASSIGNMENT,
    UNKNOWN_MEMBER_ID,
    ClassicGroup,
    ClassicGroupState,
    ClassicMember,
    Protocols,
)
from kemu.groups.consumer_group import ConsumerGroup
from kemu.groups.context import CoordinatorState, GroupRequestContext
from kemu.groups.errors import GroupError
from kemu.groups.pending import Pending
from kemu.groups.records import CoordinatorRecord, RecordType, group_metadata_key
from kemu.groups.share_group import ShareGroup
from kemu.groups.streams_group import StreamsGroup
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages.k11_join_group import JoinGroupRequest
    from kemu.wire.messages.k12_heartbeat import HeartbeatRequest, HeartbeatResponse
    from kemu.wire.messages.k13_leave_group import (
        LeaveGroupRequest,
        LeaveGroupRequestMembers,
        LeaveGroupResponse,
        LeaveGroupResponseMembers,
    )
    from kemu.wire.messages.k14_sync_group import SyncGroupRequest

S = ClassicGroupState
JoinResponse = dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Join:
    group_id: str
    member_id: str
    instance_id: str | None
    protocol_type: str
    protocols: Protocols
    session_timeout_ms: int
    rebalance_timeout_ms: int
    ctx: GroupRequestContext

    @property
    def version(self) -> int:
        return self.ctx.api_version


def join_response(version: int | None = None, **fields: Any) -> JoinResponse:
    """A JoinGroup answer; without a version, `ClassicGroup.complete_join` adapts it to each waiter's."""
    response: JoinResponse = {
        # An answer without a protocol (every error, MEMBER_ID_REQUIRED included) has a null name, as Kafka's.
        "error_code": ErrorCode.NONE, "generation_id": -1, "protocol_type": None, "protocol_name": None,
        "leader": "", "skip_assignment": False, "member_id": "", "members": [],
    }
    response.update(fields)
    # ProtocolName is nullable only from v7; older versions carry "" where Kafka would say null.
    if version is not None and version < 7 and response["protocol_name"] is None:
        response["protocol_name"] = ""
    return response


def sync_response(error: ErrorCode = ErrorCode.NONE, assignment: bytes = EMPTY_ASSIGNMENT,
                  protocol_type: str | None = None, protocol_name: str | None = None) -> dict[str, Any]:
    return {"error_code": error, "protocol_type": protocol_type, "protocol_name": protocol_name,
            "assignment": assignment}


def group_metadata_record(group: ClassicGroup, assignment: dict[str, bytes]) -> CoordinatorRecord:
    members = []
    for member in group.members.values():
        assert group.protocol_name is not None
        members.append({
            "member_id": member.member_id,
            "group_instance_id": member.group_instance_id,
            "client_id": member.client_id,
            "client_host": member.client_host,
            "rebalance_timeout": member.rebalance_timeout_ms,
            "session_timeout": member.session_timeout_ms,
            "subscription": member.metadata(group.protocol_name),
            "assignment": assignment[member.member_id],
        })
    value = {
        "protocol_type": group.protocol_type or "",
        "generation": group.generation_id,
        "protocol": group.protocol_name,
        "leader": group.leader_id,
        "current_state_timestamp": -1 if group.current_state_timestamp is None else group.current_state_timestamp,
        "members": members,
    }
    return CoordinatorRecord(group_metadata_key(group.group_id), value, RecordType.GROUP_METADATA)


def heartbeat_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("classic-heartbeat", group_id, member_id)


def join_key(group_id: str) -> tuple[str, str]:
    return ("classic-join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    return ("classic-sync", group_id)


class ClassicGroupManager:
    def __init__(self, state: CoordinatorState) -> None:
        self.state = state
        self.config = state.config

    # ---- lookups ----------------------------------------------------------------------------------
    def group_or_error(self, group_id: str) -> ClassicGroup:
        """The classic group for a member's request; errors as Kafka answers members of unknown groups."""
        group = self.state.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Classic group {group_id} not found.")
        if not isinstance(group, ClassicGroup):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a classic group.")
        return group

    def get_or_create(self, group_id: str) -> ClassicGroup:
        """The classic group, created Empty if missing; an empty consumer group is replaced."""
        group = self.state.groups.get(group_id)
        if group is None or (isinstance(group, (ConsumerGroup, StreamsGroup)) and group.is_empty()):
            if group is not None:
                self.state.append(group.tombstone_records())
            group = ClassicGroup(group_id, self.state.now_ms())
            self.state.groups[group_id] = group
            return group
        if not isinstance(group, ClassicGroup):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a classic group.")
        return group

    def _live_group(self, group_id: str) -> ClassicGroup | None:
        group = self.state.groups.get(group_id)
        return group if isinstance(group, ClassicGroup) else None

    # ---- JoinGroup --------------------------------------------------------------------------------
    def join_group(self, request: JoinGroupRequest, ctx: GroupRequestContext) -> Pending[JoinResponse]:
        pending: Pending[JoinResponse] = Pending()
        session_timeout = request["session_timeout_ms"]
        rebalance_timeout = request.get("rebalance_timeout_ms", -1)
        if ctx.api_version == 0 or rebalance_timeout is None or rebalance_timeout < 0:
            rebalance_timeout = session_timeout  # v0 has no rebalance timeout: the session timeout serves
        join = _Join(
            group_id=request["group_id"],
            member_id=request["member_id"],
            instance_id=request.get("group_instance_id"),
            protocol_type=request["protocol_type"],
            protocols=[(p["name"], p["metadata"]) for p in request["protocols"]],
            session_timeout_ms=session_timeout,
            rebalance_timeout_ms=rebalance_timeout,
            ctx=ctx,
        )
        if not join.group_id:
            pending.set_result(join_response(ctx.api_version, error_code=ErrorCode.INVALID_GROUP_ID,
                                             member_id=join.member_id))
        elif not (self.config.min_session_timeout_ms <= session_timeout <= self.config.max_session_timeout_ms):
            pending.set_result(join_response(ctx.api_version, error_code=ErrorCode.INVALID_SESSION_TIMEOUT,
                                             member_id=join.member_id))
        else:
            self._join(join, pending)
        return pending

    def _join(self, join: _Join, pending: Pending[JoinResponse]) -> None:
        existing = self.state.groups.get(join.group_id)
        if isinstance(existing, ShareGroup) or (isinstance(existing, StreamsGroup) and not existing.is_empty()):
            # Kafka's classicGroupJoin: a group of another protocol that cannot become classic (an empty
            # streams group can).
            pending.set_result(join_response(join.version, error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                             member_id=UNKNOWN_MEMBER_ID))
            return
        unknown = join.member_id == UNKNOWN_MEMBER_ID
        is_new_group = join.group_id not in self.state.groups or not isinstance(
            self.state.groups[join.group_id], ClassicGroup)
        try:
            group = self.get_or_create(join.group_id) if unknown else self.group_or_error(join.group_id)
        except GroupError as error:
            pending.set_result(join_response(join.version, error_code=error.code, member_id=join.member_id))
            return
        if is_new_group:
            # Kafka writes the new, empty group right away so that it survives a restart.
            self.state.append([self._empty_group_record(group)], replay=False)

        if not self._accept_joining_member(group, join.member_id):
            group.remove(join.member_id)
            pending.set_result(join_response(join.version, error_code=ErrorCode.GROUP_MAX_SIZE_REACHED,
                                             member_id=UNKNOWN_MEMBER_ID))
        elif unknown:
            self._join_new_member(group, join, pending)
        else:
            self._join_existing_member(group, join, pending)

    def _empty_group_record(self, group: ClassicGroup) -> CoordinatorRecord:
        value = {
            "protocol_type": group.protocol_type or "", "generation": 0, "protocol": None, "leader": None,
            "current_state_timestamp": -1 if group.current_state_timestamp is None
            else group.current_state_timestamp,
            "members": [],
        }
        return CoordinatorRecord(group_metadata_key(group.group_id), value, RecordType.GROUP_METADATA)

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        if group.state in (S.EMPTY, S.DEAD):
            return True
        if group.state is S.PREPARING_REBALANCE:
            # Counting members awaiting join (not all members) lets a shrunk group.max.size push out the
            # last members to rejoin.
            return ((group.has_member(member_id) and group.member(member_id).awaiting_join)
                    or group.num_awaiting_join() < self.config.max_size)
        return group.has_member(member_id) or group.num_members() < self.config.max_size

    def _join_new_member(self, group: ClassicGroup, join: _Join, pending: Pending[JoinResponse]) -> None:
        if group.is_in_state(S.DEAD):
            pending.set_result(join_response(join.version, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                             member_id=UNKNOWN_MEMBER_ID))
        elif not group.supports_protocols(join.protocol_type, join.protocols):
            pending.set_result(join_response(join.version, error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                             member_id=UNKNOWN_MEMBER_ID))
        else:
            prefix = join.instance_id if join.instance_id is not None else join.ctx.client_id
            new_member_id = f"{prefix}-{self.state.new_uuid()}"
            if join.instance_id is not None:
                self._join_new_static_member(group, join, new_member_id, pending)
            else:
                self._join_new_dynamic_member(group, join, new_member_id, pending)

    def _join_new_dynamic_member(
        self, group: ClassicGroup, join: _Join, new_member_id: str, pending: Pending[JoinResponse]
    ) -> None:
        if join.version >= 4:
            # KIP-394: hand out the id and make the client come back with it, so that a client that times
            # out and retries does not leave a trail of phantom members in the rebalance.
            group.add_pending_member(new_member_id)
            self._schedule_heartbeat(group.group_id, new_member_id, join.session_timeout_ms)
            pending.set_result(join_response(join.version, error_code=ErrorCode.MEMBER_ID_REQUIRED,
                                             member_id=new_member_id))
        else:
            self._add_member_then_rebalance_or_complete_join(group, join, new_member_id, pending)

    def _join_new_static_member(
        self, group: ClassicGroup, join: _Join, new_member_id: str, pending: Pending[JoinResponse]
    ) -> None:
        assert join.instance_id is not None
        existing = group.static_member_id(join.instance_id)
        if existing is None:
            self._add_member_then_rebalance_or_complete_join(group, join, new_member_id, pending)
        else:
            self._update_static_member_then_rebalance_or_complete_join(group, join, existing, new_member_id,
                                                                       pending)

    def _join_existing_member(self, group: ClassicGroup, join: _Join, pending: Pending[JoinResponse]) -> None:
        member_id = join.member_id
        if group.is_in_state(S.DEAD):
            pending.set_result(join_response(join.version, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                             member_id=member_id))
            return
        if not group.supports_protocols(join.protocol_type, join.protocols):
            pending.set_result(join_response(join.version, error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                             member_id=member_id))
            return
        if group.is_pending_member(member_id):
            if join.instance_id is not None:
                # A pending (KIP-394) member is always dynamic; Kafka treats this as an internal error.
                pending.set_result(join_response(join.version, error_code=ErrorCode.UNKNOWN_SERVER_ERROR,
                                                 member_id=member_id))
                return
            self._add_member_then_rebalance_or_complete_join(group, join, member_id, pending)
            return
        try:
            group.validate_member(member_id, join.instance_id)
        except GroupError as error:
            pending.set_result(join_response(join.version, error_code=error.code, member_id=member_id,
                                             protocol_type=None, protocol_name=None))
            return

        member = group.member(member_id)
        if group.is_in_state(S.PREPARING_REBALANCE):
            self._update_member_then_rebalance_or_complete_join(group, join, member, pending)
        elif group.is_in_state(S.COMPLETING_REBALANCE):
            if member.matches(join.protocols):
                # Same metadata: the member probably lost its JoinGroup response; repeat it.
                pending.set_result(self._current_generation_response(
                    group, member_id, join.version, with_members=group.is_leader(member_id)))
            else:
                self._update_member_then_rebalance_or_complete_join(group, join, member, pending)
        elif group.is_in_state(S.STABLE):
            if group.is_leader(member_id) or not member.matches(join.protocols):
                # A leader's JoinGroup always rebalances: that is how it reacts to metadata changes.
                self._update_member_then_rebalance_or_complete_join(group, join, member, pending)
            else:
                pending.set_result(self._current_generation_response(group, member_id, join.version,
                                                                     with_members=False))
        else:
            # Empty with a known member: let it reset its generation and rejoin.
            pending.set_result(join_response(join.version, error_code=ErrorCode.UNKNOWN_MEMBER_ID,
                                             member_id=member_id))

    def _current_generation_response(
        self, group: ClassicGroup, member_id: str, version: int | None, *, with_members: bool,
        skip_assignment: bool = False, leader: str | None = None,
    ) -> JoinResponse:
        return join_response(
            version,
            members=group.leader_members() if with_members else [],
            member_id=member_id,
            generation_id=group.generation_id,
            protocol_name=group.protocol_name,
            protocol_type=group.protocol_type,
            leader=(group.leader_id if leader is None else leader) or "",
            skip_assignment=skip_assignment,
        )

    def _add_member_then_rebalance_or_complete_join(
        self, group: ClassicGroup, join: _Join, member_id: str, pending: Pending[JoinResponse]
    ) -> None:
        member = ClassicMember(
            member_id=member_id,
            group_instance_id=join.instance_id,
            client_id=join.ctx.client_id,
            client_host=join.ctx.client_host,
            rebalance_timeout_ms=join.rebalance_timeout_ms,
            session_timeout_ms=join.session_timeout_ms,
            protocol_type=join.protocol_type,
            protocols=join.protocols,
            is_new=True,
        )
        if group.is_in_state(S.PREPARING_REBALANCE) and group.previous_state is S.EMPTY:
            group.new_member_added = True
        group.add(member, (pending, join.version))
        # A parked JoinGroup cannot heartbeat and a disconnect goes unnoticed; a new member that never
        # completes its join is dropped after this long.
        self._schedule_heartbeat(group.group_id, member_id, self.config.new_member_join_timeout_ms)
        self.maybe_prepare_rebalance_or_complete_join(group)

    def _update_member_then_rebalance_or_complete_join(
        self, group: ClassicGroup, join: _Join, member: ClassicMember, pending: Pending[JoinResponse]
    ) -> None:
        group.update_member(member, join.protocols, join.rebalance_timeout_ms, join.session_timeout_ms,
                            (pending, join.version))
        self.maybe_prepare_rebalance_or_complete_join(group)

    def _update_static_member_then_rebalance_or_complete_join(
        self, group: ClassicGroup, join: _Join, old_member_id: str, new_member_id: str,
        pending: Pending[JoinResponse],
    ) -> None:
        assert join.instance_id is not None
        current_leader = group.leader_id
        new_member = group.replace_static_member(join.instance_id, old_member_id, new_member_id)
        # The old id's session timer will find no member; the new id gets its own.
        self.state.cancel(heartbeat_key(group.group_id, old_member_id))
        self._schedule_heartbeat(group.group_id, new_member_id, new_member.session_timeout_ms)
        group.update_member(new_member, join.protocols, join.rebalance_timeout_ms, join.session_timeout_ms,
                            (pending, join.version))

        if group.is_in_state(S.STABLE):
            if (group.protocol_name or "") == group.select_protocol():
                # KIP-345: same protocols, so the restarted instance takes its old place and assignment
                # without a rebalance. The group is persisted with the new member id.
                self.state.append([group_metadata_record(group, group.group_assignment())], replay=False)
                if join.version >= 9:
                    is_leader = group.is_leader(new_member_id)
                    response = self._current_generation_response(
                        group, new_member_id, join.version, with_members=is_leader, skip_assignment=is_leader)
                else:
                    # Before v9 a returning leader is told the old leader id, so that it does not
                    # believe it must compute an assignment.
                    response = self._current_generation_response(
                        group, new_member_id, join.version, with_members=False, leader=current_leader or "")
                group.complete_join(new_member, response)
            else:
                self.maybe_prepare_rebalance_or_complete_join(group)
        elif group.is_in_state(S.COMPLETING_REBALANCE):
            self.prepare_rebalance(group)
        else:
            self.maybe_complete_join_phase(group)

    # ---- rebalance machinery ----------------------------------------------------------------------
    def maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup) -> None:
        if group.can_rebalance():
            self.prepare_rebalance(group)
        else:
            self.maybe_complete_join_phase(group)

    def prepare_rebalance(self, group: ClassicGroup) -> None:
        if group.is_in_state(S.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_with_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self.state.cancel(sync_key(group.group_id))

        initial = group.is_in_state(S.EMPTY)
        group.transition_to(S.PREPARING_REBALANCE, self.state.now_ms())
        if initial:
            # group.initial.rebalance.delay.ms: wait for more members of a new group before the first
            # generation; each arrival extends the wait, up to the rebalance timeout in total.
            delay = self.config.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            group.new_member_added = False
            self._schedule_initial_rebalance(group.group_id, delay, remaining)
        else:
            self._maybe_complete_join_else_schedule(group)

    def _schedule_initial_rebalance(self, group_id: str, delay: int, remaining: int) -> None:
        self.state.schedule(join_key(group_id), delay,
                            lambda: self._try_complete_initial_rebalance(group_id, delay, remaining))

    def _try_complete_initial_rebalance(self, group_id: str, delay: int, remaining: int) -> None:
        group = self._live_group(group_id)
        if group is None:
            return
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.config.initial_rebalance_delay_ms, remaining)
            new_remaining = max(remaining - delay, 0)
            self._schedule_initial_rebalance(group_id, new_delay, new_remaining)
        else:
            self.complete_join(group)

    def _maybe_complete_join_else_schedule(self, group: ClassicGroup) -> None:
        if group.has_all_members_joined():
            self.complete_join(group)
        else:
            group_id = group.group_id
            self.state.schedule(join_key(group_id), group.rebalance_timeout_ms(),
                                lambda: self._complete_join_by_id(group_id))

    def _complete_join_by_id(self, group_id: str) -> None:
        group = self._live_group(group_id)
        if group is not None:
            self.complete_join(group)

    def maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        if (group.is_in_state(S.PREPARING_REBALANCE) and group.previous_state is not S.EMPTY
                and group.has_all_members_joined()):
            self.complete_join(group)

    def complete_join(self, group: ClassicGroup) -> None:
        """Kafka's completeClassicGroupJoin: close the join phase and start the next generation."""
        self.state.cancel(join_key(group.group_id))
        for failed in [m for m in group.not_yet_rejoined_members() if not m.is_static]:
            group.remove(failed.member_id)
            self.state.cancel(heartbeat_key(group.group_id, failed.member_id))

        if group.is_in_state(S.DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Nobody rejoined (only static members that stay until their session expires): try again later.
            group_id = group.group_id
            self.state.schedule(join_key(group_id), group.rebalance_timeout_ms(),
                                lambda: self._complete_join_by_id(group_id))
            return

        group.init_next_generation(self.state.now_ms())
        if group.is_empty():
            self.state.append([group_metadata_record(group, {})], replay=False)
            return
        for member in list(group.members.values()):
            response = self._current_generation_response(
                group, member.member_id, None, with_members=group.is_leader(member.member_id))
            group.complete_join(member, response)
            self._schedule_heartbeat(group.group_id, member.member_id, member.session_timeout_ms)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        self._schedule_pending_sync(group)

    def _schedule_pending_sync(self, group: ClassicGroup) -> None:
        group_id, generation = group.group_id, group.generation_id
        self.state.schedule(sync_key(group_id), group.rebalance_timeout_ms(),
                            lambda: self._expire_pending_sync(group_id, generation))

    def _expire_pending_sync(self, group_id: str, generation: int) -> None:
        group = self._live_group(group_id)
        if group is None or generation != group.generation_id:
            return
        if group.state in (S.COMPLETING_REBALANCE, S.STABLE) and not group.has_received_sync_from_all():
            for member_id in list(group.pending_sync_members):
                group.remove(member_id)
                self.state.cancel(heartbeat_key(group_id, member_id))
            self.prepare_rebalance(group)

    def _reset_and_propagate_assignment_with_error(self, group: ClassicGroup, error: ErrorCode) -> None:
        for member in group.members.values():
            member.assignment = EMPTY_ASSIGNMENT
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: ClassicGroup, error: ErrorCode) -> None:
        protocol_type = group.protocol_type if error is ErrorCode.NONE else None
        protocol_name = group.protocol_name if error is ErrorCode.NONE else None
        for member in group.members.values():
            if group.complete_sync(member, sync_response(error, member.assignment, protocol_type, protocol_name)):
                # Sessions that lapsed while the member waited for its assignment start over now.
                self._schedule_heartbeat(group.group_id, member.member_id, member.session_timeout_ms)

    # ---- heartbeat timers -------------------------------------------------------------------------
    def _schedule_heartbeat(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        self.state.schedule(heartbeat_key(group_id, member_id), timeout_ms,
                            lambda: self._expire_heartbeat(group_id, member_id))

    def _expire_heartbeat(self, group_id: str, member_id: str) -> None:
        group = self._live_group(group_id)
        if group is None or group.is_in_state(S.DEAD):
            return
        if group.is_pending_member(member_id):
            group.remove(member_id)
            if group.is_in_state(S.PREPARING_REBALANCE) and group.has_all_members_joined():
                self.complete_join(group)
        elif group.has_member(member_id):
            member = group.member(member_id)
            if not member.has_satisfied_heartbeat():
                self._remove_member_and_update_group(group, member)

    def _remove_member_and_update_group(self, group: ClassicGroup, member: ClassicMember) -> None:
        # A new member may be parked in JoinGroup: answer it before dropping it, so that it rejoins.
        group.complete_join(member, join_response(error_code=ErrorCode.UNKNOWN_MEMBER_ID,
                                                  member_id=UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.state in (S.STABLE, S.COMPLETING_REBALANCE):
            self.maybe_prepare_rebalance_or_complete_join(group)
        elif group.is_in_state(S.PREPARING_REBALANCE) and group.has_all_members_joined():
            self.complete_join(group)

    # ---- SyncGroup --------------------------------------------------------------------------------
    def sync_group(self, request: SyncGroupRequest, ctx: GroupRequestContext) -> Pending[dict[str, Any]]:
        pending: Pending[dict[str, Any]] = Pending()
        group_id, member_id = request["group_id"], request["member_id"]
        if not group_id:
            pending.set_result(sync_response(ErrorCode.INVALID_GROUP_ID))
            return pending
        try:
            group = self.group_or_error(group_id)
            self._validate_sync(group, request)
        except GroupError as error:
            pending.set_result(sync_response(error.code))
            return pending

        if group.is_in_state(S.PREPARING_REBALANCE):
            pending.set_result(sync_response(ErrorCode.REBALANCE_IN_PROGRESS))
        elif group.is_in_state(S.COMPLETING_REBALANCE):
            member = group.member(member_id)
            member.sync_waiters.append(pending)
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                assignment = {a["member_id"]: a["assignment"] for a in request["assignments"]}
                for missing in group.members:
                    assignment.setdefault(missing, EMPTY_ASSIGNMENT)
                self.state.append([group_metadata_record(group, assignment)], replay=False)
                for other_id, other in group.members.items():
                    other.assignment = assignment[other_id]
                self._propagate_assignment(group, ErrorCode.NONE)
                group.transition_to(S.STABLE, self.state.now_ms())
        elif group.is_in_state(S.STABLE):
            self._remove_pending_sync_member(group, member_id)
            member = group.member(member_id)
            pending.set_result(sync_response(ErrorCode.NONE, member.assignment, group.protocol_type,
                                             group.protocol_name))
            self._schedule_heartbeat(group_id, member_id, member.session_timeout_ms)
        else:
            pending.set_result(sync_response(ErrorCode.UNKNOWN_MEMBER_ID))
        return pending

    def _validate_sync(self, group: ClassicGroup, request: SyncGroupRequest) -> None:
        if group.is_in_state(S.DEAD):
            raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        group.validate_member(request["member_id"], request.get("group_instance_id"))
        if request["generation_id"] != group.generation_id:
            raise GroupError(ErrorCode.ILLEGAL_GENERATION)
        # v5+ (KIP-559): the client states the protocol type and name it believes in; a mismatch with the
        # group's is an inconsistency, but an absent (null) value is not checked.
        for asked, actual in ((request.get("protocol_type"), group.protocol_type),
                              (request.get("protocol_name"), group.protocol_name)):
            if asked is not None and actual is not None and asked != actual:
                raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if group.state in (S.DEAD, S.EMPTY, S.PREPARING_REBALANCE) or group.has_received_sync_from_all():
            self.state.cancel(sync_key(group.group_id))

    # ---- Heartbeat --------------------------------------------------------------------------------
    def heartbeat(self, request: HeartbeatRequest, ctx: GroupRequestContext) -> HeartbeatResponse:
        group_id, member_id = request["group_id"], request["member_id"]
        if not group_id:
            return {"error_code": ErrorCode.INVALID_GROUP_ID}
        try:
            group = self.group_or_error(group_id)
            if group.is_in_state(S.DEAD):
                raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
            group.validate_member(member_id, request.get("group_instance_id"))
            if request["generation_id"] != group.generation_id:
                raise GroupError(ErrorCode.ILLEGAL_GENERATION)
        except GroupError as error:
            return {"error_code": error.code}

        if group.is_in_state(S.EMPTY):
            return {"error_code": ErrorCode.UNKNOWN_MEMBER_ID}
        member = group.member(member_id)
        self._schedule_heartbeat(group_id, member_id, member.session_timeout_ms)
        if group.is_in_state(S.PREPARING_REBALANCE):
            return {"error_code": ErrorCode.REBALANCE_IN_PROGRESS}
        # CompletingRebalance or Stable: a consumer may heartbeat before its SyncGroup; that is fine.
        return {"error_code": ErrorCode.NONE}

    # ---- LeaveGroup -------------------------------------------------------------------------------
    def leave_group(self, request: LeaveGroupRequest, ctx: GroupRequestContext) -> LeaveGroupResponse:
        version = ctx.api_version
        identities: list[LeaveGroupRequestMembers]
        if version < 3:  # the one member, as a v3 entry
            identities = [{"member_id": request["member_id"], "group_instance_id": None, "reason": None}]
        else:
            identities = request["members"]
        if not request["group_id"]:
            return self._leave_response(version, ErrorCode.INVALID_GROUP_ID, [])
        try:
            group = self.group_or_error(request["group_id"])
        except GroupError as error:
            if error.code is ErrorCode.UNKNOWN_MEMBER_ID:
                # No such group: Kafka answers each member UNKNOWN_MEMBER_ID, not the request.
                return self._leave_response(version, ErrorCode.NONE, [
                    {"member_id": identity["member_id"], "group_instance_id": identity.get("group_instance_id"),
                     "error_code": ErrorCode.UNKNOWN_MEMBER_ID} for identity in identities])
            return self._leave_response(version, error.code, [])
        if group.is_in_state(S.DEAD):
            return self._leave_response(version, ErrorCode.COORDINATOR_NOT_AVAILABLE, [])

        results: list[LeaveGroupResponseMembers] = []
        left_any = False
        for identity in identities:
            member_id = identity["member_id"]
            instance_id = identity.get("group_instance_id")
            code = ErrorCode.NONE
            if member_id == UNKNOWN_MEMBER_ID:
                # Administrative removal of a static member by its instance id alone.
                static_id = group.static_member_id(instance_id)
                if static_id is not None:
                    self._remove_current_member(group, static_id)
                else:
                    code = ErrorCode.UNKNOWN_MEMBER_ID
            elif group.is_pending_member(member_id):
                group.remove(member_id)
                self.state.cancel(heartbeat_key(group.group_id, member_id))
            else:
                try:
                    group.validate_member(member_id, instance_id)
                    self._remove_current_member(group, member_id)
                except GroupError as failure:
                    code = failure.code
            left_any = left_any or code is ErrorCode.NONE
            results.append({"member_id": member_id, "group_instance_id": instance_id, "error_code": code})

        if left_any:
            if group.state in (S.STABLE, S.COMPLETING_REBALANCE):
                self.maybe_prepare_rebalance_or_complete_join(group)
            elif group.is_in_state(S.PREPARING_REBALANCE):
                self.maybe_complete_join_phase(group)
        return self._leave_response(version, ErrorCode.NONE, results)

    def _remove_current_member(self, group: ClassicGroup, member_id: str) -> None:
        member = group.member(member_id)
        self.state.cancel(heartbeat_key(group.group_id, member_id))
        group.complete_join(member, join_response(error_code=ErrorCode.UNKNOWN_MEMBER_ID,
                                                  member_id=UNKNOWN_MEMBER_ID))
        group.remove(member_id)

    @staticmethod
    def _leave_response(version: int, error: int, members: list[LeaveGroupResponseMembers]) -> LeaveGroupResponse:
        if version < 3:
            # Before batching, the one member's error is the response's error.
            if error is ErrorCode.NONE and members:
                error = members[0]["error_code"]
            return {"error_code": error, "members": []}
        return {"error_code": error, "members": members}

    # ---- after a restart --------------------------------------------------------------------------
    def on_loaded(self, group: ClassicGroup) -> None:
        for member in group.members.values():
            self._schedule_heartbeat(group.group_id, member.member_id, member.session_timeout_ms)
