"""Moving a streams member from its current tasks towards its target: Kafka's streams CurrentAssignmentBuilder.

As for a consumer group's partitions: a member first revokes what it must lose, staying at its epoch until its
heartbeat no longer reports those tasks; then it moves to the target epoch and receives what is free. A task
is not free while another process holds it: an active task while any process has it active, or while this
member's own process holds it as standby or warm-up (which it must drop first); a standby or warm-up task
while this process holds it in any role. Newly assigned active tasks record the target epoch they came with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from kemu.groups.errors import GroupError
from kemu.groups.streams_group import (
    EMPTY_ASSIGNED,
    AssignedTasks,
    StreamsGroupMember,
    StreamsMemberState,
    TasksTuple,
)
from kemu.wire.errors import ErrorCode

ActiveOwner = Callable[[str, int], "str | None"]
Holders = Callable[[str, int], set[str]]


class TaskOwners:
    """Who holds each task now: the group's process maps (StreamsGroup.active_process and the rest)."""

    def __init__(self, active: ActiveOwner, standby: Holders, warmup: Holders) -> None:
        self.active = active
        self.standby = standby
        self.warmup = warmup


def reconcile(member: StreamsGroupMember, target_epoch: int, target: TasksTuple, owners: TaskOwners,
              owned: TasksTuple | None) -> StreamsGroupMember:
    """Kafka's CurrentAssignmentBuilder.build. `owned` is what the heartbeat reports, None if not sent."""
    state = member.state
    if state is StreamsMemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, target_epoch, target, owners, owned)
        return member
    if state is StreamsMemberState.UNREVOKED_TASKS:
        if owned is None or owned.contains_any(member.pending_revocation):
            return member
        # The revocation is acknowledged: on to the next epoch (Kafka's memberEpoch + 1).
        return _next(member, member.member_epoch + 1, target_epoch, target, owners, owned)
    if state is StreamsMemberState.UNRELEASED_TASKS:
        return _next(member, member.member_epoch, target_epoch, target, owners, owned)
    # A state of a newer Kafka: the member starts over from nothing.
    if owned is None or _has_any(owned):
        raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH, "The streams group member is in a unknown state. "
                                                        "The member must abandon all its tasks and rejoin.")
    return _next(member, target_epoch, target_epoch, target, owners, owned)


def _has_any(tasks: TasksTuple) -> bool:
    return bool(tasks.active or tasks.standby or tasks.warmup)


def _difference(current: Mapping[str, frozenset[int]], wanted: Mapping[str, frozenset[int]],
                unreleased: Callable[[str, int], bool]
                ) -> tuple[dict[str, frozenset[int]], dict[str, frozenset[int]], dict[str, frozenset[int]], bool]:
    """Kept (current ∩ target), to revoke (current - kept), to assign (target - kept - unreleased)."""
    kept: dict[str, frozenset[int]] = {}
    revoke: dict[str, frozenset[int]] = {}
    assign: dict[str, frozenset[int]] = {}
    has_unreleased = False
    for s in {*current, *wanted}:
        have, want = current.get(s, frozenset()), wanted.get(s, frozenset())
        keep = have & want
        pending = {p for p in want - keep if not unreleased(s, p)}
        has_unreleased |= len(pending) != len(want - keep)
        if keep:
            kept[s] = keep
        if have - keep:
            revoke[s] = have - keep
        if pending:
            assign[s] = frozenset(pending)
    return kept, revoke, assign, has_unreleased


def _next(member: StreamsGroupMember, member_epoch: int, target_epoch: int, target: TasksTuple,
          owners: TaskOwners, owned: TasksTuple | None) -> StreamsGroupMember:
    process = member.process_id

    def active_unreleased(s: str, p: int) -> bool:
        return owners.active(s, p) is not None or process in owners.standby(s, p) or process in owners.warmup(s, p)

    def other_unreleased(s: str, p: int) -> bool:
        return owners.active(s, p) == process or process in owners.standby(s, p) or process in owners.warmup(s, p)

    current_active = member.assigned.active
    kept_a, revoke_a, assign_a, unreleased_a = _difference(
        {s: frozenset(ps) for s, ps in current_active.items()}, target.active, active_unreleased)
    kept_s, revoke_s, assign_s, unreleased_s = _difference(member.assigned.standby, target.standby, other_unreleased)
    kept_w, revoke_w, assign_w, unreleased_w = _difference(member.assigned.warmup, target.warmup, other_unreleased)

    def with_epochs(tasks: Mapping[str, frozenset[int]],
                    epoch_of: Callable[[str, int], int]) -> dict[str, dict[int, int]]:
        return {s: {p: epoch_of(s, p) for p in ps} for s, ps in tasks.items()}

    def current_epoch(s: str, p: int) -> int:
        return current_active[s][p]

    revoking = AssignedTasks(with_epochs(revoke_a, current_epoch), revoke_s, revoke_w)
    kept = AssignedTasks(with_epochs(kept_a, current_epoch), kept_s, kept_w)
    to_assign = AssignedTasks(with_epochs(assign_a, lambda s, p: target_epoch), assign_s, assign_w)
    has_unreleased = unreleased_a or unreleased_s or unreleased_w

    if not revoking.is_empty() and (owned is None or owned.contains_any(revoking)):
        return replace(member.with_epoch(member_epoch), state=StreamsMemberState.UNREVOKED_TASKS, assigned=kept,
                       pending_revocation=revoking)
    if not to_assign.is_empty():
        state = StreamsMemberState.UNRELEASED_TASKS if has_unreleased else StreamsMemberState.STABLE
        return replace(member.with_epoch(target_epoch), state=state, assigned=kept.merge(to_assign),
                       pending_revocation=EMPTY_ASSIGNED)
    state = StreamsMemberState.UNRELEASED_TASKS if has_unreleased else StreamsMemberState.STABLE
    return replace(member.with_epoch(target_epoch), state=state, assigned=kept, pending_revocation=EMPTY_ASSIGNED)
