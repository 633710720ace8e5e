"""Transactions version 2 (KIP-890 part 2) with the Java producer of kafka-clients 4.3, which chooses it by the
cluster's finalized transaction.version: on kemu as on a new Kafka 4.3 cluster (level 2), and on both
formatted with level 1. Each scenario runs against the reference Kafka too and the outcomes are compared;
kemu's transcript shows the protocol the client used: under TV2 no AddPartitionsToTxn or AddOffsetsToTxn,
Produce v12, TxnOffsetCommit v5 and EndTxn v5 answering an epoch one up at every end; under TV1 the
explicit adds, EndTxn v4 and an epoch that stays."""

from __future__ import annotations

from typing import Any

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.conftest import JavaKemu
from compat_tests.java.java_client import JavaClient
from compat_tests.java.test_java_transactions import run_zombie
from compat_tests.test_transactions_support import READ_COMMITTED, create_topics, read_until_end, unique

PROGRAM = "Transactions"
PARTITIONS = 2
PRODUCE, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = 0, 24, 25, 26, 28
OUTCOMES = ["init", "commit", "commit", "abort", "commit"]


def run_epochs(pair: Pair, java: JavaClient, scenario_name: str) -> tuple[str, str, dict[str, Any]]:
    topic, transactional_id, group = unique("java-epochs"), unique("java-epochs-id"), unique("java-epochs-g")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=PARTITIONS)
        return java.run(PROGRAM, target.bootstrap, "epochs", topic, str(PARTITIONS), transactional_id, group)

    kafka, result = pair.both(scenario)
    check(f"java.{java.line}.{scenario_name}", kafka, result, varying={"producerId": "producer_id"})
    # Exactly once: the committed transactions' records, once each; the aborted one's not; the offsets of the
    # last transaction that committed some.
    expected = sorted((topic, p, f"{n}-{p}") for n in (0, 1, 3) for p in range(PARTITIONS))
    assert sorted((t, p, v) for t, p, _, v in result["readCommitted"]) == expected
    assert result["offsets"] == {str(p): 3 for p in range(PARTITIONS)}
    assert read_until_end(pair.kemu.bootstrap, [topic], READ_COMMITTED, partitions=PARTITIONS) == expected
    return topic, transactional_id, result


def exchanges_of(server: JavaKemu, transactional_id: str) -> list[dict[str, Any]]:
    """The transcript's exchanges that name the transactional id."""
    keys = (PRODUCE, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT)
    return [entry for key in keys for entry in server.exchanges(key)
            if entry["request"].get("transactional_id") == transactional_id]


def test_tv2_bumps_the_epoch_at_every_end_and_adds_nothing_explicitly(java_pair: Pair, java_kemu: JavaKemu,
                                                                      java: JavaClient) -> None:
    _, transactional_id, result = run_epochs(java_pair, java, "epochs_tv2")
    assert [(t["after"], t["epoch"], t["state"]) for t in result["transactions"]] == [
        ("init", 0, "Empty"), ("commit", 1, "CompleteCommit"), ("commit", 2, "CompleteCommit"),
        ("abort", 3, "CompleteAbort"), ("commit", 4, "CompleteCommit")]
    seen = exchanges_of(java_kemu, transactional_id)
    used = {(entry["api_key"], entry["version"]) for entry in seen}
    assert used == {(PRODUCE, 13), (TXN_OFFSET_COMMIT, 5), (END_TXN, 5)}, used
    ends = [entry for entry in seen if entry["api_key"] == END_TXN]
    assert [(e["request"]["producer_epoch"], e["request"]["committed"], e["response"]["producer_epoch"])
            for e in ends] == [(0, True, 1), (1, True, 2), (2, False, 3), (3, True, 4)]
    # Each transaction's batches carry the epoch the EndTxn before it answered, from sequence 0.
    produced = sorted({(note["producer_epoch"], note["base_sequence"])
                       for entry in seen if entry["api_key"] == PRODUCE for note in entry["request"]["partitions"]})
    assert produced == [(epoch, 0) for epoch in range(4)], produced


def test_tv1_cluster_keeps_the_epoch_and_adds_explicitly(java_pair_tv1: Pair, java_kemu_tv1: JavaKemu,
                                                         java: JavaClient) -> None:
    _, transactional_id, result = run_epochs(java_pair_tv1, java, "epochs_tv1")
    assert [(t["after"], t["epoch"]) for t in result["transactions"]] == [(after, 0) for after in OUTCOMES]
    used = {(entry["api_key"], entry["version"]) for entry in exchanges_of(java_kemu_tv1, transactional_id)}
    assert used == {(PRODUCE, 11), (ADD_PARTITIONS, 3), (ADD_OFFSETS, 4), (TXN_OFFSET_COMMIT, 4), (END_TXN, 4)}, used


def test_tv1_zombie_is_fenced_as_kafka_fences_it(java_pair_tv1: Pair, java: JavaClient) -> None:
    _, first, second, outcome = run_zombie(java_pair_tv1, java, "zombie_tv1")
    assert [row[3] for row in sorted(outcome["readCommitted"])] == [f"from-{first}", f"from-{second}"]


def update_feature(pair: Pair, java: JavaClient, scenario_name: str, level: int, kind: str) -> dict[str, Any]:
    """Admin.updateFeatures of transaction.version on both, as `kafka-features` does it; compared."""
    def update(target: Target) -> Any:
        return java.run("AdminCalls", target.bootstrap, "update-feature", "transaction.version", str(level), kind)

    kafka, kemu = pair.both(update)
    check(f"java.{java.line}.{scenario_name}", kafka, kemu)
    assert isinstance(kemu, dict)
    return kemu


def test_update_features_moves_new_producers_to_tv2_and_back(java_pair_tv1: Pair, java_kemu_tv1: JavaKemu,
                                                            java: JavaClient) -> None:
    """kafka-features upgrade --feature transaction.version=2 on a cluster at 1: a producer started after it
    runs transactions version 2; a level the brokers do not support is refused; a safe downgrade brings the
    cluster back to 1."""
    try:
        refused = update_feature(java_pair_tv1, java, "update_features_unsupported_level", 3, "upgrade")
        assert refused["failed"] == "org.apache.kafka.common.errors.InvalidUpdateVersionException"
        assert update_feature(java_pair_tv1, java, "update_features_upgrade", 2, "upgrade") == {
            "failed": None, "finalized": [2, 2], "supported": [0, 2], "epochKnown": True}
        _, transactional_id, result = run_epochs(java_pair_tv1, java, "epochs_after_upgrade")
        assert [t["epoch"] for t in result["transactions"]] == [0, 1, 2, 3, 4]
        used = {(entry["api_key"], entry["version"]) for entry in exchanges_of(java_kemu_tv1, transactional_id)}
        assert used == {(PRODUCE, 13), (TXN_OFFSET_COMMIT, 5), (END_TXN, 5)}, used
    finally:
        back = update_feature(java_pair_tv1, java, "update_features_downgrade", 1, "safe-downgrade")
    assert back["failed"] is None and back["finalized"] == [1, 1]
