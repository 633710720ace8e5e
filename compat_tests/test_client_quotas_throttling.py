"""Byte-rate quotas with stock clients: confluent-kafka's producer (librdkafka), its client id given a
producer_byte_rate, and its consumer, given a consumer_byte_rate, are throttled by kemu as by the reference
Kafka: their throttle callbacks report throttle times from the Produce and Fetch responses, and the broker,
muting the connection, holds their throughput near the quota. Kafka counts the rate over at least
quota.window.num - 1 windows (10 s by default), so a burst of ten seconds' worth passes at once and what
follows is held back; each client here moves 13 s worth, and both brokers take about 12 s."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Producer

from compat_tests.conformance.steps import Connection
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.reference.kafka import ReferenceKafka
from compat_tests.test_transactions_support import create_topics

ALTER_CLIENT_QUOTAS = 49
QUOTA = 50_000  # bytes per second
MESSAGE = 1000
SECONDS_WORTH = 13


def set_quota(address: tuple[str, int], client_id: str, value: float | None,
              key: str = "producer_byte_rate") -> None:
    connection = Connection(address)
    try:
        answer = connection.exchange(ALTER_CLIENT_QUOTAS, 1, {"entries": [{
            "entity": [{"entity_type": "client-id", "entity_name": client_id}],
            "ops": [{"key": key, "value": value or 0.0, "remove": value is None}]}],
            "validate_only": False})
    finally:
        connection.close()
    assert [entry["error_code"] for entry in answer["entries"]] == [0], answer


def produce_under_quota(bootstrap: str, address: tuple[str, int]) -> dict[str, Any]:
    """Send SECONDS_WORTH seconds of the quota as fast as the producer may: the elapsed time, the throughput
    and the throttle times its callback saw."""
    topic, client_id = f"cq-throttle-{uuid.uuid4().hex[:8]}", f"cq-throttled-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, [topic])
    set_quota(address, client_id, QUOTA)
    throttles: list[int] = []
    producer = Producer({"bootstrap.servers": bootstrap, "client.id": client_id, "linger.ms": 5,
                         "batch.size": 16384, "acks": "all",
                         "throttle_cb": lambda event: throttles.append(int(event.throttle_time * 1000))})
    try:
        producer.list_topics(topic, timeout=10)  # connected before the clock starts
        count = QUOTA * SECONDS_WORTH // MESSAGE
        delivered: list[int] = []
        started = time.monotonic()
        for _ in range(count):
            while True:
                try:
                    producer.produce(topic, value=b"x" * MESSAGE,
                                     on_delivery=lambda err, msg: delivered.append(0 if err is None else 1))
                    break
                except BufferError:
                    producer.poll(0.05)
            producer.poll(0)
        assert producer.flush(60) == 0
        elapsed = time.monotonic() - started
    finally:
        set_quota(address, client_id, None)
    assert delivered == [0] * count
    return {"elapsed_s": elapsed, "throughput": count * MESSAGE / elapsed, "throttles": throttles}


def consume_under_quota(bootstrap: str, address: tuple[str, int]) -> dict[str, Any]:
    """Read SECONDS_WORTH seconds of the quota, produced beforehand, as fast as the consumer may."""
    topic, client_id = f"cq-fetch-{uuid.uuid4().hex[:8]}", f"cq-reader-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, [topic], partitions=1)
    count = QUOTA * SECONDS_WORTH // MESSAGE
    # Small batches: a fetch returns at least its first batch whole, and one batch past what the quota lets
    # through in a window would be throttled, and taken back, on every fetch (on Kafka too).
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 16384})
    for _ in range(count):
        producer.produce(topic, value=b"x" * MESSAGE)
        producer.poll(0)
    assert producer.flush(30) == 0
    set_quota(address, client_id, QUOTA, "consumer_byte_rate")
    throttles: list[int] = []
    consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": client_id, "group.id": client_id,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "throttle_cb": lambda event: throttles.append(int(event.throttle_time * 1000))})
    try:
        consumer.subscribe([topic])
        read, started = 0, None
        deadline = time.monotonic() + 60
        while read < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            started = started or time.monotonic()
            read += 1
        elapsed = time.monotonic() - (started or time.monotonic())
    finally:
        consumer.close()
        set_quota(address, client_id, None, "consumer_byte_rate")
    assert read == count
    return {"elapsed_s": elapsed, "throughput": count * MESSAGE / elapsed, "throttles": throttles}


Run = Callable[[str, tuple[str, int]], dict[str, Any]]


def held_alike(run: Run, kemu_server: KemuServeProcess, reference_kafka: ReferenceKafka) -> None:
    """Both brokers throttle the client and hold it near the quota, taking about as long (within a third)."""
    kafka = run(reference_kafka.bootstrap, reference_kafka.addresses[0])
    kemu = run(kemu_server.bootstrap, (kemu_server.host, kemu_server.port))
    for outcome in (kafka, kemu):
        assert max(outcome["throttles"], default=0) > 0, outcome
        assert 0.6 * QUOTA < outcome["throughput"] < 1.4 * QUOTA, outcome
    assert abs(kemu["elapsed_s"] - kafka["elapsed_s"]) < kafka["elapsed_s"] / 3, (kafka, kemu)


def test_a_producer_over_its_byte_rate_is_held_near_the_quota(kemu_server: KemuServeProcess,
                                                              reference_kafka: ReferenceKafka) -> None:
    held_alike(produce_under_quota, kemu_server, reference_kafka)


def test_a_consumer_over_its_byte_rate_is_held_near_the_quota(kemu_server: KemuServeProcess,
                                                              reference_kafka: ReferenceKafka) -> None:
    # Kafka counts the whole Fetch response's bytes, kemu its records' (all but a few dozen per partition).
    held_alike(consume_under_quota, kemu_server, reference_kafka)
