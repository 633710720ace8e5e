"""Server-side partition assignors for KIP-848 groups: `uniform` (the default) and `range`.

Both see each member's subscribed topic ids and its current target assignment, and return the new target
assignment. Neither reproduces Kafka's exact choice of partitions (clients never depend on it); they keep
its guarantees: every partition of a subscribed topic is assigned to exactly one subscriber, `uniform`
balances the number of partitions per member (within one where subscriptions allow) while keeping as many
partitions where they are as it can, and `range` gives each subscriber a contiguous range per topic.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kemu.groups.consumer_group import Assignment

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
