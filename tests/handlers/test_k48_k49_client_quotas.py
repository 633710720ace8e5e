"""DescribeClientQuotas (48) and AlterClientQuotas (49) over the wire, and the quotas enforced as Kafka's
quota managers enforce them: a Produce or Fetch past producer_byte_rate / consumer_byte_rate answers with the
throttle time, a throttled Fetch with no records, the connection muted for that time (on the broker's clock),
and the quotas kept across a restart."""

from __future__ import annotations

import select
from pathlib import Path
from typing import Any

import pytest

from kemu.clock import VirtualClock
from kemu.wire import codec
from kemu.wire.errors import ErrorCode
from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import FETCH, PRODUCE, batch, fetch_body, fetch_partitions, produce_body, values_of
from tests.handlers.harness import Connection, MakeBroker, advance, broker_config
from tests.server.kafka_socket import KafkaSocket

DESCRIBE, ALTER = 48, 49
T0 = 1_700_000_000_000
CLIENT = "kemu-tests"  # the client id the harness's connections send


def alter(conn: Connection, entity: list[tuple[str, str | None]], validate_only: bool = False,
          version: int = 1, **values: float | None) -> tuple[int, str | None]:
    answer = conn.request(ALTER, version, {"entries": [{
        "entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
        "ops": [{"key": k, "value": 0.0 if v is None else v, "remove": v is None} for k, v in values.items()]}],
        "validate_only": validate_only})
    [entry] = answer["entries"]
    return entry["error_code"], entry["error_message"]


def describe(conn: Connection, components: list[tuple[str, int, str | None]], strict: bool = False,
             version: int = 1) -> dict[str, Any]:
    return conn.request(DESCRIBE, version, {"components": [{"entity_type": t, "match_type": m, "match": n}
                                                           for t, m, n in components], "strict": strict})


def quotas(answer: dict[str, Any]) -> dict[tuple[tuple[str, str | None], ...], dict[str, float]]:
    return {tuple((e["entity_type"], e["entity_name"]) for e in entry["entity"]):
            {v["key"]: v["value"] for v in entry["values"]} for entry in answer["entries"]}


@pytest.mark.parametrize("version", [0, 1])
def test_set_describe_and_remove(conn: Connection, version: int) -> None:
    assert alter(conn, [("user", "alice"), ("client-id", "app")], version=version, producer_byte_rate=1024,
                 request_percentage=12.5) == (0, None)
    assert alter(conn, [("client-id", None)], version=version, consumer_byte_rate=2048) == (0, None)
    assert alter(conn, [("user", "bob")], validate_only=True, producer_byte_rate=1) == (0, None)
    answer = describe(conn, [("user", 0, "alice")], version=version)
    assert (answer["error_code"], answer["error_message"]) == (0, "")
    assert quotas(answer) == {(("client-id", "app"), ("user", "alice")): {"producer_byte_rate": 1024.0,
                                                                          "request_percentage": 12.5}}
    assert quotas(describe(conn, [("client-id", 1, None)], strict=True)) == {
        (("client-id", None),): {"consumer_byte_rate": 2048.0}}
    assert quotas(describe(conn, [("user", 0, "bob")])) == {}
    assert alter(conn, [("user", "alice"), ("client-id", "app")], producer_byte_rate=None,
                 request_percentage=None) == (0, None)
    assert quotas(describe(conn, [("user", 2, None)])) == {}


def test_refusals(conn: Connection) -> None:
    assert alter(conn, [("ip", "192.0.2.1"), ("user", "a")], connection_creation_rate=1) == (
        ErrorCode.INVALID_REQUEST, "Invalid quota entity combination, IP entity shouldnot be combined with User or "
                                   "ClientId")
    assert alter(conn, [("user", "a")], consumer_byte_rate=-5) == (
        ErrorCode.INVALID_REQUEST, "Quota consumer_byte_rate must be greater than 0")
    answer = describe(conn, [("topic", 0, "t")])
    assert (answer["error_code"], answer["error_message"], answer["entries"]) == (
        ErrorCode.UNSUPPORTED_VERSION, "Unsupported entity type topic", None)


def _body(size: int) -> dict[str, Any]:
    return produce_body({("q", 0): batch(b"x" * size)})


def _produce(conn: Connection, size: int) -> dict[str, Any]:
    return conn.request(PRODUCE, 11, _body(size))


def _request_bytes(size: int) -> int:
    """What producer_byte_rate counts of a request: all of it but its size prefix, as Kafka's sizeInBytes."""
    return len(codec.encode_request(PRODUCE, 11, 0, _body(size), client_id=CLIENT))


def test_a_producer_past_its_quota_is_throttled_until_the_rate_falls(make_broker: MakeBroker) -> None:
    with make_broker(clock=VirtualClock(T0)) as broker, broker.connect() as conn:
        create_topic(conn, "q")
        assert _produce(conn, 10_000)["throttle_time_ms"] == 0  # no quota: nothing counted
        assert alter(conn, [("client-id", CLIENT)], producer_byte_rate=1000) == (0, None)
        # Just within 1000 B/s over the 10 s Kafka counts at least (quota.window.num 11 of 1 s, less one).
        first = _request_bytes(9000)
        assert _produce(conn, 9000)["throttle_time_ms"] == 0
        second = _request_bytes(5000)
        answer = _produce(conn, 5000)
        # (rate - quota) / quota * window: the time at the quota that would take the excess.
        expected = round(((first + second) / 10 - 1000) / 1000 * 10_000)
        assert answer["throttle_time_ms"] == expected > 0
        [topic] = answer["responses"]
        assert topic["partition_responses"][0]["error_code"] == 0  # the records are appended all the same
        advance(broker, 20_000)  # the samples have aged out of the window
        assert _produce(conn, 100)["throttle_time_ms"] == 0


def test_a_consumer_past_its_quota_gets_an_empty_throttled_response(make_broker: MakeBroker) -> None:
    with make_broker(clock=VirtualClock(T0)) as broker, broker.connect() as conn:
        create_topic(conn, "q")
        for _ in range(3):
            _produce(conn, 4000)
        assert alter(conn, [("user", None)], consumer_byte_rate=1000) == (0, None)
        fetched = conn.request(FETCH, 12, fetch_body([("q", 0, 0)]))
        assert fetched["throttle_time_ms"] == 0
        [(_, data)] = fetch_partitions(fetched)
        assert len(values_of(data["records"])) == 2  # max_bytes held to 10 s of the quota: 2 of the batches
        throttled = conn.request(FETCH, 12, fetch_body([("q", 0, 2)]))
        assert throttled["throttle_time_ms"] > 0
        assert (throttled["error_code"], throttled["responses"]) == (0, [])
        advance(broker, 30_000)
        again = conn.request(FETCH, 12, fetch_body([("q", 0, 2)]))
        assert again["throttle_time_ms"] == 0
        assert len(values_of(fetch_partitions(again)[0][1]["records"])) == 1


@pytest.mark.real_socket
def test_a_throttled_connection_reads_nothing_until_the_clock_passes_the_throttle(make_broker: MakeBroker) -> None:
    clock = VirtualClock(T0)
    with make_broker(clock=clock) as broker, KafkaSocket(("127.0.0.1", broker.port)) as conn, \
            KafkaSocket(("127.0.0.1", broker.port)) as other:
        create_topic(conn, "q")
        assert alter(conn, [("client-id", CLIENT)], producer_byte_rate=100) == (0, None)
        throttle_ms = _produce(conn, 5000)["throttle_time_ms"]
        assert throttle_ms > 1000
        conn.send(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert select.select([conn.sock], [], [], 0.5)[0] == []  # muted: the request is not even read
        assert other.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})[
            "error_code"] == 0  # another connection is served meanwhile
        advance(broker, throttle_ms - 1)
        assert select.select([conn.sock], [], [], 0.3)[0] == []
        advance(broker, 1)
        _, answer = conn.receive(18, 3)
        assert answer["error_code"] == 0


def test_quotas_survive_a_restart(make_broker: MakeBroker, tmp_path: Path) -> None:
    config = broker_config(data_dir=str(tmp_path / "data"))
    with make_broker(config, clock=VirtualClock(T0)) as broker, broker.connect() as conn:
        create_topic(conn, "q")
        assert alter(conn, [("client-id", CLIENT)], producer_byte_rate=1000) == (0, None)
    with make_broker(config, clock=VirtualClock(T0)) as broker, broker.connect() as conn:
        assert quotas(describe(conn, [("client-id", 0, CLIENT)])) == {
            (("client-id", CLIENT),): {"producer_byte_rate": 1000.0}}
        assert _produce(conn, 20_000)["throttle_time_ms"] > 0
        # With the last quota removed nothing is counted any more.
        assert alter(conn, [("client-id", CLIENT)], producer_byte_rate=None) == (0, None)
        assert broker.call(lambda: broker.broker.throttling) is None
        assert _produce(conn, 20_000)["throttle_time_ms"] == 0


def test_every_node_of_a_cluster_shares_the_quotas(make_broker: MakeBroker) -> None:
    with make_broker(broker_config(brokers=3)) as cluster:
        with cluster.connect(node=1) as first:
            assert alter(first, [("user", "alice")], producer_byte_rate=4096) == (0, None)
        for node in (2, 3):
            with cluster.connect(node=node) as other:
                assert quotas(describe(other, [("user", 0, "alice")])) == {
                    (("user", "alice"),): {"producer_byte_rate": 4096.0}}
