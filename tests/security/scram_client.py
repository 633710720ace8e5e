"""The client side of SCRAM (RFC 5802), for driving kemu's server in tests."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

_HASH = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


class ScramClient:
    def __init__(self, mechanism: str, username: str, password: str, nonce: str = "fyko+d2lbbFgONRv9qkxdawL") -> None:
        self.hash = _HASH[mechanism]
        self.username, self.password, self.nonce = username, password, nonce
        self.client_first_bare = f"n={username.replace('=', '=3D').replace(',', '=2C')},r={nonce}"
        self.auth_message = b""
        self.salted = b""

    def first(self) -> bytes:
        return ("n,," + self.client_first_bare).encode()

    def final(self, server_first: bytes, nonce: str | None = None) -> bytes:
        fields = dict(re.findall(r"(\w)=([^,]*)", server_first.decode()))
        salt, iterations = base64.b64decode(fields["s"]), int(fields["i"])
        self.salted = hashlib.pbkdf2_hmac(self.hash, self.password.encode(), salt, iterations)
        without_proof = f"c=biws,r={nonce or fields['r']}"
        self.auth_message = f"{self.client_first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = hmac.new(self.salted, b"Client Key", self.hash).digest()
        stored_key = hashlib.new(self.hash, client_key).digest()
        signature = hmac.new(stored_key, self.auth_message, self.hash).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> bool:
        server_key = hmac.new(self.salted, b"Server Key", self.hash).digest()
        expected = hmac.new(server_key, self.auth_message, self.hash).digest()
        return server_final == b"v=" + base64.b64encode(expected)
