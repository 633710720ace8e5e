"""franz-go's transactional producer and GroupTransactSession (compat_tests/franz/main.go) against kemu and against
the reference Kafka 4.3. franz-go turns transactions version 2 (KIP-890 part 2) on by itself when the cluster
finalized transaction.version 2, as a new 4.3 cluster has it: no AddPartitionsToTxn or AddOffsetsToTxn, Produce
v13, TxnOffsetCommit v5, and EndTxn v5 answering the producer epoch one up at every end. On a cluster at level 1 it
adds partitions and offsets explicitly and the epoch stays. Each scenario runs on both brokers and the outcomes are
compared; kemu's transcript shows the protocol franz-go used."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.franz.franz_client import run
from compat_tests.kemu_process import TranscribedKemu
from compat_tests.test_transactions_support import create_topics, unique

PARTITIONS = 2
PRODUCE, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = 0, 24, 25, 26, 28
TRANSFORMED = 60


def exchanges_of(server: TranscribedKemu, transactional_id: str) -> list[dict[str, Any]]:
    keys = (PRODUCE, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT)
    return [entry for key in keys for entry in server.exchanges(key)
            if entry["request"].get("transactional_id") == transactional_id]


def run_epochs(pair: Pair, franz: Path, scenario_name: str) -> tuple[str, dict[str, Any]]:
    topic, transactional_id = unique("franz-epochs"), unique("franz-epochs-id")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=PARTITIONS)
        return run(franz, "epochs", target.bootstrap, topic, str(PARTITIONS), transactional_id)

    kafka, result = pair.both(scenario)
    check(f"franz.{scenario_name}", kafka, result)
    # Exactly the committed transactions' records (the first, second and fourth), nothing of the aborted one.
    assert result["readCommitted"] == [{"partition": p, "value": f"{n}-{p}"}
                                       for p in range(PARTITIONS) for n in (0, 1, 3)]
    return transactional_id, result


def test_tv2_bumps_the_epoch_at_every_end_and_adds_nothing_explicitly(franz_pair: Pair, franz_kemu: TranscribedKemu,
                                                                      franz: Path) -> None:
    transactional_id, result = run_epochs(franz_pair, franz, "epochs_tv2")
    assert result["transactions"] == [{"after": after, "epoch": epoch} for after, epoch in
                                      [("init", 0), ("commit", 1), ("commit", 2), ("abort", 3), ("commit", 4)]]
    seen = exchanges_of(franz_kemu, transactional_id)
    assert {(entry["api_key"], entry["version"]) for entry in seen} == {(PRODUCE, 13), (END_TXN, 5)}
    ends = [entry for entry in seen if entry["api_key"] == END_TXN]
    assert [(e["request"]["producer_epoch"], e["request"]["committed"], e["response"]["producer_epoch"])
            for e in ends] == [(0, True, 1), (1, True, 2), (2, False, 3), (3, True, 4)]


def test_tv1_keeps_the_epoch_and_adds_partitions_explicitly(franz_pair_tv1: Pair, franz_kemu_tv1: TranscribedKemu,
                                                            franz: Path) -> None:
    transactional_id, result = run_epochs(franz_pair_tv1, franz, "epochs_tv1")
    assert [t["epoch"] for t in result["transactions"]] == [0] * 5
    used = {entry["api_key"] for entry in exchanges_of(franz_kemu_tv1, transactional_id)}
    assert used == {PRODUCE, ADD_PARTITIONS, END_TXN}, used


def committed_offsets(bootstrap: str, group: str, topic: str) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], 30)
    finally:
        consumer.close()
    return [partition.offset for partition in found]


def read_committed(bootstrap: str, topic: str, expected: int) -> list[tuple[str, int, str]]:
    """What a read_committed consumer reads from the start: `expected` records, then a quiet second (a record
    beyond them would show)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("franz-check"),
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    found: list[tuple[str, int, str]] = []
    deadline = time.monotonic() + 30
    try:
        while len(found) < expected and time.monotonic() < deadline:
            found += [(topic, m.partition(), (m.value() or b"").decode())
                      for m in consumer.consume(100, 0.5) if m.error() is None]
        found += [(topic, m.partition(), (m.value() or b"").decode()) for m in consumer.consume(100, 1.0)
                  if m.error() is None]
    finally:
        consumer.close()
    return sorted(found)


def run_transform(pair: Pair, franz: Path, scenario_name: str) -> tuple[str, str, dict[str, Any]]:
    """Plain input records, transformed exactly once by a GroupTransactSession in transactions of at most 10."""
    from confluent_kafka import Producer

    source, sink = unique("franz-in"), unique("franz-out")
    group, transactional_id = unique("franz-group"), unique("franz-transform-id")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [source, sink], partitions=PARTITIONS)
        producer = Producer({"bootstrap.servers": target.bootstrap, "enable.idempotence": True})
        for n in range(TRANSFORMED):
            producer.produce(source, f"in-{n}".encode(), partition=n % PARTITIONS)
        assert producer.flush(30) == 0
        outcome = run(franz, "transform", target.bootstrap, source, sink, group, transactional_id, str(TRANSFORMED))
        output = read_committed(target.bootstrap, sink, TRANSFORMED)
        return {"outcome": outcome, "output": sorted(output),
                "offsets": committed_offsets(target.bootstrap, group, source)}

    kafka, result = pair.both(scenario)
    # How many transactions the input took depends on how the fetches fell: each ran in at least six.
    for outcome in (kafka, result):
        assert outcome["outcome"].pop("transactions") >= TRANSFORMED // 10, outcome
    check(f"franz.{scenario_name}", kafka, result)
    assert result["outcome"] == {"committed": TRANSFORMED}
    assert result["output"] == sorted((sink, n % PARTITIONS, f"out-{n}") for n in range(TRANSFORMED))
    assert result["offsets"] == [TRANSFORMED // PARTITIONS] * PARTITIONS
    return group, transactional_id, result


def test_tv2_group_transact_session_is_exactly_once_without_add_offsets(franz_pair: Pair,
                                                                        franz_kemu: TranscribedKemu,
                                                                        franz: Path) -> None:
    _, transactional_id, _ = run_transform(franz_pair, franz, "transform_tv2")
    seen = exchanges_of(franz_kemu, transactional_id)
    assert {(entry["api_key"], entry["version"]) for entry in seen} == {(PRODUCE, 13), (TXN_OFFSET_COMMIT, 5),
                                                                        (END_TXN, 5)}
    # One EndTxn per transaction, each answering the epoch one up.
    epochs = [entry["response"]["producer_epoch"] for entry in seen if entry["api_key"] == END_TXN]
    assert epochs == list(range(1, len(epochs) + 1)) and len(epochs) >= TRANSFORMED // 10


def test_tv1_group_transact_session_adds_offsets_explicitly(franz_pair_tv1: Pair, franz_kemu_tv1: TranscribedKemu,
                                                            franz: Path) -> None:
    _, transactional_id, _ = run_transform(franz_pair_tv1, franz, "transform_tv1")
    used = {entry["api_key"] for entry in exchanges_of(franz_kemu_tv1, transactional_id)}
    assert used == {PRODUCE, ADD_PARTITIONS, ADD_OFFSETS, TXN_OFFSET_COMMIT, END_TXN}, used
