"""DescribeProducers, DescribeTransactions and ListTransactions (KIP-664, KIP-994, KIP-1152)."""

from __future__ import annotations

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch
from tests.handlers.harness import Broker, Connection
from tests.handlers.test_k22_k28_transactions import add_partitions, end_txn, init, settle

E = ErrorCode
DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 61, 65, 66


@pytest.fixture
def topics(broker: Broker) -> None:
    broker.call(lambda: create_topics(broker.broker, [NewTopic("a", 2, 1)]))


def append(broker: Broker, pid: int, epoch: int, seq: int, n: int, transactional: bool, ts: int) -> None:
    def run() -> None:
        plog = broker.broker.partition("a", 0)
        assert plog is not None
        plog.append(build_batch([NewRecord(value=b"x", timestamp=ts)] * n, producer_id=pid, producer_epoch=epoch,
                                base_sequence=seq, transactional=transactional))
    broker.call(run)


def test_describe_producers(broker: Broker, conn: Connection, topics: None) -> None:
    append(broker, 5, 0, 0, 3, False, 1000)       # idempotent: offsets 0-2, last sequence 2
    append(broker, 9, 2, 0, 2, True, 2000)        # transactional, open: first offset 3
    body = conn.request(DESCRIBE_PRODUCERS, 0, {"topics": [
        {"name": "a", "partition_indexes": [0, 1, 7]}, {"name": "nope", "partition_indexes": [0]},
        {"name": "bad name!", "partition_indexes": [0]}]})
    a, nope, bad = body["topics"]
    p0, p1, p7 = a["partitions"]
    producers = {p["producer_id"]: p for p in p0["active_producers"]}
    assert producers[5] == {"producer_id": 5, "producer_epoch": 0, "last_sequence": 2, "last_timestamp": 1000,
                            "coordinator_epoch": -1, "current_txn_start_offset": -1}
    assert producers[9]["current_txn_start_offset"] == 3 and producers[9]["producer_epoch"] == 2
    assert (p1["error_code"], p1["active_producers"]) == (0, [])
    assert p7["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert nope["partitions"][0]["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert bad["partitions"][0]["error_code"] == E.INVALID_TOPIC_EXCEPTION
    assert bad["partitions"][0]["error_message"] == (
        "Topic name is invalid: 'bad name!' contains one or more characters other than ASCII alphanumerics, "
        "'.', '_' and '-'")
    assert nope["partitions"][0]["error_message"] == "This server does not host this topic-partition."
    assert p7["error_message"] is None


@pytest.mark.real_socket
def test_describe_transactions(broker: Broker, conn: Connection, topics: None) -> None:
    p = init(conn, "t", timeout_ms=12345)
    add_partitions(conn, "t", p["producer_id"], 0, {"a": [1, 0]})
    init(conn, "idle")
    body = conn.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["t", "idle", "nope", ""]})
    t, idle, nope, empty = body["transaction_states"]
    assert t["error_code"] == 0 and t["transaction_state"] == "Ongoing"
    assert (t["transaction_timeout_ms"], t["producer_id"], t["producer_epoch"]) == (12345, p["producer_id"], 0)
    assert t["transaction_start_time_ms"] > 0 and t["topics"] == [{"topic": "a", "partitions": [0, 1]}]
    assert (idle["transaction_state"], idle["transaction_start_time_ms"], idle["topics"]) == ("Empty", -1, [])
    assert (nope["error_code"], nope["transactional_id"], nope["transaction_state"]) == (
        E.TRANSACTIONAL_ID_NOT_FOUND, "nope", "")
    assert empty["error_code"] == E.INVALID_REQUEST


@pytest.mark.parametrize("version", [0, 1, 2])
def test_list_transactions_filters(broker: Broker, conn: Connection, topics: None, version: int) -> None:
    a = init(conn, "a")
    add_partitions(conn, "a", a["producer_id"], 0, {"a": [0]})
    b = init(conn, "b")
    add_partitions(conn, "b", b["producer_id"], 0, {"a": [1]})
    end_txn(conn, "b", b["producer_id"], 0, commit=True)
    settle(broker)
    init(conn, "c")

    def listed(states: tuple[str, ...] = (), pids: tuple[int, ...] = (), duration: int = -1,
               pattern: str | None = None) -> tuple[dict[str, str], list[str]]:
        body = conn.request(LIST_TRANSACTIONS, version, {"state_filters": list(states),
                                                         "producer_id_filters": list(pids),
                                                         "duration_filter": duration,
                                                         "transactional_id_pattern": pattern})
        assert body["error_code"] == 0
        return ({t["transactional_id"]: t["transaction_state"] for t in body["transaction_states"]},
                body["unknown_state_filters"])

    assert listed() == ({"a": "Ongoing", "b": "CompleteCommit", "c": "Empty"}, [])
    assert listed(states=("Ongoing", "Empty")) == ({"a": "Ongoing", "c": "Empty"}, [])
    assert listed(states=("Bogus",)) == ({}, ["Bogus"])
    assert listed(pids=(b["producer_id"],)) == ({"b": "CompleteCommit"}, [])
    if version >= 1:
        # Longer than a day: only the id that never started a transaction (start -1), as in Kafka.
        assert listed(duration=86_400_000) == ({"c": "Empty"}, [])
    if version >= 2:
        # KIP-1152: the whole id must match; null or "" filters nothing; it combines with the other filters.
        assert listed(pattern="[ab]") == ({"a": "Ongoing", "b": "CompleteCommit"}, [])
        assert listed(pattern="a|c", states=("Empty",)) == ({"c": "Empty"}, [])
        assert listed(pattern="") == listed(pattern=None) == listed()
        assert listed(pattern="b.")[0] == {}
    else:
        assert listed(pattern="a") == listed()  # the field is v2's: an older request carries no pattern


@pytest.mark.parametrize("pattern", ["((", "[z-a]", "(?=a)", "a\\"])
def test_list_transactions_with_a_bad_pattern_fails_whole(broker: Broker, conn: Connection, topics: None,
                                                          pattern: str) -> None:
    init(conn, "a")
    body = conn.request(LIST_TRANSACTIONS, 2, {"state_filters": ["Bogus"], "producer_id_filters": [],
                                               "duration_filter": -1, "transactional_id_pattern": pattern})
    assert (body["error_code"], body["unknown_state_filters"], body["transaction_states"]) == (
        E.INVALID_REGULAR_EXPRESSION, [], [])
