"""What the transaction compat tests share (no tests here): topics, and reading back what a consumer sees.

Every scenario ends its writes with an "end" record on each partition, written outside any transaction
after everything else. A consumer that has received the end record of every partition has received
everything before it that its isolation level lets through, so "exactly these records" can be asserted
without waiting a guessed time for records that should not come. The reading side is confluent-kafka
(librdkafka), the reference; each client's own consumer is exercised where that client's test says so.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat_tests.polling import wait_for

PARTITIONS = 3
END = "end"
READ_COMMITTED, READ_UNCOMMITTED = "read_committed", "read_uncommitted"
Record = tuple[str, int, str]
"""(topic, partition, value)"""


class UntilEnd:
    """What a consumer has read so far, up to the end record of each of `partitions` partitions."""

    def __init__(self, partitions: int) -> None:
        self.partitions = partitions
        self.seen: list[Record] = []
        self.ended: set[tuple[str, int]] = set()

    def take(self, topic: str, partition: int, value: str) -> None:
        key = (topic, partition)
        if value == END:
            self.ended.add(key)
        else:
            assert key not in self.ended, f"{value} came after the end record of {key}"
            self.seen.append((topic, partition, value))

    @property
    def done(self) -> bool:
        return len(self.ended) == self.partitions

    def records(self) -> list[Record]:
        """Sorted (a list, so that a duplicate shows)."""
        return sorted(self.seen)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create_topics(bootstrap: str, names: Iterable[str], partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    wanted = list(names)
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions) for name in wanted],
                                  operation_timeout=10)
    for name in wanted:
        futures[name].result(timeout=15)


def feed(bootstrap: str, topic: str, per_partition: int, partitions: int = PARTITIONS) -> list[Record]:
    """Plain records "v<partition>-<n>", `per_partition` on each partition, delivered; returns them sorted."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for p in range(partitions):
        for n in range(per_partition):
            producer.produce(topic, value=f"v{p}-{n}".encode(), partition=p)
    assert producer.flush(15) == 0, "records not delivered"
    return sorted((topic, p, f"v{p}-{n}") for p in range(partitions) for n in range(per_partition))


def write_end_records(bootstrap: str, topics: Iterable[str], partitions: int = PARTITIONS) -> None:
    """One plain END record per partition, after everything else the test wrote."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    failures: list[str] = []

    def delivered(error: Any, _message: Any) -> None:
        if error is not None:
            failures.append(str(error))

    for topic in topics:
        for partition in range(partitions):
            producer.produce(topic, value=END.encode(), partition=partition, on_delivery=delivered)
    assert producer.flush(20) == 0 and not failures, f"end records not delivered: {failures}"


def read_until_end(bootstrap: str, topics: Iterable[str], isolation: str, partitions: int = PARTITIONS,
                   timeout: float = 20) -> list[Record]:
    """Every record (but END) an `isolation` consumer reads from the start of the topics' partitions, sorted
    (a list, so that a duplicate shows)."""
    wanted = [TopicPartition(topic, p, 0) for topic in topics for p in range(partitions)]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("reader"), "isolation.level": isolation,
                         "enable.auto.commit": False, "enable.partition.eof": False})
    consumer.assign(wanted)
    reading = UntilEnd(len(wanted))

    def step() -> bool:
        for message in consumer.consume(100, 0.1):
            assert message.error() is None, message.error()
            reading.take(message.topic(), message.partition(), message.value().decode())
        return reading.done

    try:
        wait_for(step, what=f"the end record of each of {len(wanted)} partitions ({isolation})", timeout=timeout)
    finally:
        consumer.close()
    return reading.records()


def records(topics: Iterable[str], prefix: str, partitions: int = PARTITIONS) -> list[Record]:
    """The records a scenario writes, sorted: value "<prefix>-<topic index>-<partition>" on each partition."""
    return sorted((topic, p, f"{prefix}-{i}-{p}") for i, topic in enumerate(topics) for p in range(partitions))
