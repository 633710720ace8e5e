"""KIP-848 consumer groups: ConsumerGroupHeartbeat, member fencing and the session/rebalance timers.

One heartbeat does what Kafka's consumerGroupHeartbeat does, in the same three steps: (1) update the member
and, if subscriptions (or the subscribed topics' metadata) changed, bump the group epoch; (2) if the group
epoch is ahead of the target assignment, run the server assignor for a new target; (3) move this member
towards its target (`reconciliation`). Every change is a record, journaled and then replayed into the state.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

from kemu.groups.assignors import ASSIGNORS, MemberSpec
from kemu.groups.classic_group import ClassicGroup
from kemu.groups.consumer_group import (
    EMPTY_ASSIGNMENT,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Assignment,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    TopicMetadata,
    compute_subscription_metadata,
    regex_error,
    subscription_metadata_record,
)
from kemu.groups.context import CoordinatorState, GroupRequestContext
from kemu.groups.errors import GroupError
from kemu.groups.reconciliation import reconcile
from kemu.groups.records import (
    CoordinatorRecord,
    consumer_group_epoch_record,
    current_assignment_tombstone,
    member_metadata_tombstone,
    target_assignment_epoch_record,
    target_assignment_member_record,
    target_assignment_member_tombstone,
    topic_partitions_field,
)
from kemu.groups.topics import TopicsView
from kemu.wire.errors import ErrorCode

# KIP-1082: from ConsumerGroupHeartbeat v1 the client generates its member id.
FIRST_VERSION_WITH_CLIENT_MEMBER_ID = 1
CONSUMER_PROTOCOL_MEMBER = 1  # ConsumerGroupDescribe v1's member_type of a consumer-protocol member


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("consumer-session", group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("consumer-rebalance", group_id, member_id)


def heartbeat_error(error: GroupError) -> dict[str, Any]:
    return {"error_code": error.code, "error_message": error.message, "member_id": None, "member_epoch": 0,
            "heartbeat_interval_ms": 0, "assignment": None}


def remove_member_records(group_id: str, member_id: str) -> list[CoordinatorRecord]:
    # The order matters: a member's metadata may only go once its assignments are gone.
    return [current_assignment_tombstone(group_id, member_id),
            target_assignment_member_tombstone(group_id, member_id),
            member_metadata_tombstone(group_id, member_id)]


class ConsumerGroupManager:
    def __init__(self, state: CoordinatorState) -> None:
        self.state = state
        self.config = state.config

    def new_member_id(self) -> str:
        # Kafka's Uuid.toString(): URL-safe base64 without padding, never starting with '-'.
        while True:
            text = base64.urlsafe_b64encode(self.state.new_uuid().bytes).decode().rstrip("=")
            if not text.startswith("-"):
                return text

    def group_or_error(self, group_id: str) -> ConsumerGroup:
        group = self.state.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if not isinstance(group, ConsumerGroup):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        return group

    # ---- ConsumerGroupHeartbeat -------------------------------------------------------------------
    def heartbeat(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        try:
            self._validate(request, ctx)
            if request["member_epoch"] in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(request)
            return self._heartbeat(request, ctx)
        except GroupError as error:
            return heartbeat_error(error)

    def _validate(self, request: dict[str, Any], ctx: GroupRequestContext) -> None:
        def invalid(message: str) -> GroupError:
            return GroupError(ErrorCode.INVALID_REQUEST, message)

        epoch = request["member_epoch"]
        if not request["group_id"]:
            raise invalid("GroupId can't be empty.")
        if request.get("instance_id") == "":
            raise invalid("InstanceId can't be empty.")
        if request.get("rack_id") == "":
            raise invalid("RackId can't be empty.")
        if ctx.api_version >= FIRST_VERSION_WITH_CLIENT_MEMBER_ID and not request["member_id"]:
            raise invalid("MemberId can't be empty.")
        if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if not request["member_id"]:
                raise invalid("MemberId can't be empty.")
        elif epoch == 0:
            if request.get("rebalance_timeout_ms", -1) == -1:
                raise invalid("RebalanceTimeoutMs must be provided in first request.")
            if request.get("topic_partitions") is None or request["topic_partitions"]:
                raise invalid("TopicPartitions must be empty when (re-)joining.")
            if request.get("subscribed_topic_names") is None and request.get("subscribed_topic_regex") is None:
                raise invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
                              "(re-)joining.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if not request["member_id"]:
                raise invalid("MemberId can't be empty.")
            if request.get("instance_id") is None:
                raise invalid("InstanceId can't be null.")
        else:
            raise invalid("MemberEpoch is invalid.")
        assignor = request.get("server_assignor")
        if assignor is not None and assignor not in self.config.consumer_assignors:
            raise GroupError(ErrorCode.UNSUPPORTED_ASSIGNOR,
                             f"ServerAssignor {assignor} is not supported. Supported assignors: "
                             f"{', '.join(self.config.consumer_assignors)}.")

    def _heartbeat(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        group_id = request["group_id"]
        member_id = request["member_id"]
        epoch = request["member_epoch"]
        instance_id = request.get("instance_id")
        rebalance_timeout = request.get("rebalance_timeout_ms", -1)
        names = request.get("subscribed_topic_names")
        regex = request.get("subscribed_topic_regex")
        owned = request.get("topic_partitions")
        topics = self.state.topics()
        records: list[CoordinatorRecord] = []

        joining = epoch == 0
        group = self._get_or_create_group(group_id, joining, records)
        if len(group.members) >= self.config.consumer_max_size and not group.has_member(member_id):
            raise GroupError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                             f"The consumer group has reached its maximum capacity of "
                             f"{self.config.consumer_max_size} members.")
        if not member_id:
            member_id = self.new_member_id()
        if instance_id is None:
            member = self._dynamic_member(group, member_id, epoch, owned)
        else:
            member = self._static_member(group, member_id, epoch, instance_id, owned, records)

        # 1. The member's new metadata; the group epoch moves if what the group subscribes to moved.
        updated = replace(
            member,
            instance_id=instance_id if instance_id is not None else member.instance_id,
            rack_id=request.get("rack_id") if request.get("rack_id") is not None else member.rack_id,
            rebalance_timeout_ms=rebalance_timeout if rebalance_timeout != -1 else member.rebalance_timeout_ms,
            server_assignor_name=(request.get("server_assignor") if request.get("server_assignor") is not None
                                  else member.server_assignor_name),
            subscribed_topic_names=frozenset(names) if names is not None else member.subscribed_topic_names,
            subscribed_topic_regex=regex if regex is not None else member.subscribed_topic_regex,
            client_id=ctx.client_id,
            client_host=ctx.client_host,
        )
        bump = self._subscription_changed(group_id, member, updated, records)
        group_epoch = group.group_epoch
        # Kafka refreshes the subscribed topics' metadata periodically and on metadata changes; reading
        # the topics on every heartbeat notices new topics and added partitions at least as soon.
        metadata = compute_subscription_metadata(group.subscribed_topic_names(topics, member, updated), topics)
        if metadata != group.subscription_metadata:
            bump = True
            records.append(subscription_metadata_record(group_id, metadata))
        if bump:
            group_epoch += 1
            records.append(consumer_group_epoch_record(group_id, group_epoch))

        # 2. A new target assignment if the group moved on since the last one, and the last one is not too
        # recent (Kafka's canComputeNextTargetAssignment): a heartbeat within the interval keeps the old target.
        assigned_now = group_epoch > group.target_assignment_epoch and self._may_assign(group)
        if assigned_now:
            target = self._update_target_assignment(group, group_epoch, member, updated, metadata, topics, records)
            target_epoch = group_epoch
        else:
            target_epoch = group.target_assignment_epoch
            target = group.target_assignment_for(updated.member_id, updated.instance_id)

        # 3. This member's next step towards its target.
        updated = self._maybe_reconcile(group_id, updated, group, target_epoch, target, owned, records)
        self.state.append(records)
        live = self.state.groups.get(group_id)
        if assigned_now and isinstance(live, ConsumerGroup):
            # Not a record field kemu writes: after a restart the next target is computed at once, as Kafka
            # does when it does not know when the last one was.
            live.assignment_timestamp_ms = self.state.now_ms()
        self._schedule_session_timeout(group_id, member_id)

        response: dict[str, Any] = {
            "error_code": ErrorCode.NONE, "error_message": None, "member_id": updated.member_id,
            "member_epoch": updated.member_epoch,
            "heartbeat_interval_ms": self.config.consumer_heartbeat_interval(group_id), "assignment": None,
        }
        # The assignment goes out when it changed, or when the member sent everything (joining, or after
        # an error) and so may have lost track of it.
        full_request = epoch == 0 or (rebalance_timeout != -1 and (names is not None or regex is not None)
                                      and owned is not None)
        if full_request or member.assigned_partitions != updated.assigned_partitions:
            response["assignment"] = {"topic_partitions": topic_partitions_field(updated.assigned_partitions)}
        return response

    def _may_assign(self, group: ConsumerGroup) -> bool:
        interval = self.config.consumer_assignment_interval_ms
        # 0: never computed (or not since a restart, which does not keep the time), so at once.
        last = group.assignment_timestamp_ms
        return last == 0 or interval == 0 or self.state.now_ms() >= last + interval

    def _get_or_create_group(self, group_id: str, create: bool, records: list[CoordinatorRecord]) -> ConsumerGroup:
        group = self.state.groups.get(group_id)
        if isinstance(group, ConsumerGroup):
            return group
        if group is None:
            if not create:
                raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
            return ConsumerGroup(group_id)
        if create and isinstance(group, ClassicGroup) and group.is_empty():
            # An empty classic group gives way to the consumer group (its offsets stay).
            records.extend(group.tombstone_records())
            return ConsumerGroup(group_id)
        # Online migration of a live classic group to the new protocol is not supported.
        raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")

    def _dynamic_member(
        self, group: ConsumerGroup, member_id: str, epoch: int, owned: list[dict[str, Any]] | None
    ) -> ConsumerGroupMember:
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group {group.group_id}.")
            return ConsumerGroupMember(member_id)
        if epoch != 0:
            self._check_epoch(member, epoch, owned)
        return member

    def _static_member(
        self, group: ConsumerGroup, member_id: str, epoch: int, instance_id: str,
        owned: list[dict[str, Any]] | None, records: list[CoordinatorRecord],
    ) -> ConsumerGroupMember:
        existing = group.static_member(instance_id)
        if epoch == 0:
            if existing is None:
                return group.members.get(member_id) or ConsumerGroupMember(member_id)
            if existing.member_id == member_id:
                return existing  # the same member rejoining, e.g. after losing a response
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise GroupError(ErrorCode.UNRELEASED_INSTANCE_ID,
                                 f"Static member {member_id} with instance id {instance_id} cannot join the group "
                                 f"because the instance id is owned by {existing.member_id} member.")
            # KIP-848 static membership: the restarted instance takes over the departed member's place,
            # assignment included, without a new group epoch.
            new = replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0)
            records.extend(remove_member_records(group.group_id, existing.member_id))
            records.append(new.metadata_record(group.group_id))
            records.append(target_assignment_member_record(
                group.group_id, member_id, group.target_assignment.get(existing.member_id, EMPTY_ASSIGNMENT)))
            records.append(new.current_assignment_record(group.group_id))
            return new
        existing = self._owning_static_member(existing, member_id, instance_id)
        self._check_epoch(existing, epoch, owned)
        return existing

    @staticmethod
    def _owning_static_member(
        existing: ConsumerGroupMember | None, member_id: str, instance_id: str
    ) -> ConsumerGroupMember:
        """`existing` (the group's member with `instance_id`), if it is `member_id`: Kafka's
        throwIfStaticMemberIsUnknown and throwIfInstanceIdIsFenced."""
        if existing is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != member_id:
            raise GroupError(ErrorCode.FENCED_INSTANCE_ID,
                             f"Static member {member_id} with instance id {instance_id} was fenced by member "
                             f"{existing.member_id}.")
        return existing

    @staticmethod
    def _check_epoch(member: ConsumerGroupMember, epoch: int, owned: list[dict[str, Any]] | None) -> None:
        if epoch > member.member_epoch:
            raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The consumer group member has a greater member epoch ({epoch}) than the one known "
                             f"by the group coordinator ({member.member_epoch}). The member must abandon all its "
                             f"partitions and rejoin.")
        if epoch < member.member_epoch:
            # The previous epoch is accepted when the member holds no more than it was given: the response
            # that bumped its epoch may have been lost.
            if epoch != member.previous_member_epoch or not _is_subset(owned, member.assigned_partitions):
                raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The consumer group member has a smaller member epoch ({epoch}) than the one "
                                 f"known by the group coordinator ({member.member_epoch}). The member must "
                                 f"abandon all its partitions and rejoin.")

    def _subscription_changed(
        self, group_id: str, member: ConsumerGroupMember, updated: ConsumerGroupMember,
        records: list[CoordinatorRecord],
    ) -> bool:
        if updated == member:
            return False
        if updated.subscribed_topic_regex != member.subscribed_topic_regex and updated.subscribed_topic_regex:
            error = regex_error(updated.subscribed_topic_regex)
            if error is not None:
                raise GroupError(ErrorCode.INVALID_REGULAR_EXPRESSION,
                                 f"SubscribedTopicRegex `{updated.subscribed_topic_regex}` is not a valid "
                                 f"regular expression: {error}.")
        records.append(updated.metadata_record(group_id))
        return (updated.subscribed_topic_names != member.subscribed_topic_names
                or updated.subscribed_topic_regex != member.subscribed_topic_regex)

    def _update_target_assignment(
        self, group: ConsumerGroup, group_epoch: int, member: ConsumerGroupMember, updated: ConsumerGroupMember,
        metadata: dict[str, TopicMetadata], topics: TopicsView, records: list[CoordinatorRecord],
    ) -> Assignment:
        assignor_name = group.preferred_server_assignor(member, updated) or self.config.consumer_assignors[0]
        assignor = ASSIGNORS[assignor_name]

        def spec(m: ConsumerGroupMember, current: Assignment) -> MemberSpec:
            subscribed = frozenset(metadata[name].topic_id for name in m.subscribed_topics(topics) if name in metadata)
            return MemberSpec(subscribed, current, m.instance_id, m.rack_id)

        specs = {member_id: spec(m, group.target_assignment.get(member_id, EMPTY_ASSIGNMENT))
                 for member_id, m in group.members.items()}
        current = group.target_assignment.get(updated.member_id, EMPTY_ASSIGNMENT)
        previous_id = group.static_members.get(updated.instance_id) if updated.instance_id else None
        if previous_id is not None and previous_id != updated.member_id:
            # A static member replaced by a new member id: the newcomer inherits the old target.
            current = group.target_assignment.get(previous_id, EMPTY_ASSIGNMENT)
            specs.pop(previous_id, None)
        specs[updated.member_id] = spec(updated, current)

        partitions = {meta.topic_id: meta.num_partitions for meta in metadata.values()}
        new_assignment = assignor.assign(specs, partitions)
        for member_id in specs:
            new = new_assignment.get(member_id, EMPTY_ASSIGNMENT)
            if group.target_assignment.get(member_id) != new:
                records.append(target_assignment_member_record(group.group_id, member_id, new))
        records.append(target_assignment_epoch_record(group.group_id, group_epoch))
        return new_assignment.get(updated.member_id, EMPTY_ASSIGNMENT)

    def _maybe_reconcile(
        self, group_id: str, member: ConsumerGroupMember, group: ConsumerGroup, target_epoch: int,
        target: Assignment, owned: list[dict[str, Any]] | None, records: list[CoordinatorRecord],
    ) -> ConsumerGroupMember:
        if member.is_reconciled_to(target_epoch):
            return member
        updated = reconcile(member, target_epoch, target, group.current_partition_epoch, owned)
        if updated != member:
            records.append(updated.current_assignment_record(group_id))
            if updated.state is MemberState.UNREVOKED_PARTITIONS:
                self._schedule_rebalance_timeout(group_id, updated.member_id, updated.member_epoch,
                                                 updated.rebalance_timeout_ms)
            else:
                self.state.cancel(rebalance_key(group_id, updated.member_id))
        return updated

    # ---- leaving and fencing ----------------------------------------------------------------------
    def _leave(self, request: dict[str, Any]) -> dict[str, Any]:
        group_id, member_id, epoch = request["group_id"], request["member_id"], request["member_epoch"]
        instance_id = request.get("instance_id")
        group = self.group_or_error(group_id)
        response = {"error_code": ErrorCode.NONE, "error_message": None, "member_id": member_id,
                    "member_epoch": epoch, "heartbeat_interval_ms": 0, "assignment": None}
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group {group_id}.")
            self.fence_member(group, member)
            return response
        member = self._owning_static_member(group.static_member(instance_id), member_id, instance_id)
        if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # A static member leaving for a moment (a restart): it keeps its partitions and its place until
            # its session times out, so that its return needs no rebalance. Its session timer keeps running.
            leaving = replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, partitions_pending_revocation={})
            self.state.append([leaving.current_assignment_record(group_id)])
        else:
            self.fence_member(group, member)
        return response

    def fence_member(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        """Remove a member (left, or timed out) and bump the group epoch so the others get its partitions."""
        records = remove_member_records(group.group_id, member.member_id)
        topics = self.state.topics()
        metadata = compute_subscription_metadata(group.subscribed_topic_names(topics, member, None), topics)
        if metadata != group.subscription_metadata:
            records.append(subscription_metadata_record(group.group_id, metadata))
        records.append(consumer_group_epoch_record(group.group_id, group.group_epoch + 1))
        self.state.cancel(session_key(group.group_id, member.member_id))
        self.state.cancel(rebalance_key(group.group_id, member.member_id))
        self.state.append(records)

    # ---- timers -----------------------------------------------------------------------------------
    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        self.state.schedule(session_key(group_id, member_id), self.config.consumer_session_timeout(group_id),
                            lambda: self._session_expired(group_id, member_id))

    def _session_expired(self, group_id: str, member_id: str) -> None:
        group = self.state.groups.get(group_id)
        if isinstance(group, ConsumerGroup) and member_id in group.members:
            self.fence_member(group, group.members[member_id])

    def _schedule_rebalance_timeout(self, group_id: str, member_id: str, epoch: int, timeout_ms: int) -> None:
        def expired() -> None:
            group = self.state.groups.get(group_id)
            if not isinstance(group, ConsumerGroup):
                return
            member = group.members.get(member_id)
            # Fenced only if it is still stuck revoking in the epoch the timer was set for.
            if member is not None and member.member_epoch == epoch:
                self.fence_member(group, member)

        self.state.schedule(rebalance_key(group_id, member_id), timeout_ms, expired)

    def on_loaded(self, group: ConsumerGroup) -> None:
        for member in group.members.values():
            self._schedule_session_timeout(group.group_id, member.member_id)
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                self._schedule_rebalance_timeout(group.group_id, member.member_id, member.member_epoch,
                                                 member.rebalance_timeout_ms)

    # ---- ConsumerGroupDescribe --------------------------------------------------------------------
    def describe(self, group_ids: list[str]) -> list[dict[str, Any]]:
        topics = self.state.topics()
        described = []
        for group_id in group_ids:
            if not group_id:
                described.append(self._describe_error(group_id, ErrorCode.INVALID_GROUP_ID, None))
                continue
            try:
                group = self.group_or_error(group_id)
            except GroupError as error:
                described.append(self._describe_error(group_id, error.code, error.message))
                continue
            described.append({
                "error_code": ErrorCode.NONE, "error_message": None, "group_id": group_id,
                "group_state": group.state_name(), "group_epoch": group.group_epoch,
                "assignment_epoch": group.target_assignment_epoch,
                "assignor_name": group.preferred_server_assignor() or self.config.consumer_assignors[0],
                "members": [self._describe_member(group, m, topics) for m in group.members.values()],
                "authorized_operations": -2147483648,
            })
        return described

    @staticmethod
    def _describe_error(group_id: str, code: ErrorCode, message: str | None) -> dict[str, Any]:
        return {"error_code": code, "error_message": message, "group_id": group_id, "group_state": "",
                "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
                "authorized_operations": -2147483648}

    @staticmethod
    def _describe_member(group: ConsumerGroup, member: ConsumerGroupMember, topics: TopicsView) -> dict[str, Any]:
        def named(assignment: Assignment) -> dict[str, Any]:
            entries = []
            for topic_id, partitions in sorted(assignment.items(), key=lambda item: str(item[0])):
                topic = topics.by_id.get(topic_id)
                if topic is not None and partitions:  # a deleted topic is left out, as Kafka does
                    entries.append({"topic_id": topic_id, "topic_name": topic.name,
                                    "partitions": sorted(partitions)})
            return {"topic_partitions": entries}

        return {
            "member_id": member.member_id, "instance_id": member.instance_id, "rack_id": member.rack_id,
            "member_epoch": member.member_epoch, "client_id": member.client_id, "client_host": member.client_host,
            "subscribed_topic_names": sorted(member.subscribed_topic_names),
            # Kafka's members hold "" for no regex, and describe it so.
            "subscribed_topic_regex": member.subscribed_topic_regex or "",
            # What the member holds: its assigned partitions and those it has yet to give up, as Kafka shows.
            "assignment": named(_union(member.assigned_partitions, member.partitions_pending_revocation)),
            "target_assignment": named(group.target_assignment.get(member.member_id, EMPTY_ASSIGNMENT)),
            # ConsumerGroupDescribe v1 (KIP-1099): 0 for a member of the classic protocol, 1 for one of the
            # consumer protocol, which every member of a kemu consumer group is (no classic member joins one).
            "member_type": CONSUMER_PROTOCOL_MEMBER,
        }


def _union(first: Assignment, second: Assignment) -> Assignment:
    return {topic_id: frozenset(first.get(topic_id, frozenset()) | second.get(topic_id, frozenset()))
            for topic_id in {*first, *second}}


def _is_subset(owned: list[dict[str, Any]] | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    for entry in owned:
        partitions = assigned.get(entry["topic_id"])
        if partitions is None or any(p not in partitions for p in entry["partitions"]):
            return False
    return True
