"""A classic group (JoinGroup/SyncGroup protocol) and its members: the data, its invariants and checks.

The state machine that drives it (joins, syncs, timers) is in `classic`; this module is Kafka's
ClassicGroup/ClassicGroupMember: states and legal transitions, protocol selection, leader election, member
validation and the offset-related checks that depend on the group's state.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kemu.groups.errors import GroupError
from kemu.groups.offsets import OffsetAndMetadata
from kemu.groups.pending import Pending
from kemu.groups.records import CoordinatorRecord, RecordType, group_metadata_key
from kemu.groups.subscription_bytes import subscribed_topics
from kemu.hashing import java_hash_map_order
from kemu.wire.errors import ErrorCode

CONSUMER_PROTOCOL_TYPE = "consumer"
UNKNOWN_MEMBER_ID = ""
EMPTY_ASSIGNMENT = b""


class ClassicGroupState(Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


_S = ClassicGroupState
_VALID_PREVIOUS: dict[ClassicGroupState, frozenset[ClassicGroupState]] = {
    _S.PREPARING_REBALANCE: frozenset({_S.STABLE, _S.COMPLETING_REBALANCE, _S.EMPTY}),
    _S.COMPLETING_REBALANCE: frozenset({_S.PREPARING_REBALANCE}),
    _S.STABLE: frozenset({_S.COMPLETING_REBALANCE}),
    _S.EMPTY: frozenset({_S.PREPARING_REBALANCE}),
    _S.DEAD: frozenset({_S.STABLE, _S.PREPARING_REBALANCE, _S.COMPLETING_REBALANCE, _S.EMPTY, _S.DEAD}),
}

Protocols = list[tuple[str, bytes]]
# A parked JoinGroup: its pending answer and the request's version, which shapes the answer.
JoinWaiter = tuple[Pending[dict[str, Any]], int]


@dataclass(eq=False, slots=True)
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    assignment: bytes = EMPTY_ASSIGNMENT
    # Parked JoinGroup/SyncGroup requests. Normally at most one each; a client that retries while its
    # first request is still parked gets the same answer on both.
    join_waiters: list[JoinWaiter] = field(default_factory=list)
    sync_waiters: list[Pending[dict[str, Any]]] = field(default_factory=list)
    # A member that joined but has not received its JoinGroup response yet: it cannot heartbeat, so a
    # session-timer expiry is not excused by "awaiting join".
    is_new: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def awaiting_join(self) -> bool:
        return bool(self.join_waiters)

    @property
    def awaiting_sync(self) -> bool:
        return bool(self.sync_waiters)

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"member {self.member_id} lacks {protocol}")

    def vote(self, candidates: set[str]) -> str:
        """This member's most preferred protocol among those every member supports."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"member {self.member_id} has no candidate")

    def matches(self, protocols: Protocols) -> bool:
        return self.protocols == protocols

    def has_satisfied_heartbeat(self) -> bool:
        # The session timer is rescheduled on every heartbeat, so reaching its deadline means no heartbeat
        # came. Members parked in JoinGroup/SyncGroup cannot heartbeat and are excused, unless new.
        if self.is_new:
            return False
        return self.awaiting_join or self.awaiting_sync


class ClassicGroup:
    group_type = "classic"

    def __init__(self, group_id: str, now_ms: int, state: ClassicGroupState = ClassicGroupState.EMPTY) -> None:
        self.group_id = group_id
        self.state = state
        self.previous_state: ClassicGroupState | None = None
        self.current_state_timestamp: int | None = now_ms
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, ClassicMember] = {}
        self.static_members: dict[str, str] = {}
        self.pending_join_members: set[str] = set()
        self.pending_sync_members: set[str] = set()
        # Set when a member joins during the initial (delayed) rebalance, to extend the delay.
        self.new_member_added = False
        self.subscribed_topics: frozenset[str] | None = None

    # ---- state ------------------------------------------------------------------------------------
    def is_in_state(self, state: ClassicGroupState) -> bool:
        return self.state is state

    def transition_to(self, state: ClassicGroupState, now_ms: int) -> None:
        if self.state not in _VALID_PREVIOUS[state]:
            raise AssertionError(f"group {self.group_id}: illegal transition {self.state} -> {state}")
        self.previous_state = self.state
        self.state = state
        self.current_state_timestamp = now_ms

    def can_rebalance(self) -> bool:
        return self.state in _VALID_PREVIOUS[ClassicGroupState.PREPARING_REBALANCE]

    def is_empty(self) -> bool:
        return self.state is ClassicGroupState.EMPTY

    def is_simple_group(self) -> bool:
        """A group that only exists because offsets were committed for it (no protocol, no members)."""
        return self.protocol_type is None and self.is_empty() and not self.pending_join_members

    def state_name(self) -> str:
        return self.state.value

    # ---- members ----------------------------------------------------------------------------------
    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def member(self, member_id: str) -> ClassicMember:
        return self.members[member_id]

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join_members

    def has_static_member(self, instance_id: str | None) -> bool:
        return instance_id is not None and instance_id in self.static_members

    def static_member_id(self, instance_id: str | None) -> str | None:
        return None if instance_id is None else self.static_members.get(instance_id)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def num_members(self) -> int:
        return len(self.members)

    def num_awaiting_join(self) -> int:
        return sum(1 for member in self.members.values() if member.awaiting_join)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join() and not self.pending_join_members

    def not_yet_rejoined_members(self) -> list[ClassicMember]:
        return [member for member in self.members.values() if not member.awaiting_join]

    def has_received_sync_from_all(self) -> bool:
        return not self.pending_sync_members

    def rebalance_timeout_ms(self) -> int:
        return max((member.rebalance_timeout_ms for member in self.members.values()), default=0)

    def add(self, member: ClassicMember, waiter: JoinWaiter | None) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if waiter is not None:
            member.join_waiters.append(waiter)
        self.pending_join_members.discard(member.member_id)
        if self.leader_id is None:
            self.leader_id = member.member_id
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id

    def add_pending_member(self, member_id: str) -> None:
        self.pending_join_members.add(member_id)

    def remove(self, member_id: str) -> None:
        removed = self.members.pop(member_id, None)
        if removed is not None and removed.group_instance_id is not None:
            if self.static_members.get(removed.group_instance_id) == member_id:
                del self.static_members[removed.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def update_member(
        self,
        member: ClassicMember,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        waiter: JoinWaiter | None,
    ) -> None:
        member.protocols = protocols
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if waiter is not None:
            member.join_waiters.append(waiter)

    def replace_static_member(self, instance_id: str, old_member_id: str, new_member_id: str) -> ClassicMember:
        old = self.members.pop(old_member_id)
        # Whoever still waits under the old id is a duplicate of this instance: fence it right away.
        self.complete_join(old, fenced_join_response(old_member_id))
        self.complete_sync(old, {"error_code": ErrorCode.FENCED_INSTANCE_ID, "assignment": EMPTY_ASSIGNMENT,
                                 "protocol_type": None, "protocol_name": None})
        new = ClassicMember(
            member_id=new_member_id,
            group_instance_id=old.group_instance_id,
            client_id=old.client_id,
            client_host=old.client_host,
            rebalance_timeout_ms=old.rebalance_timeout_ms,
            session_timeout_ms=old.session_timeout_ms,
            protocol_type=old.protocol_type,
            protocols=old.protocols,
            assignment=old.assignment,
        )
        self.members[new_member_id] = new
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        self.static_members[instance_id] = new_member_id
        if old_member_id in self.pending_sync_members:
            self.pending_sync_members.discard(old_member_id)
            self.pending_sync_members.add(new_member_id)
        return new

    def validate_member(self, member_id: str, instance_id: str | None) -> None:
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID)
            if existing != member_id:
                raise GroupError(ErrorCode.FENCED_INSTANCE_ID)
        elif member_id not in self.members:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep a leader that rejoined, else promote any member that did; False if none rejoined."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].awaiting_join:
            return True
        for member in self.members.values():
            if member.awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    # ---- waiters ----------------------------------------------------------------------------------
    def complete_join(self, member: ClassicMember, response: dict[str, Any]) -> bool:
        if not member.join_waiters:
            return False
        waiters, member.join_waiters = member.join_waiters, []
        for waiter, version in waiters:
            answer = dict(response)
            # ProtocolName is nullable only from v7; older versions carry "" where Kafka would say null.
            if version < 7 and answer.get("protocol_name") is None:
                answer["protocol_name"] = ""
            waiter.set_result(answer)
        return True

    def complete_sync(self, member: ClassicMember, response: dict[str, Any]) -> bool:
        if not member.sync_waiters:
            return False
        waiters, member.sync_waiters = member.sync_waiters, []
        for waiter in waiters:
            waiter.set_result(dict(response))
        return True

    # ---- protocols --------------------------------------------------------------------------------
    def supported_protocol_counts(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for member in self.members.values():
            counts.update(set(member.protocol_names()))
        return counts

    def supports_protocols(self, protocol_type: str, protocols: Protocols) -> bool:
        if self.is_empty():
            return bool(protocol_type) and bool(protocols)
        counts = self.supported_protocol_counts()
        return self.protocol_type == protocol_type and any(
            counts.get(name, 0) == len(self.members) for name, _ in protocols
        )

    def candidate_protocols(self) -> set[str]:
        counts = self.supported_protocol_counts()
        return {name for name, count in counts.items() if count == len(self.members)}

    def select_protocol(self) -> str:
        candidates = self.candidate_protocols()
        votes: Counter[str] = Counter(member.vote(candidates) for member in self.members.values())
        # Kafka counts the votes in a HashMap and takes the first protocol with the most votes in its
        # iteration order: a tie goes by the names' hashes, not by the members.
        most = max(votes.values())
        return next(name for name in java_hash_map_order(votes) if votes[name] == most)

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(ClassicGroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(ClassicGroupState.EMPTY, now_ms)
        self.pending_sync_members.clear()

    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return frozenset()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            try:
                metadata = member.metadata(self.protocol_name)
            except GroupError:
                return None
            parsed = subscribed_topics(metadata)
            if parsed is None:
                return None
            topics |= parsed
        return frozenset(topics)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return self.subscribed_topics is not None and topic in self.subscribed_topics

    # ---- responses --------------------------------------------------------------------------------
    def leader_members(self) -> list[dict[str, Any]]:
        """The members list only the leader receives in its JoinGroup response."""
        assert self.protocol_name is not None
        return [
            {"member_id": member.member_id, "group_instance_id": member.group_instance_id,
             "metadata": member.metadata(self.protocol_name)}
            for member in self.members.values()
        ]

    def group_assignment(self) -> dict[str, bytes]:
        return {member_id: member.assignment for member_id, member in self.members.items()}

    def tombstone_records(self) -> list[CoordinatorRecord]:
        return [CoordinatorRecord(group_metadata_key(self.group_id), None, RecordType.GROUP_METADATA)]

    # ---- offsets ----------------------------------------------------------------------------------
    def validate_offset_commit(
        self, member_id: str, instance_id: str | None, generation_id: int, transactional: bool
    ) -> None:
        if self.is_in_state(ClassicGroupState.DEAD):
            raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if generation_id < 0 and self.is_empty():
            # The admin client, or a consumer that manages its own partitions: fine while nobody is in.
            return
        if generation_id >= 0 or member_id or instance_id is not None:
            self.validate_member(member_id, instance_id)
            if generation_id != self.generation_id:
                raise GroupError(ErrorCode.ILLEGAL_GENERATION)
        elif not transactional and not self.is_empty():
            # No member id, no generation (OffsetCommit v0): only accepted while the group is empty.
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID)
        if not transactional and self.is_in_state(ClassicGroupState.COMPLETING_REBALANCE):
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS)

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if self.is_in_state(ClassicGroupState.DEAD):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND)

    def validate_offset_delete(self) -> None:
        if self.state in (ClassicGroupState.PREPARING_REBALANCE, ClassicGroupState.COMPLETING_REBALANCE,
                          ClassicGroupState.STABLE):
            if not self.uses_consumer_protocol():
                raise GroupError(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
        elif self.is_in_state(ClassicGroupState.DEAD):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND)

    def validate_delete(self) -> None:
        if self.is_in_state(ClassicGroupState.DEAD):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND)
        if not self.is_empty():
            raise GroupError(ErrorCode.NON_EMPTY_GROUP)

    def offset_expiration_base(self, offset: OffsetAndMetadata) -> int | None:
        """The time an offset's retention counts from, or None if this group's offsets cannot expire now."""
        if self.protocol_type is not None:
            if self.is_empty():
                # Counted from when the group became empty, if known.
                if self.current_state_timestamp is not None:
                    return self.current_state_timestamp
                return offset.commit_timestamp
            if (self.uses_consumer_protocol() and self.subscribed_topics is not None
                    and self.is_in_state(ClassicGroupState.STABLE)):
                return offset.commit_timestamp
            return None
        # A simple group: each offset expires on its own commit time.
        return offset.commit_timestamp


def fenced_join_response(member_id: str) -> dict[str, Any]:
    return {"error_code": ErrorCode.FENCED_INSTANCE_ID, "member_id": member_id, "members": [],
            "protocol_name": None, "protocol_type": None, "leader": "", "skip_assignment": False}
