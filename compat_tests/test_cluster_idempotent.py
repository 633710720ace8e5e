"""Idempotent producers (confluent-kafka, kafka-python) keep writing to a three-broker kemu while leaders
move, the broker leading some partitions is stopped and started again, several times over: every
acknowledged record is stored exactly once, nothing acknowledged is lost, and each client recovers (every
partition acknowledged again) after every move. The figures (moves, records, lost, duplicated, recovery
times) are printed: `pytest -s` shows them."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError, Message, Producer
from kafka import KafkaProducer

from compat_tests.cluster_moves import BROKERS, Move, Progress, disturb, report, rotation
from kemu.testing import Broker

PARTITIONS = 3
ROUNDS = 3


def produce_through_moves(broker: Broker, progress: Progress,
                          send: Callable[[int], None]) -> tuple[list[Move], list[BaseException]]:
    """`send(n)` for n = 0, 1, ... on a thread of its own while the moves run; the moves and what it raised."""
    stop, failures = threading.Event(), []

    def run() -> None:
        number = 0
        try:
            while not stop.is_set():
                send(number)
                number += 1
        except BaseException as exc:  # reported in the test's thread
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        return disturb(broker, progress, rotation(broker, "moves", PARTITIONS), ROUNDS), failures
    finally:
        stop.set()
        thread.join()


def check(name: str, broker: Broker, topic: str, acked: set[bytes], moves_report: Callable[[int, int], str]) -> None:
    stored = Counter(r.value for r in broker.records(topic))
    duplicated = sum(n - 1 for n in stored.values() if n > 1)
    lost = len(acked - set(stored))
    print(moves_report(lost, duplicated))
    assert (lost, duplicated) == (0, 0)


@pytest.mark.kemu(brokers=BROKERS)
def test_confluent_idempotent_producer_through_leader_moves(kemu_broker: Broker) -> None:
    kemu_broker.create_topic("moves", partitions=PARTITIONS, replication_factor=BROKERS)
    progress = Progress(PARTITIONS)
    acked: set[bytes] = set()
    errors: list[str] = []
    producer = Producer({"bootstrap.servers": kemu_broker.bootstrap_servers, "enable.idempotence": True,
                         "linger.ms": 2, "message.timeout.ms": 120000})

    def delivered(error: KafkaError | None, message: Message) -> None:
        if error is not None:
            errors.append(str(error))
        else:
            acked.add(message.value() or b"")
            progress.ack(message.partition() or 0)

    def send(number: int) -> None:
        while True:
            try:
                producer.produce("moves", f"c-{number}".encode(), partition=number % PARTITIONS,
                                 on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)

    moves, failures = produce_through_moves(kemu_broker, progress, send)
    assert producer.flush(60) == 0
    assert not failures and not errors, (failures, errors[:5])
    check("confluent-kafka idempotent", kemu_broker, "moves", acked,
          lambda lost, dup: report("confluent-kafka idempotent", moves, len(acked), lost, dup))


@pytest.mark.kemu(brokers=BROKERS)
def test_kafka_python_idempotent_producer_through_leader_moves(kemu_broker: Broker) -> None:
    kemu_broker.create_topic("moves", partitions=PARTITIONS, replication_factor=BROKERS)
    progress = Progress(PARTITIONS)
    acked: set[bytes] = set()
    errors: list[BaseException] = []
    lock = threading.Lock()
    producer = KafkaProducer(bootstrap_servers=kemu_broker.bootstrap_servers, enable_idempotence=True,
                             acks="all", linger_ms=2, retries=1_000_000, request_timeout_ms=30000,
                             delivery_timeout_ms=120000)

    def send(number: int) -> None:
        value = f"k-{number}".encode()

        def on_ack(metadata: Any) -> None:
            with lock:
                acked.add(value)
            progress.ack(metadata.partition)

        future = producer.send("moves", value, partition=number % PARTITIONS)
        future.add_callback(on_ack)
        future.add_errback(errors.append)
        if number % 50 == 49:
            future.get(timeout=120)  # keeps the backlog short, so each move's recovery is the client's own

    moves, failures = produce_through_moves(kemu_broker, progress, send)
    producer.flush(60)
    producer.close(10)
    assert not failures and not errors, (failures, errors[:5])
    check("kafka-python idempotent", kemu_broker, "moves", acked,
          lambda lost, dup: report("kafka-python idempotent", moves, len(acked), lost, dup))
