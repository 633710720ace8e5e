"""Requests whose client-chosen numbers or strings would make the broker work or allocate without bound get
Kafka's answer at once, and the broker serves on (issue 16's audit)."""

from __future__ import annotations

import pytest

from kemu.admin.topics import ZERO_UUID
from kemu.wire import records
from kemu.wire.compression import CompressionType
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch
from tests.handlers.config_wire import CREATE_TOPICS, create_topic
from tests.handlers.data_plane import produce
from tests.handlers.harness import Broker, Connection
from tests.handlers.test_k37_create_partitions import grow, metadata_partitions


def still_serving(conn: Connection) -> None:
    assert conn.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})["error_code"] == 0


def create_with_config(conn: Connection, name: str, value: str) -> dict[str, object]:
    body = {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                        "configs": [{"name": name, "value": value}]}], "timeout_ms": 5000, "validate_only": True}
    [result] = conn.request(CREATE_TOPICS, 7, body)["topics"]
    return dict(result)


@pytest.mark.parametrize(("name", "kind"), [("min.cleanable.dirty.ratio", "DOUBLE"), ("retention.ms", "LONG"),
                                            ("max.message.bytes", "INT")])
def test_a_twenty_thousand_digit_config_value_is_not_a_number_at_once(conn: Connection, name: str,
                                                                       kind: str) -> None:
    # The DOUBLE pattern backtracked quadratically on a long run of digits (seconds of the broker's only
    # thread for 20,000 of them), and int() of more than 4300 digits raised ValueError: UNKNOWN_SERVER_ERROR.
    for value in ("1" * 20_000 + "x", "9" * 5_000 if kind != "DOUBLE" else "1" * 20_000 + "e"):
        result = create_with_config(conn, name, value)
        assert result["error_code"] == ErrorCode.INVALID_CONFIG
        assert str(result["error_message"]).endswith(f"for configuration {name}: Not a number of type {kind}")
    still_serving(conn)


def test_a_long_run_of_digits_that_is_a_number_still_parses(conn: Connection) -> None:
    assert create_with_config(conn, "retention.ms", "0" * 5_000 + "60000")["error_code"] == 0
    assert create_with_config(conn, "min.cleanable.dirty.ratio", "0." + "5" * 5_000)["error_code"] == 0


def test_create_partitions_of_two_to_the_31_gets_kafkas_answer(conn: Connection) -> None:
    # Kafka's placer sizes a list for every requested partition (`new ArrayList<>(count)`): the JVM's
    # OutOfMemoryError reaches the controller's event handler as an unexpected fault, answered as
    # UNKNOWN_SERVER_ERROR without a message (ApiError never carries one for it), and nothing is added.
    create_topic(conn, "t")
    [result] = grow(conn, 3, ("t", 2**31 - 1, None))
    assert (result["error_code"], result["error_message"]) == (ErrorCode.UNKNOWN_SERVER_ERROR, None)
    assert metadata_partitions(conn, "t") == [0]
    still_serving(conn)


def test_a_decompression_bomb_on_a_compacted_topic_is_message_too_large(
        conn: Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    # A compacted topic's batches are decoded record by record (keys are checked): the bomb stops at the limit.
    monkeypatch.setattr(records, "MAX_DECOMPRESSED_BATCH_BYTES", 1024 * 1024)
    create_topic(conn, "c", configs={"cleanup.policy": "compact"})
    bomb = build_batch([NewRecord(bytes(16 * 1024 * 1024), key=b"k")], compression=CompressionType.ZSTD)
    assert produce(conn, "c", bomb)["error_code"] == ErrorCode.MESSAGE_TOO_LARGE
    honest = build_batch([NewRecord(b"v", key=b"k")], compression=CompressionType.ZSTD)
    assert produce(conn, "c", honest)["error_code"] == ErrorCode.NONE
    still_serving(conn)


def test_a_six_thousand_digit_broker_id_is_not_an_integer(conn: Connection) -> None:
    # Integer.parseInt refuses it; Python's int() raised ValueError past 4300 digits (UNKNOWN_SERVER_ERROR).
    name = "9" * 6_000
    body = {"resources": [{"resource_type": 4, "resource_name": name, "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False}
    [result] = conn.request(32, 4, body)["results"]
    assert (result["error_code"], result["error_message"]) == (
        ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}")
    still_serving(conn)


def test_metadata_auto_creating_more_than_ten_thousand_partitions_creates_none(conn: Connection,
                                                                              broker: Broker) -> None:
    # Kafka sends one request's missing topics to the controller as one CreateTopics: past 10,000 partitions
    # it is a POLICY_VIOLATION (logged), and Metadata still answers UNKNOWN_TOPIC_OR_PARTITION for each.
    body = {"topics": [{"name": f"auto-{i}", "topic_id": ZERO_UUID} for i in range(10_001)],
            "allow_auto_topic_creation": True, "include_topic_authorized_operations": False}
    topics = conn.request(3, 12, body)["topics"]
    assert {t["error_code"] for t in topics} == {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION} and len(topics) == 10_001
    assert not [topic for topic in broker.broker.topics if topic.name.startswith("auto-")]
    still_serving(conn)


def test_twenty_thousand_duplicate_names_are_answered_in_one_pass(conn: Connection) -> None:
    # The duplicate check was names.count(name) per name: quadratic in a client's topic count.
    body = {"topics": [{"name": f"d{i // 2}", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                        "configs": []} for i in range(20_000)], "timeout_ms": 5000, "validate_only": True}
    results = conn.request(CREATE_TOPICS, 7, body)["topics"]
    assert len(results) == 10_000
    assert {(r["error_code"], r["error_message"]) for r in results} == {
        (ErrorCode.INVALID_REQUEST, "Duplicate topic name.")}
