"""CreateTopics: every version, Kafka's errors and messages, configs echoed in v5+."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.handlers.harness import Broker, Connection

KEY = 19
ZERO = uuid.UUID(int=0)


def topic(name: str, partitions: int = 1, factor: int = 1, **extra: Any) -> dict[str, Any]:
    return {"name": name, "num_partitions": partitions, "replication_factor": factor, **extra}


@pytest.mark.parametrize("version", range(2, 8))
def test_create_every_version(broker: Broker, conn: Connection, version: int) -> None:
    body = conn.request(KEY, version, {"topics": [topic("t", 3)], "timeout_ms": 1000})
    [result] = body["topics"]
    assert (result["name"], result["error_code"]) == ("t", 0)
    assert result["error_message"] is None
    created = broker.broker.topics.get("t")
    assert created is not None and len(created.partitions) == 3
    assert result["topic_id"] == (created.topic_id if version >= 7 else ZERO)
    if version >= 5:
        assert (result["num_partitions"], result["replication_factor"]) == (3, 1)
        configs = {c["name"]: c for c in result["configs"]}
        assert configs["cleanup.policy"] == {"name": "cleanup.policy", "value": "delete", "read_only": False,
                                             "config_source": 5, "is_sensitive": False}
        assert [c["name"] for c in result["configs"]] == sorted(configs)


@pytest.mark.parametrize("version", range(4, 8))
def test_defaults_with_minus_one(broker: Broker, conn: Connection, version: int) -> None:
    [result] = conn.request(KEY, version, {"topics": [topic("t", -1, -1)]})["topics"]
    assert result["error_code"] == 0
    assert len(broker.broker.topics.get("t").partitions) == 1  # type: ignore[union-attr]


@pytest.mark.parametrize("version", range(2, 8))
def test_validate_only(broker: Broker, conn: Connection, version: int) -> None:
    [result] = conn.request(KEY, version, {"topics": [topic("t", 2)], "validate_only": True})["topics"]
    assert result["error_code"] == 0
    assert "t" not in broker.broker.topics


@pytest.mark.real_socket
def test_configs_set_and_echoed(broker: Broker, conn: Connection) -> None:
    wanted = topic("t", configs=[{"name": "cleanup.policy", "value": "compact"},
                                 {"name": "retention.ms", "value": "1000"}])
    [result] = conn.request(KEY, 7, {"topics": [wanted]})["topics"]
    configs = {c["name"]: (c["value"], c["config_source"]) for c in result["configs"]}
    assert configs["cleanup.policy"] == ("compact", 1) and configs["retention.ms"] == ("1000", 1)
    assert configs["segment.bytes"] == ("1073741824", 5)
    assert broker.broker.topics.get("t").configs == {  # type: ignore[union-attr]
        "cleanup.policy": "compact", "retention.ms": "1000"}


@pytest.mark.parametrize(("wanted", "code", "message"), [
    (topic("t", 1, 3), 38, "Unable to replicate the partition 3 time(s): The target replication factor of 3 "
                           "cannot be reached because only 1 broker(s) are registered or some brokers have all "
                           "their log directories cordoned."),
    (topic("t", 0, 1), 37, "Number of partitions was set to an invalid non-positive value."),
    (topic("t", 1, 0), 38, "Replication factor must be larger than 0, or -1 to use the default value."),
    (topic("bad name"), 17, "Topic name is invalid: 'bad name' contains one or more characters other than "
                            "ASCII alphanumerics, '.', '_' and '-'"),
    (topic("."), 17, "Topic name is invalid: '.' is not allowed"),
    (topic("x" * 250), 17,
     "Topic name is invalid: the length of '" + "x" * 250 + "' is longer than the max allowed length 249"),
    (topic("t", configs=[{"name": "bogus", "value": "1"}]), 40, "Unknown topic config name: bogus"),
    (topic("t", configs=[{"name": "retention.ms", "value": None}]), 40,
     "Null value not supported for topic configs: retention.ms"),
    (topic("t", -1, -1, assignments=[{"partition_index": 0, "broker_ids": [2]}]), 39,
     "The manual partition assignment includes broker 2, but no such broker is registered."),
])
@pytest.mark.parametrize("version", [2, 4, 5, 7])
def test_errors(broker: Broker, conn: Connection, wanted: dict[str, Any], code: int, message: str,
                version: int) -> None:
    [result] = conn.request(KEY, version, {"topics": [wanted]})["topics"]
    assert (result["error_code"], result["error_message"]) == (code, message)
    assert result["topic_id"] == ZERO
    if version >= 5:
        assert (result["num_partitions"], result["replication_factor"], result["configs"]) == (-1, -1, [])
    assert len(broker.broker.topics) == 0


def test_already_exists(conn: Connection) -> None:
    conn.request(KEY, 7, {"topics": [topic("t")]})
    [result] = conn.request(KEY, 7, {"topics": [topic("t")]})["topics"]
    assert (result["error_code"], result["error_message"]) == (36, "Topic 't' already exists.")


def test_manual_assignment(broker: Broker, conn: Connection) -> None:
    wanted = topic("t", -1, -1, assignments=[{"partition_index": 0, "broker_ids": [1]},
                                             {"partition_index": 1, "broker_ids": [1]}])
    [result] = conn.request(KEY, 6, {"topics": [wanted]})["topics"]
    assert (result["error_code"], result["num_partitions"], result["replication_factor"]) == (0, 2, 1)


def test_mixed_request(broker: Broker, conn: Connection) -> None:
    body = conn.request(KEY, 7, {"topics": [topic("ok"), topic("dup"), topic("bad", 1, 2), topic("dup")]})
    assert [(r["name"], r["error_code"]) for r in body["topics"]] == [("ok", 0), ("bad", 38), ("dup", 42)]
    assert [t.name for t in broker.broker.topics] == ["ok"]


TOO_MANY_RECORDS = "Unable to perform excessively large batch operation."


def answers(body: dict[str, Any]) -> list[tuple[str, int, str | None]]:
    return [(r["name"], r["error_code"], r["error_message"]) for r in body["topics"]]


@pytest.mark.parametrize("validate_only", [False, True])
def test_a_topic_past_the_controllers_record_limit_is_refused(broker: Broker, conn: Connection,
                                                              validate_only: bool) -> None:
    # 10000 partitions are allowed by partition count, but with its TopicRecord the topic is 10001 records.
    body = conn.request(KEY, 7, {"topics": [topic("a", 10_000)], "validate_only": validate_only})
    assert answers(body) == [("a", 44, TOO_MANY_RECORDS)]
    assert len(broker.broker.topics) == 0 and not broker.broker.creating


def test_a_topic_of_exactly_the_record_limit_is_accepted(conn: Connection) -> None:
    body = conn.request(KEY, 7, {"topics": [topic("a", 9_999)], "validate_only": True})
    assert answers(body) == [("a", 0, None)]
    assert body["topics"][0]["num_partitions"] == 9_999


def test_the_limit_counts_the_whole_request_and_fails_all_of_it(broker: Broker, conn: Connection) -> None:
    # Each alone fits; together 10002 records. The duplicate pair is answered with the rest (getErrorResponse
    # echoes every topic the request names), not as INVALID_REQUEST.
    body = conn.request(KEY, 4, {"topics": [topic("a", 9_999), topic("b"), topic("d"), topic("d")]})
    assert answers(body) == [("a", 44, TOO_MANY_RECORDS), ("b", 44, TOO_MANY_RECORDS),
                             ("d", 44, TOO_MANY_RECORDS), ("d", 44, TOO_MANY_RECORDS)]
    assert len(broker.broker.topics) == 0 and not broker.broker.creating


def test_refused_topics_write_no_records(conn: Connection) -> None:
    # 9999 records of "a"; the two refused topics would be two more each (10000 partitions in all: allowed).
    conn.request(KEY, 7, {"topics": [topic("exists")]})
    body = conn.request(KEY, 7, {"topics": [
        topic("a", 9_998), topic("exists"), topic("bad", configs=[{"name": "cleanup.policy", "value": "bogus"}]),
        topic("twice"), topic("twice")], "validate_only": True})
    assert [(name, code) for name, code, _ in answers(body)] == [("a", 0), ("exists", 36), ("bad", 40),
                                                                 ("twice", 42)]


def config(name: str, value: str) -> dict[str, str]:
    return {"name": name, "value": value}


@pytest.mark.parametrize(("partitions", "configs", "code"), [
    (9_998, [config("retention.ms", "1000")], 0),  # one ConfigRecord
    (9_998, [config("retention.ms", "1000"), config("retention.ms", "2000")], 0),  # one key, one record
    (9_998, [config("min.insync.replicas", "1")], 44),  # its ConfigRecord and a ClearElrRecord
    (9_997, [config("min.insync.replicas", "1")], 0),
])
def test_config_records_count(conn: Connection, partitions: int, configs: list[dict[str, str]], code: int) -> None:
    body = conn.request(KEY, 7, {"topics": [topic("a", partitions, configs=configs)], "validate_only": True})
    assert body["topics"][0]["error_code"] == code


def test_too_many_partitions_fails_every_topic(broker: Broker, conn: Connection) -> None:
    body = conn.request(KEY, 7, {"topics": [topic("a", 10_000), topic("b", 1)]})
    assert [(r["name"], r["error_code"], r["error_message"]) for r in body["topics"]] == [
        ("a", 44, "Excessively large number of partitions per request."),
        ("b", 44, "Excessively large number of partitions per request.")]
    assert len(broker.broker.topics) == 0
