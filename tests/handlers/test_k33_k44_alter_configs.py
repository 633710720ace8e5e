"""AlterConfigs and IncrementalAlterConfigs: every version, the change seen by DescribeConfigs and by the
partition log, and per-resource errors."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.wire.errors import ErrorCode
from tests.handlers.config_wire import create_topic
from tests.handlers.harness import Broker, Connection

ALTER, INCREMENTAL, DESCRIBE = 33, 44, 32
TOPIC, BROKER = 2, 4


def legacy(conn: Connection, version: int, name: str, configs: dict[str, str | None], kind: int = TOPIC,
           validate_only: bool = False) -> dict[str, Any]:
    body = {"resources": [{"resource_type": kind, "resource_name": name,
                           "configs": [{"name": k, "value": v} for k, v in configs.items()]}],
            "validate_only": validate_only}
    [response] = conn.request(ALTER, version, body)["responses"]
    return response  # type: ignore[no-any-return]


def incremental(conn: Connection, version: int, name: str, *ops: tuple[str, int, str | None], kind: int = TOPIC,
                validate_only: bool = False) -> dict[str, Any]:
    body = {"resources": [{"resource_type": kind, "resource_name": name,
                           "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in ops]}],
            "validate_only": validate_only}
    [response] = conn.request(INCREMENTAL, version, body)["responses"]
    return response  # type: ignore[no-any-return]


def described(conn: Connection, name: str, *keys: str) -> dict[str, tuple[str, int]]:
    body = {"resources": [{"resource_type": TOPIC, "resource_name": name, "configuration_keys": list(keys)}]}
    [result] = conn.request(DESCRIBE, 4, body)["results"]
    return {c["name"]: (c["value"], c["config_source"]) for c in result["configs"]}


def log_config(broker: Broker, name: str = "t"):  # type: ignore[no-untyped-def]
    found = broker.broker.partition(name, 0)
    assert found is not None
    return found.log.config


@pytest.mark.parametrize("version", range(3))
def test_legacy_every_version(conn: Connection, broker: Broker, version: int) -> None:
    create_topic(conn, "t", configs={"retention.ms": "1000"})
    response = legacy(conn, version, "t", {"max.message.bytes": "2000"})
    assert (response["error_code"], response["error_message"], response["resource_name"]) == (0, None, "t")
    assert described(conn, "t", "retention.ms", "max.message.bytes") == {
        "max.message.bytes": ("2000", 1), "retention.ms": ("604800000", 5)}
    assert (log_config(broker).max_message_bytes, log_config(broker).retention_ms) == (2000, 604_800_000)


@pytest.mark.parametrize("version", range(2))
def test_incremental_every_version(conn: Connection, broker: Broker, version: int) -> None:
    create_topic(conn, "t", configs={"retention.ms": "1000"})
    response = incremental(conn, version, "t", ("max.message.bytes", 0, "2000"), ("cleanup.policy", 2, "compact"))
    assert (response["error_code"], response["error_message"]) == (0, None)
    assert described(conn, "t", "retention.ms", "max.message.bytes", "cleanup.policy") == {
        "cleanup.policy": ("delete,compact", 1), "max.message.bytes": ("2000", 1), "retention.ms": ("1000", 1)}
    assert log_config(broker).compact and log_config(broker).delete
    assert incremental(conn, version, "t", ("retention.ms", 1, None))["error_code"] == 0
    assert described(conn, "t", "retention.ms") == {"retention.ms": ("604800000", 5)}


@pytest.mark.real_socket
def test_validate_only(conn: Connection, broker: Broker) -> None:
    create_topic(conn, "t")
    assert incremental(conn, 1, "t", ("retention.ms", 0, "5"), validate_only=True)["error_code"] == 0
    assert legacy(conn, 2, "t", {"retention.ms": "5"}, validate_only=True)["error_code"] == 0
    assert described(conn, "t", "retention.ms") == {"retention.ms": ("604800000", 5)}


@pytest.mark.parametrize(("ops", "code", "message"), [
    ((("retention.ms", 2, "1"),), ErrorCode.INVALID_CONFIG,
     "Can't APPEND to key retention.ms because its type is not LIST."),
    ((("bogus", 0, "1"),), ErrorCode.INVALID_CONFIG, "Unknown topic config name: bogus"),
    ((("segment.bytes", 0, "1"),), ErrorCode.INVALID_CONFIG,
     "Invalid value 1 for configuration segment.bytes: Value must be at least 1048576"),
    ((("retention.ms", 0, None),), ErrorCode.INVALID_REQUEST, "Null value not supported for : retention.ms"),
])
def test_incremental_errors(conn: Connection, ops: tuple[tuple[str, int, str | None], ...], code: ErrorCode,
                            message: str) -> None:
    create_topic(conn, "t")
    response = incremental(conn, 1, "t", *ops)
    assert (response["error_code"], response["error_message"]) == (code, message)


def test_unknown_topic(conn: Connection) -> None:
    response = legacy(conn, 0, "missing", {"retention.ms": "1"})
    assert (response["error_code"], response["error_message"]) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                                  "The topic 'missing' does not exist.")


def test_broker_default_applies_to_topics_without_overrides(conn: Connection, broker: Broker) -> None:
    create_topic(conn, "t")
    create_topic(conn, "u", configs={"retention.ms": "1000"})
    assert incremental(conn, 1, "", ("log.retention.ms", 0, "5000"), kind=BROKER)["error_code"] == 0
    assert (log_config(broker, "t").retention_ms, log_config(broker, "u").retention_ms) == (5000, 1000)
    assert described(conn, "t", "retention.ms") == {"retention.ms": ("5000", 3)}
    refused = legacy(conn, 1, "1", {"log.dirs": "/elsewhere"}, kind=BROKER)
    assert (refused["error_code"], refused["error_message"]) == (
        ErrorCode.INVALID_REQUEST, "Cannot update these configs dynamically: [log.dirs]")
