"""DescribeConfigs: every version, each resource type, Kafka's errors."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.wire.errors import ErrorCode
from tests.handlers.config_wire import create_topic
from tests.handlers.harness import Broker, Connection

KEY, INCREMENTAL_ALTER = 32, 44
TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8


def resource(kind: int, name: str, keys: list[str] | None = None) -> dict[str, Any]:
    return {"resource_type": kind, "resource_name": name, "configuration_keys": keys}


def describe(conn: Connection, version: int, *resources: dict[str, Any], synonyms: bool = False,
             documentation: bool = False) -> list[dict[str, Any]]:
    body = {"resources": list(resources), "include_synonyms": synonyms, "include_documentation": documentation}
    return conn.request(KEY, version, body)["results"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("version", range(1, 5))
def test_topic_every_version(conn: Connection, version: int) -> None:
    create_topic(conn, "t", configs={"retention.ms": "1000"})
    [result] = describe(conn, version, resource(TOPIC, "t"), synonyms=True, documentation=True)
    assert (result["error_code"], result["resource_type"], result["resource_name"]) == (0, TOPIC, "t")
    configs = {c["name"]: c for c in result["configs"]}
    assert len(configs) == 33 and list(configs) == sorted(configs)
    retention, policy = configs["retention.ms"], configs["cleanup.policy"]
    assert (retention["value"], retention["read_only"], retention["is_sensitive"]) == ("1000", False, False)
    assert policy["value"] == "delete"
    assert (retention["config_source"], policy["config_source"]) == (1, 5)
    assert retention["synonyms"] == [{"name": "retention.ms", "value": "1000", "source": 1}]
    assert policy["synonyms"] == [{"name": "log.cleanup.policy", "value": "delete", "source": 5}]
    if version >= 3:
        assert (retention["config_type"], policy["config_type"]) == (5, 7)  # LONG, LIST
        assert retention["documentation"]
    else:
        assert retention["config_type"] == 0 and retention["documentation"] == ""  # absent: the decoder's default


def test_without_synonyms_or_documentation(conn: Connection) -> None:
    create_topic(conn, "t")
    [result] = describe(conn, 4, resource(TOPIC, "t", ["segment.bytes", "max.message.bytes", "no.such"]))
    assert result["configs"] == [
        {"name": "max.message.bytes", "value": "1048588", "read_only": False, "is_default": False,
         "config_source": 5, "is_sensitive": False, "synonyms": [], "config_type": 3, "documentation": None},
        {"name": "segment.bytes", "value": "1073741824", "read_only": False, "is_default": False,
         "config_source": 5, "is_sensitive": False, "synonyms": [], "config_type": 3, "documentation": None},
    ]


def test_topic_errors(conn: Connection) -> None:
    missing, illegal = describe(conn, 4, resource(TOPIC, "missing"), resource(TOPIC, "bad name"))
    assert (missing["error_code"], missing["error_message"], missing["configs"]) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "", [])
    assert illegal["error_code"] == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert illegal["error_message"].startswith("Topic name is invalid: 'bad name' contains")


@pytest.mark.real_socket
def test_broker_resource(conn: Connection, broker: Broker) -> None:
    body = {"resources": [{"resource_type": BROKER, "resource_name": "", "configs": [
        {"name": "log.retention.ms", "config_operation": 0, "value": "5000"}]}], "validate_only": False}
    assert conn.request(INCREMENTAL_ALTER, 1, body)["responses"][0]["error_code"] == 0
    node, default = describe(conn, 4, resource(BROKER, "1"), resource(BROKER, ""), synonyms=True)
    configs = {c["name"]: c for c in node["configs"]}
    assert configs["log.retention.ms"]["value"] == "5000" and configs["log.retention.ms"]["config_source"] == 3
    assert configs["log.retention.hours"]["read_only"] is True
    assert configs["listeners"]["value"] == f"PLAINTEXT://127.0.0.1:{broker.port}"
    assert configs["listeners"]["config_source"] == 4
    assert configs["num.partitions"] == {
        "name": "num.partitions", "value": "1", "read_only": True, "is_default": False, "config_source": 5,
        "is_sensitive": False,
        "synonyms": [{"name": "num.partitions", "value": "1", "source": 5}], "config_type": 3, "documentation": None}
    assert [c["name"] for c in default["configs"]] == ["log.retention.ms", "min.insync.replicas"]


def test_topic_inherits_the_dynamic_default(conn: Connection) -> None:
    create_topic(conn, "t")
    body = {"resources": [{"resource_type": BROKER, "resource_name": "1", "configs": [
        {"name": "message.max.bytes", "config_operation": 0, "value": "2000"}]}], "validate_only": False}
    assert conn.request(INCREMENTAL_ALTER, 1, body)["responses"][0]["error_code"] == 0
    [result] = describe(conn, 2, resource(TOPIC, "t", ["max.message.bytes"]), synonyms=True)
    # v2 carries neither config_type nor documentation: the decoder fills in their defaults.
    assert result["configs"] == [{"name": "max.message.bytes", "value": "2000", "read_only": False,
                                  "is_default": False, "config_source": 2, "is_sensitive": False, "synonyms": [
                                      {"name": "message.max.bytes", "value": "2000", "source": 2},
                                      {"name": "message.max.bytes", "value": "1048588", "source": 5}],
                                  "config_type": 0, "documentation": ""}]


@pytest.mark.parametrize(("kind", "name", "message"), [
    (BROKER, "2", "Unexpected broker id, expected 1 or empty string, but received 2"),
    (BROKER, "x", "Broker id must be an integer, but it is: x"),
    (BROKER_LOGGER, "", "Broker id must not be empty"),
    (BROKER_LOGGER, "2", "Unexpected broker id, expected 1 but received 2"),
    (16, "", "Client metrics subscription name must not be empty"),
])
def test_resource_errors(conn: Connection, kind: int, name: str, message: str) -> None:
    create_topic(conn, "t")
    bad, good = describe(conn, 4, resource(kind, name), resource(TOPIC, "t", ["retention.ms"]))
    assert (bad["error_code"], bad["error_message"], bad["configs"]) == (ErrorCode.INVALID_REQUEST, message, [])
    assert good["error_code"] == 0 and len(good["configs"]) == 1


def test_broker_logger(conn: Connection) -> None:
    [result] = describe(conn, 4, resource(BROKER_LOGGER, "1"))
    loggers = {c["name"]: c for c in result["configs"]}
    assert "root" in loggers and any(name.startswith("kemu.") for name in loggers)
    assert {c["config_source"] for c in loggers.values()} == {6}
    assert loggers["root"]["value"] in {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}


@pytest.mark.parametrize("version", [1, 4])
def test_unknown_resource_type_fails_the_whole_request(conn: Connection, version: int) -> None:
    results = describe(conn, version, resource(TOPIC, "t"), resource(99, "x"))
    assert [(r["resource_type"], r["error_code"], r["error_message"]) for r in results] == [
        (TOPIC, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST.message),
        (99, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST.message)]
