"""KemuContainer with a SASL_SSL listener: librdkafka produces and consumes over it with SCRAM-SHA-512 and
is refused with a wrong password, while the PLAINTEXT listener serves as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from testcontainers.core.docker_client import DockerClient

from compat_tests.polling import wait_for
from kemu.testcontainers import KemuContainer
from kemu.testing.certs import LOOPBACK_NAMES, TestCertificates

pytestmark = pytest.mark.timeout(240)


def test_sasl_ssl_listener(kemu_image: str, tmp_path: Path) -> None:
    certs = TestCertificates.create(tmp_path, hostnames=(*LOOPBACK_NAMES, DockerClient().host()))
    container = KemuContainer(kemu_image, control_port=None).with_sasl_ssl(
        certs.broker.certificate_file.read_text(), certs.broker.key_file.read_text(), {"alice": "alice-secret"})
    with container:
        settings = {"bootstrap.servers": container.get_bootstrap_server("SASL_SSL"), "security.protocol": "SASL_SSL",
                    "ssl.ca.location": str(certs.ca_file), "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.username": "alice", "sasl.password": "alice-secret"}
        producer = Producer(settings)
        producer.produce("secured", b"through the container")
        assert producer.flush(30) == 0
        consumer = Consumer({**settings, "group.id": "g", "auto.offset.reset": "earliest"})
        consumer.subscribe(["secured"])
        try:
            message = wait_for(lambda: (m := consumer.poll(0.5)) is not None and m.error() is None and m,
                               what="the record back over SASL_SSL", timeout=60)
            assert message.value() == b"through the container"
        finally:
            consumer.close()
        errors: list[KafkaError] = []
        refused = Producer({**settings, "sasl.password": "wrong", "error_cb": errors.append})
        wait_for(lambda: refused.poll(0.2) is not None and any(e.code() == KafkaError._AUTHENTICATION
                                                                 for e in errors),
                 what="the wrong password refused")
        plain = Producer({"bootstrap.servers": container.get_bootstrap_server()})
        plain.produce("secured", b"plain")
        assert plain.flush(30) == 0
