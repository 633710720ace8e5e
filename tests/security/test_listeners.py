"""Kafka's listener settings: parsing, the protocol map, and KafkaConfig's start-up refusals, word for word."""

from __future__ import annotations

import pytest

from kemu.security.errors import SecurityConfigError
from kemu.security.listeners import Endpoint, listener_settings

DEFAULT = "PLAINTEXT://127.0.0.1:9092"


def test_several_listeners_with_a_protocol_map_and_advertised_addresses() -> None:
    settings = listener_settings({
        "listeners": "INTERNAL://:9092, external://0.0.0.0:9093,SASL_SSL://[::1]:9094",
        "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SSL,SASL_SSL:SASL_SSL",
        "advertised.listeners": "INTERNAL://kemu:9092,EXTERNAL://localhost:19093",
        "inter.broker.listener.name": "internal",
    }, DEFAULT)
    assert settings.listeners == (Endpoint("INTERNAL", "PLAINTEXT", "", 9092),
                                  Endpoint("EXTERNAL", "SSL", "0.0.0.0", 9093),
                                  Endpoint("SASL_SSL", "SASL_SSL", "::1", 9094))
    assert settings.advertised_for("EXTERNAL") == Endpoint("EXTERNAL", "SSL", "localhost", 19093)
    assert settings.advertised_for("SASL_SSL") is None
    assert settings.inter_broker == "INTERNAL"
    assert str(settings.listeners[2]) == "SASL_SSL://[::1]:9094"


def test_without_listeners_the_default_stands() -> None:
    settings = listener_settings({}, DEFAULT)
    assert settings.listeners == (Endpoint("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092),)
    assert settings.inter_broker == "PLAINTEXT"


@pytest.mark.parametrize(("properties", "message"), [
    ({"listeners": "TRACE://localhost:9091,SSL://localhost:9093"},
     "Error creating broker listeners from '[TRACE://localhost:9091, SSL://localhost:9093]': "
     "No security protocol defined for listener TRACE"),
    ({"listeners": "PLAINTEXT://localhost:9091,SSL://localhost:9091"},
     "Each listener must have a different port unless exactly one listener has an IPv4 address and the other "
     "IPv6 address, listeners: [PLAINTEXT://localhost:9091, SSL://localhost:9091], port: 9091"),
    ({"listeners": "PLAINTEXT://localhost:9091,plaintext://localhost:9092"},
     "Each listener must have a different name, listeners: [PLAINTEXT://localhost:9091, plaintext://localhost:9092]"),
    ({"listeners": "PLAINTEXT:/localhost:9091"}, "Unable to parse PLAINTEXT:/localhost:9091 to a broker endpoint"),
    ({"listener.security.protocol.map": "PLAINTEXT:TLS"},
     "Invalid security protocol `TLS` defined in listener.security.protocol.map"),
    ({"listeners": "PLAINTEXT://:9092", "advertised.listeners": "SSL://localhost:9093"},
     "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners"),
    ({"listeners": "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://0.0.0.0:9092"},
     "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0"),
    ({"listeners": "SASL_SSL://:9093"},
     "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options "
     "based on currently configured listeners are SASL_SSL"),
    ({"listeners": "SASL_SSL://:9093", "inter.broker.listener.name": "INTERNAL"},
     "Listener with name INTERNAL defined in inter.broker.listener.name not found in listener.security.protocol.map."),
    ({"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
     "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."),
])
def test_kafka_refuses_these_at_start_up(properties: dict[str, str], message: str) -> None:
    with pytest.raises(SecurityConfigError) as refused:
        listener_settings(properties, DEFAULT)
    assert message in str(refused.value)


def test_ipv4_and_ipv6_listeners_may_share_a_port() -> None:
    settings = listener_settings({"listeners": "PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092",
                                  "inter.broker.listener.name": "PLAINTEXT"}, DEFAULT)
    assert [e.port for e in settings.listeners] == [9092, 9092]

