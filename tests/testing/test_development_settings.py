"""The development settings of Kafka's shipped server.properties on every broker the fixtures and `kemu serve`
start: no initial rebalance delay, said as a static broker setting (as Kafka says the file's), unless a test's
own setting says otherwise."""

from __future__ import annotations

import pytest

from kemu.testing import Broker
from tests.server.kafka_socket import KafkaSocket
from tests.server.test_cli import kemu_serve

DESCRIBE_CONFIGS, BROKER_RESOURCE, STATIC_BROKER_CONFIG = 32, 4, 4
DELAY = "group.initial.rebalance.delay.ms"


def delay_entry(host: str, port: int) -> tuple[str, int]:
    with KafkaSocket((host, port)) as connection:
        answer = connection.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": BROKER_RESOURCE, "resource_name": "1", "configuration_keys": [DELAY]}]})
    (entry,) = answer["results"][0]["configs"]
    return entry["value"], entry["config_source"]


def test_the_fixture_broker_has_no_initial_rebalance_delay(kemu_broker: Broker) -> None:
    assert delay_entry("127.0.0.1", kemu_broker.port) == ("0", STATIC_BROKER_CONFIG)


@pytest.mark.kemu(config={DELAY: "2500"})
def test_a_tests_own_setting_wins(kemu_broker: Broker) -> None:
    assert delay_entry("127.0.0.1", kemu_broker.port) == ("2500", STATIC_BROKER_CONFIG)


def test_kemu_serve_has_no_initial_rebalance_delay() -> None:
    with kemu_serve() as (_, host, port):
        assert delay_entry(host, port) == ("0", STATIC_BROKER_CONFIG)
    with kemu_serve("--control-port", "0") as (_, host, port):  # through the handle
        assert delay_entry(host, port) == ("0", STATIC_BROKER_CONFIG)
