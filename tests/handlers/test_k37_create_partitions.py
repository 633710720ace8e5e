"""CreatePartitions: every version, the new partitions in Metadata and their logs."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.wire.errors import ErrorCode
from tests.handlers.config_wire import create_topic
from tests.handlers.harness import Broker, Connection

KEY, METADATA = 37, 3


def grow(conn: Connection, version: int, *topics: tuple[str, int, list[list[int]] | None],
         validate_only: bool = False) -> list[dict[str, Any]]:
    body = {"topics": [{"name": name, "count": count,
                        "assignments": None if a is None else [{"broker_ids": ids} for ids in a]}
                       for name, count, a in topics],
            "timeout_ms": 5000, "validate_only": validate_only}
    return conn.request(KEY, version, body)["results"]  # type: ignore[no-any-return]


def metadata_partitions(conn: Connection, name: str) -> list[int]:
    [topic] = conn.request(METADATA, 12, {"topics": [{"name": name}],
                                          "allow_auto_topic_creation": False})["topics"]
    return sorted(p["partition_index"] for p in topic["partitions"])


@pytest.mark.parametrize("version", range(4))
def test_every_version(conn: Connection, broker: Broker, version: int) -> None:
    create_topic(conn, "t")
    [result] = grow(conn, version, ("t", 3, None))
    assert (result["name"], result["error_code"], result["error_message"]) == ("t", 0, None)
    assert metadata_partitions(conn, "t") == [0, 1, 2]
    assert broker.broker.partition("t", 2) is not None


@pytest.mark.real_socket
def test_assignment_validate_only_and_errors(conn: Connection) -> None:
    create_topic(conn, "t", 2)
    assert grow(conn, 3, ("t", 3, [[1]]), validate_only=True)[0]["error_code"] == 0
    assert metadata_partitions(conn, "t") == [0, 1]
    results = grow(conn, 3, ("t", 2, None), ("missing", 2, None), ("t2", 2, None), ("t2", 3, None))
    assert [(r["name"], r["error_code"], r["error_message"]) for r in results] == [
        ("t2", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("t", ErrorCode.INVALID_PARTITIONS, "Topic already has 2 partition(s)."),
        ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)]
    [shrink] = grow(conn, 0, ("t", 1, None))
    assert (shrink["error_code"], shrink["error_message"]) == (
        ErrorCode.INVALID_PARTITIONS, "The topic t currently has 2 partition(s); 1 would not be an increase.")
    [bad] = grow(conn, 1, ("t", 3, [[5]]))
    assert (bad["error_code"], bad["error_message"]) == (
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes broker 5, but no such broker is registered.")
    assert grow(conn, 2, ("t", 3, [[1]]))[0]["error_code"] == 0
    assert metadata_partitions(conn, "t") == [0, 1, 2]


def test_a_count_of_two_to_the_31_is_answered_at_once_and_the_broker_serves_on(conn: Connection) -> None:
    create_topic(conn, "t")
    [result] = grow(conn, 2, ("t", 2**31 - 1, None))
    assert result["error_code"] == ErrorCode.UNKNOWN_SERVER_ERROR
    assert metadata_partitions(conn, "t") == [0]
    assert conn.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})["error_code"] == 0


def test_topics_go_to_the_controller_in_the_order_of_javas_hash_set(conn: Connection) -> None:
    # ControllerApis hands the controller the names in its HashSet's order ("a" before "b"), which decides
    # the topic that overflows the request's 10000 records, and lists the results so.
    create_topic(conn, "a")
    create_topic(conn, "b")
    results = grow(conn, 3, ("b", 6_001, None), ("a", 6_001, None), validate_only=True)
    assert [(r["name"], r["error_code"]) for r in results] == [("a", 0), ("b", ErrorCode.UNKNOWN_SERVER_ERROR)]


def test_more_than_ten_thousand_topics_fail_the_whole_request(conn: Connection) -> None:
    # The controller's list of per-topic results is bounded too, and its overflow escapes the per-topic
    # catch: every entry of the request (both of a name given twice) POLICY_VIOLATION (Kafka 4.3.1, probed).
    # A name given twice is not handed to the controller: 10001 others are too many, 10000 are not.
    missing = [(f"m{index}", 2, None) for index in range(10_002)]
    results = grow(conn, 3, *missing, missing[0], validate_only=True)
    assert len(results) == 10_003
    assert {(r["error_code"], r["error_message"]) for r in results} == {
        (ErrorCode.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")}
    results = grow(conn, 3, *missing[2:], missing[0], missing[0], validate_only=True)
    assert len(results) == 10_001
    assert {r["error_code"] for r in results} == {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_REQUEST}
