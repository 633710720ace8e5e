"""Transactions version 2 (KIP-890 part 2) through the handlers: the features ApiVersions advertises (and the
setting that changes transaction.version), Produce v12 adding partitions to the transaction, EndTxn v5
bumping the epoch at every end, TxnOffsetCommit v5 without AddOffsetsToTxn, the markers' epochs, and the
transaction-log records they journal."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.topic_names import TRANSACTION_STATE_TOPIC
from kemu.clock import VirtualClock
from kemu.hashing import partition_for
from kemu.txn.state import TV_2, TxnState
from kemu.wire.coordinator_records import decode_value
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch
from tests.handlers.harness import INTERNAL_TOPIC_PARTITIONS, Broker, Connection, MakeBroker, advance, broker_config
from tests.handlers.test_k22_k28_transactions import (
    ADD_OFFSETS,
    API_VERSIONS,
    FIND_COORDINATOR,
    control_records,
    fetch_offset,
    init,
    offsets_commit,
    settle,
    state,
)

E = ErrorCode
PRODUCE, END_TXN = 0, 26
KAFKA_SUPPORTED_V4 = {
    "group.version": (0, 1), "kraft.version": (0, 1), "metadata.version": (7, 30), "transaction.version": (0, 2),
    "eligible.leader.replicas.version": (0, 1)}


@pytest.fixture
def topics(broker: Broker) -> None:
    broker.call(lambda: create_topics(broker.broker, [NewTopic("a", 3, 1)]))


def api_versions(conn: Connection, version: int) -> dict[str, Any]:
    return conn.request(API_VERSIONS, version, {"client_software_name": "t", "client_software_version": "1"})


def end(conn: Connection, pid: int, epoch: int, commit: bool, version: int = 5, tid: str = "t") -> dict[str, Any]:
    body = conn.request(END_TXN, version, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                          "committed": commit})
    body.pop("throttle_time_ms")
    return body


def produce(conn: Connection, pid: int, epoch: int, seq: int, version: int = 12, partition: int = 0,
            tid: str = "t") -> dict[str, Any]:
    records = build_batch([NewRecord(value=b"x", timestamp=1)], producer_id=pid, producer_epoch=epoch,
                          base_sequence=seq, transactional=True)
    body = conn.request(PRODUCE, version, {"transactional_id": tid, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": "a", "partition_data": [{"index": partition, "records": records}]}]})
    [answer] = body["responses"][0]["partition_responses"]
    return dict(answer)


# ---- ApiVersions: the features -----------------------------------------------------------------------------

def test_api_versions_v4_features_as_a_new_kafka_4_3_cluster(conn: Connection) -> None:
    body = api_versions(conn, 4)
    supported = {f["name"]: (f["min_version"], f["max_version"]) for f in body["supported_features"]}
    # Share groups and streams groups are served, as on Kafka 4.3.
    assert supported == {**KAFKA_SUPPORTED_V4, "share.version": (0, 1), "streams.version": (0, 1)}
    finalized = {f["name"]: (f["min_version_level"], f["max_version_level"]) for f in body["finalized_features"]}
    assert list(finalized)[:2] == ["group.version", "streams.version"]  # Kafka's order
    assert finalized == {"group.version": (1, 1), "streams.version": (1, 1), "transaction.version": (2, 2),
                         "eligible.leader.replicas.version": (1, 1), "share.version": (1, 1),
                         "metadata.version": (30, 30)}
    assert body["finalized_features_epoch"] >= 0 and body["zk_migration_ready"] is False


def test_api_versions_v3_leaves_out_features_with_minimum_zero(conn: Connection) -> None:
    body = api_versions(conn, 3)
    assert [f["name"] for f in body["supported_features"]] == ["metadata.version"]
    assert {f["name"] for f in body["finalized_features"]} >= {"transaction.version", "metadata.version"}


def test_api_versions_before_v3_has_no_features(conn: Connection) -> None:
    body = api_versions(conn, 2)  # decoded with the fields' defaults: nothing of them is on the wire
    assert (body["supported_features"], body["finalized_features"], body["finalized_features_epoch"]) == ([], [], -1)


@pytest.mark.parametrize("level", [0, 1])
def test_transaction_version_is_a_setting(make_broker: MakeBroker, level: int) -> None:
    with make_broker(broker_config(properties={"kemu.features": f"transaction.version={level}"})) as broker, \
            broker.connect() as conn:
        finalized = {f["name"]: f["max_version_level"] for f in api_versions(conn, 4)["finalized_features"]}
    # Level 0 is not listed, as Kafka lists no feature finalized at 0.
    assert finalized.get("transaction.version") == (level or None)


# ---- Produce v12 and EndTxn v5 ---------------------------------------------------------------------------

def test_produce_v12_adds_the_partition_and_end_txn_v5_bumps_the_epoch(broker: Broker, conn: Connection,
                                                                       topics: None) -> None:
    p = init(conn, "t", version=5)
    pid, epoch = p["producer_id"], p["producer_epoch"]
    for round_ in range(3):
        first = produce(conn, pid, epoch, 0)
        assert first["error_code"] == 0, first
        assert produce(conn, pid, epoch, 1)["error_code"] == 0
        assert produce(conn, pid, epoch, 0, partition=1)["error_code"] == 0
        txn = broker.call(lambda: broker.coordinators.txn.coordinator.txns["t"])
        assert (txn.state, txn.partitions, txn.client_version) == (TxnState.ONGOING, {("a", 0), ("a", 1)}, TV_2)
        commit = round_ != 1
        assert end(conn, pid, epoch, commit) == {"error_code": 0, "producer_id": pid, "producer_epoch": epoch + 1}
        settle(broker)
        assert state(broker, "t") == (TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT)
        epoch += 1
    # Every marker carries the epoch after the bump; the next transaction writes at it from sequence 0.
    assert control_records(broker, "a", 0) == [(pid, e, c) for e, c in ((1, True), (2, False), (3, True))]


def test_end_txn_v5_retry_and_abort_of_nothing(broker: Broker, conn: Connection, topics: None) -> None:
    p = init(conn, "t", version=5)
    pid, epoch = p["producer_id"], p["producer_epoch"]
    assert end(conn, pid, epoch, True) == {"error_code": E.INVALID_TXN_STATE, "producer_id": -1, "producer_epoch": -1}
    assert end(conn, pid, epoch, False) == {"error_code": 0, "producer_id": pid, "producer_epoch": epoch + 1}
    settle(broker)
    # The retry of that abort (its answer lost) gets the same answer; EndTxn v4 knows no bump.
    assert end(conn, pid, epoch, False) == {"error_code": 0, "producer_id": pid, "producer_epoch": epoch + 1}
    assert end(conn, pid, epoch, False, version=4)["error_code"] == E.PRODUCER_FENCED
    assert end(conn, pid + 1, epoch + 1, False)["error_code"] == E.INVALID_PRODUCER_ID_MAPPING


def test_produce_v12_refusals(broker: Broker, conn: Connection, topics: None) -> None:
    p = init(conn, "t", version=5)
    pid, epoch = p["producer_id"], p["producer_epoch"]
    # A producer new to the partition starts at sequence 0 under TV2.
    refused = produce(conn, pid, epoch, 5)
    assert refused["error_code"] == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    # An epoch the coordinator does not know, another producer id, an unknown transactional id.
    assert produce(conn, pid, epoch + 3, 0)["error_code"] == E.INVALID_PRODUCER_EPOCH
    assert produce(conn, pid + 9, 0, 0)["error_code"] == E.INVALID_PRODUCER_ID_MAPPING
    assert produce(conn, pid, epoch, 0, tid="nobody")["error_code"] == E.INVALID_PRODUCER_ID_MAPPING
    assert produce(conn, pid, epoch, 0)["error_code"] == 0
    # While the markers are held, the transaction completing: CONCURRENT_TRANSACTIONS as it is (TV2 keeps it).
    broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", True))
    end(conn, pid, epoch, True)
    answer = produce(conn, pid, epoch + 1, 0, partition=2)
    assert (answer["error_code"], answer["error_message"]) == (E.CONCURRENT_TRANSACTIONS, None)
    # Produce v11 (a TV1 client) gets the error every client retries instead.
    assert produce(conn, pid, epoch + 1, 0, partition=2, version=11)["error_code"] == E.NOT_ENOUGH_REPLICAS
    broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", False))
    settle(broker)
    assert produce(conn, pid, epoch + 1, 0, partition=2)["error_code"] == 0


def test_produce_v12_waits_for_the_transaction_completing_within_the_retry_window(
        broker: Broker, conn: Connection, topics: None) -> None:
    # ReplicaManager retries CONCURRENT_TRANSACTIONS every add.partitions.to.txn.retry.backoff.ms (20) for up to
    # add.partitions.to.txn.retry.backoff.max.ms (100): markers written within that window are waited for.
    p = init(conn, "t", version=5)
    pid, epoch = p["producer_id"], p["producer_epoch"]
    assert produce(conn, pid, epoch, 0)["error_code"] == 0
    broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", True))
    end(conn, pid, epoch, True)
    release = threading.Timer(0.03, lambda: broker.call(
        lambda: setattr(broker.coordinators.txn, "hold_markers", False)))
    started = time.monotonic()
    release.start()
    try:
        answer = produce(conn, pid, epoch + 1, 0, partition=2)
    finally:
        release.join()
    assert answer["error_code"] == 0, answer
    assert time.monotonic() - started >= 0.03  # answered after the markers, not before
    assert state(broker, "t") == TxnState.ONGOING
    assert broker.call(lambda: broker.coordinators.txn.coordinator.txns["t"].partitions) == {("a", 2)}


def test_produce_v12_answers_concurrent_transactions_once_the_window_closes(make_broker: MakeBroker) -> None:
    with make_broker(broker_config(properties={"add.partitions.to.txn.retry.backoff.max.ms": "250"})) as broker, \
            broker.connect() as conn:
        broker.call(lambda: create_topics(broker.broker, [NewTopic("a", 3, 1)]))
        p = init(conn, "t", version=5)
        pid, epoch = p["producer_id"], p["producer_epoch"]
        assert produce(conn, pid, epoch, 0)["error_code"] == 0
        broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", True))
        end(conn, pid, epoch, True)
        started = time.monotonic()
        answer = produce(conn, pid, epoch + 1, 0, partition=2)
        assert (answer["error_code"], answer["error_message"]) == (E.CONCURRENT_TRANSACTIONS, None)
        assert time.monotonic() - started >= 0.25  # the configured window, tried again all along
        # A TV1 client (v11) is not retried: NOT_ENOUGH_REPLICAS at once, which it retries itself.
        assert produce(conn, pid, epoch + 1, 0, partition=2, version=11)["error_code"] == E.NOT_ENOUGH_REPLICAS


@pytest.mark.real_socket
def test_a_produce_waiting_to_be_added_holds_its_connections_later_requests(make_broker: MakeBroker) -> None:
    # Kafka's channel stays muted while ReplicaManager retries: the producer's next request is not run before
    # this one is answered (its batches would be appended first).
    settings = {"add.partitions.to.txn.retry.backoff.max.ms": "20000"}
    with make_broker(broker_config(properties=settings)) as broker, broker.connect() as conn:
        broker.call(lambda: create_topics(broker.broker, [NewTopic("a", 3, 1), NewTopic("b", 1, 1)]))
        p = init(conn, "t", version=5)
        pid, epoch = p["producer_id"], p["producer_epoch"]
        assert produce(conn, pid, epoch, 0)["error_code"] == 0
        broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", True))
        end(conn, pid, epoch, True)
        blocked = build_batch([NewRecord(value=b"x", timestamp=1)], producer_id=pid, producer_epoch=epoch + 1,
                              base_sequence=0, transactional=True)
        conn.send(PRODUCE, 12, {"transactional_id": "t", "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "a", "partition_data": [{"index": 2, "records": blocked}]}]})
        conn.send(PRODUCE, 12, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "b", "partition_data": [{"index": 0, "records": build_batch([NewRecord(value=b"y")])}]}]})
        time.sleep(0.2)  # time enough for the second request to be appended, were it run
        assert broker.call(lambda: broker.broker.partition("b", 0).log.log_end_offset) == 0  # type: ignore[union-attr]
        broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", False))
        _, first = conn.receive(PRODUCE, 12)
        _, second = conn.receive(PRODUCE, 12)
        assert first["responses"][0]["partition_responses"][0]["error_code"] == 0
        assert second["responses"][0]["partition_responses"][0]["error_code"] == 0
        assert broker.call(lambda: broker.broker.partition("b", 0).log.log_end_offset) == 1  # type: ignore[union-attr]


def test_produce_v12_adds_even_without_verification(make_broker: MakeBroker) -> None:
    with make_broker(broker_config(transaction_partition_verification_enable=False)) as broker, \
            broker.connect() as conn:
        broker.call(lambda: create_topics(broker.broker, [NewTopic("a", 1, 1)]))
        pid = init(conn, "t", version=5)["producer_id"]
        assert produce(conn, pid, 0, 0)["error_code"] == 0
        assert broker.call(lambda: broker.coordinators.txn.coordinator.txns["t"].partitions) == {("a", 0)}


def test_a_timed_out_tv2_transaction_fences_its_produce_and_takes_its_abort(
        make_broker: MakeBroker) -> None:
    with make_broker(broker_config(), clock=VirtualClock(1_000_000)) as broker, broker.connect() as conn:
        broker.call(lambda: create_topics(broker.broker, [NewTopic("a", 1, 1)]))
        p = init(conn, "t", version=5, timeout_ms=1000)
        pid, epoch = p["producer_id"], p["producer_epoch"]
        assert produce(conn, pid, epoch, 0)["error_code"] == 0
        advance(broker, 1001)
        settle(broker)
        assert state(broker, "t") == TxnState.COMPLETE_ABORT
        assert control_records(broker, "a", 0) == [(pid, epoch + 1, False)]
        assert produce(conn, pid, epoch, 1)["error_code"] == E.INVALID_PRODUCER_EPOCH
        assert end(conn, pid, epoch, True)["error_code"] == E.INVALID_TXN_STATE
        assert end(conn, pid, epoch, False) == {"error_code": 0, "producer_id": pid, "producer_epoch": epoch + 1}
        assert produce(conn, pid, epoch + 1, 0)["error_code"] == 0


# ---- TxnOffsetCommit v5 ----------------------------------------------------------------------------------

def test_txn_offset_commit_v5_adds_the_group_without_add_offsets(broker: Broker, conn: Connection,
                                                                 topics: None) -> None:
    conn.request(FIND_COORDINATOR, 1, {"key": "g", "key_type": 0})
    p = init(conn, "t", version=5)
    pid, epoch = p["producer_id"], p["producer_epoch"]
    assert offsets_commit(conn, 5, pid, epoch) == {("a", 0): 0}
    offsets = ("__consumer_offsets", partition_for("g", INTERNAL_TOPIC_PARTITIONS))
    assert broker.call(lambda: broker.coordinators.txn.coordinator.txns["t"].partitions) == {offsets}
    assert fetch_offset(conn, "g", require_stable=True) == (-1, E.UNSTABLE_OFFSET_COMMIT)
    assert offsets_commit(conn, 5, pid, epoch + 1) == {("a", 0): E.INVALID_PRODUCER_EPOCH}
    assert end(conn, pid, epoch, True)["producer_epoch"] == epoch + 1
    settle(broker)
    assert fetch_offset(conn, "g", require_stable=True) == (42, 0)
    # v4 still only verifies: without AddOffsetsToTxn the group is not in the next transaction.
    assert offsets_commit(conn, 4, pid, epoch + 1) == {("a", 0): E.TRANSACTION_ABORTABLE}
    conn.request(ADD_OFFSETS, 3, {"transactional_id": "t", "producer_id": pid, "producer_epoch": epoch + 1,
                                  "group_id": "g"})
    assert offsets_commit(conn, 4, pid, epoch + 1) == {("a", 0): 0}


# ---- the transaction log ---------------------------------------------------------------------------------

def journaled(broker: Broker, tid: str) -> list[tuple[int, dict[str, Any]]]:
    def read() -> list[tuple[int, dict[str, Any]]]:
        plog = broker.broker.partition(TRANSACTION_STATE_TOPIC, partition_for(tid, INTERNAL_TOPIC_PARTITIONS))
        assert plog is not None
        values = [decode_value("TransactionLog", record.value) for batch in plog.log.batches()
                  for record in batch.records() if record.value is not None]
        return [(value.version, value.fields) for value in values]
    return broker.call(read)


@pytest.mark.parametrize("level,value_version", [(2, 1), (1, 1), (0, 0)])
def test_the_transaction_log_records_by_transaction_version(make_broker: MakeBroker, level: int,
                                                            value_version: int) -> None:
    with make_broker(broker_config(properties={"kemu.features": f"transaction.version={level}"})) as broker, \
            broker.connect() as conn:
        broker.call(lambda: create_topics(broker.broker, [NewTopic("a", 1, 1)]))
        p = init(conn, "t", version=5)
        pid, epoch = p["producer_id"], p["producer_epoch"]
        assert produce(conn, pid, epoch, 0)["error_code"] == 0
        end(conn, pid, epoch, True)
        settle(broker)
        records = journaled(broker, "t")
    assert {version for version, _ in records} == {value_version}
    statuses = [(f["transaction_status"], f["producer_epoch"]) for _, f in records]
    assert statuses == [(TxnState.EMPTY, 0), (TxnState.ONGOING, 0), (TxnState.PREPARE_COMMIT, 1),
                        (TxnState.COMPLETE_COMMIT, 1)]
    if value_version:
        # As Kafka writes them: the previous producer id, and the client's transaction version once a TV2
        # request moved the transaction.
        assert [(f["previous_producer_id"], f["client_transaction_version"]) for _, f in records] == [
            (pid, 0), (pid, TV_2), (pid, TV_2), (pid, TV_2)]


def test_a_restart_completes_a_prepared_tv2_transaction(make_broker: MakeBroker, tmp_path: Any) -> None:
    with make_broker(broker_config(data_dir=str(tmp_path))) as broker, broker.connect() as conn:
        broker.call(lambda: create_topics(broker.broker, [NewTopic("a", 1, 1)]))
        p = init(conn, "t", version=5)
        pid, epoch = p["producer_id"], p["producer_epoch"]
        produce(conn, pid, epoch, 0)
        broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", True))
        end(conn, pid, epoch, True)
    with make_broker(broker_config(data_dir=str(tmp_path))) as again, again.connect() as conn:
        settle(again)
        assert state(again, "t") == TxnState.COMPLETE_COMMIT
        assert control_records(again, "a", 0) == [(pid, epoch + 1, True)]
        # The restarted coordinator answers the lost EndTxn's retry, and the producer goes on at its new epoch.
        assert end(conn, pid, epoch, True) == {"error_code": 0, "producer_id": pid, "producer_epoch": epoch + 1}
        assert produce(conn, pid, epoch + 1, 0)["error_code"] == 0
