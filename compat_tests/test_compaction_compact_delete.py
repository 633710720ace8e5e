"""cleanup.policy=compact,delete: the cleaner compacts while DeleteRecords and retention still delete. After a
DeleteRecords past the cleaner's checkpoint the next round starts at the new log start (Kafka resets the
checkpoint), nothing below it comes back, and a retention.ms set on the live topic deletes the segments."""

from __future__ import annotations

import time

from compat_tests.compaction_support import (
    Compacting,
    alter_topic_configs,
    compacting,
    confluent_read,
    kafka_python_read,
    latest_per_key,
)
from compat_tests.polling import wait_for
from compat_tests.record_clients import Confluent, KafkaPython, create_topic

__all__ = ["compacting"]


def rounds(bootstrap: str, topic: str, labels: list[str], keys: int = 5) -> None:
    """One round of `keys` updates per label, each round in a segment of its own (segment.ms=1): a round is
    one batch (queued within linger.ms, sent by flush), so no millisecond can pass between its appends and
    roll a segment in the middle of it."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1000})
    for label in labels:
        time.sleep(0.005)  # a new millisecond: the round's first append rolls the segment
        for k in range(keys):
            producer.produce(topic, key=b"k%d" % k, value=f"{label}-{k}".encode())
        assert producer.flush(30) == 0


def test_delete_records_and_retention_on_a_compact_delete_topic(compacting: Compacting, topic_name: str) -> None:
    bootstrap = compacting.bootstrap
    create_topic(bootstrap, topic_name, configs={"cleanup.policy": "compact,delete", "segment.ms": "1"})
    rounds(bootstrap, topic_name, ["r0", "r1", "r2", "r3"])  # offsets 0-19
    [first] = compacting.clean(topic_name)
    assert (first["first_dirty_offset"], first["end_offset"]) == (0, 15)  # the last round is the active segment

    rounds(bootstrap, topic_name, ["r4", "r5"])  # offsets 20-29
    Confluent(bootstrap).delete_records(topic_name, 0, 22)
    [second] = compacting.clean(topic_name)
    assert second["first_dirty_offset"] == 22  # the checkpoint (15) was below the new log start
    expected = {b"k0": b"r4-0", b"k1": b"r4-1", b"k2": b"r4-2", b"k3": b"r4-3", b"k4": b"r4-4"}
    for name, read in (("confluent-kafka", confluent_read), ("kafka-python", kafka_python_read)):
        got = read(bootstrap, topic_name, 8)  # r4's k2-k4 (22-24), then r5 (25-29) in the active segment
        assert [offset for offset, _, _ in got] == list(range(22, 30)), name
        assert latest_per_key(got[:3]) == {k: v for k, v in expected.items() if k in (b"k2", b"k3", b"k4")}, name
    assert Confluent(bootstrap).watermarks(topic_name, 0) == (22, 30)

    # retention.ms on the live topic: every segment is past it, the active one too (Kafka rolls a new one).
    alter_topic_configs(bootstrap, topic_name, {"retention.ms": "1"})
    wait_for(lambda: KafkaPython(bootstrap).watermarks(topic_name, 0) == (30, 30),
             what="retention to delete every segment", timeout=30)
    # Retention back to a week before the next write, else the housekeeper may delete r6 before it is read.
    alter_topic_configs(bootstrap, topic_name, {"retention.ms": "604800000"})
    rounds(bootstrap, topic_name, ["r6"], keys=1)
    assert [(o, k, v) for o, k, v in kafka_python_read(bootstrap, topic_name, 1)] == [(30, b"k0", b"r6-0")]
