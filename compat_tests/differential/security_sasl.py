"""The client side of SASL for the differential tests, by raw requests: SaslHandshake, SaslAuthenticate
with PLAIN or SCRAM (RFC 5802, written here so a test can send a wrong proof or an unknown user), and an
observation of what the broker did with each step: its answer, or that it closed the connection.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
from typing import Any

from tests.server.kafka_socket import KafkaSocket

SASL_HANDSHAKE, SASL_AUTHENTICATE, API_VERSIONS, METADATA = 17, 36, 18, 3
CLOSED = "<closed>"
# How long a closing connection may take to close: Kafka holds it open for
# connection.failed.authentication.delay.ms (100 ms by default) first.
CLOSE_WAIT_S = 10.0
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


def answer(connection: KafkaSocket, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any] | str:
    """The broker's answer to one request, or CLOSED when it closed the connection instead."""
    try:
        connection.send(api_key, version, body)
        return connection.receive(api_key, version)[1]
    except (ConnectionError, TimeoutError):
        return CLOSED


def raw_answer(connection: KafkaSocket, token: bytes) -> bytes | str:
    """A SaslHandshake v0 exchange's token: sent size-prefixed, the broker's token read back the same way."""
    try:
        connection.send_raw(struct.pack(">i", len(token)) + token)
        return connection.receive_frame()
    except (ConnectionError, TimeoutError):
        return CLOSED


def closed_after(connection: KafkaSocket) -> bool:
    """Whether the broker has closed (or is closing) the connection: probed with an ApiVersions request, which
    an open connection answers and a failed one (Kafka holds it for connection.failed.authentication.delay.ms,
    reading nothing) does not, so neither case waits for a timeout."""
    connection.sock.settimeout(CLOSE_WAIT_S)
    try:
        connection.send(API_VERSIONS, 0, {})
        connection.receive_frame()
    except OSError:  # closed, reset, or no answer in CLOSE_WAIT_S
        return True
    return False


def handshake(connection: KafkaSocket, mechanism: str, version: int = 1) -> dict[str, Any] | str:
    return answer(connection, SASL_HANDSHAKE, version, {"mechanism": mechanism})


def authenticate(connection: KafkaSocket, token: bytes, version: int = 2) -> dict[str, Any] | str:
    return answer(connection, SASL_AUTHENTICATE, version, {"auth_bytes": token})


def plain_token(user: str, password: str, authzid: str = "") -> bytes:
    return f"{authzid}\0{user}\0{password}".encode()


def sasl_name(user: str) -> str:
    return user.replace("=", "=3D").replace(",", "=2C")


class ScramClient:
    """One SCRAM exchange: `first()`, then `final(server_first)` with a proof made from `password`."""

    def __init__(self, mechanism: str, user: str, password: str) -> None:
        self.mechanism = mechanism
        self.user = user
        self.password = password
        self.nonce = secrets.token_urlsafe(18)
        self.bare = f"n={sasl_name(user)},r={self.nonce}"

    def first(self) -> bytes:
        return f"n,,{self.bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        text = server_first.decode()
        fields = dict(item.split("=", 1) for item in text.split(","))
        digest = _HASHES[self.mechanism]
        salted = hashlib.pbkdf2_hmac(digest, self.password.encode(), base64.b64decode(fields["s"]),
                                     int(fields["i"]))
        client_key = hmac.new(salted, b"Client Key", digest).digest()
        stored_key = hashlib.new(digest, client_key).digest()
        without_proof = f"c=biws,r={fields['r']}"
        auth_message = f"{self.bare},{text},{without_proof}".encode()
        signature = hmac.new(stored_key, auth_message, digest).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """What AlterUserScramCredentials carries: the client salts the password itself."""
    return hashlib.pbkdf2_hmac(_HASHES[mechanism], password.encode(), salt, iterations)


def login(connection: KafkaSocket, user: str, password: str, mechanism: str = "PLAIN") -> dict[str, Any] | str:
    """Authenticate `connection` (SaslHandshake v1, SaslAuthenticate v2); the last answer."""
    shook = handshake(connection, mechanism)
    if not isinstance(shook, dict) or shook["error_code"]:
        return shook
    if mechanism == "PLAIN":
        return authenticate(connection, plain_token(user, password))
    client = ScramClient(mechanism, user, password)
    first = authenticate(connection, client.first())
    if not isinstance(first, dict) or first["error_code"]:
        return first
    return authenticate(connection, client.final(first["auth_bytes"]))
