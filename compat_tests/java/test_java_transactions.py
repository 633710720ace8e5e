"""The Java producer and consumer (src/Transactions.java; kafka-clients 4.3, and 3.9 where Spark relies on
it) against `kemu serve`, each scenario run against the reference Kafka too, the outcomes compared: idempotent
producers with every compression codec, transactions committed and aborted, a zombie fenced by its successor
(ProducerFencedException at its commit, InvalidProducerEpochException at its next send, as Kafka answers EndTxn
and Produce), consume-transform-produce with sendOffsetsToTransaction including an aborted round, and a
read_committed consumer that stops at the LSO of a transaction left open until it commits. What the Java
consumer reads from kemu is checked against confluent-kafka's read_committed reader too."""

from __future__ import annotations

from typing import Any

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.conftest import BOTH_LINES, JavaKemu
from compat_tests.java.java_client import JavaClient
from compat_tests.test_transactions_support import (
    PARTITIONS,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    create_topics,
    feed,
    read_until_end,
    unique,
    write_end_records,
)

PROGRAM = "Transactions"
FENCED = "org.apache.kafka.common.errors.ProducerFencedException"
OLD_EPOCH = "org.apache.kafka.common.errors.InvalidProducerEpochException"


def rows(read: list[list[object]]) -> list[tuple[str, int, int, str]]:
    """The program's [topic, partition, offset, value] rows, sorted (a list, so that a duplicate shows)."""
    return sorted((str(t), int(p), int(o), str(v)) for t, p, o, v in read)  # type: ignore[call-overload]


def test_idempotent_producers_with_every_compression(java_pair: Pair, java_kemu: JavaKemu,
                                                     java: JavaClient) -> None:
    topic = unique("java-idempotent")
    codecs = ["none", "gzip", "snappy", "lz4", "zstd"]
    per_partition = 25

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=len(codecs))
        return java.run(PROGRAM, target.bootstrap, "idempotent", topic, str(per_partition), *codecs)

    kafka, result = java_pair.both(scenario)
    check(f"java.{java.line}.idempotent", kafka, result, varying={"producerId": "producer_id"})
    # Each partition: its records at 0..n-1 and the end record at n, in send order despite 5 in flight.
    assert result["offsets"] == [list(range(per_partition + 1))] * len(codecs)
    expected = sorted((topic, p, n, f"v-{p}-{n}") for p in range(len(codecs)) for n in range(per_partition))
    assert rows(result["read"]) == expected
    states = result["producers"]
    assert [len(active) for active in states] == [1] * len(codecs)
    assert [(s[0]["epoch"], s[0]["lastSequence"], s[0]["transactionStart"]) for s in states] == [
        (0, per_partition, None)] * len(codecs)
    assert len({s[0]["producerId"] for s in states}) == len(codecs)  # one producer per codec
    assert read_until_end(java_kemu.bootstrap, [topic], READ_COMMITTED, partitions=len(codecs)) == sorted(
        (t, p, v) for t, p, _, v in expected)


@BOTH_LINES
def test_committed_and_aborted_transactions(java_pair: Pair, java_kemu: JavaKemu, java: JavaClient) -> None:
    topic, transactional_id = unique("java-txn"), unique("java-txn-id")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic])
        return java.run(PROGRAM, target.bootstrap, "commit-abort", topic, str(PARTITIONS), transactional_id)

    kafka, seen = java_pair.both(scenario)
    check(f"java.{java.line}.commit_abort", kafka, seen)
    # Offsets 1 and 3 of each partition are the commit and abort markers, which no consumer is given.
    committed = [(topic, p, 0, f"committed-{p}") for p in range(PARTITIONS)]
    aborted = [(topic, p, 2, f"aborted-{p}") for p in range(PARTITIONS)]
    assert rows(seen["readCommitted"]) == committed
    assert rows(seen["readUncommitted"]) == sorted(committed + aborted)
    bootstrap = java_kemu.bootstrap
    assert read_until_end(bootstrap, [topic], READ_COMMITTED) == [(t, p, v) for t, p, _, v in committed]
    assert read_until_end(bootstrap, [topic], READ_UNCOMMITTED) == sorted(
        (t, p, v) for t, p, _, v in committed + aborted)


def run_zombie(pair: Pair, java: JavaClient, scenario_name: str) -> tuple[str, str, str, dict[str, Any]]:
    """The "zombie" scenario on both brokers, compared; its topic, transactional ids and kemu's outcome."""
    topic = unique("java-zombie")
    first, second = unique("java-zombie-a"), unique("java-zombie-b")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=1)
        return java.run(PROGRAM, target.bootstrap, "zombie", topic, first, second)

    kafka, outcome = pair.both(scenario)
    check(f"java.{java.line}.{scenario_name}", kafka, outcome)
    return topic, first, second, outcome


def test_a_zombie_is_fenced_by_its_successor(java_pair: Pair, java_kemu: JavaKemu, java: JavaClient) -> None:
    topic, first, second, outcome = run_zombie(java_pair, java, "zombie")
    # EndTxn with the old epoch is PRODUCER_FENCED, fatal; a Produce with it is INVALID_PRODUCER_EPOCH, which
    # the client keeps as the error every later transactional call then throws.
    assert outcome["commitFirst"] == {"commit": FENCED, "send": FENCED}
    assert outcome["sendFirst"] == {"send": OLD_EPOCH, "commit": OLD_EPOCH}
    assert [row[3] for row in rows(outcome["readCommitted"])] == [f"from-{first}", f"from-{second}"]
    assert read_until_end(java_kemu.bootstrap, [topic], READ_COMMITTED, partitions=1) == sorted(
        [(topic, 0, f"from-{first}"), (topic, 0, f"from-{second}")])


def test_consume_transform_produce_with_send_offsets_to_transaction(java_pair: Pair, java_kemu: JavaKemu,
                                                                    java: JavaClient) -> None:
    source, sink, group = unique("java-ctp-in"), unique("java-ctp-out"), unique("java-ctp-group")
    transactional_id = unique("java-ctp-id")
    per_partition = 8
    total = PARTITIONS * per_partition

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [source, sink])
        feed(target.bootstrap, source, per_partition)
        return java.run(PROGRAM, target.bootstrap, "consume-transform-produce", source, sink, group,
                        transactional_id, str(total))

    kafka, result = java_pair.both(scenario)
    # How many records the aborted round held is how many the consumer's first poll returned: timing.
    check(f"java.{java.line}.consume_transform_produce", kafka, result, varying={"aborted": "poll_size"})
    assert result["committed"] == total and result["aborted"] > 0
    # The aborted round's offsets were not committed: the group's offsets are those of the committed ones.
    assert result["offsets"] == {str(p): per_partition for p in range(PARTITIONS)}
    bootstrap = java_kemu.bootstrap
    write_end_records(bootstrap, [sink])
    transformed = sorted((sink, p, f"V{p}-{n}") for p in range(PARTITIONS) for n in range(per_partition))
    assert read_until_end(bootstrap, [sink], READ_COMMITTED) == transformed
    uncommitted = read_until_end(bootstrap, [sink], READ_UNCOMMITTED)
    assert len(uncommitted) == total + result["aborted"] and set(uncommitted) == set(transformed)


@BOTH_LINES
def test_read_committed_consumer_stops_at_the_lso(java_pair: Pair, java: JavaClient) -> None:
    topic, first, second = unique("java-lso"), unique("java-lso-a"), unique("java-lso-b")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=1)
        return java.run(PROGRAM, target.bootstrap, "lso", topic, first, second)

    kafka, result = java_pair.both(scenario)
    check(f"java.{java.line}.lso", kafka, result)
    # 0-2 plain, 3-4 aborted and its marker at 5, 6-7 the open transaction, 8-9 plain, 10 committed and its
    # marker at 11: the LSO is 6, the high watermark 12; B's commit marker then lands at 12.
    assert (result["endOffsetReadCommitted"], result["endOffsetReadUncommitted"]) == (6, 12)
    assert [(row[2], row[3]) for row in result["beforeCommit"]] == [(0, "before-0"), (1, "before-1"),
                                                                     (2, "before-2")]
    assert result["positionAtLso"] == 6
    assert result["endOffsetAfterCommit"] == 13
    assert [(row[2], row[3]) for row in result["afterCommit"]] == [
        (6, "open-0"), (7, "open-1"), (8, "after-0"), (9, "after-1"), (10, "committed-0")]
    assert result["positionAtEnd"] == 13
