"""KIP-932 share groups: ShareGroupHeartbeat, ShareGroupDescribe, member fencing and the session timer.

A heartbeat does what Kafka 4.3's shareGroupHeartbeat does: (1) update the member and bump the group epoch if
the group's subscriptions or the subscribed topics changed, or if partitions were initialized that the
target assignment does not cover yet; (2) if the group epoch is ahead of the target assignment (and the last
one is older than share.assignment.interval.ms), run the SimpleAssignor over the initialized partitions;
(3) move the member to its target at once (share partitions need no revocation). Every change is a record,
journaled and replayed into the state.

Kafka assigns only partitions whose share-partition state the share coordinator has initialized: a heartbeat
that subscribes to partitions not yet initialized asks for it (a ShareGroupStatePartitionMetadata record
naming them initializing), and the share coordinator's answer, a moment later, marks them initialized; the
next heartbeat then bumps the epoch and assigns them. kemu has no share coordinator to wait for: the
initialization completes as soon as the heartbeat that asked for it is answered, so a joining member, as on
Kafka, first gets an empty assignment and its partitions on its next heartbeat.

Whoever holds share-partition state learns of a member leaving (a leave heartbeat, or its session expiring)
through `on_member_left(group_id, member_id)`, called after the member's records are written.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kemu.groups import share_assignor
from kemu.groups.consumer_group import MemberState
from kemu.groups.context import CoordinatorState, GroupRequestContext
from kemu.groups.errors import GroupError
from kemu.groups.records import CoordinatorRecord, topic_partitions_field
from kemu.groups.share_group import (
    EMPTY_ASSIGNMENT,
    LEAVE_GROUP_MEMBER_EPOCH,
    Assignment,
    ShareGroup,
    ShareGroupMember,
    StateTopic,
    epoch_record,
    remove_member_records,
    state_partition_metadata_record,
    target_assignment_epoch_record,
    target_assignment_member_record,
)
from kemu.groups.topics import TopicsView
from kemu.hashing import java_hash_map_order
from kemu.wire.errors import ErrorCode

MemberListener = Callable[[str, str], None]
AUTHORIZED_OPERATIONS_OMITTED = -2147483648


def no_listener(group_id: str, member_id: str) -> None:
    """The default `on_member_left`: nobody listens."""


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("share-session", group_id, member_id)


def heartbeat_error(error: GroupError) -> dict[str, Any]:
    return {"error_code": error.code, "error_message": error.message, "member_id": None, "member_epoch": 0,
            "heartbeat_interval_ms": 0, "assignment": None}


def metadata_hash(names: set[str] | frozenset[str], topics: TopicsView) -> int:
    """A hash of the subscribed topics' ids, names and partition counts: it moves when one of them does.
    Kafka's ShareGroupMetadataValue carries its own hash of the same (murmur3 over the metadata image); this
    one is kemu's, which only kemu reads back."""
    found = sorted((t.name, str(t.topic_id), t.num_partitions) for n in names if (t := topics.by_name.get(n)))
    if not found:
        return 0
    digest = hashlib.blake2b(repr(found).encode(), digest_size=8).digest()
    value: int = struct.unpack(">q", digest)[0]
    return value


class ShareGroupManager:
    def __init__(self, state: CoordinatorState, on_member_left: MemberListener = no_listener) -> None:
        self.state = state
        self.config = state.config
        self.on_member_left = on_member_left

    def group_or_error(self, group_id: str) -> ShareGroup:
        group = self.state.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if not isinstance(group, ShareGroup):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        return group

    def is_member(self, group_id: str, member_id: str) -> bool:
        group = self.state.groups.get(group_id)
        return isinstance(group, ShareGroup) and member_id in group.members

    # ---- ShareGroupHeartbeat ----------------------------------------------------------------------
    def heartbeat(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        try:
            self._validate(request)
            if request["member_epoch"] == LEAVE_GROUP_MEMBER_EPOCH:
                return self._leave(request["group_id"], request["member_id"])
            return self._heartbeat(request, ctx)
        except GroupError as error:
            return heartbeat_error(error)

    @staticmethod
    def _validate(request: dict[str, Any]) -> None:
        """Kafka's GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid."""
        def invalid(message: str) -> GroupError:
            return GroupError(ErrorCode.INVALID_REQUEST, message)

        if not request["member_id"]:
            raise invalid("MemberId can't be empty.")
        if not request["group_id"]:
            raise invalid("GroupId can't be empty.")
        if request.get("rack_id") == "":
            raise invalid("RackId can't be empty.")
        epoch = request["member_epoch"]
        if epoch == 0:
            if not request.get("subscribed_topic_names"):
                raise invalid("SubscribedTopicNames must be set in first request.")
        elif epoch < LEAVE_GROUP_MEMBER_EPOCH:
            raise invalid("MemberEpoch is invalid.")

    def _heartbeat(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        group_id, member_id, epoch = request["group_id"], request["member_id"], request["member_epoch"]
        names = request.get("subscribed_topic_names")
        rack_id = request.get("rack_id")
        topics = self.state.topics()
        records: list[CoordinatorRecord] = []

        joining = epoch == 0
        group = self._get_or_create_group(group_id, joining)
        max_size = self.config.share_max_size
        if len(group.members) >= max_size and not group.has_member(member_id):
            raise GroupError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                             f"The share group has reached its maximum capacity of {max_size} members.")
        member = self._member(group, member_id, epoch)

        # 1. The member's new metadata; the group epoch moves if what the group subscribes to moved.
        updated = replace(
            member,
            rack_id=rack_id if rack_id is not None else member.rack_id,
            subscribed_topic_names=frozenset(names) if names is not None else member.subscribed_topic_names,
            client_id=ctx.client_id, client_host=ctx.client_host,
        )
        bump = False
        if updated != member:
            records.append(updated.metadata_record(group_id))
            bump = updated.subscribed_topic_names != member.subscribed_topic_names
        group_epoch = group.group_epoch
        if group.target_assignment_epoch >= group_epoch:
            bump = bump or self._initialized_assignment_pending(group, updated)
        subscribed = set(group.subscribed_topic_names(member, updated))
        new_hash = metadata_hash(subscribed, topics)
        if bump or new_hash != group.metadata_hash:
            group_epoch += 1
            records.append(epoch_record(group_id, group_epoch, new_hash))

        # 2. A new target assignment if the group moved on since the last one, and not too soon after it.
        assigned_now = group_epoch > group.target_assignment_epoch and self._may_assign(group)
        if assigned_now:
            target = self._update_target_assignment(group, group_epoch, updated, topics, records)
            target_epoch = group_epoch
        else:
            target_epoch = group.target_assignment_epoch
            target = group.target_assignment.get(member_id, EMPTY_ASSIGNMENT)

        # 3. The member takes its target at once (Kafka's ShareGroupAssignmentBuilder).
        reconciled = updated
        if bump or not updated.is_reconciled_to(target_epoch):
            assigned = _subscribed_only(target, updated.subscribed_topic_names, topics)
            if target_epoch != updated.member_epoch:
                reconciled = replace(updated.with_epoch(target_epoch), state=MemberState.STABLE,
                                     assigned_partitions=assigned)
            elif bump:
                reconciled = replace(updated, assigned_partitions=assigned)
            if reconciled != updated:
                records.append(reconciled.current_assignment_record(group_id))
        self.state.append(records)
        live = self.state.groups.get(group_id)
        if assigned_now and isinstance(live, ShareGroup):
            live.assignment_timestamp_ms = self.state.now_ms()
        self._schedule_session_timeout(group_id, member_id)

        response: dict[str, Any] = {
            "error_code": ErrorCode.NONE, "error_message": None, "member_id": reconciled.member_id,
            "member_epoch": reconciled.member_epoch,
            "heartbeat_interval_ms": self.config.share_heartbeat_interval(group_id), "assignment": None,
        }
        if joining or names is not None or member.assigned_partitions != reconciled.assigned_partitions:
            response["assignment"] = {"topic_partitions": topic_partitions_field(reconciled.assigned_partitions)}
        if isinstance(live, ShareGroup):
            self._initialize_state(live, topics)
        return response

    def _get_or_create_group(self, group_id: str, create: bool) -> ShareGroup:
        group = self.state.groups.get(group_id)
        if group is None:
            if not create:
                raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
            return ShareGroup(group_id)
        if not isinstance(group, ShareGroup):
            # Kafka moves no group between protocols and a share group: not even an empty classic group.
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        return group

    @staticmethod
    def _member(group: ShareGroup, member_id: str, epoch: int) -> ShareGroupMember:
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group {group.group_id}.")
            return ShareGroupMember(member_id)
        if epoch == 0:
            return member  # (re)joining is always allowed
        if epoch > member.member_epoch:
            raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The share group member has a greater member epoch ({epoch}) than the one known by "
                             f"the group coordinator ({member.member_epoch}). The member must abandon all its "
                             f"partitions and rejoin.")
        if epoch < member.member_epoch and epoch != member.previous_member_epoch:
            # The previous epoch is accepted: the response that bumped it may have been lost.
            raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The share group member has a smaller member epoch ({epoch}) than the one known by "
                             f"the group coordinator ({member.member_epoch}), and it does not match the previous "
                             f"member epoch ({member.previous_member_epoch}). The member must abandon all its "
                             f"partitions and rejoin.")
        return member

    def _may_assign(self, group: ShareGroup) -> bool:
        interval = self.config.share_assignment_interval(group.group_id)
        last = group.assignment_timestamp_ms
        return last == 0 or interval == 0 or self.state.now_ms() >= last + interval

    @staticmethod
    def _initialized_assignment_pending(group: ShareGroup, updated: ShareGroupMember) -> bool:
        """Kafka's initializedAssignmentPending: initialized partitions of a subscribed topic that the target
        assignment does not cover."""
        if not group.members or not group.initialized:
            return False
        subscribed = set(group.subscribed_topic_names())
        if not subscribed:
            return False
        assigned: dict[Any, set[int]] = {}
        for assignment in group.target_assignment.values():
            for topic_id, partitions in assignment.items():
                assigned.setdefault(topic_id, set()).update(partitions)
        return any(topic.name in subscribed and assigned.get(topic_id) != set(topic.partitions)
                   for topic_id, topic in group.initialized.items())

    def _update_target_assignment(self, group: ShareGroup, group_epoch: int, updated: ShareGroupMember,
                                  topics: TopicsView, records: list[CoordinatorRecord]) -> Assignment:
        members = dict(group.members)
        members[updated.member_id] = updated
        subscriptions = {m: frozenset(topics.by_name[n].topic_id for n in member.subscribed_topic_names
                                      if n in topics.by_name)
                         for m, member in members.items()}
        assignable = {}
        for topic_id, state_topic in group.initialized.items():
            topic = topics.by_id.get(topic_id)
            if topic is not None:
                assignable[topic_id] = sorted(p for p in state_topic.partitions if p < topic.num_partitions)
        new_assignment = share_assignor.assign(subscriptions, group.target_assignment, assignable)
        for member_id in members:
            new = new_assignment.get(member_id, EMPTY_ASSIGNMENT)
            if dict(group.target_assignment.get(member_id, EMPTY_ASSIGNMENT)) != dict(new):
                records.append(target_assignment_member_record(group.group_id, member_id, new))
        records.append(target_assignment_epoch_record(group.group_id, group_epoch))
        return new_assignment.get(updated.member_id, EMPTY_ASSIGNMENT)

    def _initialize_state(self, group: ShareGroup, topics: TopicsView) -> None:
        """Ask for the share-partition state of subscribed partitions not initialized yet, and (no share
        coordinator to wait for) record it initialized: Kafka's maybeCreateInitializeShareGroupStateRequest,
        then its initializeShareGroupState once the share coordinator has answered."""
        wanted: dict[Any, StateTopic] = {}
        for name in sorted(group.subscribed_topic_names()):
            topic = topics.by_name.get(name)
            if topic is None:
                continue
            done = group.initialized.get(topic.topic_id)
            have = done.partitions if done is not None else frozenset()
            missing = frozenset(range(topic.num_partitions)) - have
            if missing:
                wanted[topic.topic_id] = StateTopic(name, missing)
        if not wanted:
            return
        initializing = {**group.initializing, **wanted}
        deleting = {t: v for t, v in group.deleting.items() if t not in wanted}
        asked = state_partition_metadata_record(group.group_id, initializing, group.initialized, deleting)
        initialized = dict(group.initialized)
        for topic_id, asked_for in wanted.items():
            before = initialized.get(topic_id)
            initialized[topic_id] = StateTopic(asked_for.name, asked_for.partitions
                                               | (before.partitions if before else frozenset()))
        remaining = {t: v for t, v in initializing.items() if t not in wanted}
        answered = state_partition_metadata_record(group.group_id, remaining, initialized, deleting)
        self.state.append([asked, answered])

    # ---- leaving and fencing ----------------------------------------------------------------------
    def _leave(self, group_id: str, member_id: str) -> dict[str, Any]:
        group = self.group_or_error(group_id)
        member = group.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
        self.fence_member(group, member)
        return {"error_code": ErrorCode.NONE, "error_message": None, "member_id": member_id,
                "member_epoch": LEAVE_GROUP_MEMBER_EPOCH, "heartbeat_interval_ms": 0, "assignment": None}

    def fence_member(self, group: ShareGroup, member: ShareGroupMember) -> None:
        """Remove a member (left, or its session expired) and bump the group epoch; then tell the listener."""
        records = remove_member_records(group.group_id, member.member_id)
        subscribed = set(group.subscribed_topic_names(member, None))
        records.append(epoch_record(group.group_id, group.group_epoch + 1,
                                    metadata_hash(subscribed, self.state.topics())))
        self.state.cancel(session_key(group.group_id, member.member_id))
        self.state.append(records)
        self.on_member_left(group.group_id, member.member_id)

    # ---- timers -----------------------------------------------------------------------------------
    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        self.state.schedule(session_key(group_id, member_id), self.config.share_session_timeout(group_id),
                            lambda: self._session_expired(group_id, member_id))

    def _session_expired(self, group_id: str, member_id: str) -> None:
        group = self.state.groups.get(group_id)
        if isinstance(group, ShareGroup) and member_id in group.members:
            self.fence_member(group, group.members[member_id])

    def on_loaded(self, group: ShareGroup) -> None:
        for member in group.members.values():
            self._schedule_session_timeout(group.group_id, member.member_id)

    # ---- ShareGroupDescribe -----------------------------------------------------------------------
    def describe(self, group_ids: list[str]) -> list[dict[str, Any]]:
        topics = self.state.topics()
        described = []
        for group_id in group_ids:
            if not group_id:
                described.append(_describe_error(group_id, ErrorCode.INVALID_GROUP_ID, None))
                continue
            try:
                group = self.group_or_error(group_id)
            except GroupError as error:
                described.append(_describe_error(group_id, error.code, error.message))
                continue
            members = [group.members[m] for m in java_hash_map_order(group.members)]
            described.append({
                "error_code": ErrorCode.NONE, "error_message": None, "group_id": group_id,
                "group_state": group.state_name(), "group_epoch": group.group_epoch,
                "assignment_epoch": group.target_assignment_epoch, "assignor_name": share_assignor.NAME,
                "members": [_describe_member(m, topics) for m in members],
                "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
            })
        return described


def _describe_error(group_id: str, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "group_id": group_id, "group_state": "",
            "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
            "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED}


def _describe_member(member: ShareGroupMember, topics: TopicsView) -> dict[str, Any]:
    entries = []
    for topic_id, partitions in sorted(member.assigned_partitions.items(), key=lambda item: str(item[0])):
        topic = topics.by_id.get(topic_id)
        if topic is not None:  # a deleted topic is left out, as Kafka does
            entries.append({"topic_id": topic_id, "topic_name": topic.name, "partitions": sorted(partitions)})
    return {"member_id": member.member_id, "rack_id": member.rack_id, "member_epoch": member.member_epoch,
            "client_id": member.client_id, "client_host": member.client_host,
            "subscribed_topic_names": sorted(member.subscribed_topic_names),
            "assignment": {"topic_partitions": entries}}


def _subscribed_only(target: Assignment, names: frozenset[str], topics: TopicsView) -> Assignment:
    """Kafka's filterAssignedPartitions: the target's partitions of topics the member subscribes to."""
    return {topic_id: partitions for topic_id, partitions in target.items()
            if (topic := topics.by_id.get(topic_id)) is not None and topic.name in names and partitions}
