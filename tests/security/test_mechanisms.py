"""The SASL mechanisms' server side, against Kafka's messages: PLAIN, SCRAM-SHA-256/512, OAUTHBEARER."""

from __future__ import annotations

import base64
import json

import pytest

from kemu.security.errors import SaslAuthenticationError, SaslMechanismError, SaslServerFailure
from kemu.security.mechanisms import (
    InvalidToken,
    OAuthBearerServer,
    PlainServer,
    ScramServer,
    UnsecuredValidatorOptions,
    validate_unsecured_jwt,
)
from kemu.security.scram import ScramCredential, credential_from_password
from tests.security.oauth_tokens import oauth_first, unsecured_jwt
from tests.security.scram_client import ScramClient

NOW_MS = 1_700_000_000_000


def test_plain_accepts_the_configured_user() -> None:
    server = PlainServer({"alice": "alice-secret"})
    assert server.evaluate(b"\0alice\0alice-secret") == b""
    assert server.complete and server.principal == "User:alice"


@pytest.mark.parametrize(("token", "message"), [
    (b"\0alice\0wrong", "Authentication failed: Invalid username or password"),
    (b"\0nobody\0alice-secret", "Authentication failed: Invalid username or password"),
    (b"\0\0alice-secret", "Authentication failed: username not specified"),
    (b"\0alice\0", "Authentication failed: password not specified"),
    (b"bob\0alice\0alice-secret",
     "Authentication failed: Client requested an authorization id that is different from username"),
])
def test_plain_refuses_with_kafkas_messages(token: bytes, message: str) -> None:
    with pytest.raises(SaslAuthenticationError, match=f"^{message}$"):
        PlainServer({"alice": "alice-secret"}).evaluate(token)


@pytest.mark.parametrize(("token", "count"), [(b"\xff\xfe garbage", 1), (b"alice\0alice-secret", 2),
                                             (b"\0alice\0alice-secret\0", 4), (b"a\0b\0c\0d\0e\0f", 4)])
def test_plain_tells_how_many_tokens_it_found_as_kafka_does(token: bytes, count: int) -> None:
    """PlainSaslServer splits off at most four tokens, and its message reaches the client."""
    with pytest.raises(SaslAuthenticationError, match=f"^Invalid SASL/PLAIN response: expected 3 tokens, got {count}$"):
        PlainServer({"alice": "alice-secret"}).evaluate(token)


def _store(mechanism: str, password: str = "pencil", iterations: int = 4096) -> dict[tuple[str, str], ScramCredential]:
    return {("user", mechanism): credential_from_password(mechanism, password, iterations)}


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_exchange_proves_both_sides(mechanism: str) -> None:
    credentials = _store(mechanism)
    server = ScramServer(mechanism, lambda user, mech: credentials.get((user, mech)))
    client = ScramClient(mechanism, "user", "pencil")
    server_first = server.evaluate(client.first())
    assert server_first.startswith(f"r={client.nonce}".encode()) and b",i=4096" in server_first
    assert not server.complete
    server_final = server.evaluate(client.final(server_first))
    assert server.complete and server.principal == "User:user"
    assert client.verify(server_final)


def test_scram_wrong_password_is_invalid_client_credentials() -> None:
    credentials = _store("SCRAM-SHA-256")
    server = ScramServer("SCRAM-SHA-256", lambda user, mech: credentials.get((user, mech)))
    client = ScramClient("SCRAM-SHA-256", "user", "not-pencil")
    server_first = server.evaluate(client.first())
    with pytest.raises(SaslMechanismError, match="^Invalid client credentials$"):
        server.evaluate(client.final(server_first))
    assert not server.complete


def test_scram_unknown_user_and_other_mechanism_are_invalid_user_credentials() -> None:
    """A SaslException in Kafka's ScramSaslServer: the client is told only of invalid credentials."""
    credentials = _store("SCRAM-SHA-256")
    server = ScramServer("SCRAM-SHA-512", lambda user, mech: credentials.get((user, mech)))
    with pytest.raises(SaslMechanismError, match="^Authentication failed: Invalid user credentials$"):
        server.evaluate(ScramClient("SCRAM-SHA-512", "user", "pencil").first())


def test_scram_refuses_a_changed_nonce_and_garbage() -> None:
    credentials = _store("SCRAM-SHA-256")
    server = ScramServer("SCRAM-SHA-256", lambda user, mech: credentials.get((user, mech)))
    client = ScramClient("SCRAM-SHA-256", "user", "pencil")
    server_first = server.evaluate(client.first())
    with pytest.raises(SaslMechanismError, match="Invalid client nonce in the final client message."):
        server.evaluate(client.final(server_first, nonce="someone-elses-nonce"))
    with pytest.raises(SaslMechanismError, match="Invalid SCRAM client first message format"):
        ScramServer("SCRAM-SHA-256", lambda user, mech: None).evaluate(b"y,,n=user,r=abc")


def test_scram_accepts_a_final_nonce_ending_with_the_servers_as_kafka_does() -> None:
    credentials = _store("SCRAM-SHA-256")
    server = ScramServer("SCRAM-SHA-256", lambda user, mech: credentials.get((user, mech)))
    client = ScramClient("SCRAM-SHA-256", "user", "pencil")
    server_first = server.evaluate(client.first())
    doubled = client.nonce + server_first.decode().split(",")[0][2:]  # older librdkafka's client-final nonce
    server.evaluate(client.final(server_first, nonce=doubled))
    assert server.complete


def test_scram_other_authorization_id_is_refused() -> None:
    credentials = _store("SCRAM-SHA-256")
    server = ScramServer("SCRAM-SHA-256", lambda user, mech: credentials.get((user, mech)))
    with pytest.raises(SaslAuthenticationError, match="authorization id that is different from username"):
        server.evaluate(b"n,a=admin,n=user,r=abc")


_jwt, _first = unsecured_jwt, oauth_first


def test_unsecured_jwt_accepted_with_its_lifetime() -> None:
    server = OAuthBearerServer(UnsecuredValidatorOptions(), lambda: NOW_MS)
    token = _jwt({"sub": "bob", "exp": NOW_MS / 1000 + 60, "iat": NOW_MS / 1000 - 1, "scope": "a b"})
    assert server.evaluate(_first(token)) == b""
    assert server.principal == "User:bob" and server.credential_expiry_ms == NOW_MS + 60_000


@pytest.mark.parametrize(("claims", "header", "signature", "reason"), [
    ({"sub": "bob", "exp": NOW_MS / 1000 - 1}, None, "",
     f"The indicated time ({NOW_MS} ms) minus allowable clock skew (0 ms) was on or after the Expiration Time"),
    ({"sub": "bob"}, None, "", "No expiration time in JWT"),
    ({"exp": NOW_MS / 1000 + 60}, None, "", "No principal name in JWT claim: sub"),
    ({"sub": "bob", "exp": NOW_MS / 1000 + 60}, {"alg": "HS256"}, "",
     "Unsecured JWS must have 'none' for an algorithm"),
    ({"sub": "bob", "exp": NOW_MS / 1000 + 60}, None, "c2ln", "Unsecured JWS must not contain a digital signature"),
    ({"sub": "bob", "exp": NOW_MS / 1000 + 60, "iat": NOW_MS / 1000 + 30}, None, "", "The Issued At value"),
])
def test_unsecured_jwt_refusals(claims: dict[str, object], header: dict[str, object] | None, signature: str,
                                reason: str) -> None:
    with pytest.raises(InvalidToken, match=reason.replace("(", r"\(").replace(")", r"\)")):
        validate_unsecured_jwt(_jwt(claims, header, signature), UnsecuredValidatorOptions(), NOW_MS)


def test_required_scope_and_the_error_challenge_then_failure() -> None:
    options = UnsecuredValidatorOptions(required_scope=("kafka",))
    server = OAuthBearerServer(options, lambda: NOW_MS)
    challenge = server.evaluate(_first(_jwt({"sub": "bob", "exp": NOW_MS / 1000 + 60, "scope": ["other"]})))
    assert json.loads(challenge) == {"status": "insufficient_scope", "scope": "kafka"}
    assert not server.complete and "missing a required scope (kafka)" in str(server.rejection)
    with pytest.raises(SaslAuthenticationError, match='"status":"insufficient_scope"'):
        server.evaluate(b"\x01")


def test_expired_token_gets_invalid_token_then_fails() -> None:
    server = OAuthBearerServer(UnsecuredValidatorOptions(), lambda: NOW_MS)
    challenge = server.evaluate(_first(_jwt({"sub": "bob", "exp": NOW_MS / 1000 - 5})))
    assert json.loads(challenge) == {"status": "invalid_token"}
    with pytest.raises(SaslAuthenticationError):
        server.evaluate(b"\x01")


def test_oauthbearer_garbage_and_a_foreign_authzid() -> None:
    with pytest.raises(SaslMechanismError):
        OAuthBearerServer(UnsecuredValidatorOptions(), lambda: NOW_MS).evaluate(b"\x00\x01garbage")
    token = _jwt({"sub": "bob", "exp": NOW_MS / 1000 + 60})
    with pytest.raises(SaslAuthenticationError, match=r"authorization id \(admin\) that is different"):
        OAuthBearerServer(UnsecuredValidatorOptions(), lambda: NOW_MS).evaluate(_first(token, "admin"))


def test_oauthbearer_another_scheme_fails_as_kafkas_does() -> None:
    """Kafka's OAuthBearerClientInitialResponse reads the scheme from the wrong matcher: a scheme other than
    Bearer throws an exception its authenticator does not expect, which closes the connection unanswered;
    an auth value of another shape is the usual SaslException."""
    server = OAuthBearerServer(UnsecuredValidatorOptions(), lambda: NOW_MS)
    with pytest.raises(SaslServerFailure):
        server.evaluate(b"n,,\x01auth=Basic abc\x01\x01")
    with pytest.raises(SaslMechanismError):
        OAuthBearerServer(UnsecuredValidatorOptions(), lambda: NOW_MS).evaluate(b"n,,\x01auth=Bearer\x01\x01")


@pytest.mark.parametrize(("exp", "expiry_ms"), [
    (10**30, 2**63 - 1), (1e30, 2**63 - 1), (10**400, 2**63 - 1), (NOW_MS / 1000 + 1.0004, NOW_MS + 1000),
])
def test_an_expiry_past_javas_long_saturates_as_math_round_does(exp: float, expiry_ms: int) -> None:
    server = OAuthBearerServer(UnsecuredValidatorOptions(), lambda: NOW_MS)
    assert server.evaluate(_first(_jwt({"sub": "bob", "exp": exp}))) == b""
    assert server.credential_expiry_ms == expiry_ms


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_constants_jackson_refuses_are_malformed(constant: str) -> None:
    claims = base64.urlsafe_b64encode(f'{{"sub": "bob", "exp": {constant}}}'.encode()).rstrip(b"=").decode()
    header = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode()
    with pytest.raises(InvalidToken, match="malformed JSON"):
        validate_unsecured_jwt(f"{header}.{claims}.", UnsecuredValidatorOptions(), NOW_MS)
