"""Delegation tokens with the Java client 4.3 (src/DelegationTokens.java) over SASL_PLAINTEXT, on kemu and on
the reference Kafka, the outcomes compared: an Admin logged in with SCRAM-SHA-256 creates a token (bob its
renewer) and describes it; a producer logs in with the token (ScramLoginModule tokenauth="true", the token id
and its HMAC) and produces as the token's owner; after ExpireDelegationToken its next login is refused."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

from compat_tests import jars
from compat_tests.conformance.brokers import TOKENS_SETTINGS
from compat_tests.differential.compare import check
from compat_tests.external_clients import tool_missing
from compat_tests.java.java_client import JavaClient, JavaError
from compat_tests.polling import wait_for
from compat_tests.reference.fixtures import _running as started
from compat_tests.reference.kafka import KAFKA_JAR_SET, SHIPPED_SETTINGS, ReferenceKafka, SaslListener, find_java
from compat_tests.test_transactions_support import create_topics, unique
from kemu.testing import Broker

PROGRAM = "DelegationTokens"
USER, PASSWORD = "alice", "alice-secret"
SASL_FAILED = "org.apache.kafka.common.errors.SaslAuthenticationException"
KAFKA_UUID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}")


class Brokers:
    """Where one broker is reached: PLAINTEXT (topics and SCRAM users made there) and SASL_PLAINTEXT."""

    def __init__(self, plaintext: str, sasl: str) -> None:
        self.plaintext, self.sasl = plaintext, sasl


@pytest.fixture(scope="module")
def kafka_brokers() -> Iterator[Brokers]:
    java = find_java()
    if java is None:
        tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
    kafka = ReferenceKafka(classpath=jars.classpath(KAFKA_JAR_SET), java=java, settings=TOKENS_SETTINGS,
                           sasl=SaslListener(mechanisms=("SCRAM-SHA-256",)))
    for running in started(kafka):
        (host, port), (sasl_host, sasl_port) = running.addresses[0], running.sasl_addresses[0]
        yield Brokers(f"{host}:{port}", f"{sasl_host}:{sasl_port}")


@pytest.fixture(scope="module")
def kemu_brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Brokers]:
    from kemu.testing.certs import sasl_settings

    config = {**SHIPPED_SETTINGS, **TOKENS_SETTINGS, "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
              "inter.broker.listener.name": "PLAINTEXT", **sasl_settings("sasl_plaintext", ("SCRAM-SHA-256",), {})}
    broker = Broker(config=config, data_dir=str(tmp_path_factory.mktemp("kemu-tokens")))
    try:
        yield Brokers(broker.bootstrap("PLAINTEXT"), broker.bootstrap("SASL_PLAINTEXT"))
    finally:
        broker.close()


def scenario(java: JavaClient, brokers: Brokers) -> dict[str, Any]:
    admin = AdminClient({"bootstrap.servers": brokers.plaintext})
    upsert = UserScramCredentialUpsertion(USER, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                          PASSWORD.encode())
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(timeout=15)
    topic = unique("java-tokens")
    create_topics(brokers.plaintext, [topic], partitions=1)

    def created() -> dict[str, Any] | None:
        # Kafka's broker learns the new SCRAM user from its metadata a moment after the upsert.
        try:
            return dict(java.run(PROGRAM, brokers.sasl, "create", USER, PASSWORD, "bob"))
        except JavaError as exc:
            if exc.java_class != SASL_FAILED:
                raise
            return None

    token = wait_for(created, what="a token made by a SCRAM user")
    token_id, hmac = token.pop("token_id"), token.pop("hmac")
    assert KAFKA_UUID.fullmatch(token_id), token_id

    def produced() -> dict[str, Any] | None:
        try:
            return dict(java.run(PROGRAM, brokers.sasl, "produce", token_id, hmac, topic))
        except JavaError as exc:  # Kafka's token cache learns the token a moment after CreateDelegationToken
            if exc.java_class != SASL_FAILED:
                raise
            return None

    outcome: dict[str, Any] = {"token": token, "produced": wait_for(produced, what="a login with the token")}
    described = java.run(PROGRAM, brokers.sasl, "describe", USER, PASSWORD)
    outcome["described"] = [{key: value for key, value in found.items() if key != "hmac"}
                            for found in described if found["token_id"] == token_id]
    outcome["described_hmac_matches"] = [found["hmac"] == hmac for found in described if found["token_id"] == token_id]
    for found in outcome["described"]:
        found.pop("token_id")
    outcome["expired"] = java.run(PROGRAM, brokers.sasl, "expire", USER, PASSWORD, hmac)

    def refused() -> str | None:
        try:
            java.run(PROGRAM, brokers.sasl, "produce", token_id, hmac, topic)
        except JavaError as exc:  # the removal reaches Kafka's token cache a moment after ExpireDelegationToken
            return exc.java_class
        return None

    outcome["after_expiry"] = wait_for(refused, what="the expired token's login refused")
    return outcome


def test_a_token_made_by_a_scram_user_logs_a_producer_in_until_it_expires(
        java: JavaClient, kafka_brokers: Brokers, kemu_brokers: Brokers) -> None:
    kemu = scenario(java, kemu_brokers)
    assert kemu["token"] == {"owner": "User:alice", "requester": "User:alice", "renewers": ["User:bob"],
                             "lifetime_ms": 7 * 86_400_000, "expires_after_ms": 86_400_000}
    assert kemu["produced"] == {"partition": 0, "offset": 0}
    assert kemu["described_hmac_matches"] == [True]
    assert kemu["after_expiry"] == SASL_FAILED
    check("java.delegation_tokens.lifecycle", scenario(java, kafka_brokers), kemu)
