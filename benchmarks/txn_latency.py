"""Commit latency of one-record transactions with confluent-kafka.

One transactional producer runs `count` transactions of one record each on a one-partition topic:
begin, produce, commit. Two latencies are kept per transaction: the `commit_transaction()` call alone
(the record's Produce, then EndTxn and the markers), and the whole transaction from `begin_transaction()`
to the commit's return. The figures count only if a `read_committed` consumer then reads back exactly
the records committed, in order.

Latency says nothing about whether a broker's transactions mean anything, so `probe_semantics` also
commits, aborts and leaves one transaction open on a topic of its own and reports what a `read_committed`
consumer sees: a broker that accepts the transactional protocol yet shows aborted records is named as such.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from benchmarks.kafka_probe import api_versions
from benchmarks.throughput import consumer_config

TRANSACTION_APIS = {10: "FindCoordinator", 22: "InitProducerId", 24: "AddPartitionsToTxn", 26: "EndTxn"}
RECORD_SIZE = 100


@dataclass(frozen=True)
class TxnResult:
    commit_ms: list[float]
    transaction_ms: list[float]
    failure: str | None = None
    # The transactions alone, from the first begin_transaction() to the last commit's return: as the batched
    # workload's clock, it leaves out init_transactions() (whose first coordinator lookup may wait on a 500 ms
    # retry timer in librdkafka, whichever broker answers) and the read_committed check after.
    seconds: float = 0.0
    # Set when the broker does not offer transactions at all (distinct from trying and failing).
    unsupported: str | None = None
    # What read_committed showed after a commit, an abort, a commit and a still-open transaction.
    semantics: str | None = None


def percentile(samples: list[float], fraction: float) -> float:
    """Nearest-rank percentile: the smallest sample with at least `fraction` of samples at or below it."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def missing_transaction_apis(host: str, port: int) -> list[str]:
    offered = api_versions(host, port)
    return [name for key, name in TRANSACTION_APIS.items() if key not in offered]


def run_transactions(bootstrap: str, topic: str, count: int, timeout: float) -> TxnResult:
    host, port = bootstrap.rsplit(":", 1)
    missing = missing_transaction_apis(host, int(port))
    if missing:
        return TxnResult([], [], unsupported="the broker offers no " + ", ".join(missing))
    producer = Producer({
        "bootstrap.servers": bootstrap,
        "transactional.id": f"kemu-bench-{topic}",
        "linger.ms": 0,  # the commit flushes anyway; no linger keeps "whole transaction" honest
        "log_level": 4,
    })
    commit_ms: list[float] = []
    transaction_ms: list[float] = []
    try:
        producer.init_transactions(timeout)
        first_began = time.perf_counter()
        for sequence in range(count):
            began = time.perf_counter()
            producer.begin_transaction()
            producer.produce(topic, sequence.to_bytes(8, "big") + bytes(RECORD_SIZE - 8), partition=0)
            committing = time.perf_counter()
            producer.commit_transaction(timeout)
            done = time.perf_counter()
            commit_ms.append((done - committing) * 1000)
            transaction_ms.append((done - began) * 1000)
    except KafkaException as error:
        return TxnResult(commit_ms, transaction_ms,
                         failure=f"after {len(commit_ms)} commits: {error.args[0] if error.args else error}")
    seconds = time.perf_counter() - first_began
    problem = check_committed(bootstrap, topic, count, timeout)
    return TxnResult(commit_ms, transaction_ms, failure=problem, seconds=seconds)


_IDLE_S = 1.0


@dataclass(frozen=True)
class BatchedTxnResult:
    transactions: int
    seconds: float
    failure: str | None = None
    unsupported: str | None = None

    @property
    def per_second(self) -> float:
        return self.transactions / self.seconds if self.seconds > 0 else 0.0


def run_batched_transactions(bootstrap: str, topic: str, transactions: int, records: int, partitions: int,
                             timeout: float) -> BatchedTxnResult:
    """`transactions` transactions of `records` 100 B records each, spread round-robin over `partitions`
    partitions; checked by a read_committed read of every partition."""
    host, port = bootstrap.rsplit(":", 1)
    missing = missing_transaction_apis(host, int(port))
    if missing:
        return BatchedTxnResult(0, 0.0, unsupported="the broker offers no " + ", ".join(missing))
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"kemu-bench-{topic}",
                         "linger.ms": 5, "log_level": 4})
    try:
        producer.init_transactions(timeout)
        started = time.perf_counter()
        for number in range(transactions):
            producer.begin_transaction()
            for index in range(records):
                sequence = number * records + index
                producer.produce(topic, sequence.to_bytes(8, "big") + bytes(RECORD_SIZE - 8),
                                 partition=sequence % partitions)
            producer.commit_transaction(timeout)
        seconds = time.perf_counter() - started
    except KafkaException as error:
        return BatchedTxnResult(0, 0.0, failure=f"the client failed: {error.args[0] if error.args else error}")
    total = transactions * records
    sequences = _read_committed(bootstrap, topic, partitions, total, timeout)
    if sorted(sequences) != list(range(total)):
        return BatchedTxnResult(transactions, seconds, failure=(
            f"read_committed read {len(sequences)} records ({len(set(sequences))} distinct), "
            f"not the {total} committed"))
    return BatchedTxnResult(transactions, seconds)


def _read_committed(bootstrap: str, topic: str, partitions: int, count: int, timeout: float) -> list[int]:
    consumer = Consumer(consumer_config(bootstrap, **{"isolation.level": "read_committed"}))
    sequences: list[int] = []
    try:
        consumer.assign([TopicPartition(topic, partition, 0) for partition in range(partitions)])
        deadline = time.perf_counter() + timeout
        while len(sequences) < count and time.perf_counter() < deadline:
            sequences += [int.from_bytes((m.value() or b"")[:8], "big")
                          for m in consumer.consume(10_000, timeout=0.5) if m.error() is None]
    finally:
        consumer.close()
    return sequences


def probe_semantics(bootstrap: str, topic: str, timeout: float) -> str:
    """Commit, abort, commit, then hold a transaction open; describe what read_committed returns."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"kemu-bench-{topic}",
                         "linger.ms": 0, "log_level": 4})
    try:
        producer.init_transactions(timeout)
        for value, commit in ((b"committed-1", True), (b"aborted", False), (b"committed-2", True)):
            producer.begin_transaction()
            producer.produce(topic, value, partition=0)
            producer.flush(timeout)
            if commit:
                producer.commit_transaction(timeout)
            else:
                producer.abort_transaction(timeout)
        producer.begin_transaction()
        producer.produce(topic, b"open", partition=0)
        producer.flush(timeout)
        seen = _drain_read_committed(bootstrap, topic, timeout)
        producer.abort_transaction(timeout)
    except KafkaException as error:
        return f"the commit/abort probe failed: {error.args[0] if error.args else error}"
    verdicts = [
        "committed records visible" if {b"committed-1", b"committed-2"} <= set(seen)
        else "committed records MISSING",
        "aborted record hidden" if b"aborted" not in seen else "aborted record SHOWN",
        "open transaction's record hidden" if b"open" not in seen else "open transaction's record SHOWN",
    ]
    return "read_committed: " + "; ".join(verdicts)


def _drain_read_committed(bootstrap: str, topic: str, timeout: float) -> list[bytes]:
    """Everything read_committed returns: read until the last commit shows, then until 1 s passes idle."""
    consumer = Consumer(consumer_config(bootstrap, **{"isolation.level": "read_committed"}))
    seen: list[bytes] = []
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.perf_counter() + timeout
        idle_since = time.perf_counter()
        while time.perf_counter() < deadline:
            fresh = [m.value() or b"" for m in consumer.consume(100, timeout=0.1) if m.error() is None]
            if fresh:
                seen += fresh
                idle_since = time.perf_counter()
            elif b"committed-2" in seen and time.perf_counter() - idle_since > _IDLE_S:
                break
    finally:
        consumer.close()
    return seen


def check_committed(bootstrap: str, topic: str, count: int, timeout: float) -> str | None:
    consumer = Consumer(consumer_config(bootstrap, **{"isolation.level": "read_committed"}))
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.perf_counter() + timeout
        sequences: list[int] = []
        while len(sequences) < count and time.perf_counter() < deadline:
            for message in consumer.consume(count, timeout=0.5):
                if message.error() is None:
                    value = message.value() or b""
                    if len(value) != RECORD_SIZE:
                        return f"a committed record of {len(value)} bytes read back, {RECORD_SIZE} written"
                    sequences.append(int.from_bytes(value[:8], "big"))
    finally:
        consumer.close()
    if sequences != list(range(count)):
        return f"read_committed read {len(sequences)} records back, not the {count} committed in order"
    return None
