"""SASL, Kafka against kemu, on a SASL_PLAINTEXT listener (PLAIN, SCRAM-SHA-256/512) by raw requests: the
handshake's answers, failed and successful logins with their messages and session lifetimes, requests out of
turn, and whether the broker closes the connection after each.

An observation is the list of what each step got (the decoded answer, or "<closed>"), then whether the
connection was closed after the last one. SCRAM's challenges carry a random nonce and salt: only their shape
is kept (`auth_bytes` becomes the names of the SCRAM attributes it holds).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.security_brokers import (  # noqa: F401 (secured_pair_fixture: the fixture)
    PLAIN_USERS,
    SCRAM_PASSWORD,
    SCRAM_USER,
    Secured,
    SecuredPair,
    secured_pair_fixture,
)
from compat_tests.differential.security_sasl import (
    API_VERSIONS,
    CLOSED,
    METADATA,
    SASL_AUTHENTICATE,
    SASL_HANDSHAKE,
    ScramClient,
    answer,
    authenticate,
    closed_after,
    handshake,
    plain_token,
    raw_answer,
)
from tests.security.oauth_tokens import oauth_first, unsecured_jwt
from tests.server.kafka_socket import KafkaSocket

Steps = Callable[[KafkaSocket], list[Any]]
METADATA_BODY = {"topics": [], "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}
API_VERSIONS_BODY = {"client_software_name": "kemu-differential", "client_software_version": "1"}


def shape(value: Any) -> Any:
    """An answer with SCRAM's random parts reduced to which attributes the token has."""
    if isinstance(value, dict):
        found = dict(value)
        if found.get("auth_bytes"):
            token = bytes(found["auth_bytes"]).decode(errors="replace")
            found["auth_bytes"] = [item.split("=", 1)[0] for item in token.split(",")]
        found.pop("api_keys", None)  # ApiVersions' list is test_api_versions.py's
        found.pop("supported_features", None)
        found.pop("finalized_features", None)
        found.pop("finalized_features_epoch", None)
        found.pop("brokers", None)  # ports and node ids: the Metadata answer's presence is what counts here
        return found
    if isinstance(value, bytes):
        return [item.split("=", 1)[0] for item in value.decode(errors="replace").split(",")] if value else []
    return value


def after(connection: KafkaSocket, last: Any) -> dict[str, Any]:
    """Whether the broker then closed the connection, asked only after a failure: waiting for a close that
    does not come costs CLOSE_WAIT_S, and a successful last answer already shows the connection open."""
    if last == CLOSED or (isinstance(last, dict) and not last.get("error_code")):
        return {}
    return {"closed_after": closed_after(connection)}


def observe(steps: Steps) -> Callable[[Secured], dict[str, Any]]:
    def run(secured: Secured) -> dict[str, Any]:
        with secured.sasl.connect() as connection:
            got = [shape(item) for item in steps(connection)]
            return {"steps": got, **after(connection, got[-1])}

    return run


def compare(secured_pair: SecuredPair, scenario: str, steps: Steps) -> None:
    kafka, kemu = secured_pair.both(observe(steps))
    check(f"security.sasl.{scenario}", kafka, kemu)


@pytest.mark.parametrize("version", [0, 1])
def test_unsupported_mechanism(secured_pair: SecuredPair, version: int) -> None:
    compare(secured_pair, f"unsupported_mechanism.v{version}",
            lambda c: [handshake(c, "GSSAPI", version), answer(c, METADATA, 12, METADATA_BODY)])


def test_mechanism_names_are_case_sensitive(secured_pair: SecuredPair) -> None:
    compare(secured_pair, "lower_case_mechanism", lambda c: [handshake(c, "plain")])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_plain_wrong_password(secured_pair: SecuredPair, version: int) -> None:
    compare(secured_pair, f"plain_wrong_password.v{version}",
            lambda c: [handshake(c, "PLAIN"), authenticate(c, plain_token("alice", "wrong"), version)])


@pytest.mark.parametrize("token", [plain_token("nobody", "secret"), plain_token("", "secret"),
                                   plain_token("alice", ""), plain_token("alice", "alice-secret", "bob"),
                                   b"alice\0alice-secret", b"\0alice\0alice-secret\0"],
                         ids=["unknown_user", "no_user", "no_password", "other_authzid", "two_tokens",
                              "four_tokens"])
def test_plain_refused(secured_pair: SecuredPair, token: bytes, request: pytest.FixtureRequest) -> None:
    compare(secured_pair, f"plain_refused.{request.node.callspec.id}",
            lambda c: [handshake(c, "PLAIN"), authenticate(c, token)])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_plain_success_and_session_lifetime(secured_pair: SecuredPair, version: int) -> None:
    compare(secured_pair, f"plain_success.v{version}",
            lambda c: [handshake(c, "PLAIN"), authenticate(c, plain_token("alice", PLAIN_USERS["alice"]), version),
                       answer(c, METADATA, 12, METADATA_BODY)])


def test_plain_with_a_v0_handshake_sends_raw_tokens(secured_pair: SecuredPair) -> None:
    compare(secured_pair, "plain_raw_tokens",
            lambda c: [handshake(c, "PLAIN", 0), raw_answer(c, plain_token("alice", PLAIN_USERS["alice"])),
                       answer(c, METADATA, 12, METADATA_BODY)])


def test_plain_raw_token_refused(secured_pair: SecuredPair) -> None:
    compare(secured_pair, "plain_raw_token_refused",
            lambda c: [handshake(c, "PLAIN", 0), raw_answer(c, plain_token("alice", "wrong"))])


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_unknown_user(secured_pair: SecuredPair, mechanism: str) -> None:
    compare(secured_pair, f"scram_unknown_user.{mechanism}",
            lambda c: [handshake(c, mechanism), authenticate(c, ScramClient(mechanism, "nobody", "x").first())])


def scram_steps(mechanism: str, password: str, version: int = 2) -> Steps:
    def steps(c: KafkaSocket) -> list[Any]:
        client = ScramClient(mechanism, SCRAM_USER, password)
        got: list[Any] = [handshake(c, mechanism), authenticate(c, client.first(), version)]
        if isinstance(got[-1], dict) and not got[-1]["error_code"]:
            got.append(authenticate(c, client.final(bytes(got[-1]["auth_bytes"])), version))
        return got + [answer(c, METADATA, 12, METADATA_BODY)]

    return steps


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_wrong_password(secured_pair: SecuredPair, mechanism: str) -> None:
    compare(secured_pair, f"scram_wrong_password.{mechanism}", scram_steps(mechanism, "wrong"))


@pytest.mark.parametrize("version", [0, 1, 2])
def test_scram_success(secured_pair: SecuredPair, version: int) -> None:
    compare(secured_pair, f"scram_success.v{version}", scram_steps("SCRAM-SHA-256", SCRAM_PASSWORD, version))


def test_scram_with_the_other_mechanism(secured_pair: SecuredPair) -> None:
    """SCRAM-SHA-256's first message on a SCRAM-SHA-512 handshake: the user has both, so it is fine."""
    compare(secured_pair, "scram_mismatch", lambda c: [
        handshake(c, "SCRAM-SHA-512"), authenticate(c, ScramClient("SCRAM-SHA-256", SCRAM_USER, "x").first())])


def test_scram_malformed_first_message(secured_pair: SecuredPair) -> None:
    compare(secured_pair, "scram_malformed", lambda c: [handshake(c, "SCRAM-SHA-256"), authenticate(c, b"hello")])


@pytest.mark.parametrize("first", ["metadata", "sasl_authenticate"])
def test_request_before_handshake(secured_pair: SecuredPair, first: str) -> None:
    request = ((METADATA, 12, METADATA_BODY) if first == "metadata"
               else (SASL_AUTHENTICATE, 2, {"auth_bytes": plain_token("alice", "alice-secret")}))
    compare(secured_pair, f"before_handshake.{first}", lambda c: [answer(c, *request)])


def test_request_after_api_versions(secured_pair: SecuredPair) -> None:
    compare(secured_pair, "after_api_versions",
            lambda c: [answer(c, API_VERSIONS, 3, API_VERSIONS_BODY), answer(c, METADATA, 12, METADATA_BODY)])


def test_api_versions_twice(secured_pair: SecuredPair) -> None:
    compare(secured_pair, "api_versions_twice",
            lambda c: [answer(c, API_VERSIONS, 3, API_VERSIONS_BODY), answer(c, API_VERSIONS, 3, API_VERSIONS_BODY)])


@pytest.mark.parametrize("second", ["metadata", "api_versions", "sasl_handshake"])
def test_request_between_handshake_and_authenticate(secured_pair: SecuredPair, second: str) -> None:
    request = {"metadata": (METADATA, 12, METADATA_BODY), "api_versions": (API_VERSIONS, 3, API_VERSIONS_BODY),
               "sasl_handshake": (SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})}[second]
    compare(secured_pair, f"between_handshake_and_authenticate.{second}",
            lambda c: [handshake(c, "PLAIN"), answer(c, *request)])


@pytest.mark.parametrize("version", [0, 2])
def test_handshake_after_authentication(secured_pair: SecuredPair, version: int) -> None:
    """A second SaslHandshake: re-authentication (KIP-368) only for a client that sent SaslAuthenticate v1+
    on a session with a lifetime (PLAIN's here)."""
    compare(secured_pair, f"handshake_after_authentication.v{version}", lambda c: [
        handshake(c, "PLAIN"), authenticate(c, plain_token("alice", PLAIN_USERS["alice"]), version),
        handshake(c, "PLAIN"), authenticate(c, plain_token("alice", PLAIN_USERS["alice"]), version),
        answer(c, METADATA, 12, METADATA_BODY)])


def test_reauthentication_as_another_principal(secured_pair: SecuredPair) -> None:
    compare(secured_pair, "reauthentication_other_principal", lambda c: [
        handshake(c, "PLAIN"), authenticate(c, plain_token("alice", PLAIN_USERS["alice"])),
        handshake(c, "PLAIN"), authenticate(c, plain_token("bob", PLAIN_USERS["bob"]))])


def test_reauthentication_with_another_mechanism(secured_pair: SecuredPair) -> None:
    compare(secured_pair, "reauthentication_other_mechanism", lambda c: [
        handshake(c, "PLAIN"), authenticate(c, plain_token("alice", PLAIN_USERS["alice"])),
        handshake(c, "SCRAM-SHA-256"), authenticate(c, ScramClient("SCRAM-SHA-256", SCRAM_USER, "x").first())])


@pytest.mark.parametrize("key", [SASL_HANDSHAKE, SASL_AUTHENTICATE], ids=["sasl_handshake", "sasl_authenticate"])
def test_sasl_on_the_plaintext_listener(secured_pair: SecuredPair, key: int) -> None:
    body = {"mechanism": "PLAIN"} if key == SASL_HANDSHAKE else {"auth_bytes": plain_token("a", "b")}

    def run(secured: Secured) -> dict[str, Any]:
        with secured.connect() as connection:
            got = shape(answer(connection, key, 1, body))
            return {"steps": [got], **after(connection, got)}

    kafka, kemu = secured_pair.both(run)
    check(f"security.sasl.plaintext_listener.{key}", kafka, kemu)


HOUR_S = 3600


def tokens() -> dict[str, bytes]:
    now = int(time.time())
    return {
        "valid": oauth_first(unsecured_jwt({"sub": "alice", "exp": now + HOUR_S, "iat": now})),
        "expired": oauth_first(unsecured_jwt({"sub": "alice", "exp": now - HOUR_S, "iat": now - 2 * HOUR_S})),
        "no_expiry": oauth_first(unsecured_jwt({"sub": "alice", "iat": now})),
        "no_subject": oauth_first(unsecured_jwt({"exp": now + HOUR_S})),
        "signed": oauth_first(unsecured_jwt({"sub": "alice", "exp": now + HOUR_S}, {"alg": "HS256"})),
        "with_signature": oauth_first(unsecured_jwt({"sub": "alice", "exp": now + HOUR_S}, signature="c2ln")),
        "two_parts": oauth_first("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9"),
        "other_authzid": oauth_first(unsecured_jwt({"sub": "alice", "exp": now + HOUR_S}), authzid="bob"),
        "no_bearer": b"n,,\x01auth=Basic abc\x01\x01",
        "garbage": b"hello",
    }


def lifetime_shape(value: Any) -> Any:
    """A session lifetime that follows the token's expiry counts the milliseconds left: kept as whether it is
    within the token's hour (the exact value depends on when each broker was asked)."""
    if isinstance(value, dict) and value.get("session_lifetime_ms"):
        return {**value, "session_lifetime_ms": 0 < value["session_lifetime_ms"] <= HOUR_S * 1000}
    return value


@pytest.mark.parametrize("case", list(tokens()))
def test_oauthbearer(secured_pair: SecuredPair, case: str) -> None:
    def steps(c: KafkaSocket) -> list[Any]:
        got: list[Any] = [handshake(c, "OAUTHBEARER"), lifetime_shape(authenticate(c, tokens()[case]))]
        last = got[-1]
        if isinstance(last, dict) and not last["error_code"] and last["auth_bytes"]:
            got.append(authenticate(c, b"\x01"))  # RFC 7628: the client acknowledges the error challenge
        elif isinstance(last, dict) and not last["error_code"]:
            got.append(answer(c, METADATA, 12, METADATA_BODY))
        return got

    compare(secured_pair, f"oauthbearer.{case}", steps)
