"""Transactions with aiokafka: commit and abort across topics (read back by aiokafka's own read_committed /
read_uncommitted consumers), consume-transform-produce with send_offsets_to_transaction, zombie fencing, a
stalled transaction aborted after transaction_timeout_ms, end offsets under read_committed (the LSO).

aiokafka's send_offsets_to_transaction takes a group id only (no KIP-447 generation/member), so its
TxnOffsetCommit is the pre-KIP-447 form; the group checks of v3+ are covered by the other clients.
"""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import ProducerFenced

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for_async
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


async def transactional(bootstrap: str, transactional_id: str) -> AIOKafkaProducer:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id,
                                request_timeout_ms=TIMEOUT_MS)
    await producer.start()  # InitProducerId
    return producer


async def send_all(producer: AIOKafkaProducer, values: list[Record]) -> None:
    sent = [await producer.send(topic, value=value.encode(), partition=partition)
            for topic, partition, value in values]
    await asyncio.gather(*sent)


async def consume_until_end(bootstrap: str, topics: list[str], isolation: str) -> list[Record]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                                auto_offset_reset="earliest")
    partitions = [TopicPartition(t, p) for t in topics for p in range(PARTITIONS)]
    await consumer.start()
    consumer.assign(partitions)
    await consumer.seek_to_beginning(*partitions)
    reading = UntilEnd(len(partitions))

    async def step() -> bool:
        for batch in (await consumer.getmany(timeout_ms=100)).values():
            for message in batch:
                reading.take(message.topic, message.partition, message.value.decode())
        return reading.done

    try:
        await wait_for_async(step, what=f"the end record of each partition ({isolation}, aiokafka)")
    finally:
        await consumer.stop()
    return reading.records()


def test_committed_and_aborted_across_two_topics(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    topics = [unique("aio-txn-a"), unique("aio-txn-b")]
    create_topics(bootstrap, topics)
    committed, aborted = records(topics, "committed"), records(topics, "aborted")

    async def scenario() -> tuple[list[Record], list[Record]]:
        producer = await transactional(bootstrap, unique("aio-two-topics"))
        try:
            async with producer.transaction():
                await send_all(producer, committed)
            await producer.begin_transaction()
            await send_all(producer, aborted)
            await producer.abort_transaction()
        finally:
            await producer.stop()
        write_end_records(bootstrap, topics)
        return (await consume_until_end(bootstrap, topics, READ_COMMITTED),
                await consume_until_end(bootstrap, topics, READ_UNCOMMITTED))

    read_committed, read_uncommitted = asyncio.run(scenario())
    assert read_committed == committed
    assert read_uncommitted == sorted(committed + aborted)


def test_consume_transform_produce_exactly_once(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    source, sink, group = unique("aio-ctp-in"), unique("aio-ctp-out"), unique("aio-ctp-group")
    create_topics(bootstrap, [source, sink])
    per_partition = 8
    total = PARTITIONS * per_partition

    async def scenario() -> dict[int, int]:
        feeder = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await feeder.start()
        try:
            await send_all(feeder, [(source, p, f"v{p}-{n}") for p in range(PARTITIONS) for n in range(per_partition)])
        finally:
            await feeder.stop()
        consumer = AIOKafkaConsumer(source, bootstrap_servers=bootstrap, group_id=group,
                                    isolation_level=READ_COMMITTED, enable_auto_commit=False,
                                    auto_offset_reset="earliest", session_timeout_ms=6000, heartbeat_interval_ms=500)
        producer = await transactional(bootstrap, unique("aio-ctp"))
        await consumer.start()
        done = 0
        try:
            async def process_a_batch() -> bool:
                nonlocal done
                polled = await consumer.getmany(timeout_ms=200, max_records=10)
                batch = [m for messages in polled.values() for m in messages]
                if batch:
                    async with producer.transaction():
                        await send_all(producer, [(sink, m.partition, m.value.decode().upper()) for m in batch])
                        offsets = {tp: await consumer.position(tp) for tp in consumer.assignment()}
                        await producer.send_offsets_to_transaction(offsets, group)
                    done += len(batch)
                return done >= total

            await wait_for_async(process_a_batch, what=f"{total} records processed (aiokafka)", timeout=60)
            return {p: await consumer.committed(TopicPartition(source, p)) for p in range(PARTITIONS)}
        finally:
            await consumer.stop()
            await producer.stop()

    assert asyncio.run(scenario()) == {p: per_partition for p in range(PARTITIONS)}
    write_end_records(bootstrap, [sink])
    assert read_until_end(bootstrap, [sink], READ_COMMITTED) == sorted(
        (sink, p, f"V{p}-{n}") for p in range(PARTITIONS) for n in range(per_partition))


def test_zombie_producer_is_fenced(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    topic, transactional_id = unique("aio-zombie"), unique("aio-zombie-id")
    create_topics(bootstrap, [topic])

    async def scenario() -> None:
        old = await transactional(bootstrap, transactional_id)
        new = None
        try:
            await old.begin_transaction()
            await send_all(old, [(topic, 0, "from-the-zombie")])
            new = await transactional(bootstrap, transactional_id)
            async with new.transaction():
                await send_all(new, [(topic, 0, "from-the-new-one")])
            with pytest.raises(ProducerFenced):
                await old.commit_transaction()
        finally:
            await old.stop()
            if new is not None:
                await new.stop()

    asyncio.run(scenario())
    write_end_records(bootstrap, [topic])
    assert read_until_end(bootstrap, [topic], READ_COMMITTED) == [(topic, 0, "from-the-new-one")]


def test_stalled_transaction_is_aborted_after_its_timeout(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    topic = unique("aio-stalled")
    create_topics(bootstrap, [topic])

    async def scenario() -> list[Record]:
        stalled = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=unique("aio-stalled-id"),
                                   transaction_timeout_ms=2000, request_timeout_ms=TIMEOUT_MS)
        await stalled.start()
        try:
            await stalled.begin_transaction()
            await send_all(stalled, [(topic, 0, "stalled-0"), (topic, 0, "stalled-1")])
            feeder = AIOKafkaProducer(bootstrap_servers=bootstrap)
            await feeder.start()
            try:
                await send_all(feeder, [(topic, 0, "after")])
            finally:
                await feeder.stop()
            write_end_records(bootstrap, [topic])
            # The end record of partition 0 lies behind the stalled transaction: the abort lets it through.
            seen = await consume_until_end(bootstrap, [topic], READ_COMMITTED)
            with pytest.raises(ProducerFenced):
                await stalled.commit_transaction()
            return seen
        finally:
            await stalled.stop()

    assert asyncio.run(scenario()) == [(topic, 0, "after")]


def test_end_offsets_under_read_committed_are_the_last_stable_offset(kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    topic = unique("aio-lso")
    create_topics(bootstrap, [topic])
    tp = TopicPartition(topic, 0)

    async def end_offset(isolation: str) -> int:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation)
        await consumer.start()
        try:
            return int((await consumer.end_offsets([tp]))[tp])
        finally:
            await consumer.stop()

    async def scenario() -> list[tuple[int, int]]:
        producer = await transactional(bootstrap, unique("aio-lso-id"))
        try:
            await producer.begin_transaction()
            await send_all(producer, [(topic, 0, "open-0"), (topic, 0, "open-1")])
            while_open = (await end_offset(READ_COMMITTED), await end_offset(READ_UNCOMMITTED))
            await producer.commit_transaction()
            return [while_open, (await end_offset(READ_COMMITTED), await end_offset(READ_UNCOMMITTED))]
        finally:
            await producer.stop()

    assert asyncio.run(scenario()) == [(0, 2), (3, 3)]
