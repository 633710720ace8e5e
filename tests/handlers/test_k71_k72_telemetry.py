"""Client telemetry (KIP-714): GetTelemetrySubscriptions and PushTelemetry over CLIENT_METRICS subscriptions, as
Kafka's ClientMetricsManager answers them, on a virtual clock; ApiVersions lists keys 71 and 72 only with the
receiver (`kemu.client.telemetry.enable`); the subscriptions as config resources."""

from __future__ import annotations

import gzip
import uuid
from typing import Any, Protocol

import pytest

from compat_tests.polling import wait_for
from kemu.broker.client_metrics import java_host_address, subscription_id
from kemu.clock import VirtualClock
from kemu.hashing import java_hash_set_order
from kemu.wire.compression import CompressionType, compress
from kemu.wire.errors import ErrorCode
from kemu.wire.schema import ZERO_UUID
from tests.handlers.harness import MakeBroker, broker_config

GET, PUSH, API_VERSIONS, DESCRIBE_CONFIGS, ALTER, LIST_RESOURCES = 71, 72, 18, 32, 44, 74
CLIENT_METRICS = 16
PRODUCER = "org.apache.kafka.producer."
INSTANCE = uuid.UUID("5e2b1c74-0000-4000-8000-000000000001")


class Requester(Protocol):
    """An in-process connection or a real socket's (KafkaSocket): what sends a request."""

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]: ...


def subscribe(conn: Requester, name: str, **values: str) -> dict[str, Any]:
    body = {"resources": [{"resource_type": CLIENT_METRICS, "resource_name": name,
                           "configs": [{"name": key.replace("_", "."), "config_operation": 0, "value": value}
                                       for key, value in values.items()]}], "validate_only": False}
    [response] = conn.request(ALTER, 1, body)["responses"]
    return dict(response)


def get(conn: Requester, instance: uuid.UUID = INSTANCE) -> dict[str, Any]:
    return conn.request(GET, 0, {"client_instance_id": instance})


def push(conn: Requester, subscription: int, metrics: bytes = b"\x0a\x00", *, compression: int = 0,
         terminating: bool = False, instance: uuid.UUID = INSTANCE) -> int:
    body = conn.request(PUSH, 0, {"client_instance_id": instance, "subscription_id": subscription,
                                  "terminating": terminating, "compression_type": compression, "metrics": metrics})
    return int(body["error_code"])


def advertised(conn: Requester) -> set[int]:
    body = conn.request(API_VERSIONS, 3, {"client_software_name": "kemu-tests", "client_software_version": "1"})
    return {entry["api_key"] for entry in body["api_keys"]}


@pytest.mark.parametrize("enabled", [False, True])
def test_listed_in_api_versions_only_with_the_receiver_but_served_either_way(make_broker: MakeBroker,
                                                                              enabled: bool) -> None:
    with make_broker(broker_config(kemu_client_telemetry_enable=enabled)) as running, running.connect() as conn:
        assert ({GET, PUSH} <= advertised(conn)) is enabled
        assert not {GET, PUSH} & advertised(conn) or enabled
        answer = get(conn, ZERO_UUID)
    assert answer["error_code"] == 0 and answer["client_instance_id"] != ZERO_UUID


def test_subscription_of_the_matching_subscriptions(make_broker: MakeBroker) -> None:
    clock = VirtualClock(1_700_000_000_000)
    with make_broker(clock=clock) as running, running.connect() as conn:
        conn.request(API_VERSIONS, 3, {"client_software_name": "librdkafka", "client_software_version": "2.6.0"})
        assert subscribe(conn, "producers", metrics=PRODUCER, interval_ms="2000",
                         match="client_software_name=librdkafka")["error_code"] == 0
        assert subscribe(conn, "all", metrics="org.apache.kafka.consumer.", interval_ms="1500",
                         match="client_id=kemu-te.*,client_source_address=127\\.0\\.0\\.1")["error_code"] == 0
        assert subscribe(conn, "java", metrics="org.apache.kafka.x.", match="client_software_name=apache-kafka-java")[
            "error_code"] == 0
        answer = get(conn)
    metrics = java_hash_set_order([PRODUCER, "org.apache.kafka.consumer."])
    assert answer == {"throttle_time_ms": 0, "error_code": 0, "client_instance_id": INSTANCE,
                      "subscription_id": subscription_id(metrics, 1500, INSTANCE),
                      "accepted_compression_types": [4, 3, 1, 2], "push_interval_ms": 1500,
                      "telemetry_max_bytes": 1048576, "delta_temporality": True, "requested_metrics": metrics}


def test_a_subscription_to_everything_asks_for_star(make_broker: MakeBroker) -> None:
    with make_broker() as running, running.connect() as conn:
        subscribe(conn, "a", metrics=PRODUCER)
        subscribe(conn, "b", metrics="*")
        answer = get(conn)
    assert answer["requested_metrics"] == ["*"]
    assert answer["subscription_id"] == subscription_id(["*"], 300000, INSTANCE)


def test_throttling_and_the_errors_of_a_push(make_broker: MakeBroker) -> None:
    clock = VirtualClock(1_700_000_000_000)
    with make_broker(clock=clock) as running, running.connect() as conn:
        subscribe(conn, "s", metrics=PRODUCER, interval_ms="1000")
        subscription = get(conn)["subscription_id"]
        throttled = get(conn)
        assert (throttled["error_code"], throttled["client_instance_id"]) == (ErrorCode.THROTTLING_QUOTA_EXCEEDED,
                                                                             ZERO_UUID)
        assert push(conn, subscription + 1) == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        assert get(conn)["error_code"] == 0  # after an unknown subscription id, at once
        assert push(conn, subscription, compression=9) == ErrorCode.THROTTLING_QUOTA_EXCEEDED
        clock.advance(1000)
        assert push(conn, subscription, compression=9) == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        clock.advance(1000)
        assert push(conn, subscription, b"not gzip", compression=CompressionType.GZIP) == ErrorCode.INVALID_RECORD
        clock.advance(1000)
        assert push(conn, subscription, bytes(1048577)) == ErrorCode.TELEMETRY_TOO_LARGE
        clock.advance(1000)
        bomb = gzip.compress(bytes(2 * 1048576))
        assert push(conn, subscription, bomb, compression=CompressionType.GZIP) == ErrorCode.INVALID_RECORD
        clock.advance(999)
        assert push(conn, subscription) == ErrorCode.THROTTLING_QUOTA_EXCEEDED
        clock.advance(1)
        assert push(conn, subscription) == ErrorCode.NONE
        assert push(conn, subscription, terminating=True) == ErrorCode.NONE  # the last one, at once
        clock.advance(5000)
        assert push(conn, subscription) == ErrorCode.INVALID_REQUEST
        assert push(conn, 0, instance=ZERO_UUID) == ErrorCode.INVALID_REQUEST
        assert push(conn, 0, instance=uuid.UUID(int=1)) == ErrorCode.INVALID_REQUEST


def test_a_changed_subscription_is_served_at_once_and_a_gone_one_falls_back(make_broker: MakeBroker) -> None:
    clock = VirtualClock(1_700_000_000_000)
    with make_broker(clock=clock) as running, running.connect() as conn:
        subscribe(conn, "s", metrics=PRODUCER, interval_ms="1000")
        first = get(conn)
        subscribe(conn, "s", metrics="org.apache.kafka.", interval_ms="1000")
        changed = get(conn)
        assert push(conn, first["subscription_id"]) == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        conn.request(ALTER, 1, {"resources": [{"resource_type": CLIENT_METRICS, "resource_name": "s", "configs": [
            {"name": name, "config_operation": 1, "value": None} for name in ("metrics", "interval.ms")]}],
            "validate_only": False})
        gone = get(conn)
        listed = conn.request(LIST_RESOURCES, 1, {"resource_types": [CLIENT_METRICS]})["config_resources"]
    assert changed["error_code"] == 0 and changed["requested_metrics"] == ["org.apache.kafka."]
    assert (gone["error_code"], gone["requested_metrics"], gone["push_interval_ms"]) == (0, [], 300000)
    assert listed == []


def test_an_instance_is_forgotten_after_three_intervals_without_a_request(make_broker: MakeBroker) -> None:
    clock = VirtualClock(1_700_000_000_000)
    with make_broker(clock=clock) as running, running.connect() as conn:
        subscribe(conn, "s", metrics=PRODUCER, interval_ms="30000")
        subscription = get(conn)["subscription_id"]
        assert push(conn, subscription) == ErrorCode.NONE
        clock.advance(90_000)
        # A new instance: its first push is due an interval after nothing, and its subscription id the same.
        assert push(conn, subscription) == ErrorCode.NONE
        assert push(conn, subscription) == ErrorCode.THROTTLING_QUOTA_EXCEEDED


def test_pushes_are_kept_with_the_receiver_only(make_broker: MakeBroker) -> None:
    payload = b"\x0a\x05hello"
    for enabled in (False, True):
        config = broker_config(kemu_client_telemetry_enable=enabled, telemetry_max_bytes=4096)
        with make_broker(config) as running, running.connect() as conn:
            subscribe(conn, "s", metrics="*")
            answer = get(conn)
            assert answer["telemetry_max_bytes"] == 4096
            assert push(conn, answer["subscription_id"], compress(CompressionType.ZSTD, payload),
                        compression=CompressionType.ZSTD) == ErrorCode.NONE
            kept = running.call(lambda: list(running.broker.client_metrics.pushes))
        assert [(p.client_instance_id, p.data, p.attributes.client_id) for p in kept] == (
            [(INSTANCE, payload, "kemu-tests")] if enabled else [])


@pytest.mark.parametrize(("values", "code", "message"), [
    ({"interval.ms": "99"}, ErrorCode.INVALID_REQUEST,
     "Invalid value 99 for interval.ms, interval must be between 100 and 3600000 (1 hour)"),
    ({"interval.ms": "x"}, ErrorCode.INVALID_CONFIG,
     "Invalid value x for configuration interval.ms: Not a number of type INT"),
    ({"metrics.prefix": "org."}, ErrorCode.INVALID_REQUEST, "Unknown client metrics configuration: metrics.prefix"),
    ({"match": "client_id=a=b"}, ErrorCode.INVALID_CONFIG, "Illegal client matching pattern: client_id=a=b"),
    ({"match": "client_id=("}, ErrorCode.INVALID_CONFIG, "Illegal client matching pattern: client_id=("),
    ({"metrics": "a,,b"}, ErrorCode.INVALID_CONFIG, "Configuration 'metrics' values must not be empty."),
])
def test_subscription_validation(make_broker: MakeBroker, values: dict[str, str], code: ErrorCode,
                                 message: str) -> None:
    with make_broker() as running, running.connect() as conn:
        body = {"resources": [{"resource_type": CLIENT_METRICS, "resource_name": "s", "configs": [
            {"name": k, "config_operation": 0, "value": v} for k, v in values.items()]}], "validate_only": False}
        [response] = conn.request(ALTER, 1, body)["responses"]
        listed = conn.request(LIST_RESOURCES, 1, {"resource_types": [CLIENT_METRICS]})["config_resources"]
    assert (response["error_code"], response["error_message"]) == (code, message)
    assert listed == []


def test_subscriptions_survive_a_restart_and_are_described(make_broker: MakeBroker, tmp_path: Any) -> None:
    config = broker_config(data_dir=str(tmp_path))
    with make_broker(config) as running, running.connect() as conn:
        subscribe(conn, "s", metrics=" a , b ", match="client_id = x")
    with make_broker(broker_config(data_dir=str(tmp_path))) as running, running.connect() as conn:
        [result] = conn.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": CLIENT_METRICS, "resource_name": "s", "configuration_keys": None}],
            "include_synonyms": True, "include_documentation": False})["results"]
    configs = {c["name"]: (c["value"], c["config_source"], c["synonyms"]) for c in result["configs"]}
    assert [c["name"] for c in result["configs"]] == ["interval.ms", "match", "metrics"]
    assert configs == {"interval.ms": ("300000", 5, []),
                       "match": ("client_id = x", 7, [{"name": "match", "value": "client_id = x", "source": 7}]),
                       "metrics": ("a,b", 7, [{"name": "metrics", "value": "a,b", "source": 7}])}


@pytest.mark.real_socket
def test_an_instance_goes_with_the_connection_that_made_it(make_broker: MakeBroker) -> None:
    clock = VirtualClock(1_700_000_000_000)
    with make_broker(clock=clock) as running:
        with running.connect() as first:
            subscribe(first, "s", metrics=PRODUCER, interval_ms="60000")
            assert get(first)["error_code"] == 0
            with running.connect() as second:
                # The same instance from another connection: known, so throttled.
                assert get(second)["error_code"] == ErrorCode.THROTTLING_QUOTA_EXCEEDED
        # The server notices the close when it reads the end of the stream.
        wait_for(lambda: not running.call(lambda: running.broker.client_metrics.instances()),
                 what="the closed connection's telemetry instance to go", timeout=10)
        with running.connect() as third:
            # The connection that made it closed: a new instance, served at once, as by Kafka.
            assert get(third)["error_code"] == 0


@pytest.mark.parametrize(("host", "shown"), [
    ("127.0.0.1", "127.0.0.1"), ("::1", "0:0:0:0:0:0:0:1"), ("::ffff:10.0.0.1", "10.0.0.1"),
    ("2001:db8::abcd", "2001:db8:0:0:0:0:0:abcd"), ("fe80::1%eth0", "fe80:0:0:0:0:0:0:1"),
])
def test_a_source_address_is_matched_as_java_prints_it(host: str, shown: str) -> None:
    assert java_host_address(host) == shown
