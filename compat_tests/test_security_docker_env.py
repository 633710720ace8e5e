"""The docker image's entrypoint (docker/entrypoint.sh) configured the way Kafka images are, from KAFKA_*
variables, for a SASL_SSL listener beside a PLAINTEXT one: the entrypoint runs here as the image runs it
(no docker needed: a `kemu` on PATH is this checkout's), with PEM certificates inline in
KAFKA_SSL_KEYSTORE_CERTIFICATE_CHAIN / KAFKA_SSL_KEYSTORE_KEY, a PLAIN JAAS config and SCRAM users; librdkafka
then logs in over SASL_SSL with SCRAM-SHA-512 and PLAIN and is told the advertised SASL_SSL address."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from kemu.testing.certs import TestCertificates
from kemu.testing.ports import free_port

pytestmark = pytest.mark.timeout(120)
ENTRYPOINT = Path(__file__).resolve().parents[1] / "docker" / "entrypoint.sh"


@pytest.fixture
def image_like(tmp_path: Path) -> Iterator[tuple[TestCertificates, int, int]]:
    certs = TestCertificates.create(tmp_path / "certs")
    shim = tmp_path / "bin" / "kemu"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kemu "$@"\n')
    shim.chmod(0o755)
    plain, secured = free_port(), free_port()
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
           "KAFKA_LISTENERS": f"PLAINTEXT://127.0.0.1:{plain},SASL_SSL://127.0.0.1:{secured}",
           "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://127.0.0.1:{plain},SASL_SSL://localhost:{secured}",
           "KAFKA_INTER_BROKER_LISTENER_NAME": "PLAINTEXT",
           "KAFKA_LOG_DIRS": str(tmp_path / "data"),
           "KAFKA_SSL_KEYSTORE_TYPE": "PEM",
           "KAFKA_SSL_KEYSTORE_CERTIFICATE_CHAIN": certs.broker.certificate_file.read_text(),
           "KAFKA_SSL_KEYSTORE_KEY": certs.broker.key_file.read_text(),
           "KAFKA_LISTENER_NAME_SASL__SSL_SASL_ENABLED_MECHANISMS": "SCRAM-SHA-512,PLAIN",
           "KAFKA_LISTENER_NAME_SASL__SSL_PLAIN_SASL_JAAS_CONFIG":
               'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";',
           "KAFKA_KEMU_SCRAM_CREDENTIALS": "SCRAM-SHA-512=[name=alice,password=alice-secret]"}
    process = subprocess.Popen(["sh", str(ENTRYPOINT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    try:
        assert process.stdout is not None
        seen = []
        for line in process.stdout:
            seen.append(line)
            if line.startswith("kemu serving on"):
                break
        else:
            pytest.fail("the entrypoint's kemu never served:\n" + "".join(seen))
        yield certs, plain, secured
    finally:
        process.terminate()
        process.wait(30)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "PLAIN"])
def test_sasl_ssl_from_kafka_variables(image_like: tuple[TestCertificates, int, int], mechanism: str) -> None:
    certs, plain, secured = image_like
    settings = {"bootstrap.servers": f"localhost:{secured}", "security.protocol": "SASL_SSL",
                "ssl.ca.location": str(certs.ca_file), "sasl.mechanism": mechanism,
                "sasl.username": "alice", "sasl.password": "alice-secret"}
    metadata = AdminClient(settings).list_topics(timeout=30)
    assert [f"{b.host}:{b.port}" for b in metadata.brokers.values()] == [f"localhost:{secured}"]
    producer = Producer(settings)
    producer.produce("from-the-image", b"v")
    assert producer.flush(30) == 0
    plain_metadata = AdminClient({"bootstrap.servers": f"127.0.0.1:{plain}"}).list_topics(timeout=30)
    assert [f"{b.host}:{b.port}" for b in plain_metadata.brokers.values()] == [f"127.0.0.1:{plain}"]
