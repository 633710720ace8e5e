"""50,000 updates over 500 keys on a compacted topic: after the cleaner ran, confluent-kafka, kafka-python and
kafkajs consumers reading from offset 0 each get one record per key, with its last value, at the offset it
was written at. The figures of the run (segments and bytes before and after, cleaning time) are printed."""

from __future__ import annotations

import time

from compat_tests.compaction_support import (
    Compacting,
    alter_topic_configs,
    compacting,
    confluent_read,
    kafka_python_read,
)
from compat_tests.external_clients import Kafkajs
from compat_tests.record_clients import KafkaJs, create_topic

__all__ = ["compacting"]

UPDATES = 50_000
KEYS = 500
SENTINEL = b"rolled"  # a key of its own, written after the updates: its append rolls the last segment


def value_of(update: int) -> bytes:
    return b"update-%06d-" % update + b"x" * 64


def test_fifty_thousand_updates_end_with_one_value_per_key(compacting: Compacting, topic_name: str,
                                                            kafkajs: Kafkajs) -> None:
    from confluent_kafka import Producer

    bootstrap = compacting.bootstrap
    # segment.bytes at Kafka's minimum (1 MiB), so the updates span several segments.
    create_topic(bootstrap, topic_name, configs={"cleanup.policy": "compact", "segment.bytes": "1048576"})
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all"})
    offsets: dict[bytes, int] = {}

    def delivered(error: object, message: object) -> None:
        assert error is None, error
        offsets[message.key()] = message.offset()  # type: ignore[attr-defined]

    for update in range(UPDATES):
        producer.produce(topic_name, key=b"key-%03d" % (update % KEYS), value=value_of(update), on_delivery=delivered)
        if update % 1000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    # The active segment is never cleaned: a segment.ms set on the live topic makes the next append roll it.
    alter_topic_configs(bootstrap, topic_name, {"segment.ms": "1"})
    time.sleep(0.01)  # past segment.ms (1 ms) since the last update's timestamp, so the append rolls
    producer.produce(topic_name, key=SENTINEL, value=b"end", on_delivery=delivered)
    assert producer.flush(30) == 0

    started = time.perf_counter()
    [result] = compacting.clean(topic_name)
    seconds = time.perf_counter() - started
    print(f"\ncompaction of {UPDATES} updates over {KEYS} keys: {result['segments_before']} segments, "
          f"{result['bytes_before']} bytes before; {result['segments_after']} segments, {result['bytes_after']} "
          f"bytes after; {result['records_read']} records read, {result['records_kept']} kept; "
          f"POST /cleaner/run took {seconds:.2f} s")
    assert result["segments_before"] > 2
    assert result["bytes_after"] < result["bytes_before"] / 50

    want = {b"key-%03d" % k: (offsets[b"key-%03d" % k], value_of(UPDATES - KEYS + k)) for k in range(KEYS)}
    want[SENTINEL] = (offsets[SENTINEL], b"end")
    readers = {
        "confluent-kafka": lambda: confluent_read(bootstrap, topic_name, KEYS + 1),
        "kafka-python": lambda: kafka_python_read(bootstrap, topic_name, KEYS + 1),
        "kafkajs": lambda: [(r.offset, r.key, r.value)
                            for r in KafkaJs(bootstrap, tool=kafkajs).read(topic_name, 0, 0, KEYS + 1)],
    }
    for name, read in readers.items():
        got = read()
        assert len(got) == KEYS + 1, name
        assert {key: (offset, value) for offset, key, value in got} == want, name
        assert [offset for offset, _, _ in got] == sorted(offset for offset, _ in want.values()), name
