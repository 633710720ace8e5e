"""The test power that throttles a client (`Broker.set_client_quota`): a stock producer's client id given a
producer_byte_rate gets its Produce throttled, the connection muted until the movable clock passes the throttle;
Kafka's refusals come back as BrokerError, and a removed quota throttles no more."""

from __future__ import annotations

import select

import pytest

from kemu.testing import Broker, BrokerError
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch
from tests.server.kafka_socket import KafkaSocket

PRODUCE, API_VERSIONS = 0, 18


def _produce(connection: KafkaSocket, topic: str, size: int) -> int:
    answer = connection.request(PRODUCE, 11, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": build_batch([NewRecord(b"x" * size)])}]}]})
    throttle_ms: int = answer["throttle_time_ms"]
    return throttle_ms


def test_a_client_given_a_quota_is_throttled_on_the_movable_clock() -> None:
    with Broker(virtual_clock=True) as broker:
        broker.create_topic("slow", partitions=1)
        host, port = broker.bootstrap_servers.split(":")
        with KafkaSocket((host, int(port)), client_id="throttled-app") as connection:
            assert _produce(connection, "slow", 20_000) == 0  # no quota: not even counted
            broker.set_client_quota({"client-id": "throttled-app"}, producer_byte_rate=1000)
            throttle_ms = _produce(connection, "slow", 20_000)  # twice the 10 s at 1000 B/s Kafka counts at least
            assert throttle_ms > 9000
            connection.send(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
            assert select.select([connection.sock], [], [], 0.3)[0] == []  # muted
            broker.advance(throttle_ms / 1000)
            assert connection.receive(API_VERSIONS, 3)[1]["error_code"] == 0
            broker.set_client_quota({"client-id": "throttled-app"}, producer_byte_rate=None)
            assert _produce(connection, "slow", 50_000) == 0


def test_a_refused_quota_raises() -> None:
    with Broker(virtual_clock=True) as broker:
        with pytest.raises(BrokerError) as refused:
            broker.set_client_quota({"ip": "192.0.2.1"}, producer_byte_rate=10)
        assert refused.value.code == ErrorCode.INVALID_REQUEST
        assert str(refused.value) == "INVALID_REQUEST: Invalid configuration key producer_byte_rate"
