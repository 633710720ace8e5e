"""What the consumer-group compat tests share: a 4-partition topic with known messages, and the checks.

Messages are produced with confluent-kafka to explicit partitions (value "p<partition>-<n>"), so a test
knows exactly which messages a set of partitions holds, whichever client then consumes them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 4
PER_PARTITION = 5
ALL_PARTITIONS = frozenset(range(PARTITIONS))


class GroupMember(Protocol):
    """What the checks below read of one client's consumer wrapper."""

    def assigned(self) -> set[int]: ...

    def received(self) -> set[str]:
        """Every message value it has consumed."""
        ...

    def read_up_to(self) -> Mapping[int, int]:
        """The next offset it would read, per partition it has read."""
        ...


def group_name() -> str:
    return f"group-{uuid.uuid4().hex[:8]}"


def message_values(partitions: Iterable[int] = ALL_PARTITIONS, per_partition: int = PER_PARTITION) -> set[str]:
    return {f"p{p}-{n}" for p in partitions for n in range(per_partition)}


def create_topic_with_messages(bootstrap: str, topic: str, per_partition: int = PER_PARTITION) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS)], operation_timeout=10)[topic].result(timeout=15)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    failures: list[str] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            failures.append(str(error))

    for partition in range(PARTITIONS):
        for n in range(per_partition):
            producer.produce(topic, value=f"p{partition}-{n}".encode(), partition=partition, on_delivery=delivered)
    remaining = producer.flush(20)
    assert remaining == 0 and not failures, f"{remaining} messages undelivered, errors: {failures}"


def assert_disjoint_cover(assignments: list[set[int]]) -> None:
    """Every member got something, no partition twice, every partition once."""
    assert all(assignments), f"a member got no partition: {assignments}"
    flat = [p for assignment in assignments for p in assignment]
    assert len(flat) == len(set(flat)), f"a partition was assigned twice: {assignments}"
    assert set(flat) == ALL_PARTITIONS, f"not every partition was assigned: {assignments}"


def split_is_complete(assignments: list[set[int]]) -> bool:
    flat = [p for assignment in assignments for p in assignment]
    return all(assignments) and len(flat) == len(set(flat)) and set(flat) == ALL_PARTITIONS


def caught_up(members: Iterable[tuple[set[int], Mapping[int, int]]], per_partition: int = PER_PARTITION) -> bool:
    """Each member (its assignment, and the next offset it would read per partition it read) has read its
    own partitions to their end, so committing its positions commits every message. Reads of partitions a
    member owned before a rebalance do not count."""
    return all(read.get(p) == per_partition for assigned, read in members for p in assigned)


def consumed_everything(members: Iterable[GroupMember]) -> bool:
    return set().union(*(m.received() for m in members)) == message_values()


def split_and_caught_up(members: Sequence[GroupMember]) -> bool:
    return (split_is_complete([m.assigned() for m in members])
            and caught_up((m.assigned(), m.read_up_to()) for m in members))
