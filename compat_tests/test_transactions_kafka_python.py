"""Transactions with kafka-python: commit and abort across topics (read back by kafka-python's own
read_committed / read_uncommitted consumers and by librdkafka), consume-transform-produce with
send_offsets_to_transaction (KIP-447 group metadata), zombie fencing, a stalled transaction aborted by the
coordinator after transaction_timeout_ms, and end offsets under read_committed (the last stable offset)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError, ProducerFencedError
from kafka.structs import OffsetAndMetadata

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for
from compat_tests.test_transactions_support import (
    PARTITIONS,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    Record,
    UntilEnd,
    create_topics,
    read_until_end,
    records,
    unique,
    write_end_records,
)

TIMEOUT_MS = 15000


def transactional(bootstrap: str, transactional_id: str) -> KafkaProducer:
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id, linger_ms=0,
                             max_block_ms=TIMEOUT_MS, request_timeout_ms=TIMEOUT_MS)
    producer.init_transactions()
    return producer


@pytest.fixture
def producers() -> Iterator[list[KafkaProducer]]:
    made: list[KafkaProducer] = []
    yield made
    for producer in made:
        producer.close(timeout=5)


def consume_until_end(bootstrap: str, topics: list[str], isolation: str) -> list[Record]:
    """What a kafka-python consumer of `isolation` reads from the start up to each partition's END record."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                             group_id=None, consumer_timeout_ms=100)
    partitions = [TopicPartition(t, p) for t in topics for p in range(PARTITIONS)]
    consumer.assign(partitions)
    consumer.seek_to_beginning(*partitions)
    reading = UntilEnd(len(partitions))

    def step() -> bool:
        for batch in consumer.poll(timeout_ms=100).values():
            for message in batch:
                reading.take(message.topic, message.partition, message.value.decode())
        return reading.done

    try:
        wait_for(step, what=f"the end record of each partition ({isolation}, kafka-python)")
    finally:
        consumer.close()
    return reading.records()


def send_all(producer: KafkaProducer, values: list[Record]) -> None:
    futures = [producer.send(topic, value=value.encode(), partition=partition) for topic, partition, value in values]
    producer.flush(timeout=TIMEOUT_MS / 1000)
    for future in futures:
        future.get(timeout=TIMEOUT_MS / 1000)


def test_committed_and_aborted_across_two_topics(kemu_server: KemuServeProcess,
                                                 producers: list[KafkaProducer]) -> None:
    bootstrap = kemu_server.bootstrap
    topics = [unique("kp-txn-a"), unique("kp-txn-b")]
    create_topics(bootstrap, topics)
    committed, aborted = records(topics, "committed"), records(topics, "aborted")
    producer = transactional(bootstrap, unique("kp-two-topics"))
    producers.append(producer)
    producer.begin_transaction()
    send_all(producer, committed)
    producer.commit_transaction()
    producer.begin_transaction()
    send_all(producer, aborted)
    producer.abort_transaction()
    write_end_records(bootstrap, topics)

    assert consume_until_end(bootstrap, topics, READ_COMMITTED) == committed
    assert consume_until_end(bootstrap, topics, READ_UNCOMMITTED) == sorted(committed + aborted)
    assert read_until_end(bootstrap, topics, READ_COMMITTED) == committed


def test_consume_transform_produce_exactly_once(kemu_server: KemuServeProcess,
                                                producers: list[KafkaProducer]) -> None:
    bootstrap = kemu_server.bootstrap
    source, sink, group = unique("kp-ctp-in"), unique("kp-ctp-out"), unique("kp-ctp-group")
    create_topics(bootstrap, [source, sink])
    per_partition = 8
    feeder = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    producers.append(feeder)
    send_all(feeder, [(source, p, f"v{p}-{n}") for p in range(PARTITIONS) for n in range(per_partition)])
    consumer = KafkaConsumer(source, bootstrap_servers=bootstrap, group_id=group, isolation_level=READ_COMMITTED,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             session_timeout_ms=6000, heartbeat_interval_ms=500)
    producer = transactional(bootstrap, unique("kp-ctp"))
    producers.append(producer)
    total = PARTITIONS * per_partition
    done = [0]

    def process_a_batch() -> bool:
        polled = consumer.poll(timeout_ms=200, max_records=10)
        batch = [m for messages in polled.values() for m in messages]
        if batch:
            producer.begin_transaction()
            for message in batch:
                producer.send(sink, value=message.value.upper(), partition=message.partition)
            offsets = {tp: OffsetAndMetadata(consumer.position(tp), "", -1) for tp in consumer.assignment()}
            producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
            producer.commit_transaction()
            done[0] += len(batch)
        return done[0] >= total

    try:
        wait_for(process_a_batch, what=f"{total} records processed (kafka-python)", timeout=60)
        committed_offsets = {p: consumer.committed(TopicPartition(source, p)) for p in range(PARTITIONS)}
    finally:
        consumer.close()
    assert done[0] == total
    assert committed_offsets == {p: per_partition for p in range(PARTITIONS)}
    write_end_records(bootstrap, [sink])
    assert read_until_end(bootstrap, [sink], READ_COMMITTED) == sorted(
        (sink, p, f"V{p}-{n}") for p in range(PARTITIONS) for n in range(per_partition))


def test_zombie_producer_is_fenced(kemu_server: KemuServeProcess, producers: list[KafkaProducer]) -> None:
    bootstrap = kemu_server.bootstrap
    topic, transactional_id = unique("kp-zombie"), unique("kp-zombie-id")
    create_topics(bootstrap, [topic])
    old = transactional(bootstrap, transactional_id)
    producers.append(old)
    old.begin_transaction()
    send_all(old, [(topic, 0, "from-the-zombie")])
    new = transactional(bootstrap, transactional_id)
    producers.append(new)
    new.begin_transaction()
    send_all(new, [(topic, 0, "from-the-new-one")])
    new.commit_transaction()

    with pytest.raises(KafkaError) as fenced:
        old.commit_transaction()
    # EndTxn v2+ answers PRODUCER_FENCED, which kafka-python raises as ProducerFencedError.
    assert isinstance(fenced.value, ProducerFencedError), repr(fenced.value)
    write_end_records(bootstrap, [topic])
    assert consume_until_end(bootstrap, [topic], READ_COMMITTED) == [(topic, 0, "from-the-new-one")]


def test_end_offsets_under_read_committed_are_the_last_stable_offset(kemu_server: KemuServeProcess,
                                                                     producers: list[KafkaProducer]) -> None:
    bootstrap = kemu_server.bootstrap
    topic = unique("kp-lso")
    create_topics(bootstrap, [topic])
    producer = transactional(bootstrap, unique("kp-lso-id"))
    producers.append(producer)
    producer.begin_transaction()
    send_all(producer, [(topic, 0, "open-0"), (topic, 0, "open-1")])
    tp = TopicPartition(topic, 0)

    def end_offset(isolation: str) -> Any:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, group_id=None)
        try:
            return consumer.end_offsets([tp])[tp]
        finally:
            consumer.close()

    assert (end_offset(READ_COMMITTED), end_offset(READ_UNCOMMITTED)) == (0, 2)
    producer.commit_transaction()
    assert (end_offset(READ_COMMITTED), end_offset(READ_UNCOMMITTED)) == (3, 3)


def test_stalled_transaction_is_aborted_after_its_timeout(kemu_server: KemuServeProcess,
                                                          producers: list[KafkaProducer]) -> None:
    bootstrap = kemu_server.bootstrap
    topic = unique("kp-stalled")
    create_topics(bootstrap, [topic])
    stalled = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=unique("kp-stalled-id"),
                            transaction_timeout_ms=2000, linger_ms=0, max_block_ms=TIMEOUT_MS)
    producers.append(stalled)
    stalled.init_transactions()
    stalled.begin_transaction()
    send_all(stalled, [(topic, 0, "stalled-0"), (topic, 0, "stalled-1")])
    feeder = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    producers.append(feeder)
    send_all(feeder, [(topic, 0, "after")])
    write_end_records(bootstrap, [topic])
    # Partition 0's end record lies behind the stalled transaction: reading it needs the coordinator's abort.
    assert consume_until_end(bootstrap, [topic], READ_COMMITTED) == [(topic, 0, "after")]
    with pytest.raises(KafkaError) as fenced:
        stalled.commit_transaction()
    assert isinstance(fenced.value, ProducerFencedError), repr(fenced.value)
