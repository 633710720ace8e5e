"""End-to-end latency with confluent-kafka: from `produce()` to the consumer holding the record.

A producer (acks=all, linger.ms=0) sends one 100 B record about every millisecond to a one-partition
topic while a consumer assigned at its end (`fetch.wait.max.ms=5`, so an idle long poll returns within
5 ms as it would against a real broker with that setting) reads them. Each value starts with the
`perf_counter_ns` of its send; both clients live in this process, so one clock times both ends. The
figures count only if the consumer got every record exactly once, in order.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from benchmarks.throughput import consumer_config, wait_for_coordinator

RECORD_SIZE = 100
INTERVAL_S = 0.001
FETCH_WAIT_MAX_MS = 5
_STAMP_BYTES = 8
_SEQUENCE_BYTES = 8


@dataclass(frozen=True)
class LatencyResult:
    latencies_ms: list[float]
    failure: str | None = None


def value_for(sequence: int, sent_ns: int) -> bytes:
    head = sent_ns.to_bytes(_STAMP_BYTES, "big") + sequence.to_bytes(_SEQUENCE_BYTES, "big")
    return head + bytes(RECORD_SIZE - len(head))


def parse_value(value: bytes) -> tuple[int, int]:
    """(sequence, send time in perf_counter_ns) of a record `value_for` made."""
    return (int.from_bytes(value[_STAMP_BYTES:_STAMP_BYTES + _SEQUENCE_BYTES], "big"),
            int.from_bytes(value[:_STAMP_BYTES], "big"))


def run_latency(bootstrap: str, topic: str, count: int, timeout: float) -> LatencyResult:
    consumer = Consumer(consumer_config(bootstrap, **{"fetch.wait.max.ms": FETCH_WAIT_MAX_MS,
                                                       "fetch.min.bytes": 1}))
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, "log_level": 4})
    received: list[tuple[int, float]] = []
    failure: list[str] = []
    done = threading.Event()
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        producer.list_topics(topic, timeout=10.0)
        consumer.list_topics(topic, timeout=10.0)
        # As in the throughput consume rounds: the group's coordinator found (a fresh broker's first lookup
        # creates __consumer_offsets) before the first record is sent, so no record waits on that set-up.
        wait_for_coordinator(consumer, topic, 10.0)
        deadline = time.perf_counter() + timeout

        def consume() -> None:
            # poll(), not consume(n, timeout): consume waits for n records or the whole timeout, so its
            # batching, not the broker, would set the latency.
            while len(received) < count and time.perf_counter() < deadline:
                message = consumer.poll(0.05)
                if message is None:
                    continue
                now = time.perf_counter_ns()
                if message.error() is not None:
                    failure.append(str(message.error()))
                    continue
                sequence, sent = parse_value(message.value() or b"")
                received.append((sequence, (now - sent) / 1e6))
            done.set()

        reader = threading.Thread(target=consume, name="latency-consumer", daemon=True)
        reader.start()
        next_send = time.perf_counter()
        for sequence in range(count):
            # Sleep rather than spin: a spinning producer would hold the GIL from the consumer's thread.
            time.sleep(max(0.0, next_send - time.perf_counter()))
            producer.produce(topic, value_for(sequence, time.perf_counter_ns()), partition=0)
            producer.poll(0)
            next_send += INTERVAL_S
        producer.flush(max(0.0, deadline - time.perf_counter()))
        done.wait(max(0.0, deadline - time.perf_counter()))
        reader.join(1.0)
    except KafkaException as error:
        return LatencyResult([], f"the client failed: {error.args[0] if error.args else error}")
    finally:
        consumer.close()
    problem = check_received([sequence for sequence, _ in received], count)
    if failure and problem is None:
        problem = f"consumer error: {failure[0]}"
    return LatencyResult([latency for _, latency in received], problem)


def check_received(sequences: list[int], count: int) -> str | None:
    if sequences != list(range(count)):
        return f"read {len(sequences)} records ({len(set(sequences))} distinct), not the {count} sent, in order"
    return None
