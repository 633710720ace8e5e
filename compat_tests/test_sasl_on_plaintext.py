"""A client configured for SASL against kemu's PLAINTEXT listener fails its handshake the way it fails
against a Kafka PLAINTEXT listener: ILLEGAL_SASL_STATE, no mechanisms offered."""

from __future__ import annotations

from confluent_kafka import KafkaError, Producer

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for


def test_librdkafka_reports_illegal_sasl_state(kemu_server: KemuServeProcess) -> None:
    errors: list[KafkaError] = []
    producer = Producer({
        "bootstrap.servers": kemu_server.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "user",
        "sasl.password": "secret",
        "error_cb": errors.append,
        "log_level": 0,
    })

    def handshake_refused() -> KafkaError | None:
        producer.poll(0.1)
        return next((e for e in errors if "Request not valid in current SASL state" in e.str()), None)

    refused = wait_for(handshake_refused, what="librdkafka's SASL handshake failure", timeout=15)
    assert "broker's supported mechanisms: " in refused.str()
