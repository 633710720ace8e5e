"""Consumers reading megabytes at once: Fetches of 1 MiB per partition over several partitions, from rolled
segments and from the active one past its in-memory tail, with two consumers reading together.

The broker reads those bytes into buffers it keeps and reads into again (kemu.log.read_buffers); every
record must still arrive as written, on its partition, at its offset.
"""

from __future__ import annotations

import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.record_clients import create_topic

PARTITIONS = 4
PER_PARTITION = 3_000
VALUE_BYTES = 1_000  # 3 MB a partition: 1 MiB Fetches, three segments of 1 MiB each


def _value(partition: int, offset: int) -> bytes:
    # Different on every record, and not compressible into sameness: a byte from another partition's
    # Fetch, or from another offset, shows.
    stamp = f"p{partition}o{offset:08d}".encode()
    return (stamp * (VALUE_BYTES // len(stamp) + 1))[:VALUE_BYTES]


def _produce(bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    for offset in range(PER_PARTITION):
        for partition in range(PARTITIONS):
            producer.produce(topic, _value(partition, offset), partition=partition)
        producer.poll(0)
    assert producer.flush(30) == 0


def _read_all(bootstrap: str, topic: str, wrong: list[str]) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "enable.partition.eof": False})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        seen = 0
        expected = [0] * PARTITIONS
        deadline = time.monotonic() + 60
        while seen < PARTITIONS * PER_PARTITION and time.monotonic() < deadline:
            for message in consumer.consume(1000, timeout=1):
                if message.error() is not None:
                    wrong.append(f"error {message.error()}")
                    continue
                partition, offset = message.partition(), message.offset()
                if offset != expected[partition] or message.value() != _value(partition, offset):
                    wrong.append(f"partition {partition} offset {offset} (expected {expected[partition]}): "
                                 f"{(message.value() or b'')[:20]!r}")
                expected[partition] = offset + 1
                seen += 1
        return seen
    finally:
        consumer.close()


def test_two_consumers_read_megabytes_of_several_partitions_exactly(kemu_server: KemuServeProcess,
                                                                     topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name, PARTITIONS, {"segment.bytes": str(1024 * 1024)})
    _produce(kemu_server.bootstrap, topic_name)
    wrong: list[str] = []
    counts: list[int] = []
    readers = [threading.Thread(target=lambda: counts.append(_read_all(kemu_server.bootstrap, topic_name, wrong)))
               for _ in range(2)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    assert wrong[:5] == []
    assert counts == [PARTITIONS * PER_PARTITION] * 2
