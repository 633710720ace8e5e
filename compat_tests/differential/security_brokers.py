"""A secured pair of brokers for the security differential tests: Apache Kafka 4.3 and a `kemu serve`, each
with a PLAINTEXT listener and a SASL_PLAINTEXT one (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER) and the
StandardAuthorizer, made once per session whichever of the test modules asks first (`secured_pair`).

Principals: on PLAINTEXT every client is User:ANONYMOUS, a super user (Kafka's own brokers and controller
talk over PLAINTEXT and must be allowed everything), so a test makes topics and ACLs there. On SASL: `admin`
(a super user), `alice` (never given an ACL), `bob` (given ACLs by the tests that need them), `user-1`..`user-6`
(one a decision scenario), with PLAIN
passwords from the JAAS configuration, and `scram-user` with SCRAM-SHA-256 and -512 credentials made by
AlterUserScramCredentials. PLAIN sessions last `PLAIN_REAUTH_MS` (KIP-368's connections.max.reauth.ms,
so SaslAuthenticate v1+ tells a session lifetime); SCRAM sessions never expire.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

import pytest

from compat_tests import jars
from compat_tests.differential.conftest import kemu_twin_args
from compat_tests.differential.security_sasl import login, salted_password
from compat_tests.differential.targets import Pair, Target
from compat_tests.external_clients import tool_missing
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.reference.kafka import (
    HOST,
    KAFKA_JAR_SET,
    SASL_LISTENER,
    ReferenceKafka,
    ReferenceKafkaError,
    SaslListener,
    find_java,
)
from kemu.testing.ports import free_port
from tests.server.kafka_socket import KafkaSocket

ALTER_USER_SCRAM_CREDENTIALS = 51
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
PLAIN_USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret",
               # one each for the authorizer's decision scenarios, so no one's ACLs reach another's
               **{f"user-{index}": f"user-{index}-secret" for index in range(1, 7)}}
SCRAM_USER, SCRAM_PASSWORD, SCRAM_ITERATIONS = "scram-user", "scram-secret", 4096
PLAIN_REAUTH_MS = 3600000
SASL = SaslListener(MECHANISMS, PLAIN_USERS, {"plain.connections.max.reauth.ms": str(PLAIN_REAUTH_MS)})
SETTINGS = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin;User:ANONYMOUS",
}
READY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Secured(Target):
    """One secured broker: its address is the PLAINTEXT listener's (a super user), `sasl` the SASL_PLAINTEXT
    listener."""

    sasl: Target = Target("", "", 0)

    def as_user(self, user: str, mechanism: str = "PLAIN") -> KafkaSocket:
        """A SASL connection authenticated as `user` (one of PLAIN_USERS, or SCRAM_USER with a SCRAM mechanism)."""
        password = SCRAM_PASSWORD if user == SCRAM_USER else PLAIN_USERS[user]
        connection = self.sasl.connect()
        answered = login(connection, user, password, mechanism)
        if not isinstance(answered, dict) or answered["error_code"]:
            connection.close()
            raise AssertionError(f"{self.name}: cannot log in as {user} with {mechanism}: {answered}")
        return connection

    def request_as(self, user: str, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        with self.as_user(user) as connection:
            return connection.request(api_key, version, body)


SecuredPair = Pair[Secured]


def add_scram_user(target: Target) -> None:
    # One request a mechanism: Kafka refuses a user named twice in one request.
    for code, mechanism in ((1, "SCRAM-SHA-256"), (2, "SCRAM-SHA-512")):
        salt = secrets.token_bytes(16)
        upsertion = {"name": SCRAM_USER, "mechanism": code, "iterations": SCRAM_ITERATIONS, "salt": salt,
                     "salted_password": salted_password(mechanism, SCRAM_PASSWORD, salt, SCRAM_ITERATIONS)}
        answer = target.request(ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [], "upsertions": [upsertion]})
        if any(result["error_code"] for result in answer["results"]):
            raise AssertionError(f"{target.name}: AlterUserScramCredentials failed: {answer}")


def wait_for_scram(secured: Secured) -> None:
    """Kafka applies a credential through its metadata log: wait until the user can log in."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            secured.as_user(SCRAM_USER, "SCRAM-SHA-512").close()
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


class _Brokers:
    """The session's secured pair, started on first use and stopped when pytest finishes."""

    def __init__(self) -> None:
        self.pair: SecuredPair | None = None
        self.kafka: ReferenceKafka | None = None
        self.kemu: KemuServeProcess | None = None

    def get(self, config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> SecuredPair:
        if self.pair is not None:
            return self.pair
        java = find_java()
        if java is None:
            tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
        config.add_cleanup(self.stop)
        self.kafka = ReferenceKafka(classpath=jars.classpath(KAFKA_JAR_SET), java=java, settings=SETTINGS,
                                    sasl=SASL)
        try:
            self.kafka.start()
        except ReferenceKafkaError as exc:
            pytest.fail(f"the secured reference Kafka did not start: {exc}", pytrace=False)
        plain_port, sasl_port = free_port(), free_port()
        kemu_settings = {**SETTINGS, **SASL.settings(),
                         "listeners": f"PLAINTEXT://{HOST}:{plain_port},{SASL_LISTENER}://{HOST}:{sasl_port}",
                         "listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,{SASL_LISTENER}:{SASL_LISTENER}"}
        self.kemu = KemuServeProcess(tmp_path_factory.mktemp("kemu-secured"), port=plain_port,
                                     extra_args=kemu_twin_args(kemu_settings))
        self.kemu.start()
        (kafka_host, kafka_port), (kafka_sasl_host, kafka_sasl_port) = (self.kafka.addresses[0],
                                                                        self.kafka.sasl_addresses[0])
        pair = SecuredPair(
            kafka=Secured("kafka", kafka_host, kafka_port, Target("kafka", kafka_sasl_host, kafka_sasl_port)),
            kemu=Secured("kemu", HOST, plain_port, Target("kemu", HOST, sasl_port)))
        for secured in (pair.kafka, pair.kemu):
            add_scram_user(secured)
        for secured in (pair.kafka, pair.kemu):
            wait_for_scram(secured)
        self.pair = pair
        return pair

    def stop(self) -> None:
        if self.kemu is not None and self.kemu.is_running():
            self.kemu.stop_cleanly()
        if self.kafka is not None:
            self.kafka.stop()
        self.pair = self.kafka = self.kemu = None


_BROKERS = _Brokers()


@pytest.fixture(name="secured_pair")
def secured_pair_fixture(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> SecuredPair:
    """The secured Kafka and its kemu twin, one pair for the whole session (see the module's doc)."""
    return _BROKERS.get(request.config, tmp_path_factory)
