"""The server side of the SASL mechanisms, as Kafka's SaslServer implementations answer: PLAIN
(PlainSaslServer with its JAAS `user_<name>` credentials), SCRAM-SHA-256/512 (ScramSaslServer, RFC 5802 /
7677, over the credential store) and OAUTHBEARER (OAuthBearerSaslServer with the unsecured JWT validator,
RFC 7628). Each is a small state machine: `evaluate(token)` returns the next challenge, raises
`SaslAuthenticationError` (its message goes to the client) or `SaslMechanismError` (the client is told its
credentials were invalid), and sets `complete` and `principal` once the client has proved who it is.
"""

from __future__ import annotations

import base64
import hmac
import json
import math
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from kemu.security.errors import SaslAuthenticationError, SaslMechanismError, SaslServerFailure
from kemu.security.scram import SCRAM_MECHANISMS, ScramCredential, client_proof_matches, server_signature

SUPPORTED_MECHANISMS = ("PLAIN", *SCRAM_MECHANISMS, "OAUTHBEARER")


class SaslServer:
    mechanism: str = ""

    def __init__(self) -> None:
        self.complete = False
        self.username = ""  # the authenticated name, once complete
        self.credential_expiry_ms: int | None = None  # a token's expiry bounds the session (KIP-368)

    @property
    def principal(self) -> str:
        return f"User:{self.username}"

    def evaluate(self, token: bytes) -> bytes:
        raise SaslMechanismError(f"{type(self).__name__} does not evaluate tokens")


class PlainServer(SaslServer):
    mechanism = "PLAIN"

    def __init__(self, users: Mapping[str, str]) -> None:
        super().__init__()
        self._users = users

    def evaluate(self, token: bytes) -> bytes:
        # [authzid] NUL authcid NUL passwd (RFC 4616). Kafka's PlainSaslServer splits at most four tokens off
        # and tells the client how many it found (a SaslAuthenticationException: the message reaches it).
        parts = token.decode("utf-8", errors="replace").split("\0", 3)
        if len(parts) == 4:
            parts[3] = parts[3].split("\0", 1)[0]
        if len(parts) != 3:
            raise SaslAuthenticationError(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, username, password = parts
        if not username:
            raise SaslAuthenticationError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationError("Authentication failed: password not specified")
        expected = self._users.get(username)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise SaslAuthenticationError("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from username")
        self.username = username
        self.complete = True
        return b""


_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?:m=[^,]*,)?n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>[\x21-\x2b\x2d-\x7e]+)"
    r"(?P<extensions>(?:,[A-Za-z]+=[^,]*)*)")
_CLIENT_FINAL = re.compile(r"c=(?P<binding>[A-Za-z0-9+/=]+),r=(?P<nonce>[\x21-\x2b\x2d-\x7e]+)"
                           r"(?:,[A-Za-z]+=[^,]*)*?,p=(?P<proof>[A-Za-z0-9+/=]+)")
SCRAM_MIN_ITERATIONS = 4096


def saslname_to_user(name: str) -> str:
    return name.replace("=2C", ",").replace("=3D", "=")


class TokenCredential(NamedTuple):
    """What DelegationTokenCache tells ScramServerCallbackHandler of a token: its SCRAM credential, the name of
    its owner, its expiry."""

    credential: ScramCredential | None
    owner_name: str
    expiry_ms: int


class ScramServer(SaslServer):
    def __init__(self, mechanism: str, lookup: Callable[[str, str], ScramCredential | None],
                 token_lookup: Callable[[str, str], TokenCredential | None] | None = None) -> None:
        super().__init__()
        self.mechanism = mechanism
        self._lookup = lookup
        self._token_lookup = token_lookup
        self.token_authenticated = False  # the `tokenauth=true` extension named a delegation token
        self._state = "client-first"
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._credential: ScramCredential | None = None

    def evaluate(self, token: bytes) -> bytes:
        try:
            message = token.decode("utf-8")
        except UnicodeDecodeError:
            raise SaslMechanismError("Invalid SCRAM message: not UTF-8") from None
        if self._state == "client-first":
            return self._client_first(message)
        if self._state == "client-final":
            return self._client_final(message)
        raise SaslMechanismError(f"Unexpected challenge in Sasl server state {self._state}")

    def _client_first(self, message: str) -> bytes:
        match = _CLIENT_FIRST.fullmatch(message)
        if match is None:
            raise SaslMechanismError(f"Invalid SCRAM client first message format: {message}")
        username = saslname_to_user(match.group("saslname"))
        extensions = dict(item.split("=", 1) for item in match.group("extensions").split(",")[1:])
        # ScramSaslServer: with `tokenauth=true` the user name is a delegation token's id, its password the
        # token's HMAC, and the session is its owner's, bounded by the token's expiry. Its failures, like a
        # user's, are SaslExceptions: the client is told only that its credentials were invalid.
        owner = username
        if extensions.get("tokenauth", "false").lower() == "true":
            token = None if self._token_lookup is None else self._token_lookup(username, self.mechanism)
            if token is None:
                raise SaslMechanismError(f"Token Authentication failed: Invalid tokenId : {username}")
            credential = token.credential
            owner = token.owner_name
            self.credential_expiry_ms = token.expiry_ms
            self.token_authenticated = True
        else:
            credential = self._lookup(username, self.mechanism)
        if credential is None:
            raise SaslMechanismError("Authentication failed: Invalid user credentials")
        authzid = match.group("authzid")
        if authzid is not None and saslname_to_user(authzid) != username:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from username")
        if credential.iterations < SCRAM_MIN_ITERATIONS:
            raise SaslMechanismError(f"Iterations {credential.iterations} is less than the minimum "
                                     f"{SCRAM_MIN_ITERATIONS} for {self.mechanism}")
        self.username = owner
        self._credential = credential
        self._nonce = match.group("nonce") + secrets.token_urlsafe(18).replace("-", "a").replace("_", "b")
        self._client_first_bare = message[message.index("n=", message.index(",", 2)):]
        self._server_first = (f"r={self._nonce},s={base64.b64encode(credential.salt).decode()},"
                              f"i={credential.iterations}")
        self._state = "client-final"
        return self._server_first.encode()

    def _client_final(self, message: str) -> bytes:
        match = _CLIENT_FINAL.fullmatch(message)
        if match is None:
            raise SaslMechanismError(f"Invalid SCRAM client final message format: {message}")
        # Kafka checks only that the nonce ends with the server's (older librdkafka, as in Debian's kcat, sends
        # the client nonce twice), not RFC 5802's equality.
        if not match.group("nonce").endswith(self._nonce):
            raise SaslMechanismError("Invalid client nonce in the final client message.")
        assert self._credential is not None
        without_proof = message[:message.rindex(",p=")]
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        try:
            proof = base64.b64decode(match.group("proof"), validate=True)
        except ValueError:
            raise SaslMechanismError("Invalid client credentials") from None
        if not client_proof_matches(self.mechanism, self._credential, auth_message, proof):
            raise SaslMechanismError("Invalid client credentials")
        self._state = "complete"
        self.complete = True
        signature = server_signature(self.mechanism, self._credential, auth_message)
        return b"v=" + base64.b64encode(signature)


_OAUTH_FIRST = re.compile(rb"n,(?:a=(?P<authzid>[^,]*))?,\x01(?P<pairs>(?:[A-Za-z]+=[\x21-\x7e \t\r\n]*\x01)*)\x01")
_BEARER = re.compile(r"[Bb]earer +(?P<token>[A-Za-z0-9\-._~+/]+=*)")
_AUTH = re.compile(r"(?P<scheme>\w+) +[-_~+/.a-zA-Z0-9]+=*")  # OAuthBearerClientInitialResponse.AUTH_PATTERN


@dataclass(frozen=True, slots=True)
class UnsecuredValidatorOptions:
    """The unsecuredValidator* options of Kafka's OAuthBearerLoginModule JAAS entry."""

    principal_claim: str = "sub"
    scope_claim: str = "scope"
    required_scope: tuple[str, ...] = ()
    clock_skew_ms: int = 0

    @classmethod
    def from_jaas(cls, options: Mapping[str, str]) -> UnsecuredValidatorOptions:
        skew = options.get("unsecuredValidatorAllowableClockSkewMs", "").strip()
        return cls(principal_claim=options.get("unsecuredValidatorPrincipalClaimName", "").strip() or "sub",
                   scope_claim=options.get("unsecuredValidatorScopeClaimName", "").strip() or "scope",
                   required_scope=tuple(options.get("unsecuredValidatorRequiredScope", "").split()),
                   clock_skew_ms=int(skew) if skew else 0)


class InvalidToken(Exception):
    """Kafka's OAuthBearerIllegalTokenException: why the token was refused, and the scope it lacked."""

    def __init__(self, reason: str, scope: str | None = None) -> None:
        super().__init__(reason)
        self.scope = scope


@dataclass(frozen=True, slots=True)
class UnsecuredToken:
    principal: str
    expiry_ms: int
    scope: frozenset[str] = field(default_factory=frozenset)


def _b64url_json(part: str) -> dict[str, object]:
    try:
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except ValueError:
        raise InvalidToken("malformed Base64 URL encoded value") from None
    try:
        # Jackson, Kafka's parser, refuses NaN and Infinity, which Python's json would take.
        value = json.loads(decoded, parse_constant=_no_constant)
    except ValueError:
        raise InvalidToken("malformed JSON") from None
    if not isinstance(value, dict):
        raise InvalidToken("malformed JSON")
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_LONG_MAX, _LONG_MIN = 2**63 - 1, -(2**63)


def claim_ms(seconds: float) -> int:
    """A time claim in seconds as milliseconds, as Kafka's Math.round(value * 1000) gives them: saturated at
    Java's long range, so that a claim of 1e30 s is Long.MAX_VALUE ms (a session that never expires), not an
    integer no response field can hold."""
    try:
        value = float(seconds) * 1000  # Number.doubleValue(): a JSON integer past a double's range is infinite
    except OverflowError:
        value = math.inf if seconds > 0 else -math.inf
    if value >= _LONG_MAX:
        return _LONG_MAX
    if value <= _LONG_MIN:
        return _LONG_MIN
    return math.floor(value + 0.5)


def validate_unsecured_jwt(token: str, options: UnsecuredValidatorOptions, now_ms: int) -> UnsecuredToken:
    """OAuthBearerUnsecuredJws and OAuthBearerUnsecuredValidatorCallbackHandler's checks, in their order."""
    if ".." in token:
        raise InvalidToken("Malformed compact serialization contains '..'")
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
    header, claims = _b64url_json(parts[0]), _b64url_json(parts[1])
    if header.get("alg") != "none":
        raise InvalidToken("Unsecured JWS must have 'none' for an algorithm")
    if parts[2]:
        raise InvalidToken("Unsecured JWS must not contain a digital signature")
    scope = _scope(claims.get(options.scope_claim))
    exp = claims.get("exp")
    if exp is None:
        raise InvalidToken("No expiration time in JWT")
    if not isinstance(exp, int | float) or isinstance(exp, bool):
        raise InvalidToken(f"The 'exp' claim was not of type Number: {type(exp).__name__}")
    principal = claims.get(options.principal_claim)
    if not isinstance(principal, str) or not principal.strip():
        raise InvalidToken(f"No principal name in JWT claim: {options.principal_claim}")
    iat = claims.get("iat")
    if iat is not None and (not isinstance(iat, int | float) or isinstance(iat, bool)):
        raise InvalidToken(f"The 'iat' claim was not of type Number: {type(iat).__name__}")
    expiry_ms = claim_ms(exp)
    skew = options.clock_skew_ms
    if iat is not None and claim_ms(iat) - skew > now_ms:
        raise InvalidToken(f"The Issued At value ({iat} seconds) was after the indicated time ({now_ms} ms) plus "
                           f"allowable clock skew ({skew} ms)")
    if now_ms - skew >= expiry_ms:
        raise InvalidToken(f"The indicated time ({now_ms} ms) minus allowable clock skew ({skew} ms) was on or "
                           f"after the Expiration Time value ({exp} seconds)")
    if iat is not None and claim_ms(iat) >= expiry_ms:
        raise InvalidToken(f"The Issued At value ({iat} seconds) was not before the Expiration Time value "
                           f"({exp} seconds)")
    missing = [s for s in options.required_scope if s not in scope]
    if missing:
        raise InvalidToken(f"The provided scope ({sorted(scope)}) was missing a required scope ({missing[0]}). "
                           f"All required scope elements: {list(options.required_scope)}", " ".join(missing))
    return UnsecuredToken(principal, expiry_ms, frozenset(scope))


def _scope(value: object) -> set[str]:
    if isinstance(value, str):
        return {value.strip()} if value.strip() else set()
    if isinstance(value, list):
        return {str(item).strip() for item in value if str(item).strip()}
    return set()


class OAuthBearerServer(SaslServer):
    mechanism = "OAUTHBEARER"

    def __init__(self, options: UnsecuredValidatorOptions, now_ms: Callable[[], int]) -> None:
        super().__init__()
        self._options = options
        self._now_ms = now_ms
        self._error: str | None = None
        self.rejection: str | None = None  # why the last token was refused, for the log

    def evaluate(self, token: bytes) -> bytes:
        if token == b"\x01" and self._error is not None:
            # The client acknowledged our error challenge (RFC 7628 3.2.3): now the exchange fails.
            raise SaslAuthenticationError(self._error)
        self._error = None
        match = _OAUTH_FIRST.fullmatch(token)
        if match is None:
            raise SaslMechanismError("Invalid OAUTHBEARER client first message")
        pairs = dict(pair.split(b"=", 1) for pair in match.group("pairs").split(b"\x01") if pair)
        auth = pairs.get(b"auth", b"").decode("ascii", errors="replace")
        scheme = _AUTH.fullmatch(auth)
        if scheme is not None and scheme.group("scheme").lower() != "bearer":
            # Kafka means to refuse the scheme, but reads the group from the wrong matcher: an
            # IllegalArgumentException, which closes the connection without an answer.
            raise SaslServerFailure(f"OAUTHBEARER scheme {scheme.group('scheme')} is not Bearer")
        bearer = _BEARER.fullmatch(auth)
        if bearer is None:
            raise SaslMechanismError("Invalid OAUTHBEARER client first message: no auth=Bearer token")
        try:
            validated = validate_unsecured_jwt(bearer.group("token"), self._options, self._now_ms())
        except InvalidToken as refused:
            self.rejection = str(refused)
            status = "insufficient_scope" if refused.scope is not None else "invalid_token"
            error = {"status": status} | ({"scope": refused.scope} if refused.scope is not None else {})
            self._error = json.dumps(error, separators=(",", ":"))
            return self._error.encode()
        authzid = (match.group("authzid") or b"").decode("utf-8", errors="replace")
        if authzid and authzid != validated.principal:
            raise SaslAuthenticationError(
                f"Authentication failed: Client requested an authorization id ({authzid}) that is different from "
                f"the token's principal name ({validated.principal})")
        self.username = validated.principal
        self.credential_expiry_ms = validated.expiry_ms
        self.complete = True
        return b""
