"""Kafka 4.3's share-group SimpleAssignor ("simple"), the one server assignor of share groups.

Its rule: with M members and P assignable partitions, each partition is shared by ceil(M / P) members (so
with more members than partitions a partition goes to several members), and member i of the M (in the
order of the group's member map) gets ceil(x * (i + 1)) - ceil(x * i) partitions, x = sharing * P / M. It
starts from the current target: keeps what still fits (a subscribed topic, no member over its count, no
partition over its sharing), then fills the members short of their count with the partitions short of their
sharing. When every member subscribes to the same topics the partitions of all of them are one pool
(SimpleHomogeneousAssignmentBuilder); otherwise each topic is assigned on its own among its subscribers
(SimpleHeterogeneousAssignmentBuilder). Members are numbered in Java's HashMap order of their ids, as
Kafka's are, so how many partitions each gets is Kafka's; which ones, among equals, may differ.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping

from kemu.hashing import java_hash_map_order

Assignment = Mapping[uuid.UUID, frozenset[int]]
TopicPartition = tuple[uuid.UUID, int]

NAME = "simple"


def assign(subscriptions: Mapping[str, frozenset[uuid.UUID]], current: Mapping[str, Assignment],
           assignable: Mapping[uuid.UUID, list[int]]) -> dict[str, dict[uuid.UUID, frozenset[int]]]:
    """The new target assignment of every member. `subscriptions`: each member's subscribed topic ids (topics
    that exist); `current`: the current target assignment; `assignable`: per topic, its partitions whose
    share-partition state is initialized."""
    if not subscriptions:
        return {}
    members = java_hash_map_order(subscriptions)
    new: dict[str, dict[uuid.UUID, set[int]]] = {
        m: {t: set(p) for t, p in current.get(m, {}).items()} for m in members}
    all_topics = sorted(set().union(*subscriptions.values()), key=str)
    if not all_topics:
        return {m: {} for m in members}
    homogeneous = len({subscriptions[m] for m in members}) == 1
    if homogeneous:
        _assign_pool(set(all_topics), [(t, p) for t in all_topics for p in assignable.get(t, [])], members, new)
    else:
        for topic in all_topics:
            subscribed = [m for m in members if topic in subscriptions[m]]
            _assign_pool({topic}, [(topic, p) for p in assignable.get(topic, [])], subscribed, new)
    # Topics nobody subscribes to any more leave every assignment.
    return {m: {t: frozenset(p) for t, p in new[m].items() if p and t in subscriptions[m]} for m in members}


def _assign_pool(topics: set[uuid.UUID], targets: list[TopicPartition], members: list[str],
                 new: dict[str, dict[uuid.UUID, set[int]]]) -> None:
    count = len(members)
    if not count:
        return
    sharing = 0 if not targets else (count + len(targets) - 1) // len(targets)
    precise = sharing * len(targets) / count
    desired = {m: math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i, m in enumerate(members)}

    by_partition: dict[TopicPartition, list[str]] = {}
    by_member: dict[str, list[TopicPartition]] = {m: [] for m in members}
    # 1. What the members hold of these topics stays, for now.
    for m in members:
        for topic in sorted(new[m], key=str):
            if topic in topics:
                for p in sorted(new[m][topic]):
                    by_partition.setdefault((topic, p), []).append(m)
                    by_member[m].append((topic, p))
    # 2. No member keeps more than its count.
    for m in members:
        while len(by_member[m]) > desired[m]:
            topic, p = by_member[m].pop()
            new[m][topic].discard(p)
            by_partition[(topic, p)].remove(m)
    # 3. No partition is shared by more members than the sharing.
    for tp, holders in by_partition.items():
        while len(holders) > sharing:
            m = holders.pop()
            new[m][tp[0]].discard(tp[1])
            by_member[m].remove(tp)
    # 4. The members short of their count take the partitions short of their sharing, round robin.
    for tp in targets:
        by_partition.setdefault(tp, [])
    unfilled = [m for m in members if len(by_member[m]) < desired[m]]
    cursor = 0
    for tp in targets:
        holders = by_partition[tp]
        skipped = 0
        while len(holders) < sharing and unfilled and skipped < len(unfilled):
            cursor %= len(unfilled)
            m = unfilled[cursor]
            if m in holders:
                cursor += 1
                skipped += 1
                continue
            holders.append(m)
            new[m].setdefault(tp[0], set()).add(tp[1])
            by_member[m].append(tp)
            skipped = 0
            if len(by_member[m]) >= desired[m]:
                unfilled.pop(cursor)
            else:
                cursor += 1
        if not unfilled:
            break
