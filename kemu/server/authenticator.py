"""A SASL listener's authentication of one connection, as Kafka's SaslServerAuthenticator does it (no I/O).

Before a client has authenticated it may send ApiVersions (first only), then SaslHandshake naming a
mechanism the listener enables; then the mechanism's tokens: in SaslAuthenticate requests after a v1
handshake, or as raw size-prefixed frames after a v0 one. Anything else closes the connection, as Kafka's
InvalidRequestException / IllegalSaslStateException do; an unsupported mechanism is answered
UNSUPPORTED_SASL_MECHANISM and a failed login SASL_AUTHENTICATION_FAILED with Kafka's message, and the
connection is closed once that answer is sent.

KIP-368: with `connections.max.reauth.ms` (or a token's expiry) the session has a lifetime, told to the client
in SaslAuthenticate v1+; a SaslHandshake on a session with a lifetime begins a re-authentication (whatever
SaslAuthenticate version the client used, and at most once a second, as Kafka's KafkaChannel allows), and a
connection whose session has expired is closed at its next request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from kemu.handlers import Handler
from kemu.security.errors import SaslAuthenticationError, SaslMechanismError, SaslServerFailure
from kemu.security.settings import ListenerSecurity
from kemu.wire import codec
from kemu.wire.codec import DecodeError, Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    # The mechanisms load with a SASL listener's first handshake: a broker without one never imports them.
    from kemu.security.mechanisms import SaslServer, TokenCredential
    from kemu.security.scram import ScramCredential

log = logging.getLogger("kemu.server")

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
MIN_REAUTH_INTERVAL_MS = 1000  # KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS
_INVALID_FIRST = ("Invalid request, potential reasons: kafka client configured with the wrong security protocol, "
                  "it does not support KIP-43 or it is not a kafka client.")


# A NamedTuple, not a frozen dataclass: every server imports this module, SASL listener or not, and a
# dataclass definition compiles its generated methods (~0.5 ms on a slow machine).
class Step(NamedTuple):
    """What to do with one frame: send `payload` (a response or a raw token, unprefixed) and/or close the
    connection (after what is sent before), or let the connection serve it (`dispatch`)."""

    payload: bytes | None = None
    close: bool = False
    dispatch: bool = False
    reason: str = ""  # logged when closing
    # Kafka holds a connection whose authentication failed open a little (connection.failed.authentication.
    # delay.ms, KIP-306), so the client reads the failure before it sees the connection go.
    close_delay_ms: int = 0


class SaslAuthenticator:
    def __init__(self, security: ListenerSecurity, handlers: Mapping[int, Handler], now_ms: Callable[[], int],
                 scram_lookup: Callable[[str, str], ScramCredential | None], peer: str,
                 token_lookup: Callable[[str, str], TokenCredential | None] | None = None) -> None:
        self.security = security
        self.handlers = handlers
        self.now_ms = now_ms
        self.scram_lookup = scram_lookup
        self.token_lookup = token_lookup
        self.peer = peer
        self.state = "initial"  # initial, handshake, authenticate, complete, failed
        self.raw_tokens = False  # after a v0 handshake
        self.mechanism: str | None = None
        self.server: SaslServer | None = None
        self.principal: str | None = None
        self.session_expiry_ms: int | None = None
        self._last_reauth_start_ms: int | None = None
        self._reauth_of: tuple[str, str] | None = None  # (mechanism, principal) being re-authenticated
        self._bad_reauth_mechanism: str | None = None

    @property
    def authenticated(self) -> bool:
        return self.state == "complete"

    @property
    def token_authenticated(self) -> bool:
        """KafkaPrincipal.tokenAuthenticated: the session is a delegation token's (SCRAM with tokenauth)."""
        return self.authenticated and bool(getattr(self.server, "token_authenticated", False))

    def receive(self, frame: bytes | memoryview) -> Step:
        """`frame` is read here and not kept (the connection reuses its bytes)."""
        if self.state == "complete":
            return self._after_authentication(frame)
        if self.state == "authenticate":
            if self._bad_reauth_mechanism is not None:
                return self._fail(self._bad_reauth_mechanism)
            return self._raw_token(bytes(frame)) if self.raw_tokens else self._authenticate_request(frame)
        return self._kafka_request(frame)

    # ---- before the mechanism -------------------------------------------------------------------------
    def _kafka_request(self, frame: bytes | memoryview) -> Step:
        try:
            key, version, _ = codec.peek_header(frame)
        except DecodeError:
            return self._invalid(f"{_INVALID_FIRST} (frame too short for a request header)")
        if key not in (API_VERSIONS, SASL_HANDSHAKE):
            name = self.handlers[key].api.name if key in self.handlers else f"key {key}"
            message = f"Unexpected Kafka request of type {name} during SASL handshake."
            return self._invalid(f"{_INVALID_FIRST} ({message})" if self.state == "initial" else message)
        if key == API_VERSIONS:
            if self.state != "initial":
                return self._invalid("Unexpected ApiVersions request received during SASL authentication "
                                     f"state {self.state}")
            self.state = "handshake"
            return Step(dispatch=True)
        request = self._decode(frame)
        if request is None:
            return self._invalid(f"cannot decode SaslHandshake v{version}")
        mechanism = str(request.body["mechanism"])
        self.raw_tokens = version == 0
        enabled = list(self.security.mechanisms)
        if mechanism not in enabled:
            body = {"error_code": int(ErrorCode.UNSUPPORTED_SASL_MECHANISM), "mechanisms": enabled}
            return self._fail(f"Unsupported SASL mechanism {mechanism}", self._encode(request, body))
        reply = self._encode(request, {"error_code": 0, "mechanisms": enabled})
        if self._reauth_of is not None and mechanism != self._reauth_of[0]:
            # Kafka answers the handshake, then fails the exchange at the next token.
            self._bad_reauth_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not supported for "
                                          f"re-authentication of mechanism '{self._reauth_of[0]}'")
        self.mechanism = mechanism
        self.server = self._new_server(mechanism)
        self.state = "authenticate"
        return Step(reply)

    def _new_server(self, mechanism: str) -> SaslServer:
        from kemu.security.mechanisms import OAuthBearerServer, PlainServer, ScramServer, UnsecuredValidatorOptions
        from kemu.security.scram import SCRAM_MECHANISMS

        if mechanism == "PLAIN":
            return PlainServer(self.security.plain_users)
        if mechanism in SCRAM_MECHANISMS:
            return ScramServer(mechanism, self.scram_lookup, self.token_lookup)
        return OAuthBearerServer(self.security.oauth or UnsecuredValidatorOptions(), self.now_ms)

    # ---- the mechanism's exchange -------------------------------------------------------------------
    def _authenticate_request(self, frame: bytes | memoryview) -> Step:
        try:
            key, version, _ = codec.peek_header(frame)
        except DecodeError:
            return self._invalid("frame too short for a request header during SASL authentication")
        request = self._decode(frame)
        if key != SASL_AUTHENTICATE:
            message = f"Unexpected Kafka request of type {self._name(key)} during SASL authentication."
            handler = self.handlers.get(key)
            if request is None or handler is None or handler.error_response is None:
                return self._invalid(message)
            body = handler.error_response(request, ErrorCode.ILLEGAL_SASL_STATE, message)
            payload = None if body is None else codec.encode_response(handler.api, request.version,
                                                                       request.header.correlation_id, body)
            return self._fail(message, payload)
        if request is None:
            return self._invalid(f"cannot decode SaslAuthenticate v{version}")
        token = bytes(request.body["auth_bytes"])
        try:
            challenge = self._evaluate(token)
        except SaslServerFailure as exc:
            return self._invalid(f"SASL authentication failed: {exc}")
        except SaslAuthenticationError as exc:
            return self._fail(str(exc), self._failure(request, str(exc)))
        except SaslMechanismError as exc:
            told = self._invalid_credentials()
            return self._fail(f"{told}: {exc}", self._failure(request, told))
        lifetime = self._completed() if self.authenticated else 0
        # Kafka's response data leaves error_message at its default, the empty string.
        body = {"error_code": 0, "error_message": "", "auth_bytes": challenge, "session_lifetime_ms": lifetime}
        return Step(self._encode(request, body))

    def _raw_token(self, frame: bytes) -> Step:
        try:
            challenge = self._evaluate(frame)
        except SaslServerFailure as exc:
            return self._invalid(f"SASL authentication failed: {exc}")
        except SaslAuthenticationError as exc:
            return self._fail(str(exc))
        except SaslMechanismError as exc:
            return self._fail(f"{self._invalid_credentials()}: {exc}")
        if self.authenticated:
            self._completed()
        # Kafka sends every token the mechanism returns, PLAIN's empty one too (a frame of size 0).
        return Step(challenge)

    def _evaluate(self, token: bytes) -> bytes:
        assert self.server is not None
        challenge = self.server.evaluate(token)
        if self.server.complete:
            principal = self.server.principal
            if self._reauth_of is not None and principal != self._reauth_of[1]:
                old, new = self._reauth_of[1].split(":", 1), principal.split(":", 1)
                raise SaslAuthenticationError(f"Cannot change principals during re-authentication from "
                                              f"{old[0]}.{old[1]}: {new[0]}.{new[1]}")
            self.principal = principal
            self.state = "complete"
        return challenge

    def _completed(self) -> int:
        """KIP-368's session lifetime: the shorter of connections.max.reauth.ms and the credential's
        remaining life, 0 when neither applies (then the session never expires)."""
        assert self.server is not None and self.mechanism is not None
        now = self.now_ms()
        max_reauth = self.security.reauth_ms.get(self.mechanism, 0)
        expiry = self.server.credential_expiry_ms
        lifetime = 0
        self.session_expiry_ms = None
        if expiry is not None or max_reauth > 0:
            if expiry is None:
                lifetime = max(0, max_reauth)
            elif max_reauth <= 0:
                lifetime = max(0, expiry - now)
            else:
                lifetime = max(0, min(expiry - now, max_reauth))
            self.session_expiry_ms = now + lifetime
        text = "re-authenticated" if self._reauth_of is not None else "authenticated"
        log.info("%s %s as %s with %s%s", self.peer, text, self.principal, self.mechanism,
                 f" (session lifetime {lifetime} ms)" if self.session_expiry_ms is not None else "")
        self._reauth_of = None
        return lifetime

    # ---- after authentication -------------------------------------------------------------------------
    def _after_authentication(self, frame: bytes | memoryview) -> Step:
        try:
            key = codec.peek_header(frame)[0]
        except DecodeError:
            return Step(dispatch=True)  # the connection refuses it as any bad frame
        if key == SASL_HANDSHAKE and self._may_reauthenticate():
            assert self.mechanism is not None and self.principal is not None
            self._reauth_of = (self.mechanism, self.principal)
            self.state = "handshake"
            return self._kafka_request(frame)
        if self.session_expiry_ms is not None and self.now_ms() >= self.session_expiry_ms:
            return Step(close=True, reason=f"its SASL session (principal {self.principal}) expired at "
                                           f"{self.session_expiry_ms} ms and it did not re-authenticate")
        return Step(dispatch=True)

    def _may_reauthenticate(self) -> bool:
        """KafkaChannel.maybeBeginServerReauthentication: a session with a lifetime, and no re-authentication
        begun in the last second; else the handshake is served as any request (ILLEGAL_SASL_STATE)."""
        if self.session_expiry_ms is None:
            return False
        now = self.now_ms()
        if self._last_reauth_start_ms is not None and now - self._last_reauth_start_ms < MIN_REAUTH_INTERVAL_MS:
            return False
        self._last_reauth_start_ms = now
        return True

    # ---- helpers ------------------------------------------------------------------------------------
    def _invalid_credentials(self) -> str:
        what = "re-authentication" if self._reauth_of is not None else "authentication"
        return f"Authentication failed during {what} due to invalid credentials with SASL mechanism {self.mechanism}"

    def _failure(self, request: Request, message: str) -> bytes | None:
        body = {"error_code": int(ErrorCode.SASL_AUTHENTICATION_FAILED), "error_message": message,
                "auth_bytes": b"", "session_lifetime_ms": 0}
        return self._encode(request, body)

    def _fail(self, reason: str, payload: bytes | None = None) -> Step:
        self.state = "failed"
        return Step(payload, close=True, reason=f"SASL authentication failed: {reason}",
                    close_delay_ms=self.security.failed_authentication_delay_ms)

    def _invalid(self, reason: str) -> Step:
        self.state = "failed"
        return Step(close=True, reason=reason)

    def _name(self, key: int) -> str:
        handler = self.handlers.get(key)
        return handler.api.name if handler is not None else f"key {key}"

    def _decode(self, frame: bytes | memoryview) -> Request | None:
        try:
            key, version, _ = codec.peek_header(frame)
            handler = self.handlers.get(key)
            if handler is None or not handler.supports(version):
                return None
            return codec.decode_request(frame, allow_trailing=True)
        except DecodeError:
            return None
        except Exception:  # a codec gap must cost this connection only
            log.exception("cannot decode a request from %s during SASL authentication", self.peer)
            return None

    def _encode(self, request: Request, body: dict[str, Any]) -> bytes | None:
        try:
            return codec.encode_response(request.api, request.version, request.header.correlation_id, body)
        except Exception:
            log.exception("cannot encode a %s response to %s", request.api.name, self.peer)
            return None
