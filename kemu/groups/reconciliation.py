"""Moving one KIP-848 member from its current assignment towards its target: Kafka's CurrentAssignmentBuilder.

The rule that makes the protocol safe: a partition reaches its new owner only once no other member holds
it. A member first gives up (revokes) what it must lose, staying at its epoch until its heartbeat no longer
reports those partitions; then it moves to the target epoch and receives what is free. Partitions still
held by someone else are "unreleased" and handed over on a later heartbeat.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from kemu.groups.consumer_group import Assignment, ConsumerGroupMember, MemberState
from kemu.groups.errors import GroupError
from kemu.wire.errors import ErrorCode

PartitionEpoch = Callable[[uuid.UUID, int], int]
OwnedPartitions = Iterable[Mapping[str, Any]] | None


def _owns_any(owned: OwnedPartitions, revoking: Assignment) -> bool:
    """Whether the heartbeat still reports any partition being revoked; unknown (not sent) counts as yes."""
    if owned is None:
        return True
    for entry in owned:
        pending = revoking.get(entry["topic_id"], frozenset())
        if any(partition in pending for partition in entry["partitions"]):
            return True
    return False


def reconcile(
    member: ConsumerGroupMember,
    target_epoch: int,
    target: Assignment,
    partition_epoch: PartitionEpoch,
    owned: OwnedPartitions,
) -> ConsumerGroupMember:
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned)
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.partitions_pending_revocation):
            return member
        return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned)
    # A state from a newer Kafka: start this member over from nothing.
    if owned is None or list(owned):
        raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH,
                         "The consumer group member is in a unknown state. "
                         "The member must abandon all its partitions and rejoin.")
    return _next(member, target_epoch, target_epoch, target, partition_epoch, owned)


def _next(
    member: ConsumerGroupMember,
    member_epoch: int,
    target_epoch: int,
    target: Assignment,
    partition_epoch: PartitionEpoch,
    owned: OwnedPartitions,
) -> ConsumerGroupMember:
    owned = list(owned) if owned is not None else None
    has_unreleased = False
    assigned: dict[uuid.UUID, frozenset[int]] = {}
    revoking: dict[uuid.UUID, frozenset[int]] = {}
    to_assign: dict[uuid.UUID, frozenset[int]] = {}
    for topic_id in set(target) | set(member.assigned_partitions):
        wanted = target.get(topic_id, frozenset())
        current = member.assigned_partitions.get(topic_id, frozenset())
        keep = current & wanted
        lose = current - keep
        pending = member.partitions_pending_revocation.get(topic_id, frozenset())
        free = set()
        for partition in wanted - keep:
            # Still held by another member (its own partitions being revoked do not count).
            if partition_epoch(topic_id, partition) != -1 and partition not in pending:
                has_unreleased = True
            else:
                free.add(partition)
        if keep:
            assigned[topic_id] = keep
        if lose:
            revoking[topic_id] = lose
        if free:
            to_assign[topic_id] = frozenset(free)

    if revoking and _owns_any(owned, revoking):
        return replace(member.with_epoch(member_epoch), state=MemberState.UNREVOKED_PARTITIONS,
                       assigned_partitions=assigned, partitions_pending_revocation=revoking)
    for topic_id, partitions in to_assign.items():
        assigned[topic_id] = assigned.get(topic_id, frozenset()) | partitions
    new_state = MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE
    return replace(member.with_epoch(target_epoch), state=new_state, assigned_partitions=assigned,
                   partitions_pending_revocation={})
