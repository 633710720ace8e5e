"""InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, WriteTxnMarkers and TxnOffsetCommit: every
version, Kafka's error paths and their per-version translations."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.topic_names import GROUP_METADATA_TOPIC
from kemu.hashing import partition_for
from kemu.txn.state import TxnState
from kemu.wire.errors import ErrorCode
from kemu.wire.records import ControlRecordType, NewRecord, build_batch, decode_control_key
from tests.handlers.harness import Broker, Connection

E = ErrorCode
INIT, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, WRITE_MARKERS, TXN_OFFSET_COMMIT = 22, 24, 25, 26, 27, 28
OFFSET_FETCH, FIND_COORDINATOR, API_VERSIONS = 9, 10, 18


@pytest.fixture
def topics(broker: Broker) -> None:
    broker.call(lambda: create_topics(broker.broker, [NewTopic("a", 3, 1), NewTopic("b", 1, 1)]))


def init(conn: Connection, tid: str | None, version: int = 4, timeout_ms: int = 60000,
         producer_id: int = -1, producer_epoch: int = -1) -> dict[str, Any]:
    return conn.request(INIT, version, {"transactional_id": tid, "transaction_timeout_ms": timeout_ms,
                                        "producer_id": producer_id, "producer_epoch": producer_epoch})


def add_partitions(conn: Connection, tid: str, pid: int, epoch: int, partitions: dict[str, list[int]],
                   version: int = 3) -> dict[tuple[str, int], int]:
    body = conn.request(ADD_PARTITIONS, version, {
        "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": t, "partitions": p} for t, p in partitions.items()]})
    return {(t["name"], p["partition_index"]): p["partition_error_code"]
            for t in body["results_by_topic_v3_and_below"] for p in t["results_by_partition"]}


def end_txn(conn: Connection, tid: str, pid: int, epoch: int, commit: bool, version: int = 3) -> int:
    body = conn.request(END_TXN, version, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                          "committed": commit})
    return int(body["error_code"])


def produce_direct(broker: Broker, topic: str, partition: int, pid: int, epoch: int, seq: int) -> None:
    """A transactional batch appended on the broker's thread (Produce itself is tested elsewhere)."""
    def append() -> None:
        plog = broker.broker.partition(topic, partition)
        assert plog is not None
        plog.append(build_batch([NewRecord(value=b"x", timestamp=1)], producer_id=pid, producer_epoch=epoch,
                                base_sequence=seq, transactional=True))
    broker.call(append)


def settle(broker: Broker) -> None:
    """Run whatever housekeeping is due (the marker writer) now, on the broker's thread."""
    broker.call(broker.broker.housekeeping.run_due)


def state(broker: Broker, tid: str) -> TxnState:
    return broker.call(lambda: broker.coordinators.txn.coordinator.txns[tid].state)


def control_records(broker: Broker, topic: str, partition: int) -> list[tuple[int, int, bool]]:
    def read() -> list[tuple[int, int, bool]]:
        plog = broker.broker.partition(topic, partition)
        assert plog is not None
        out = []
        for batch in plog.log.batches():
            if batch.header.is_control:
                _, kind = decode_control_key(batch.records()[0].key)
                out.append((batch.header.producer_id, batch.header.producer_epoch, kind == ControlRecordType.COMMIT))
        return out
    return broker.call(read)


# ---- InitProducerId ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(6))
def test_idempotent_producers_get_fresh_ids(conn: Connection, version: int) -> None:
    first, second = init(conn, None, version), init(conn, None, version)
    assert (first["error_code"], first["producer_epoch"], second["producer_epoch"]) == (0, 0, 0)
    assert first["producer_id"] != second["producer_id"] and first["producer_id"] >= 0


@pytest.mark.parametrize("version", range(6))
def test_transactional_id_keeps_its_producer_id_and_bumps_the_epoch(conn: Connection, version: int) -> None:
    first, second = init(conn, "t", version), init(conn, "t", version)
    assert first["producer_id"] == second["producer_id"]
    assert (first["producer_epoch"], second["producer_epoch"]) == (0, 1)


@pytest.mark.parametrize("version,expected", [(3, E.INVALID_PRODUCER_EPOCH), (4, E.PRODUCER_FENCED),
                                              (5, E.PRODUCER_FENCED)])
def test_kip360_bump_by_a_fenced_producer(conn: Connection, version: int, expected: ErrorCode) -> None:
    old = init(conn, "t", version)
    init(conn, "t", version)
    bumped = init(conn, "t", version, producer_id=old["producer_id"] + 1, producer_epoch=0)
    assert (bumped["error_code"], bumped["producer_id"], bumped["producer_epoch"]) == (expected, -1, -1)


def test_kip360_bump_and_its_retry(conn: Connection) -> None:
    p = init(conn, "t", 3)
    bumped = init(conn, "t", 3, producer_id=p["producer_id"], producer_epoch=p["producer_epoch"])
    retried = init(conn, "t", 3, producer_id=p["producer_id"], producer_epoch=p["producer_epoch"])
    assert bumped["producer_epoch"] == retried["producer_epoch"] == 1 and retried["error_code"] == 0


@pytest.mark.parametrize("pid,epoch", [(5, -1), (-1, 3)])
def test_half_a_producer_is_an_invalid_request(conn: Connection, pid: int, epoch: int) -> None:
    answer = init(conn, "t", 3, producer_id=pid, producer_epoch=epoch)
    assert (answer["error_code"], answer["producer_id"], answer["producer_epoch"]) == (E.INVALID_REQUEST, -1, -1)


def test_timeouts_and_empty_ids(conn: Connection) -> None:
    assert init(conn, "t", 4, timeout_ms=900001)["error_code"] == E.INVALID_TRANSACTION_TIMEOUT
    assert init(conn, "t", 4, timeout_ms=0)["error_code"] == E.INVALID_TRANSACTION_TIMEOUT
    assert init(conn, "t", 4, timeout_ms=900000)["error_code"] == E.NONE
    assert init(conn, "", 4)["error_code"] == E.INVALID_REQUEST


@pytest.mark.real_socket
def test_a_new_producer_aborts_the_old_ones_transaction(broker: Broker, conn: Connection,
                                                       topics: None) -> None:
    old = init(conn, "t")
    assert add_partitions(conn, "t", old["producer_id"], 0, {"a": [0]}) == {("a", 0): 0}
    produce_direct(broker, "a", 0, old["producer_id"], 0, 0)
    broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", True))
    assert init(conn, "t")["error_code"] == E.CONCURRENT_TRANSACTIONS
    assert init(conn, "t")["error_code"] == E.CONCURRENT_TRANSACTIONS  # still aborting
    broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", False))
    settle(broker)
    new = init(conn, "t")
    assert (new["error_code"], new["producer_epoch"]) == (0, 2)
    assert control_records(broker, "a", 0) == [(old["producer_id"], 1, False)]
    assert end_txn(conn, "t", old["producer_id"], 0, commit=True) == E.PRODUCER_FENCED


# ---- AddPartitionsToTxn ----------------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(4))
def test_add_partitions_client_form(broker: Broker, conn: Connection, topics: None, version: int) -> None:
    p = init(conn, "t")
    pid = p["producer_id"]
    assert add_partitions(conn, "t", pid, 0, {"a": [0, 1], "b": [0]}, version) == {
        ("a", 0): 0, ("a", 1): 0, ("b", 0): 0}
    added = broker.call(lambda: broker.coordinators.txn.coordinator.txns["t"].partitions)
    assert added == {("a", 0), ("a", 1), ("b", 0)}
    # One missing partition: nothing is added, the rest are not attempted.
    assert add_partitions(conn, "t", pid, 0, {"a": [2, 7], "nope": [0]}, version) == {
        ("a", 2): E.OPERATION_NOT_ATTEMPTED, ("a", 7): E.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert ("a", 2) not in broker.call(lambda: broker.coordinators.txn.coordinator.txns["t"].partitions)
    fenced = E.PRODUCER_FENCED if version >= 2 else E.INVALID_PRODUCER_EPOCH
    assert add_partitions(conn, "t", pid, 1, {"a": [2]}, version) == {("a", 2): fenced}
    assert add_partitions(conn, "t", pid + 1, 0, {"a": [2]}, version) == {("a", 2): E.INVALID_PRODUCER_ID_MAPPING}
    assert add_partitions(conn, "nope", pid, 0, {"a": [2]}, version) == {("a", 2): E.INVALID_PRODUCER_ID_MAPPING}


@pytest.mark.parametrize("version", [4, 5])
def test_add_partitions_broker_form_with_verification(conn: Connection, topics: None, version: int) -> None:
    p = init(conn, "t")
    q = init(conn, "u")

    def txn(tid: str, pid: int, verify: bool, partitions: list[int]) -> dict[str, Any]:
        return {"transactional_id": tid, "producer_id": pid, "producer_epoch": 0, "verify_only": verify,
                "topics": [{"name": "a", "partitions": partitions}]}

    body = conn.request(ADD_PARTITIONS, version, {"transactions": [
        txn("t", p["producer_id"], False, [0]), txn("u", q["producer_id"] + 100, False, [1])]})
    assert body["error_code"] == 0
    results = {r["transactional_id"]: {(t["name"], x["partition_index"]): x["partition_error_code"]
                                       for t in r["topic_results"] for x in t["results_by_partition"]}
               for r in body["results_by_transaction"]}
    assert results == {"t": {("a", 0): 0}, "u": {("a", 1): E.INVALID_PRODUCER_ID_MAPPING}}
    body = conn.request(ADD_PARTITIONS, version, {"transactions": [txn("t", p["producer_id"], True, [0, 1])]})
    [result] = body["results_by_transaction"]
    assert {x["partition_index"]: x["partition_error_code"] for x in result["topic_results"][0]["results_by_partition"]
            } == {0: E.NONE, 1: E.TRANSACTION_ABORTABLE}


# ---- AddOffsetsToTxn / EndTxn ----------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(5))
def test_add_offsets_adds_the_groups_offsets_partition(broker: Broker, conn: Connection,
                                                       version: int) -> None:
    p = init(conn, "t")
    body = conn.request(ADD_OFFSETS, version, {"transactional_id": "t", "producer_id": p["producer_id"],
                                              "producer_epoch": 0, "group_id": "my-group"})
    assert body["error_code"] == 0
    expected = (GROUP_METADATA_TOPIC, partition_for("my-group", broker.config.offsets_topic_num_partitions))
    assert broker.call(lambda: broker.coordinators.txn.coordinator.txns["t"].partitions) == {expected}
    body = conn.request(ADD_OFFSETS, version, {"transactional_id": "t", "producer_id": p["producer_id"],
                                              "producer_epoch": 9, "group_id": "my-group"})
    assert body["error_code"] == (E.PRODUCER_FENCED if version >= 2 else E.INVALID_PRODUCER_EPOCH)


@pytest.mark.parametrize("version", range(5))
def test_end_txn_two_phases(broker: Broker, conn: Connection, topics: None, version: int) -> None:
    p = init(conn, "t")
    pid = p["producer_id"]
    assert end_txn(conn, "t", pid, 0, commit=True, version=version) == E.INVALID_TXN_STATE  # nothing begun
    add_partitions(conn, "t", pid, 0, {"a": [0], "b": [0]})
    produce_direct(broker, "a", 0, pid, 0, 0)
    broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", True))
    assert end_txn(conn, "t", pid, 0, commit=True, version=version) == E.NONE
    assert state(broker, "t") == TxnState.PREPARE_COMMIT
    assert end_txn(conn, "t", pid, 0, commit=True, version=version) == E.CONCURRENT_TRANSACTIONS
    assert end_txn(conn, "t", pid, 0, commit=False, version=version) == E.INVALID_TXN_STATE
    assert add_partitions(conn, "t", pid, 0, {"a": [1]}) == {("a", 1): E.CONCURRENT_TRANSACTIONS}
    broker.call(lambda: setattr(broker.coordinators.txn, "hold_markers", False))
    settle(broker)
    assert state(broker, "t") == TxnState.COMPLETE_COMMIT
    assert control_records(broker, "a", 0) == control_records(broker, "b", 0) == [(pid, 0, True)]
    assert end_txn(conn, "t", pid, 0, commit=True, version=version) == E.NONE
    assert end_txn(conn, "t", pid, 0, commit=False, version=version) == E.INVALID_TXN_STATE
    fenced = E.PRODUCER_FENCED if version >= 2 else E.INVALID_PRODUCER_EPOCH
    assert end_txn(conn, "t", pid, 1, commit=True, version=version) == fenced


def test_transactions_version_2_versions_are_advertised(conn: Connection) -> None:
    body = conn.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    versions = {k["api_key"]: (k["min_version"], k["max_version"]) for k in body["api_keys"]}
    assert versions[END_TXN] == (0, 5) and versions[TXN_OFFSET_COMMIT] == (0, 5) and versions[0][1] >= 12
    assert versions[INIT] == (0, 5) and versions[ADD_PARTITIONS] == (0, 5)


# ---- WriteTxnMarkers -------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 2])
def test_write_txn_markers_from_an_admin_tool(broker: Broker, conn: Connection, topics: None,
                                              version: int) -> None:
    produce_direct(broker, "a", 0, 77, 3, 0)
    produce_direct(broker, "a", 1, 78, 0, 0)
    body = conn.request(WRITE_MARKERS, version, {"markers": [
        {"producer_id": 77, "producer_epoch": 3, "transaction_result": False, "coordinator_epoch": 5,
         "topics": [{"name": "a", "partition_indexes": [0]}, {"name": "gone", "partition_indexes": [0]}]},
        {"producer_id": 78, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 5,
         "topics": [{"name": "a", "partition_indexes": [1]}]},
        {"producer_id": 77, "producer_epoch": 2, "transaction_result": True, "coordinator_epoch": 5,
         "topics": [{"name": "a", "partition_indexes": [2]}]},
    ]})
    errors = {(m["producer_id"], t["name"], p["partition_index"]): p["error_code"]
              for m in body["markers"] for t in m["topics"] for p in t["partitions"]}
    assert errors == {(77, "a", 0): 0, (77, "gone", 0): E.UNKNOWN_TOPIC_OR_PARTITION, (78, "a", 1): 0,
                      (77, "a", 2): 0}
    assert [m["producer_id"] for m in body["markers"]] == [77, 78]  # grouped by producer, as Kafka answers
    assert control_records(broker, "a", 0) == [(77, 3, False)]
    # A marker of an older epoch, or an older coordinator epoch, is refused by the partition.
    body = conn.request(WRITE_MARKERS, version, {"markers": [
        {"producer_id": 77, "producer_epoch": 2, "transaction_result": True, "coordinator_epoch": 5,
         "topics": [{"name": "a", "partition_indexes": [0]}]},
        {"producer_id": 78, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 4,
         "topics": [{"name": "a", "partition_indexes": [1]}]}]})
    errors = {m["producer_id"]: m["topics"][0]["partitions"][0]["error_code"] for m in body["markers"]}
    assert errors == {77: E.INVALID_PRODUCER_EPOCH, 78: E.TRANSACTION_COORDINATOR_FENCED}
    assert conn.request(WRITE_MARKERS, version, {"markers": []}) == {"markers": []}


def test_write_txn_markers_v2_of_transaction_version_2_need_a_bumped_epoch(broker: Broker, conn: Connection,
                                                                           topics: None) -> None:
    # KIP-1228: a TV2 coordinator bumps the epoch before it writes the markers (ProducerAppendInfo's check).
    produce_direct(broker, "a", 0, 90, 3, 0)

    def marker(epoch: int, transaction_version: int, version: int = 2, pid: int = 90) -> int:
        body = conn.request(WRITE_MARKERS, version, {"markers": [
            {"producer_id": pid, "producer_epoch": epoch, "transaction_result": True, "coordinator_epoch": 5,
             "topics": [{"name": "a", "partition_indexes": [0]}], "transaction_version": transaction_version}]})
        code: int = body["markers"][0]["topics"][0]["partitions"][0]["error_code"]
        return code

    assert marker(3, 2) == E.INVALID_PRODUCER_EPOCH  # the transaction's own epoch: a late marker under TV2
    assert control_records(broker, "a", 0) == []
    assert marker(4, 2) == 0
    assert marker(4, 2) == 0  # a retry once the transaction is over is written again (KAFKA-19999)
    assert marker(3, 2) == E.INVALID_PRODUCER_EPOCH
    assert marker(4, 0) == marker(4, 2, version=1) == 0  # TV0/TV1: as old as the producer's epoch is fine
    assert marker(0, 2, pid=91) == 0  # a producer the partition has never seen
    assert control_records(broker, "a", 0) == [(90, 4, True)] * 4 + [(91, 0, True)]


# ---- TxnOffsetCommit -------------------------------------------------------------------------------------

def offsets_commit(conn: Connection, version: int, pid: int, epoch: int, group: str = "g",
                   topics: dict[str, list[int]] | None = None, offset: int = 42) -> dict[tuple[str, int], int]:
    body = conn.request(TXN_OFFSET_COMMIT, version, {
        "transactional_id": "t", "group_id": group, "producer_id": pid, "producer_epoch": epoch,
        "topics": [{"name": t, "partitions": [{"partition_index": i, "committed_offset": offset,
                                               "committed_metadata": "m"} for i in parts]}
                   for t, parts in (topics or {"a": [0]}).items()]})
    return {(t["name"], p["partition_index"]): p["error_code"] for t in body["topics"] for p in t["partitions"]}


def fetch_offset(conn: Connection, group: str, require_stable: bool) -> tuple[int, int]:
    body = conn.request(OFFSET_FETCH, 7, {"group_id": group, "topics": [{"name": "a", "partition_indexes": [0]}],
                                         "require_stable": require_stable})
    [partition] = body["topics"][0]["partitions"]
    return partition["committed_offset"], partition["error_code"]


@pytest.mark.parametrize("version", range(5))
def test_txn_offset_commit_stages_until_the_commit_marker(broker: Broker, conn: Connection, topics: None,
                                                         version: int) -> None:
    conn.request(FIND_COORDINATOR, 1, {"key": "g", "key_type": 0})  # creates __consumer_offsets
    p = init(conn, "t")
    pid = p["producer_id"]
    # Without AddOffsetsToTxn the group's partition is not in the transaction (KIP-890 verification).
    not_added = E.TRANSACTION_ABORTABLE if version >= 4 else E.INVALID_TXN_STATE
    assert offsets_commit(conn, version, pid, 0) == {("a", 0): not_added}
    add_partitions(conn, "t", pid, 0, {"a": [0]})
    conn.request(ADD_OFFSETS, 3, {"transactional_id": "t", "producer_id": pid, "producer_epoch": 0,
                                  "group_id": "g"})
    assert offsets_commit(conn, version, pid, 0, topics={"a": [0, 9], "nope": [1]}) == {
        ("a", 0): 0, ("a", 9): E.UNKNOWN_TOPIC_OR_PARTITION, ("nope", 1): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert offsets_commit(conn, version, pid, 1, topics={"a": [0, 9]}) == {
        ("a", 0): E.INVALID_PRODUCER_EPOCH, ("a", 9): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert offsets_commit(conn, version, pid, 0, group="") == {("a", 0): E.INVALID_GROUP_ID}
    assert fetch_offset(conn, "g", require_stable=False) == (-1, 0)
    assert fetch_offset(conn, "g", require_stable=True) == (-1, E.UNSTABLE_OFFSET_COMMIT)
    assert end_txn(conn, "t", pid, 0, commit=True) == 0
    settle(broker)
    assert fetch_offset(conn, "g", require_stable=True) == (42, 0)


def test_aborted_txn_offsets_are_dropped(broker: Broker, conn: Connection, topics: None) -> None:
    conn.request(FIND_COORDINATOR, 1, {"key": "g", "key_type": 0})
    pid = init(conn, "t")["producer_id"]
    conn.request(ADD_OFFSETS, 3, {"transactional_id": "t", "producer_id": pid, "producer_epoch": 0, "group_id": "g"})
    assert offsets_commit(conn, 3, pid, 0) == {("a", 0): 0}
    assert end_txn(conn, "t", pid, 0, commit=False) == 0
    settle(broker)
    assert fetch_offset(conn, "g", require_stable=True) == (-1, 0)


@pytest.mark.parametrize("version", range(3, 5))
def test_txn_offset_commit_kip447_generation_checks(broker: Broker, conn: Connection, topics: None,
                                                    version: int) -> None:
    conn.request(FIND_COORDINATOR, 1, {"key": "g", "key_type": 0})
    pid = init(conn, "t")["producer_id"]
    conn.request(ADD_OFFSETS, 3, {"transactional_id": "t", "producer_id": pid, "producer_epoch": 0, "group_id": "g"})
    body = conn.request(TXN_OFFSET_COMMIT, version, {
        "transactional_id": "t", "group_id": "g", "producer_id": pid, "producer_epoch": 0, "generation_id": 3,
        "member_id": "someone", "group_instance_id": None,
        "topics": [{"name": "a", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                 "committed_metadata": None}]}]})
    # No such group: a generation it cannot have.
    assert body["topics"][0]["partitions"][0]["error_code"] == E.ILLEGAL_GENERATION


# ---- Produce: KIP-890 partition verification -------------------------------------------------------------

def produce(conn: Connection, version: int, tid: str | None, pid: int, epoch: int, seq: int,
            partition: int = 0) -> dict[str, Any]:
    records = build_batch([NewRecord(value=b"x", timestamp=1)], producer_id=pid, producer_epoch=epoch,
                          base_sequence=seq, transactional=True)
    body = conn.request(0, version, {"transactional_id": tid, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": "a", "partition_data": [{"index": partition, "records": records}]}]})
    [answer] = body["responses"][0]["partition_responses"]
    return answer


@pytest.mark.parametrize("version,not_added", [(9, E.INVALID_TXN_STATE), (10, E.INVALID_TXN_STATE),
                                               (11, E.TRANSACTION_ABORTABLE)])
def test_transactional_produce_to_a_partition_not_in_the_transaction(conn: Connection, topics: None,
                                                                     version: int, not_added: ErrorCode) -> None:
    pid = init(conn, "t")["producer_id"]
    refused = produce(conn, version, "t", pid, 0, 0)
    assert refused["error_code"] == not_added and refused["base_offset"] == -1
    if not_added is E.INVALID_TXN_STATE:
        assert refused["error_message"] == "Partition was not added to the transaction"
    add_partitions(conn, "t", pid, 0, {"a": [0]})
    accepted = produce(conn, version, "t", pid, 0, 0)
    assert accepted["error_code"] == 0 and accepted["base_offset"] == 0  # the refused batch was not written
    assert produce(conn, version, "t", pid, 0, 1)["error_code"] == 0
    # An epoch the coordinator does not know: fenced, which a produce answers as INVALID_PRODUCER_EPOCH.
    assert produce(conn, version, "t", pid, 5, 0, partition=1)["error_code"] == E.INVALID_PRODUCER_EPOCH


@pytest.mark.real_socket
def test_the_markers_are_written_before_the_broker_does_anything_after_answering_end_txn(
        broker: Broker, conn: Connection, topics: None) -> None:
    # The answer goes first (the client never waits on the markers), but nothing else may run between it
    # and the markers: a client's next request on another connection (an OffsetFetch of the offsets the
    # transaction committed) must find the transaction complete.
    for round_number in range(20):
        p = init(conn, "t")
        pid, epoch = p["producer_id"], p["producer_epoch"]
        assert add_partitions(conn, "t", pid, epoch, {"a": [0]}) == {("a", 0): 0}
        produce_direct(broker, "a", 0, pid, epoch, 0)
        assert end_txn(conn, "t", pid, epoch, commit=True) == E.NONE
        # The first thing the broker's thread runs after the answer is out:
        assert state(broker, "t") == TxnState.COMPLETE_COMMIT, f"round {round_number}"
