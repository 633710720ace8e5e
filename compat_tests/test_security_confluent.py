"""confluent-kafka (librdkafka) against kemu's TLS and SASL listeners: SCRAM-SHA-512, SCRAM-SHA-256, PLAIN and
OAUTHBEARER over SASL_SSL, mTLS with the certificate's subject as the principal, a wrong password seen as
librdkafka's authentication error with Kafka's message, Metadata answering each listener's clients with
that listener's address, and SCRAM users made and removed through the admin API (KIP-554)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from compat_tests.polling import wait_for
from compat_tests.security_support import USERS, SecuredBroker, secured  # noqa: F401
from kemu.testing import Broker
from kemu.testing.certs import TestCertificates

pytestmark = pytest.mark.timeout(120)


def _sasl_ssl(secured: SecuredBroker, mechanism: str, password: str = USERS["alice"]) -> dict[str, Any]:  # noqa: F811
    settings: dict[str, Any] = {"bootstrap.servers": secured.bootstrap("SASL_SSL"), "security.protocol": "SASL_SSL",
                                "ssl.ca.location": str(secured.certs.ca_file), "sasl.mechanism": mechanism}
    if mechanism == "OAUTHBEARER":
        settings |= {"enable.sasl.oauthbearer.unsecure.jwt": True, "sasl.oauthbearer.config": "principal=alice"}
    else:
        settings |= {"sasl.username": "alice", "sasl.password": password}
    return settings


def _round_trip(settings: dict[str, Any], topic: str) -> list[bytes]:
    producer = Producer(settings)
    producer.produce(topic, b"secret record")
    assert producer.flush(30) == 0
    consumer = Consumer({**settings, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        got: list[bytes] = []

        def consumed() -> list[bytes]:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append(message.value())
            return got

        return wait_for(consumed, what=f"the record back over {settings['security.protocol']}", timeout=60)
    finally:
        consumer.close()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN", "OAUTHBEARER"])
def test_produce_and_consume_over_sasl_ssl(secured: SecuredBroker, mechanism: str, topic_name: str) -> None:  # noqa: F811
    assert _round_trip(_sasl_ssl(secured, mechanism), topic_name) == [b"secret record"]
    assert "User:alice" in secured.seen("SASL_SSL")


def test_scram_over_sasl_plaintext(secured: SecuredBroker, topic_name: str) -> None:  # noqa: F811
    settings = {"bootstrap.servers": secured.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": USERS["alice"]}
    assert _round_trip(settings, topic_name) == [b"secret record"]


def test_mtls_principal_is_the_certificate_subject(secured: SecuredBroker, topic_name: str) -> None:  # noqa: F811
    client = secured.certs.client
    settings = {"bootstrap.servers": secured.bootstrap("SSL"), "security.protocol": "SSL",
                "ssl.ca.location": str(secured.certs.ca_file), "ssl.certificate.location": str(client.certificate_file),
                "ssl.key.location": str(client.key_file)}
    assert _round_trip(settings, topic_name) == [b"secret record"]
    assert secured.seen("SSL") == {"User:CN=client,OU=test,O=kemu"}


def test_mtls_without_a_client_certificate_is_refused(secured: SecuredBroker) -> None:  # noqa: F811
    errors: list[KafkaError] = []
    producer = Producer({"bootstrap.servers": secured.bootstrap("SSL"), "security.protocol": "SSL",
                         "ssl.ca.location": str(secured.certs.ca_file), "error_cb": errors.append})
    wait_for(lambda: producer.poll(0.2) is not None and errors, what="librdkafka's TLS failure")
    assert any(e.code() in (KafkaError._SSL, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN) for e in errors)


def test_a_client_certificate_of_another_ca_gets_the_tls_alert(secured: SecuredBroker,  # noqa: F811
                                                               tmp_path: Path) -> None:
    # The broker sends the alert before it closes, as Kafka's SslTransportLayer does: librdkafka reports the SSL
    # alert (its suite's 0097 looks for it), not a connection dropped mid-handshake.
    stranger = TestCertificates.create(tmp_path).client
    errors: list[KafkaError] = []
    producer = Producer({"bootstrap.servers": secured.bootstrap("SSL"), "security.protocol": "SSL",
                         "ssl.ca.location": str(secured.certs.ca_file),
                         "ssl.certificate.location": str(stranger.certificate_file),
                         "ssl.key.location": str(stranger.key_file), "error_cb": errors.append})
    wait_for(lambda: producer.poll(0.2) is not None and errors, what="librdkafka's TLS failure")
    assert any("SSL alert number" in e.str() for e in errors), [e.str() for e in errors]


def test_wrong_password_is_kafkas_authentication_error(secured: SecuredBroker) -> None:  # noqa: F811
    errors: list[KafkaError] = []
    producer = Producer({**_sasl_ssl(secured, "SCRAM-SHA-512", password="wrong"), "error_cb": errors.append})

    def failed() -> KafkaError | None:
        producer.poll(0.2)
        return next((e for e in errors if e.code() == KafkaError._AUTHENTICATION), None)

    error = wait_for(failed, what="librdkafka's SASL authentication error")
    assert ("Authentication failed during authentication due to invalid credentials with SASL mechanism "
            "SCRAM-SHA-512") in error.str()
    plain_errors: list[KafkaError] = []
    plain = Producer({**_sasl_ssl(secured, "PLAIN", password="wrong"), "error_cb": plain_errors.append})
    wait_for(lambda: plain.poll(0.2) is not None and any(
        "Authentication failed: Invalid username or password" in e.str() for e in plain_errors),
        what="PLAIN's failure message")


def test_metadata_advertises_the_listener_the_client_came_in_on(secured: SecuredBroker) -> None:  # noqa: F811
    for listener, settings in [
        ("PLAINTEXT", {"bootstrap.servers": secured.bootstrap("PLAINTEXT")}),
        ("SASL_SSL", _sasl_ssl(secured, "SCRAM-SHA-512")),
    ]:
        metadata = AdminClient(settings).list_topics(timeout=30)
        brokers = [f"{b.host}:{b.port}" for b in metadata.brokers.values()]
        assert brokers == [secured.bootstrap(listener)]
    assert secured.bootstrap("PLAINTEXT") != secured.bootstrap("SASL_SSL")


def test_scram_users_made_and_removed_by_the_admin_api(secured: SecuredBroker) -> None:  # noqa: F811
    """KIP-554 through librdkafka's admin client: a user made with AlterUserScramCredentials logs in with
    its password at once; described with its iterations; deleted, it can no longer log in."""
    admin = AdminClient(_sasl_ssl(secured, "SCRAM-SHA-512"))
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)
    for future in admin.alter_user_scram_credentials(
            [UserScramCredentialUpsertion("carol", info, b"carol-secret")]).values():
        future.result(30)
    described = admin.describe_user_scram_credentials(["carol"])["carol"].result(30)
    assert [(i.mechanism, i.iterations) for i in described.scram_credential_infos] == [
        (ScramMechanism.SCRAM_SHA_512, 8192)]
    carol = {**_sasl_ssl(secured, "SCRAM-SHA-512"), "sasl.username": "carol", "sasl.password": "carol-secret"}
    assert AdminClient(carol).list_topics(timeout=30).brokers
    for future in admin.alter_user_scram_credentials(
            [UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_512)]).values():
        future.result(30)
    errors: list[KafkaError] = []
    producer = Producer({**carol, "error_cb": errors.append})
    wait_for(lambda: producer.poll(0.2) is not None and any(e.code() == KafkaError._AUTHENTICATION for e in errors),
             what="carol's login refused once her credential is deleted")
    too_few = admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion("dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1024), b"x")])
    with pytest.raises(KafkaException, match="Too few iterations"):
        too_few["dave"].result(30)


def test_librdkafka_reauthenticates_before_its_session_ends(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                           topic_name: str) -> None:
    """KIP-368: with connections.max.reauth.ms the broker tells the client its session lifetime
    (SaslAuthenticate v1+), and librdkafka re-authenticates on the same connection before it ends; records
    produced across several sessions all arrive."""
    certs = TestCertificates.create(tmp_path)
    config = certs.broker_config("SASL_PLAINTEXT", users=USERS, extra={"connections.max.reauth.ms": "1500"})
    with caplog.at_level(logging.INFO, "kemu.server"), Broker(config=config) as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
                             "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice",
                             "sasl.password": USERS["alice"]})
        sent = 0

        def reauthenticated() -> bool:
            nonlocal sent
            producer.produce(topic_name, b"%d" % sent)
            assert producer.flush(30) == 0
            sent += 1
            return any("re-authenticated as User:alice with SCRAM-SHA-512 (session lifetime 1500 ms)"
                       in r.getMessage() for r in caplog.records)

        wait_for(reauthenticated, what="librdkafka re-authenticating", timeout=30)
        assert not any("expired" in r.getMessage() for r in caplog.records)
        assert len(broker.records(topic_name)) == sent


def test_mtls_principal_through_mapping_rules_on_every_broker_of_a_cluster(tmp_path: Path, topic_name: str) -> None:
    """ssl.principal.mapping.rules turn the client certificate's DN into the principal; on a cluster every
    node has every listener, and librdkafka is told each node's SSL address."""
    certs = TestCertificates.create(tmp_path)
    config = certs.broker_config("SSL", client_auth="required", extra={
        "ssl.principal.mapping.rules": "RULE:^CN=([^,]*),OU=test,.*$/$1@test/U,DEFAULT"})
    principals: set[str] = set()
    with Broker(config=config, brokers=2) as broker:
        broker.hooks.observe(lambda exchange: principals.add(exchange.ctx.client.principal))
        client = certs.client
        settings = {"bootstrap.servers": broker.bootstrap("SSL"), "security.protocol": "SSL",
                    "ssl.ca.location": str(certs.ca_file), "ssl.certificate.location": str(client.certificate_file),
                    "ssl.key.location": str(client.key_file)}
        metadata = AdminClient(settings).list_topics(timeout=30)
        assert sorted(f"{b.host}:{b.port}" for b in metadata.brokers.values()) == sorted(
            broker.bootstrap("SSL", node_id=node) for node in (1, 2))
        assert _round_trip(settings, topic_name) == [b"secret record"]
    assert principals == {"User:CLIENT@TEST"}
