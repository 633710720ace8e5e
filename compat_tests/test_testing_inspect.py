"""The inspector and the exactly-once checker with stock clients (confluent-kafka): transactions committed,
aborted and left open, an idempotent producer, a read_committed consumer group — the inspection shows each
as it is and the checker finds nothing; then a broker bent to forget its aborted index hands the consumer an
aborted record, and the checker says so."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from compat_tests.polling import wait_for
from kemu.broker.partition import Partition
from kemu.testing import Broker
from kemu.testing.checker import AbortedRead

TIMEOUT_S = 15
SETTINGS = {"offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3",
            "group.initial.rebalance.delay.ms": "0"}


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker(config=SETTINGS) as running:
        running.create_topic("orders")
        yield running


def transactional(broker: Broker, transactional_id: str) -> Producer:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": transactional_id,
                         "linger.ms": 0})
    producer.init_transactions(TIMEOUT_S)
    return producer


def in_transaction(producer: Producer, values: list[bytes], commit: bool) -> None:
    producer.begin_transaction()
    for value in values:
        producer.produce("orders", value=value, partition=0)
    # Sent before the end: librdkafka's abort purges what it has not sent yet, and nothing would be aborted.
    assert producer.flush(TIMEOUT_S) == 0
    if commit:
        producer.commit_transaction(TIMEOUT_S)
    else:
        producer.abort_transaction(TIMEOUT_S)


def consumer(broker: Broker, group: str, **config: Any) -> Consumer:
    return Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                     "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, **config})


def consume(reader: Consumer, wanted: int) -> list[bytes]:
    seen: list[bytes] = []

    def step() -> bool:
        message = reader.poll(0.2)
        if message is not None and message.error() is None:
            seen.append(message.value())
        return len(seen) >= wanted

    wait_for(step, what=f"{wanted} records")
    return seen


def test_transactions_idempotence_and_a_read_committed_group_leave_no_violation(broker: Broker) -> None:
    in_transaction(transactional(broker, "committer"), [b"c0", b"c1", b"c2"], commit=True)  # 0-2, marker 3
    in_transaction(transactional(broker, "aborter"), [b"a0", b"a1"], commit=False)  # 4-5, marker 6
    opener = transactional(broker, "opener")
    opener.begin_transaction()
    opener.produce("orders", value=b"o0", partition=0)  # 7
    assert opener.flush(TIMEOUT_S) == 0

    held = broker.inspect()
    assert held.transaction("opener").state == "Ongoing" and held.transaction("opener").partitions == [("orders", 0)]
    assert held.transaction("opener").deadline_action == "abort"
    orders = held.partition("orders")
    opener_pid = held.transaction("opener").producer_id
    assert (orders.last_stable_offset, orders.high_watermark) == (7, 8)
    assert [(t.producer_id, t.first_offset) for t in orders.open_transactions] == [(opener_pid, 7)]
    opener.commit_transaction(TIMEOUT_S)  # marker 8

    idempotent = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                           "linger.ms": 0})
    for value in (b"i0", b"i1"):
        idempotent.produce("orders", value=value, partition=0)
        assert idempotent.flush(TIMEOUT_S) == 0  # 9, 10: a batch each

    reader = consumer(broker, "eos-readers")
    reader.subscribe(["orders"])
    try:
        assert consume(reader, 6) == [b"c0", b"c1", b"c2", b"o0", b"i0", b"i1"]
        reader.commit(asynchronous=False)
        seen = broker.inspect()
    finally:
        reader.close()

    assert seen.violations == []
    states = {t.transactional_id: t.state for t in seen.transactions}
    assert states == {"committer": "CompleteCommit", "aborter": "CompleteAbort", "opener": "CompleteCommit"}
    pids = {t.transactional_id: t.producer_id for t in seen.transactions}
    orders = seen.partition("orders")
    assert (orders.log_start_offset, orders.last_stable_offset, orders.high_watermark, orders.log_end_offset) == (
        0, 11, 11, 11)
    assert orders.open_transactions == []
    [aborted] = orders.aborted_transactions
    assert (aborted.producer_id, aborted.first_offset, aborted.last_offset) == (pids["aborter"], 4, 6)
    producers = {p.producer_id: p for p in orders.producers}
    [idempotent_pid] = set(producers) - set(pids.values())
    assert (producers[idempotent_pid].last_sequence, producers[idempotent_pid].last_offset) == (1, 10)
    assert producers[pids["committer"]].last_sequence == 2
    assert all(p.open_txn_first_offset is None for p in producers.values())

    group = seen.group("eos-readers")
    assert group.type == "classic" and group.protocol_type == "consumer"
    assert [(o.topic, o.partition, o.offset) for o in group.offsets] == [("orders", 0, 11)]
    assert "eos-readers  orders-0   11" in seen.render()


def test_the_checker_catches_an_aborted_record_a_bent_broker_hands_a_stock_consumer(broker: Broker) -> None:
    in_transaction(transactional(broker, "aborter"), [b"aborted"], commit=False)  # 0, marker 1
    plain = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
    plain.produce("orders", value=b"after", partition=0)  # 2
    assert plain.flush(TIMEOUT_S) == 0

    def forget(partition: Partition) -> None:
        # The planted bug: read_committed fetches declare no aborted transaction.
        partition.aborted_transactions = lambda fetch_offset, upper_bound_offset: []  # type: ignore[method-assign]

    def bend() -> None:
        found = broker.core.partition("orders", 0)
        assert found is not None
        forget(found)

    broker.call(bend)
    reader = consumer(broker, "bent-readers")
    reader.assign([TopicPartition("orders", 0, 0)])
    try:
        # The consumer really was handed the aborted record: it delivers it to the application.
        assert consume(reader, 2) == [b"aborted", b"after"]
    finally:
        reader.close()
    violations = broker.inspect().violations
    assert violations and all(isinstance(v, AbortedRead) for v in violations)
    assert {(v.topic, v.partition, v.first_offset, v.abort_marker_offset) for v in violations if
            isinstance(v, AbortedRead)} == {("orders", 0, 0, 1)}
