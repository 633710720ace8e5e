"""One client-neutral shape for "what Metadata said about a topic", so every client's test asserts
the same facts in the same words."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PartitionView:
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    error_code: int = 0


def led_partitions(partitions: list[PartitionView]) -> list[PartitionView]:
    """The partitions, if every one of them has a leader and no error (else an empty list)."""
    if partitions and all(p.error_code == 0 and p.leader >= 0 for p in partitions):
        return partitions
    return []


def assert_single_broker_topic(partitions: list[PartitionView], *, count: int, broker_ids: set[int]) -> None:
    """A topic on a one-broker cluster: partitions 0..count-1, each led by that broker, which is
    also the only replica and the only in-sync replica."""
    assert sorted(p.partition for p in partitions) == list(range(count)), partitions
    assert len(broker_ids) == 1, f"expected a single-broker cluster, Metadata listed brokers {broker_ids}"
    (broker_id,) = broker_ids
    for p in partitions:
        assert p.error_code == 0, p
        assert p.leader == broker_id, p
        assert p.replicas == (broker_id,), p
        assert p.isr == (broker_id,), p
