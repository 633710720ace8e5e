"""Fault scripts with a stock client (confluent-kafka): retriable errors on EndTxn and on Produce that the
client retries through, connections dropped before and after a Produce that the idempotent producer
recovers from without a duplicate, throttle_time_ms reaching the client's throttle callback, and the
crash points inside the two-phase commit — the broker stops dead there, `restart()` recovers, and the
transaction completes with a marker on every partition."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from compat_tests.polling import wait_for
from kemu.coordinators.crash_points import CrashPoint
from kemu.testing import Broker
from kemu.testing.faults import Fault
from kemu.txn.state import TxnState
from tests.testing.support import InBackground, markers


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker() as broker:
        yield broker


def transactional(broker: Broker, tid: str) -> Producer:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": tid,
                         "client.id": f"client-{tid}"})
    producer.init_transactions(20)
    return producer


def read_committed(broker: Broker, topic: str, partitions: int, wanted: int) -> list[bytes]:
    """What a read_committed consumer sees from the start of every partition."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"reader-{topic}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, index, 0) for index in range(partitions)])
    seen: list[bytes] = []
    try:
        def step() -> bool:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                seen.append(message.value())
            return len(seen) >= wanted

        wait_for(step, what=f"{wanted} read_committed records of {topic}")
        assert consumer.poll(0.5) is None  # and nothing more
    finally:
        consumer.close()
    return sorted(seen)


@pytest.mark.parametrize("error", ["COORDINATOR_LOAD_IN_PROGRESS", "CONCURRENT_TRANSACTIONS"])
def test_commit_transaction_retries_through_an_end_txn_fault(broker: Broker, error: str) -> None:
    broker.create_topic("orders", partitions=2)
    fault = broker.faults.add(Fault(api="EndTxn", error=error, count=2, transactional_id="tx"))
    producer = transactional(broker, "tx")
    producer.begin_transaction()
    producer.produce("orders", b"a", partition=0)
    producer.produce("orders", b"b", partition=1)
    producer.commit_transaction(30)
    assert fault.hits == 2
    assert read_committed(broker, "orders", 2, 2) == [b"a", b"b"]
    assert sorted(r.value for r in broker.records("orders", read_committed=True)) == [b"a", b"b"]


def test_the_producer_retries_through_a_produce_error_for_its_topic(broker: Broker) -> None:
    broker.create_topic("orders")
    broker.create_topic("other")
    fault = broker.faults.add(Fault(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=2, topic="orders"))
    failures: list[Any] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                         "retry.backoff.ms": 20})
    producer.produce("other", b"untouched", on_delivery=lambda err, _msg: failures.append(err) if err else None)
    assert producer.flush(20) == 0
    assert fault.hits == 0
    producer.produce("orders", b"once", on_delivery=lambda err, _msg: failures.append(err) if err else None)
    assert producer.flush(20) == 0
    assert failures == [] and fault.hits == 2
    assert [r.value for r in broker.records("orders")] == [b"once"]
    assert [r.value for r in broker.records("other")] == [b"untouched"]


@pytest.mark.parametrize("drop", ["before", "after"])
def test_a_dropped_connection_the_idempotent_producer_recovers_from(broker: Broker, drop: str) -> None:
    broker.create_topic("orders")
    fault = broker.faults.add(Fault(api="Produce", drop=drop, topic="orders"))
    failures: list[Any] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                         "retry.backoff.ms": 20, "reconnect.backoff.ms": 20})
    for value in (b"1", b"2", b"3"):
        producer.produce("orders", value, on_delivery=lambda err, _msg: failures.append(err) if err else None)
    assert producer.flush(30) == 0
    assert failures == [] and fault.hits == 1
    # Dropped after handling, the batch was written and the retry is recognised as its duplicate: exactly once.
    assert [r.value for r in broker.records("orders")] == [b"1", b"2", b"3"]
    entry = next(e for e in broker.transcript.entries if e.fault is not None)
    assert entry.closed and not entry.sent


def test_throttle_time_reaches_the_client(broker: Broker) -> None:
    broker.create_topic("orders")
    fault = broker.faults.add(Fault(api="Produce", throttle_time_ms=250))
    throttled: list[float] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers,
                         "throttle_cb": lambda event: throttled.append(event.throttle_time)})
    producer.produce("orders", b"x")
    assert producer.flush(20) == 0
    wait_for(lambda: producer.poll(0.1) or throttled, what="the throttle callback")
    assert fault.hits == 1 and throttled == [pytest.approx(0.25)]


@pytest.mark.parametrize(("point", "written"), [
    (CrashPoint.AFTER_PREPARE, [0, 0, 0]),
    (CrashPoint.PARTIAL_MARKERS, [1, 0, 0]),
    (CrashPoint.BEFORE_COMPLETE, [1, 1, 1]),
])
def test_a_crash_inside_the_commit_then_restart_completes_it(broker: Broker, point: CrashPoint,
                                                             written: list[int]) -> None:
    broker.create_topic("orders", partitions=3)
    crash = broker.faults.add(Fault(crash=point, transactional_id="tx"))
    producer = transactional(broker, "tx")
    producer.begin_transaction()
    for index in range(3):
        producer.produce("orders", f"v{index}".encode(), partition=index)
    producer.flush(20)
    committing = InBackground(lambda: producer.commit_transaction(60)).start()
    wait_for(lambda: broker.crashed, what=f"the broker to stop at {point.value}")
    assert crash.hits == 1
    # Stopped dead: PrepareCommit journaled, the markers written so far, nothing after.
    assert markers(broker, "orders", 3) == written
    assert broker.coordinators.txn.coordinator.txns["tx"].state is TxnState.PREPARE_COMMIT

    broker.restart()
    assert committing.join(60) == [None]  # the client's commit went through, across the crash
    assert broker.call(lambda: broker.coordinators.txn.coordinator.txns["tx"].state) is TxnState.COMPLETE_COMMIT
    assert all(count >= 1 for count in broker.call(lambda: markers(broker, "orders", 3)))
    assert read_committed(broker, "orders", 3, 3) == [b"v0", b"v1", b"v2"]
    # The producer carries on with its next transaction.
    producer.begin_transaction()
    producer.produce("orders", b"next", partition=0)
    producer.commit_transaction(30)
    assert read_committed(broker, "orders", 3, 4) == [b"next", b"v0", b"v1", b"v2"]


def test_an_aborted_transaction_crashes_and_recovers_too(broker: Broker) -> None:
    broker.create_topic("orders", partitions=2)
    broker.faults.add(Fault(crash="partial-markers"))
    producer = transactional(broker, "tx")
    producer.begin_transaction()
    producer.produce("orders", b"never", partition=0)
    producer.produce("orders", b"never", partition=1)
    producer.flush(20)
    aborting = threading.Thread(target=lambda: producer.abort_transaction(60))
    aborting.start()
    wait_for(lambda: broker.crashed, what="the broker to stop")
    broker.kill()
    aborting.join(60)
    wait_for(lambda: broker.call(lambda: broker.coordinators.txn.coordinator.txns["tx"].state)
             is TxnState.COMPLETE_ABORT, what="the abort to complete")
    broker.produce("orders", "after")
    assert read_committed(broker, "orders", 2, 1) == [b"after"]


def test_kafka_error_codes_line_up() -> None:
    # The fault names errors as Kafka does; confluent-kafka's codes are the same numbers.
    assert Fault(api="EndTxn", error="CONCURRENT_TRANSACTIONS").error_code == KafkaError.CONCURRENT_TRANSACTIONS
