"""SCRAM with delegation tokens (ScramSaslServer's `tokenauth=true`): the token id as user name and its HMAC
in base64 as password authenticate as the token's owner, the session bounded by the token's expiry; an
unknown token fails as Kafka fails it, and a user's own credentials never pass as a token's."""

from __future__ import annotations

import base64
from pathlib import Path

from kemu.handlers import all_handlers
from kemu.security.mechanisms import TokenCredential
from kemu.security.scram import credential_from_password
from kemu.security.settings import security_settings
from kemu.security.tokens import DelegationTokens, TokenSettings
from kemu.server.authenticator import SaslAuthenticator
from kemu.wire.errors import ErrorCode
from tests.security.scram_client import ScramClient
from tests.security.test_authenticator import Clock, authenticate, handshake

SETTINGS = TokenSettings("secret", 7 * 86_400_000, 86_400_000, 3_600_000)


class TokenClient(ScramClient):
    """Kafka's ScramSaslClient with ScramLoginModule's tokenauth="true": the extension ends the first message's
    bare part (and so the auth message both sides sign)."""

    def __init__(self, mechanism: str, username: str, password: str) -> None:
        super().__init__(mechanism, username, password)
        self.client_first_bare += ",tokenauth=true"


def _authenticator(tokens: DelegationTokens, clock: Clock) -> SaslAuthenticator:
    settings = security_settings({
        "listeners": "SASL_PLAINTEXT://:9092", "inter.broker.listener.name": "SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512"}, "")
    users = {("alice", "SCRAM-SHA-256"): credential_from_password("SCRAM-SHA-256", "alice-secret")}

    def token_lookup(token_id: str, mechanism: str) -> TokenCredential | None:
        token = tokens.token(token_id)
        if token is None:
            return None
        return TokenCredential(tokens.scram_credential(token_id, mechanism), token.owner.split(":", 1)[1],
                               token.expiry_ms)

    return SaslAuthenticator(settings.by_listener["SASL_PLAINTEXT"], all_handlers(), clock,
                             lambda user, mech: users.get((user, mech)), "test:1", token_lookup)


def test_a_token_authenticates_as_its_owner_until_it_expires(tmp_path: Path) -> None:
    clock = Clock()
    tokens = DelegationTokens(SETTINGS, tmp_path)
    _, token = tokens.create("User:bob", "User:alice", [], 60_000, clock.now)
    assert token is not None
    password = base64.b64encode(tokens.hmac(token.token_id)).decode()
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        auth = _authenticator(tokens, clock)
        handshake(auth, mechanism)
        client = TokenClient(mechanism, token.token_id, password)
        _, first = authenticate(auth, client.first())
        _, final = authenticate(auth, client.final(first["auth_bytes"]))
        assert final["error_code"] == 0 and client.verify(final["auth_bytes"])
        assert auth.principal == "User:bob" and auth.token_authenticated
        # KIP-368: the session lasts as long as the token.
        assert final["session_lifetime_ms"] == 60_000
    clock.now += 60_000
    assert auth.receive(b"\x00\x03\x00\x0c\x00\x00\x00\x01\x00\x00").dispatch is False


def test_unknown_or_removed_tokens_and_user_passwords_fail(tmp_path: Path) -> None:
    clock = Clock()
    tokens = DelegationTokens(SETTINGS, tmp_path)
    _, token = tokens.create("User:bob", "User:bob", [], -1, clock.now)
    assert token is not None
    hmac = tokens.hmac(token.token_id)
    assert tokens.expire(hmac, "User:bob", -1, clock.now) == ("NONE", clock.now)
    auth = _authenticator(tokens, clock)
    handshake(auth, "SCRAM-SHA-256")
    step, answer = authenticate(auth, TokenClient("SCRAM-SHA-256", token.token_id, base64.b64encode(hmac).decode())
                                .first())
    assert answer["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED and step.close
    assert answer["error_message"] == ("Authentication failed during authentication due to invalid credentials with "
                                       "SASL mechanism SCRAM-SHA-256")
    # A user's own name and password are no token.
    auth = _authenticator(tokens, clock)
    handshake(auth, "SCRAM-SHA-256")
    _, answer = authenticate(auth, TokenClient("SCRAM-SHA-256", "alice", "alice-secret").first())
    assert answer["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
    # And a wrong HMAC fails at the proof.
    _, live = tokens.create("User:bob", "User:bob", [], -1, clock.now)
    assert live is not None
    auth = _authenticator(tokens, clock)
    handshake(auth, "SCRAM-SHA-256")
    client = TokenClient("SCRAM-SHA-256", live.token_id, "not-the-hmac")
    _, first = authenticate(auth, client.first())
    _, final = authenticate(auth, client.final(first["auth_bytes"]))
    assert final["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED and not auth.authenticated


def test_tokens_persist_and_their_hmacs_follow_the_secret(tmp_path: Path) -> None:
    tokens = DelegationTokens(SETTINGS, tmp_path)
    _, token = tokens.create("User:bob", "User:alice", ["User:carol"], -1, 1000)
    assert token is not None
    again = DelegationTokens(SETTINGS, tmp_path)
    assert again.tokens() == [token]
    assert again.for_hmac(tokens.hmac(token.token_id)) == token
    assert again.renew(tokens.hmac(token.token_id), "User:carol", 10, 2000) == ("NONE", 2010)
    assert DelegationTokens(SETTINGS, tmp_path).token(token.token_id) == token._replace(expiry_ms=2010)
    # Kafka keeps no HMAC: it is the secret's over the id, so another secret makes the old one unknown.
    other = DelegationTokens(SETTINGS._replace(secret="another"), tmp_path)
    assert other.for_hmac(tokens.hmac(token.token_id)) is None and other.token(token.token_id) is not None
    assert DelegationTokens(SETTINGS, tmp_path).sweep(2010) == []  # expiry < now, as Kafka compares
    assert DelegationTokens(SETTINGS, tmp_path).sweep(2011) == [token.token_id]
    assert DelegationTokens(SETTINGS, tmp_path).tokens() == []


def test_an_expired_token_not_yet_swept_logs_in_to_a_session_already_over(tmp_path: Path) -> None:
    # Kafka's token cache keeps an expired token until the controller's sweep: the login succeeds, with a
    # session lifetime of 0 (KIP-368), and the connection is closed at its next request.
    clock = Clock()
    tokens = DelegationTokens(SETTINGS._replace(expiry_time_ms=1000), tmp_path)
    _, token = tokens.create("User:bob", "User:bob", [], -1, clock.now)
    assert token is not None
    clock.now += 5000
    auth = _authenticator(tokens, clock)
    handshake(auth, "SCRAM-SHA-256")
    client = TokenClient("SCRAM-SHA-256", token.token_id, base64.b64encode(tokens.hmac(token.token_id)).decode())
    _, first = authenticate(auth, client.first())
    _, final = authenticate(auth, client.final(first["auth_bytes"]))
    assert (final["error_code"], final["session_lifetime_ms"]) == (0, 0)
    step = auth.receive(b"\x00\x03\x00\x0c\x00\x00\x00\x01\x00\x00")
    assert step.close and not step.dispatch
