"""Transactions with confluent-kafka (librdkafka): commit and abort across topics, consume-transform-produce
with send_offsets_to_transaction, zombie fencing, the coordinator's timeout abort, and the last stable
offset holding read_committed consumers back."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import Consumer, IsolationLevel, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for
from compat_tests.test_transactions_support import (
    PARTITIONS,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    create_topics,
    read_until_end,
    records,
    unique,
    write_end_records,
)

TIMEOUT_S = 15


def transactional(bootstrap: str, transactional_id: str, **config: Any) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 0,
                         **config})
    producer.init_transactions(TIMEOUT_S)
    return producer


def plain(bootstrap: str, values: list[tuple[str, int, str]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for topic, partition, value in values:
        producer.produce(topic, value=value.encode(), partition=partition)
    assert producer.flush(TIMEOUT_S) == 0


def latest(bootstrap: str, topic: str, partition: int, isolation: IsolationLevel) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, partition)
    futures = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=isolation, request_timeout=TIMEOUT_S)
    return int(futures[tp].result(timeout=TIMEOUT_S).offset)


def test_committed_and_aborted_across_two_topics(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    topics = [unique("txn-a"), unique("txn-b")]
    create_topics(bootstrap, topics)
    committed, aborted = records(topics, "committed"), records(topics, "aborted")
    producer = transactional(bootstrap, unique("two-topics"))
    producer.begin_transaction()
    for topic, partition, value in committed:
        producer.produce(topic, value=value.encode(), partition=partition)
    producer.commit_transaction(TIMEOUT_S)
    producer.begin_transaction()
    for topic, partition, value in aborted:
        producer.produce(topic, value=value.encode(), partition=partition)
    assert producer.flush(TIMEOUT_S) == 0  # abort_transaction() would purge what is still queued
    producer.abort_transaction(TIMEOUT_S)
    write_end_records(bootstrap, topics)

    assert read_until_end(bootstrap, topics, READ_COMMITTED) == committed
    assert read_until_end(bootstrap, topics, READ_UNCOMMITTED) == sorted(committed + aborted)


def test_consume_transform_produce_exactly_once(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    source, sink, group = unique("ctp-in"), unique("ctp-out"), unique("ctp-group")
    create_topics(bootstrap, [source, sink])
    per_partition = 10
    plain(bootstrap, [(source, p, f"v{p}-{n}") for p in range(PARTITIONS) for n in range(per_partition)])
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "isolation.level": READ_COMMITTED,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "heartbeat.interval.ms": 500, "session.timeout.ms": 6000})
    consumer.subscribe([source])
    producer = transactional(bootstrap, unique("ctp"))
    total = PARTITIONS * per_partition
    state = {"done": 0, "aborted_once": False}

    def process_a_batch() -> bool:
        batch = [m for m in consumer.consume(10, 0.2) if m.error() is None]
        if batch:
            producer.begin_transaction()
            for message in batch:
                producer.produce(sink, value=message.value().upper(), partition=message.partition())
            producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                                 consumer.consumer_group_metadata(), TIMEOUT_S)
            if not state["aborted_once"]:
                # The first batch is aborted: its output must never be seen, its input is read again.
                assert producer.flush(TIMEOUT_S) == 0
                producer.abort_transaction(TIMEOUT_S)
                state["aborted_once"] = True
                for tp in consumer.committed(consumer.assignment(), TIMEOUT_S):
                    consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))
            else:
                producer.commit_transaction(TIMEOUT_S)
                state["done"] += len(batch)
        return state["done"] >= total

    try:
        wait_for(process_a_batch, what=f"{total} records processed exactly once", timeout=60)
        group_offsets = consumer.committed([TopicPartition(source, p) for p in range(PARTITIONS)], TIMEOUT_S)
    finally:
        consumer.close()
    assert state["done"] == total
    assert {tp.partition: tp.offset for tp in group_offsets} == {p: per_partition for p in range(PARTITIONS)}
    write_end_records(bootstrap, [sink])
    expected = sorted((sink, p, f"V{p}-{n}") for p in range(PARTITIONS) for n in range(per_partition))
    assert read_until_end(bootstrap, [sink], READ_COMMITTED) == expected


def test_zombie_producer_is_fenced(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    topic, transactional_id = unique("zombie"), unique("zombie-id")
    create_topics(bootstrap, [topic])
    old = transactional(bootstrap, transactional_id)
    old.begin_transaction()
    old.produce(topic, value=b"from-the-zombie", partition=0)
    assert old.flush(TIMEOUT_S) == 0
    new = transactional(bootstrap, transactional_id)  # bumps the epoch, aborting the old one's transaction
    new.begin_transaction()
    new.produce(topic, value=b"from-the-new-one", partition=0)
    new.commit_transaction(TIMEOUT_S)

    with pytest.raises(KafkaException) as fenced:
        old.commit_transaction(TIMEOUT_S)
    error = fenced.value.args[0]
    assert error.code() == KafkaError._FENCED and error.fatal(), error
    write_end_records(bootstrap, [topic])
    assert read_until_end(bootstrap, [topic], READ_COMMITTED) == [(topic, 0, "from-the-new-one")]
    assert read_until_end(bootstrap, [topic], READ_UNCOMMITTED) == sorted(
        [(topic, 0, "from-the-new-one"), (topic, 0, "from-the-zombie")])


def test_stalled_transaction_is_aborted_after_its_timeout(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    topic = unique("stalled")
    create_topics(bootstrap, [topic], partitions=2)
    stalled = transactional(bootstrap, unique("stalled-id"), **{"transaction.timeout.ms": 2000})
    stalled.begin_transaction()
    for n in range(2):
        stalled.produce(topic, value=f"stalled-{n}".encode(), partition=0)
    assert stalled.flush(TIMEOUT_S) == 0
    plain(bootstrap, [(topic, 0, "after"), (topic, 1, "elsewhere")])

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("reader"),
                         "isolation.level": READ_COMMITTED, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
    seen: list[str] = []

    def received(value: str) -> Any:
        def check() -> bool:
            seen.extend(m.value().decode() for m in consumer.consume(100, 0.1) if m.error() is None)
            return value in seen
        return check

    try:
        # Partition 1 flows; partition 0 is held at the open transaction's first offset.
        wait_for(received("elsewhere"), what="the record of the partition without a transaction")
        assert "after" not in seen
        # The coordinator aborts the stalled transaction (2 s) and the consumer moves past it.
        wait_for(received("after"), what="the record behind the stalled transaction", timeout=20)
    finally:
        consumer.close()
    assert sorted(seen) == ["after", "elsewhere"]
    with pytest.raises(KafkaException) as fenced:
        stalled.commit_transaction(TIMEOUT_S)
    assert fenced.value.args[0].code() == KafkaError._FENCED


def test_last_stable_offset_holds_read_committed_back(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    topic = unique("lso")
    create_topics(bootstrap, [topic], partitions=2)
    plain(bootstrap, [(topic, 0, "before")])                        # offset 0
    producer = transactional(bootstrap, unique("lso-id"))
    producer.begin_transaction()
    for n in range(2):
        producer.produce(topic, value=f"open-{n}".encode(), partition=0)  # offsets 1-2
    assert producer.flush(TIMEOUT_S) == 0
    plain(bootstrap, [(topic, 0, "behind"), (topic, 1, "elsewhere")])  # offset 3

    assert latest(bootstrap, topic, 0, IsolationLevel.READ_COMMITTED) == 1
    assert latest(bootstrap, topic, 0, IsolationLevel.READ_UNCOMMITTED) == 4
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("reader"),
                         "isolation.level": READ_COMMITTED, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
    seen: list[str] = []

    def has(*values: str) -> Any:
        def check() -> bool:
            seen.extend(m.value().decode() for m in consumer.consume(100, 0.1) if m.error() is None)
            return all(v in seen for v in values)
        return check

    try:
        wait_for(has("before", "elsewhere"), what="the records below the last stable offset")
        assert sorted(seen) == ["before", "elsewhere"]
        producer.commit_transaction(TIMEOUT_S)
        wait_for(has("open-0", "open-1", "behind"), what="the records once the transaction committed")
    finally:
        consumer.close()
    assert [v for v in seen if v != "elsewhere"] == ["before", "open-0", "open-1", "behind"]
    assert latest(bootstrap, topic, 0, IsolationLevel.READ_COMMITTED) == 5  # past the COMMIT marker
