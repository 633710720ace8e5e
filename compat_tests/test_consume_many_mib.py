"""Consumers reading megabytes at once: Fetches of 1 MiB per partition over several partitions, from rolled
segments and from the active one past its in-memory tail, with two consumers reading together.

The broker names those bytes in the segment files and sends them with sendfile (kemu.wire.file_region); every
record must still arrive as written, on its partition, at its offset, and a read_committed consumer must
still see exactly the committed ones.
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


def test_a_read_committed_consumer_reads_every_committed_record_of_rolled_segments_in_order(
        kemu_server: KemuServeProcess, topic_name: str) -> None:
    # The Fetch answers name the segment files (sent with sendfile); the aborted transactions listed beside
    # them still hide exactly the aborted records.
    create_topic(kemu_server.bootstrap, topic_name, 1, {"segment.bytes": str(1024 * 1024)})
    producer = Producer({"bootstrap.servers": kemu_server.bootstrap, "transactional.id": f"{topic_name}-tx",
                         "linger.ms": 5})
    producer.init_transactions(30)
    committed: list[bytes] = []
    for round_ in range(12):  # 12 × 300 kB: the first segments roll
        producer.begin_transaction()
        values = [_value(round_, n) for n in range(300)]
        for value in values:
            producer.produce(topic_name, value, partition=0)
        if round_ % 3 == 2:
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
            committed.extend(values)
    consumer = Consumer({"bootstrap.servers": kemu_server.bootstrap, "group.id": "unused",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    try:
        consumer.assign([TopicPartition(topic_name, 0, 0)])
        read: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(read) < len(committed) and time.monotonic() < deadline:
            for message in consumer.consume(1000, timeout=1):
                assert message.error() is None, message.error()
                read.append(message.value() or b"")
    finally:
        consumer.close()
    assert len(read) == len(committed)
    assert read == committed
