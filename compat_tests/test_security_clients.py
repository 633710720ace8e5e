"""kafka-python, aiokafka, kafkajs and kcat against kemu's TLS and SASL listeners: SCRAM-SHA-512 and PLAIN
over SASL_SSL and mTLS over SSL, each a produce and a consume of the same record; a wrong password seen as
each client's own authentication error; kafka-python's OAUTHBEARER with an unsecured JWT, and an expired one
refused."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import ssl
import time
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import KafkaError as AIOKafkaError
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import KafkaError
from kafka.net.sasl.oauth import AbstractTokenProvider

from compat_tests.external_clients import Kafkajs, Kcat
from compat_tests.security_support import USERS, SecuredBroker, secured  # noqa: F401

pytestmark = pytest.mark.timeout(180)
KINDS = ["SCRAM-SHA-512", "PLAIN", "mTLS"]
RECORD = b"secret record"


def _kafka_python(secured: SecuredBroker, kind: str, password: str = USERS["alice"]) -> dict[str, Any]:  # noqa: F811
    certs = secured.certs
    if kind == "mTLS":
        return {"bootstrap_servers": secured.bootstrap("SSL"), "security_protocol": "SSL",
                "ssl_cafile": str(certs.ca_file), "ssl_certfile": str(certs.client.certificate_file),
                "ssl_keyfile": str(certs.client.key_file)}
    return {"bootstrap_servers": secured.bootstrap("SASL_SSL"), "security_protocol": "SASL_SSL",
            "ssl_cafile": str(certs.ca_file), "sasl_mechanism": kind, "sasl_plain_username": "alice",
            "sasl_plain_password": password}


@pytest.mark.parametrize("kind", KINDS)
def test_kafka_python(secured: SecuredBroker, kind: str, topic_name: str) -> None:  # noqa: F811
    settings = _kafka_python(secured, kind)
    producer = KafkaProducer(**settings)
    producer.send(topic_name, RECORD).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(topic_name, group_id=f"g-{topic_name}", auto_offset_reset="earliest",
                             consumer_timeout_ms=30000, **settings)
    try:
        assert next(iter(consumer)).value == RECORD
    finally:
        consumer.close()


def test_kafka_python_wrong_password(secured: SecuredBroker, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    # kafka-python retries its bootstrap until max_block_ms and then times out; what it was told is in its log.
    with caplog.at_level(logging.INFO, "kafka"), pytest.raises(KafkaError):
        KafkaProducer(**_kafka_python(secured, "SCRAM-SHA-512", password="wrong"), max_block_ms=5000)
    assert any("SaslAuthenticationFailedError" in r.getMessage() and
               "Authentication failed during authentication due to invalid credentials with SASL mechanism "
               "SCRAM-SHA-512" in r.getMessage() for r in caplog.records)


def _aiokafka(secured: SecuredBroker, kind: str, password: str = USERS["alice"]) -> dict[str, Any]:  # noqa: F811
    certs = secured.certs
    context = ssl.create_default_context(cafile=str(certs.ca_file))
    if kind == "mTLS":
        context.load_cert_chain(str(certs.client.certificate_file), str(certs.client.key_file))
        return {"bootstrap_servers": secured.bootstrap("SSL"), "security_protocol": "SSL", "ssl_context": context}
    return {"bootstrap_servers": secured.bootstrap("SASL_SSL"), "security_protocol": "SASL_SSL",
            "ssl_context": context, "sasl_mechanism": kind, "sasl_plain_username": "alice",
            "sasl_plain_password": password}


@pytest.mark.parametrize("kind", KINDS)
def test_aiokafka(secured: SecuredBroker, kind: str, topic_name: str) -> None:  # noqa: F811
    async def round_trip() -> bytes | None:
        producer = AIOKafkaProducer(**_aiokafka(secured, kind))
        await producer.start()
        try:
            await producer.send_and_wait(topic_name, RECORD)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic_name, group_id=f"g-{topic_name}", auto_offset_reset="earliest",
                                    **_aiokafka(secured, kind))
        await consumer.start()
        try:
            message = await asyncio.wait_for(consumer.getone(), 30)
            return message.value
        finally:
            await consumer.stop()

    assert asyncio.run(round_trip()) == RECORD


def test_aiokafka_wrong_password(secured: SecuredBroker, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    async def start() -> None:
        producer = AIOKafkaProducer(**_aiokafka(secured, "PLAIN", password="wrong"))
        try:
            await producer.start()
        finally:
            await producer.stop()

    # aiokafka logs what the broker said and raises that it could not bootstrap.
    with caplog.at_level(logging.ERROR, "aiokafka"), pytest.raises(AIOKafkaError):
        asyncio.run(start())
    assert any("SaslAuthenticationFailed: Authentication failed: Invalid username or password" in r.getMessage()
               for r in caplog.records)


@pytest.mark.parametrize("kind", KINDS)
def test_kafkajs(secured: SecuredBroker, kind: str, topic_name: str, kafkajs: Kafkajs,  # noqa: F811
                 tmp_path: Path) -> None:
    certs = secured.certs
    if kind == "mTLS":
        settings: dict[str, Any] = {"ssl": {"ca": str(certs.ca_file), "cert": str(certs.client.certificate_file),
                                            "key": str(certs.client.key_file)}}
        bootstrap = secured.bootstrap("SSL")
    else:
        settings = {"ssl": {"ca": str(certs.ca_file)},
                    "sasl": {"mechanism": kind.lower(), "username": "alice", "password": USERS["alice"]}}
        bootstrap = secured.bootstrap("SASL_SSL")
    file = tmp_path / "security.json"
    file.write_text(json.dumps(settings))
    assert kafkajs.run("security", bootstrap, "round-trip", str(file), topic_name, timeout=90) == ["secret record"]


def _kcat_settings(secured: SecuredBroker, kind: str) -> tuple[str, list[str]]:  # noqa: F811
    certs = secured.certs
    if kind == "mTLS":
        return secured.bootstrap("SSL"), ["-X", "security.protocol=SSL", "-X", f"ssl.ca.location={certs.ca_file}",
                                          "-X", f"ssl.certificate.location={certs.client.certificate_file}",
                                          "-X", f"ssl.key.location={certs.client.key_file}"]
    return secured.bootstrap("SASL_SSL"), ["-X", "security.protocol=SASL_SSL", "-X", f"ssl.ca.location={certs.ca_file}",
                                           "-X", f"sasl.mechanisms={kind}", "-X", "sasl.username=alice",
                                           "-X", f"sasl.password={USERS['alice']}"]


@pytest.mark.parametrize("kind", KINDS)
def test_kcat(secured: SecuredBroker, kind: str, topic_name: str, kcat: Kcat, tmp_path: Path) -> None:  # noqa: F811
    bootstrap, settings = _kcat_settings(secured, kind)
    records = tmp_path / "records.txt"
    records.write_text("secret record\n")
    produced = kcat.run(bootstrap, *settings, "-P", "-t", topic_name, "-l", str(records))
    assert produced.returncode == 0, produced.stderr
    consumed = kcat.run(bootstrap, *settings, "-C", "-t", topic_name, "-o", "beginning", "-c", "1", "-e")
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.strip() == "secret record"


class _UnsecuredJwt(AbstractTokenProvider):
    """An unsecured JWT (alg none), as Kafka's default OAUTHBEARER validator accepts them."""

    def __init__(self, subject: str, expires_in_s: float) -> None:
        super().__init__()
        self.subject, self.expires_in_s = subject, expires_in_s

    def token(self) -> str:
        def part(value: dict[str, Any]) -> str:
            return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
        now = time.time()
        return f"{part({'alg': 'none'})}.{part({'sub': self.subject, 'iat': now, 'exp': now + self.expires_in_s})}."


def _oauth(secured: SecuredBroker, provider: AbstractTokenProvider) -> dict[str, Any]:  # noqa: F811
    return {"bootstrap_servers": secured.bootstrap("SASL_SSL"), "security_protocol": "SASL_SSL",
            "ssl_cafile": str(secured.certs.ca_file), "sasl_mechanism": "OAUTHBEARER",
            "sasl_oauth_token_provider": provider}


def test_kafka_python_oauthbearer(secured: SecuredBroker, topic_name: str) -> None:  # noqa: F811
    producer = KafkaProducer(**_oauth(secured, _UnsecuredJwt("bob", 3600)))
    producer.send(topic_name, RECORD).get(timeout=30)
    producer.close()
    assert "User:bob" in secured.seen("SASL_SSL")


def test_kafka_python_expired_oauthbearer_token(secured: SecuredBroker,  # noqa: F811
                                                caplog: pytest.LogCaptureFixture) -> None:
    # RFC 7628: the broker answers the expired token with an error challenge, the client acknowledges it and
    # the exchange fails with that error; kafka-python logs it and times out its bootstrap.
    with caplog.at_level(logging.INFO, "kafka"), pytest.raises(KafkaError):
        KafkaProducer(**_oauth(secured, _UnsecuredJwt("bob", -60)), max_block_ms=5000)
    assert any("SaslAuthenticationFailedError" in r.getMessage() and '{"status":"invalid_token"}' in r.getMessage()
               for r in caplog.records)
