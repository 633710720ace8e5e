"""Transactions with kafkajs (node, compat_tests/js/transactions.mjs): commit and abort across topics read back
by kafkajs read_committed / read_uncommitted consumers, consume-transform-produce with sendOffsets, zombie
fencing, and a transaction left open: the LSO kafkajs' admin reports while it is, and its consumers moving
past it once the coordinator aborts it after its timeout. kafkajs speaks EndTxn v0-1, so the fenced producer
hears INVALID_PRODUCER_EPOCH, as Kafka tells clients that predate PRODUCER_FENCED."""

from __future__ import annotations

from confluent_kafka import Producer

from compat_tests.external_clients import Kafkajs
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.test_transactions_support import (
    PARTITIONS,
    READ_COMMITTED,
    create_topics,
    feed,
    read_until_end,
    records,
    unique,
    write_end_records,
)

SCRIPT = "transactions"


def as_records(rows: list[list[object]]) -> list[tuple[str, int, str]]:
    return sorted((str(topic), int(partition), str(value)) for topic, partition, value in rows)  # type: ignore[call-overload]


def test_committed_and_aborted_across_two_topics(kemu_server: KemuServeProcess, kafkajs: Kafkajs) -> None:
    bootstrap = kemu_server.bootstrap
    topics = [unique("js-txn-a"), unique("js-txn-b")]
    create_topics(bootstrap, topics)
    seen = kafkajs.run(SCRIPT, bootstrap, "commit-abort", *topics, str(PARTITIONS), unique("js-two-topics"))
    committed, aborted = records(topics, "committed"), records(topics, "aborted")
    assert as_records(seen["readCommitted"]) == committed
    assert as_records(seen["readUncommitted"]) == sorted(committed + aborted)
    assert read_until_end(bootstrap, topics, READ_COMMITTED) == committed


def test_consume_transform_produce_exactly_once(kemu_server: KemuServeProcess, kafkajs: Kafkajs) -> None:
    bootstrap = kemu_server.bootstrap
    source, sink, group = unique("js-ctp-in"), unique("js-ctp-out"), unique("js-ctp-group")
    create_topics(bootstrap, [source, sink])
    per_partition = 8
    feed(bootstrap, source, per_partition)
    total = PARTITIONS * per_partition
    result = kafkajs.run(SCRIPT, bootstrap, "consume-transform-produce", source, sink, group,
                         unique("js-ctp"), str(total), timeout=90)
    assert result["processed"] == total
    committed = {o["partition"]: int(o["offset"]) for o in result["offsets"]}
    assert committed == {p: per_partition for p in range(PARTITIONS)}
    write_end_records(bootstrap, [sink])
    assert read_until_end(bootstrap, [sink], READ_COMMITTED) == sorted(
        (sink, p, f"V{p}-{n}") for p in range(PARTITIONS) for n in range(per_partition))


def test_zombie_producer_is_fenced(kemu_server: KemuServeProcess, kafkajs: Kafkajs) -> None:
    bootstrap = kemu_server.bootstrap
    topic = unique("js-zombie")
    create_topics(bootstrap, [topic])
    outcome = kafkajs.run(SCRIPT, bootstrap, "zombie", topic, unique("js-zombie-id"))
    assert outcome == {"oldCommit": "failed", "name": "KafkaJSProtocolError", "type": "INVALID_PRODUCER_EPOCH"}
    write_end_records(bootstrap, [topic])
    assert read_until_end(bootstrap, [topic], READ_COMMITTED) == [(topic, 0, "from-the-new-one")]


def test_open_transaction_holds_the_lso_until_its_timeout_aborts_it(kemu_server: KemuServeProcess,
                                                                    kafkajs: Kafkajs) -> None:
    bootstrap = kemu_server.bootstrap
    topic = unique("js-stalled")
    create_topics(bootstrap, [topic])
    left = kafkajs.run(SCRIPT, bootstrap, "leave-open", topic, unique("js-stalled-id"), "2000")
    # kafkajs' admin lists offsets read_committed: partition 0's "high" is the open transaction's start.
    assert {o["partition"]: (o["low"], o["high"]) for o in left["offsets"]}[0] == ("0", "0")
    feeder = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    feeder.produce(topic, value=b"after", partition=0)
    assert feeder.flush(15) == 0
    write_end_records(bootstrap, [topic])
    # The end record of partition 0 lies behind the open transaction: read once the coordinator aborted it.
    seen = kafkajs.run(SCRIPT, bootstrap, "read", "committed", str(PARTITIONS), topic, timeout=90)
    assert as_records(seen) == [(topic, 0, "after")]
    assert as_records(kafkajs.run(SCRIPT, bootstrap, "read", "uncommitted", str(PARTITIONS), topic)) == [
        (topic, 0, "after"), (topic, 0, "stalled-0"), (topic, 0, "stalled-1")]
