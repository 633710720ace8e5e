"""A compacted topic holding committed, aborted and still-open transactions between plain writes, read with
read_committed and read_uncommitted by confluent-kafka, kafka-python and kafkajs, before and after the cleaner
ran: the open transaction bounds what is cleaned, aborted values are never seen by read_committed readers and
are gone for everyone once cleaned, and committed values stay until a later write to their key."""

from __future__ import annotations

import time
import uuid
from typing import Any

from compat_tests.compaction_support import (
    Compacting,
    compacting,
    confluent_read,
    kafka_python_read,
)
from compat_tests.external_clients import Kafkajs
from compat_tests.record_clients import create_topic

__all__ = ["compacting"]

Seen = list[tuple[bytes | None, bytes | None]]


class Writer:
    """Writes `key:label` values, each step in a segment of its own (the topic has segment.ms=1 and a step
    waits a few ms, so its first append rolls the segment)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        from confluent_kafka import Producer

        self.bootstrap, self.topic = bootstrap, topic
        self.plain = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})

    def transactional(self, name: str) -> Any:
        from confluent_kafka import Producer

        # A long transaction timeout: the open transaction must outlast the test however slow the machine.
        producer = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": f"{name}-{uuid.uuid4().hex}",
                             "linger.ms": 0, "transaction.timeout.ms": 600_000})
        producer.init_transactions(30)
        return producer

    def put(self, producer: Any, label: str, *keys: str) -> None:
        time.sleep(0.005)  # a new millisecond, so this step's first append rolls the segment (segment.ms=1)
        for key in keys:
            producer.produce(self.topic, key=key.encode(), value=f"{key}:{label}".encode())
        assert producer.flush(30) == 0


END: Seen = [(b"end", b"end")]  # the record kafkajs' reader (js/transactions.mjs) stops at


def pairs(records: list[tuple[int, bytes | None, bytes | None]]) -> Seen:
    return [(key, value) for _, key, value in records]


def kv(*items: str) -> Seen:
    return [(item.split(":")[0].encode(), item.encode()) for item in items]


def read_both(bootstrap: str, topic: str, committed: bool, count: int) -> Seen:
    confluent = pairs(confluent_read(bootstrap, topic, count, committed=committed))
    kafka_python = pairs(kafka_python_read(bootstrap, topic, count, committed=committed))
    assert confluent == kafka_python, (confluent, kafka_python)
    return confluent


def kafkajs_values(kafkajs: Kafkajs, bootstrap: str, topic: str, isolation: str) -> list[str]:
    seen = kafkajs.run("transactions", bootstrap, "read", isolation, "1", topic, timeout=90)
    return [value for _, _, value in seen]


def test_transactions_read_before_and_after_cleaning(compacting: Compacting, topic_name: str,
                                                     kafkajs: Kafkajs) -> None:
    bootstrap = compacting.bootstrap
    create_topic(bootstrap, topic_name, configs={"cleanup.policy": "compact", "segment.ms": "1"})
    writer = Writer(bootstrap, topic_name)
    writer.put(writer.plain, "p1", "k1", "k2")
    committing = writer.transactional("committing")
    committing.begin_transaction()
    writer.put(committing, "c1", "k1", "k3")
    committing.commit_transaction(30)
    aborting = writer.transactional("aborting")
    aborting.begin_transaction()
    writer.put(aborting, "a1", "k1", "k2", "k4")
    aborting.abort_transaction(30)
    writer.put(writer.plain, "p2", "k2")
    left_open = writer.transactional("open")
    left_open.begin_transaction()
    writer.put(left_open, "o1", "k5")
    writer.put(writer.plain, "p3", "k1", "k6")

    committed = kv("k1:p1", "k2:p1", "k1:c1", "k3:c1", "k2:p2")  # up to the open transaction
    everything = kv("k1:p1", "k2:p1", "k1:c1", "k3:c1", "k1:a1", "k2:a1", "k4:a1", "k2:p2", "k5:o1", "k1:p3",
                    "k6:p3")
    assert read_both(bootstrap, topic_name, True, len(committed)) == committed
    assert read_both(bootstrap, topic_name, False, len(everything)) == everything
    [opened_at] = [o for o, k, _ in confluent_read(bootstrap, topic_name, len(everything)) if k == b"k5"]

    [first] = compacting.clean(topic_name)
    # The open transaction bounds the round: its segment and everything after it stay as written.
    assert first["end_offset"] <= opened_at
    committed = kv("k1:c1", "k3:c1", "k2:p2")
    assert read_both(bootstrap, topic_name, True, len(committed)) == committed
    # Aborted values are gone for read_uncommitted readers too; what the open transaction holds back stays.
    everything = kv("k1:c1", "k3:c1", "k2:p2", "k5:o1", "k1:p3", "k6:p3")
    assert read_both(bootstrap, topic_name, False, len(everything)) == everything

    left_open.commit_transaction(30)
    writer.plain.produce(topic_name, key=b"end", value=b"end")
    assert writer.plain.flush(30) == 0
    values = ["k1:c1", "k3:c1", "k2:p2", "k5:o1", "k1:p3", "k6:p3"]
    assert read_both(bootstrap, topic_name, True, len(values) + 1) == kv(*values) + END
    assert kafkajs_values(kafkajs, bootstrap, topic_name, "committed") == values
    assert kafkajs_values(kafkajs, bootstrap, topic_name, "uncommitted") == values

    [second] = compacting.clean(topic_name)
    assert second["first_dirty_offset"] == first["end_offset"]
    values = ["k3:c1", "k2:p2", "k5:o1", "k1:p3", "k6:p3"]  # k1:c1 is superseded by k1:p3 now
    for isolation, committed_flag in (("committed", True), ("uncommitted", False)):
        assert read_both(bootstrap, topic_name, committed_flag, len(values) + 1) == kv(*values) + END
        assert kafkajs_values(kafkajs, bootstrap, topic_name, isolation) == values
