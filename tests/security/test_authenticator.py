"""A SASL listener's authentication of one connection (kemu.server.authenticator), frame by frame: the
order Kafka's SaslServerAuthenticator enforces, its error codes and messages, v0 raw tokens, and KIP-368
re-authentication and session expiry."""

from __future__ import annotations

from typing import Any

from kemu.handlers import all_handlers
from kemu.security.scram import credential_from_password
from kemu.security.settings import security_settings
from kemu.server.authenticator import SaslAuthenticator, Step
from kemu.wire import codec
from kemu.wire.errors import ErrorCode
from tests.security.scram_client import ScramClient

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="b";'


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def authenticator(clock: Clock | None = None, reauth_ms: int = 0) -> SaslAuthenticator:
    settings = security_settings({
        "listeners": "SASL_PLAINTEXT://:9092", "inter.broker.listener.name": "SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "connections.max.reauth.ms": str(reauth_ms)}, "")
    credentials = {("alice", "SCRAM-SHA-256"): credential_from_password("SCRAM-SHA-256", "alice-secret")}
    return SaslAuthenticator(settings.by_listener["SASL_PLAINTEXT"], all_handlers(), clock or Clock(),
                             lambda user, mech: credentials.get((user, mech)), "test:1")


def request(key: int, version: int, body: dict[str, Any], correlation: int = 7) -> bytes:
    return codec.encode_request(key, version, correlation, body)


def response(key: int, version: int, step: Step) -> dict[str, Any]:
    assert step.payload is not None
    return codec.decode_response(key, version, step.payload)[1]


def handshake(auth: SaslAuthenticator, mechanism: str, version: int = 1) -> dict[str, Any]:
    return response(17, version, auth.receive(request(17, version, {"mechanism": mechanism})))


def authenticate(auth: SaslAuthenticator, token: bytes, version: int = 2) -> tuple[Step, dict[str, Any]]:
    step = auth.receive(request(36, version, {"auth_bytes": token}))
    return step, response(36, version, step)


def test_api_versions_then_plain_in_sasl_authenticate() -> None:
    auth = authenticator()
    assert auth.receive(request(18, 3, {"client_software_name": "t", "client_software_version": "1"})).dispatch
    assert handshake(auth, "PLAIN") == {"error_code": 0, "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    step, body = authenticate(auth, b"\0alice\0alice-secret")
    assert body["error_code"] == 0 and body["session_lifetime_ms"] == 0 and not step.close
    assert auth.authenticated and auth.principal == "User:alice"
    # Afterwards every request is the connection's to serve, a SaslHandshake too (no re-authentication).
    assert auth.receive(request(3, 12, {"topics": None})).dispatch
    assert auth.receive(request(17, 1, {"mechanism": "PLAIN"})).dispatch


def test_scram_in_sasl_authenticate_v1() -> None:
    auth = authenticator()
    handshake(auth, "SCRAM-SHA-256")
    client = ScramClient("SCRAM-SHA-256", "alice", "alice-secret")
    _, first = authenticate(auth, client.first(), 1)
    assert first["error_code"] == 0 and not auth.authenticated
    _, final = authenticate(auth, client.final(first["auth_bytes"]), 1)
    assert final["error_code"] == 0 and client.verify(final["auth_bytes"])
    assert auth.principal == "User:alice"


def test_v0_handshake_then_raw_tokens() -> None:
    auth = authenticator()
    handshake(auth, "SCRAM-SHA-256", version=0)
    client = ScramClient("SCRAM-SHA-256", "alice", "alice-secret")
    server_first = auth.receive(client.first()).payload
    assert server_first is not None and server_first.startswith(b"r=")
    server_final = auth.receive(client.final(server_first)).payload
    assert server_final is not None and client.verify(server_final) and auth.authenticated
    plain = authenticator()
    handshake(plain, "PLAIN", version=0)
    step = plain.receive(b"\0alice\0alice-secret")
    # Kafka sends PLAIN's empty token back: a frame of size 0, which a v0 client waits for.
    assert step.payload == b"" and not step.close and plain.authenticated


def test_a_v0_failure_closes_without_a_response() -> None:
    auth = authenticator()
    handshake(auth, "PLAIN", version=0)
    step = auth.receive(b"\0alice\0wrong")
    assert step.close and step.payload is None and "Invalid username or password" in step.reason


def test_wrong_password_is_sasl_authentication_failed_and_closes() -> None:
    auth = authenticator()
    handshake(auth, "PLAIN")
    step, body = authenticate(auth, b"\0alice\0wrong")
    assert step.close
    assert body["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert body["error_message"] == "Authentication failed: Invalid username or password"
    # KIP-306: the connection stays open connection.failed.authentication.delay.ms (100) after the failure.
    assert step.close_delay_ms == 100


def test_garbage_scram_token_gets_kafkas_generic_message() -> None:
    auth = authenticator()
    handshake(auth, "SCRAM-SHA-256")
    step, body = authenticate(auth, b"\x00\xff garbage")
    assert step.close and body["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert body["error_message"] == ("Authentication failed during authentication due to invalid credentials with "
                                     "SASL mechanism SCRAM-SHA-256")
    assert "Invalid SCRAM" in step.reason


def test_unsupported_mechanism_is_answered_then_closed() -> None:
    auth = authenticator()
    step = auth.receive(request(17, 1, {"mechanism": "GSSAPI"}))
    assert step.close
    assert response(17, 1, step) == {"error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                     "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}


def test_out_of_order_requests_close_the_connection() -> None:
    first = authenticator().receive(request(3, 12, {"topics": None}))
    assert first.close and first.payload is None and first.close_delay_ms == 0
    assert first.reason.startswith("Invalid request, potential reasons: kafka client configured with the wrong "
                                   "security protocol")
    assert authenticator().receive(b"\x16\x03\x01").close  # not even a request header (a TLS hello)
    auth = authenticator()
    auth.receive(request(18, 3, {"client_software_name": "t", "client_software_version": "1"}))
    again = auth.receive(request(18, 3, {"client_software_name": "t", "client_software_version": "1"}))
    assert again.close and "Unexpected ApiVersions request" in again.reason
    before_token = authenticator()
    handshake(before_token, "PLAIN")
    step = before_token.receive(request(3, 12, {"topics": None}))
    assert step.close and "Unexpected Kafka request of type Metadata during SASL authentication." in step.reason
    assert response(3, 12, step)["topics"] == []  # Metadata's error response, with ILLEGAL_SASL_STATE


def test_reauthentication_and_session_expiry() -> None:
    clock = Clock()
    auth = authenticator(clock, reauth_ms=60_000)
    handshake(auth, "PLAIN")
    _, body = authenticate(auth, b"\0alice\0alice-secret", 1)
    assert body["session_lifetime_ms"] == 60_000
    clock.now += 50_000
    assert auth.receive(request(3, 12, {"topics": None})).dispatch
    assert handshake(auth, "PLAIN")["error_code"] == 0  # KIP-368: re-authentication starts
    _, again = authenticate(auth, b"\0alice\0alice-secret", 1)
    assert again["error_code"] == 0 and again["session_lifetime_ms"] == 60_000
    clock.now += 59_999
    assert auth.receive(request(3, 12, {"topics": None})).dispatch
    clock.now += 1
    expired = auth.receive(request(3, 12, {"topics": None}))
    assert expired.close and "expired" in expired.reason


def test_reauthentication_may_not_change_principal_or_mechanism() -> None:
    auth = authenticator(reauth_ms=60_000)
    handshake(auth, "PLAIN")
    authenticate(auth, b"\0alice\0alice-secret", 1)
    handshake(auth, "PLAIN")
    step, body = authenticate(auth, b"\0bob\0b", 1)
    assert step.close
    assert body["error_message"] == "Cannot change principals during re-authentication from User.alice: User.bob"
    other = authenticator(reauth_ms=60_000)
    handshake(other, "PLAIN")
    authenticate(other, b"\0alice\0alice-secret", 1)
    assert handshake(other, "SCRAM-SHA-256")["error_code"] == 0
    refused = other.receive(request(36, 1, {"auth_bytes": b"n,,n=alice,r=x"}))
    assert refused.close and "not supported for re-authentication of mechanism 'PLAIN'" in refused.reason


def test_a_v0_client_reauthenticates_at_most_once_a_second_and_is_closed_on_expiry() -> None:
    """KafkaChannel re-authenticates any session with a lifetime, whatever SaslAuthenticate version its
    client used; a handshake within a second of the last re-authentication's start is served as a request
    (the handler's ILLEGAL_SASL_STATE)."""
    clock = Clock()
    auth = authenticator(clock, reauth_ms=1000)
    handshake(auth, "PLAIN")
    authenticate(auth, b"\0alice\0alice-secret", 0)
    assert handshake(auth, "PLAIN")["error_code"] == 0
    step, body = authenticate(auth, b"\0alice\0alice-secret", 0)
    assert body["error_code"] == 0 and auth.authenticated
    clock.now += 999
    assert auth.receive(request(17, 1, {"mechanism": "PLAIN"})).dispatch
    clock.now += 1
    assert handshake(auth, "PLAIN")["error_code"] == 0
    authenticate(auth, b"\0alice\0alice-secret", 0)
    clock.now += 1000
    assert auth.receive(request(3, 12, {"topics": None})).close


def test_a_session_without_a_lifetime_does_not_reauthenticate() -> None:
    auth = authenticator()
    handshake(auth, "PLAIN")
    authenticate(auth, b"\0alice\0alice-secret", 2)
    assert auth.receive(request(17, 1, {"mechanism": "PLAIN"})).dispatch


def test_a_second_handshake_before_the_token_is_illegal_sasl_state() -> None:
    auth = authenticator()
    handshake(auth, "PLAIN")
    step = auth.receive(request(17, 1, {"mechanism": "PLAIN"}))
    assert step.close and response(17, 1, step) == {"error_code": int(ErrorCode.ILLEGAL_SASL_STATE), "mechanisms": []}


def test_success_carries_an_empty_error_message() -> None:
    auth = authenticator()
    handshake(auth, "PLAIN")
    assert authenticate(auth, b"\0alice\0alice-secret")[1]["error_message"] == ""
