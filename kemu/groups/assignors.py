"""Server-side partition assignors for KIP-848 groups: `uniform` (the default) and `range`.

Both see each member's subscribed topic ids and its current target assignment, and return the new target
assignment. Both keep Kafka's guarantees: every partition of a subscribed topic is assigned to exactly one
subscriber, `uniform` balances the number of partitions per member (within one where subscriptions allow)
while keeping as many partitions where they are as it can, and `range` gives each subscriber a contiguous
range per topic. `range`, and `uniform` when every member subscribes to the same topics (Kafka's
UniformHomogeneousAssignmentBuilder, step by step, in the orders of Java's hash maps), choose the partitions
Kafka chooses; `uniform` over members subscribing to different topics balances its own way.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kemu.groups.consumer_group import Assignment
from kemu.hashing import java_hash_map_order, java_hash_order, java_uuid_hash

TopicPartition = tuple[uuid.UUID, int]


@dataclass(frozen=True, slots=True)
class MemberSpec:
    subscribed_topic_ids: frozenset[uuid.UUID]
    current: Assignment = field(default_factory=dict)
    instance_id: str | None = None
    rack_id: str | None = None


class Assignor(Protocol):
    name: str

    def assign(self, members: Mapping[str, MemberSpec], partitions: Mapping[uuid.UUID, int]) -> dict[str, Assignment]:
        """`partitions` maps each subscribed topic id to its partition count."""
        ...


def _to_assignment(owned: set[TopicPartition]) -> Assignment:
    result: dict[uuid.UUID, set[int]] = {}
    for topic_id, partition in owned:
        result.setdefault(topic_id, set()).add(partition)
    return {topic_id: frozenset(parts) for topic_id, parts in result.items()}


class UniformAssignor:
    name = "uniform"

    def assign(self, members: Mapping[str, MemberSpec], partitions: Mapping[uuid.UUID, int]) -> dict[str, Assignment]:
        if members and len({spec.subscribed_topic_ids for spec in members.values()}) == 1:
            return _homogeneous(members, partitions)
        ids = sorted(members)
        owned: dict[str, set[TopicPartition]] = {member_id: set() for member_id in ids}
        taken: set[TopicPartition] = set()

        # Stickiness: a member keeps what it had, where it is still subscribed and the partition exists.
        for member_id in ids:
            spec = members[member_id]
            for topic_id, parts in spec.current.items():
                if topic_id not in spec.subscribed_topic_ids or topic_id not in partitions:
                    continue
                for partition in parts:
                    tp = (topic_id, partition)
                    if partition < partitions[topic_id] and tp not in taken:
                        taken.add(tp)
                        owned[member_id].add(tp)

        subscribers = {topic_id: [m for m in ids if topic_id in members[m].subscribed_topic_ids]
                       for topic_id in partitions}
        # Hand out the rest, least-subscribed topics first, each to its least-loaded subscriber.
        for topic_id in sorted(partitions, key=lambda t: (len(subscribers[t]), str(t))):
            candidates = subscribers[topic_id]
            if not candidates:
                continue
            for partition in range(partitions[topic_id]):
                tp = (topic_id, partition)
                if tp in taken:
                    continue
                member_id = min(candidates, key=lambda m: (len(owned[m]), m))
                taken.add(tp)
                owned[member_id].add(tp)

        # Balance: move partitions from the most to the least loaded member that may take them. Each move
        # shrinks the sum of squared loads, so this ends.
        while self._move_one(ids, members, owned):
            pass
        return {member_id: _to_assignment(owned[member_id]) for member_id in ids}

    @staticmethod
    def _move_one(ids: list[str], members: Mapping[str, MemberSpec], owned: dict[str, set[TopicPartition]]) -> bool:
        by_load = sorted(ids, key=lambda m: (len(owned[m]), m))
        for heavy in reversed(by_load):
            for light in by_load:
                if len(owned[heavy]) - len(owned[light]) <= 1:
                    break
                movable = [tp for tp in owned[heavy] if tp[0] in members[light].subscribed_topic_ids]
                if movable:
                    tp = max(movable, key=lambda item: (str(item[0]), item[1]))
                    owned[heavy].discard(tp)
                    owned[light].add(tp)
                    return True
        return False


def _homogeneous(members: Mapping[str, MemberSpec], partitions: Mapping[uuid.UUID, int]) -> dict[str, Assignment]:
    """Kafka's UniformHomogeneousAssignmentBuilder: each member keeps what it has up to its quota (the
    minimum, or one more while extras remain), the rest and the partitions nobody has are handed out in
    order to the members short of their quota. The orders are Java's: members in HashMap order of their ids,
    topics in HashSet order of their ids, partitions of a topic ascending."""
    member_ids = java_hash_map_order(members)
    subscribed = members[member_ids[0]].subscribed_topic_ids
    if not subscribed:
        return {member_id: {} for member_id in member_ids}
    topics = [t for t in java_hash_order(subscribed, java_uuid_hash, copied=True) if t in partitions]
    assigned = {(t, p) for spec in members.values() for t, parts in spec.current.items() for p in parts}
    unassigned = [(t, p) for t in topics for p in range(partitions[t]) if (t, p) not in assigned]
    min_quota, with_extra = divmod(sum(partitions[t] for t in topics), len(member_ids))

    targets: dict[str, dict[uuid.UUID, set[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    for index, member_id in enumerate(member_ids):
        current = members[member_id].current
        target = {t: set(parts) for t, parts in current.items()}
        quota, extra = min_quota, False
        if with_extra > 0:
            quota, extra = quota + 1, True
        for topic_id in java_hash_order(current, java_uuid_hash):
            owned = current[topic_id]
            if topic_id not in subscribed or topic_id not in partitions:
                del target[topic_id]
            elif len(owned) <= quota:
                quota -= len(owned)
            else:
                for partition in sorted(owned):
                    if quota > 0:
                        quota -= 1
                    else:
                        target[topic_id].discard(partition)
                        unassigned.append((topic_id, partition))
                if not target[topic_id]:
                    del target[topic_id]
        if quota > 0 and extra and len(member_ids) - index > with_extra:
            quota, extra = quota - 1, False
        if quota > 0:
            unfilled.append((member_id, quota))
        if extra:
            with_extra -= 1
        targets[member_id] = target

    handed = iter(unassigned)
    for member_id, quota in unfilled:
        for topic_id, partition in (tp for _, tp in zip(range(quota), handed, strict=False)):
            targets[member_id].setdefault(topic_id, set()).add(partition)
    return {member_id: {t: frozenset(p) for t, p in target.items()} for member_id, target in targets.items()}


class RangeAssignor:
    name = "range"

    def assign(self, members: Mapping[str, MemberSpec], partitions: Mapping[uuid.UUID, int]) -> dict[str, Assignment]:
        owned: dict[str, set[TopicPartition]] = {member_id: set() for member_id in members}
        for topic_id in sorted(partitions, key=str):
            subscribers = sorted(m for m, spec in members.items() if topic_id in spec.subscribed_topic_ids)
            if not subscribers:
                continue
            count = partitions[topic_id]
            per_member, extra = divmod(count, len(subscribers))
            start = 0
            for index, member_id in enumerate(subscribers):
                length = per_member + (1 if index < extra else 0)
                owned[member_id].update((topic_id, p) for p in range(start, start + length))
                start += length
        return {member_id: _to_assignment(parts) for member_id, parts in owned.items()}


ASSIGNORS: dict[str, Assignor] = {"uniform": UniformAssignor(), "range": RangeAssignor()}
