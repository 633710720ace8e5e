"""SCRAM credentials (RFC 5802, RFC 7677) as Kafka keeps them — salt, stored key, server key, iterations,
never the password — and their store, persisted in the data directory as Kafka keeps them in its
metadata log. Credentials come from AlterUserScramCredentials (key 51), whose client sends the salted
password it computed, and from kemu's `--add-scram`-style settings, as `kafka-storage format --add-scram`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from pathlib import Path
from typing import NamedTuple

from kemu.security.errors import SecurityConfigError

SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
# ScramMechanism's wire ids in DescribeUserScramCredentials / AlterUserScramCredentials.
MECHANISM_IDS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MECHANISMS_BY_ID = {v: k for k, v in MECHANISM_IDS.items()}
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
CREDENTIALS_FILE = "kemu-scram-credentials.json"
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


# A NamedTuple, not a frozen dataclass: every start-up imports this module (the broker's credential store),
# and a dataclass definition compiles its generated methods (~0.5 ms on a slow machine).
class ScramCredential(NamedTuple):
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def _hmac(mechanism: str, key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, _HASHES[mechanism]).digest()


def credential_from_salted_password(mechanism: str, salt: bytes, salted_password: bytes,
                                    iterations: int) -> ScramCredential:
    client_key = _hmac(mechanism, salted_password, b"Client Key")
    stored_key = hashlib.new(_HASHES[mechanism], client_key).digest()
    server_key = _hmac(mechanism, salted_password, b"Server Key")
    return ScramCredential(salt, stored_key, server_key, iterations)


def credential_from_password(mechanism: str, password: str, iterations: int = MIN_ITERATIONS,
                             salt: bytes | None = None) -> ScramCredential:
    if salt is None:
        import secrets  # a fresh salt only for a credential made from a password; not on a usual start-up

        salt = secrets.token_bytes(32)
    salted = hashlib.pbkdf2_hmac(_HASHES[mechanism], password.encode("utf-8"), salt, iterations)
    return credential_from_salted_password(mechanism, salt, salted, iterations)


def client_proof_matches(mechanism: str, credential: ScramCredential, auth_message: bytes, proof: bytes) -> bool:
    signature = _hmac(mechanism, credential.stored_key, auth_message)
    if len(proof) != len(signature):
        return False
    client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
    return hmac.compare_digest(hashlib.new(_HASHES[mechanism], client_key).digest(), credential.stored_key)


def server_signature(mechanism: str, credential: ScramCredential, auth_message: bytes) -> bytes:
    return _hmac(mechanism, credential.server_key, auth_message)


class ScramCredentialStore:
    """Users' SCRAM credentials by (user, mechanism); every change is written through to the data dir."""

    def __init__(self, data_dir: Path | None) -> None:
        self._path = None if data_dir is None else data_dir / CREDENTIALS_FILE
        self._credentials: dict[tuple[str, str], ScramCredential] = {}
        if self._path is not None and self._path.exists():
            import json  # only for a data directory with credentials: start-up needs no json

            for entry in json.loads(self._path.read_text())["credentials"]:
                self._credentials[(entry["user"], entry["mechanism"])] = ScramCredential(
                    base64.b64decode(entry["salt"]), base64.b64decode(entry["stored_key"]),
                    base64.b64decode(entry["server_key"]), int(entry["iterations"]))

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        return self._credentials.get((user, mechanism))

    def users(self) -> list[str]:
        return sorted({user for user, _ in self._credentials})

    def of_user(self, user: str) -> dict[str, ScramCredential]:
        return {mech: cred for (name, mech), cred in self._credentials.items() if name == user}

    def put(self, user: str, mechanism: str, credential: ScramCredential) -> None:
        self._credentials[(user, mechanism)] = credential
        self._save()

    def delete(self, user: str, mechanism: str) -> bool:
        found = self._credentials.pop((user, mechanism), None) is not None
        if found:
            self._save()
        return found

    def _save(self) -> None:
        if self._path is None:
            return
        import json

        entries = [{"user": user, "mechanism": mech, "salt": base64.b64encode(c.salt).decode(),
                    "stored_key": base64.b64encode(c.stored_key).decode(),
                    "server_key": base64.b64encode(c.server_key).decode(), "iterations": c.iterations}
                   for (user, mech), c in sorted(self._credentials.items())]
        tmp = self._path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"version": 1, "credentials": entries}, indent=1))
        os.replace(tmp, self._path)


# Compiled (and kept by re's cache) on first use rather than at import: most brokers are given no credentials.
_ENTRY = r"\s*(SCRAM-SHA-256|SCRAM-SHA-512)=\[([^\]]*)\]\s*"


def parse_add_scram(text: str) -> list[tuple[str, str, ScramCredential]]:
    """Credentials in `kafka-storage format --add-scram` syntax, several separated by commas or semicolons:
    `SCRAM-SHA-512=[name=alice,password=alice-secret]`, optionally with `iterations=` and `salt=` (base64)."""
    found: list[tuple[str, str, ScramCredential]] = []
    position = 0
    text = text.strip()
    entry = re.compile(_ENTRY)
    while position < len(text):
        match = entry.match(text, position)
        if match is None:
            raise SecurityConfigError(f"Invalid SCRAM credential {text[position:]!r}: expected "
                                      "SCRAM-SHA-256=[name=...,password=...] or SCRAM-SHA-512=[...]")
        mechanism = match.group(1)
        fields = dict(_field(item, text) for item in match.group(2).split(",") if item.strip())
        name, password = fields.get("name"), fields.get("password")
        if not name:
            raise SecurityConfigError(f"You must supply 'name' to add-scram: {match.group(0).strip()}")
        if password is None:
            raise SecurityConfigError(f"You must supply 'password' to add-scram: {match.group(0).strip()}")
        iterations = int(fields.get("iterations", str(MIN_ITERATIONS)))
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            raise SecurityConfigError(f"The 'iterations' value must be >= {MIN_ITERATIONS} and <= "
                                      f"{MAX_ITERATIONS} for add-scram")
        salt = base64.b64decode(fields["salt"]) if "salt" in fields else None
        found.append((name, mechanism, credential_from_password(mechanism, password, iterations, salt)))
        position = match.end()
        if position < len(text) and text[position] in ",;":
            position += 1
    return found


def _field(item: str, text: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep:
        raise SecurityConfigError(f"Invalid SCRAM credential {text!r}: {item!r} is not key=value")
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return key.strip(), value
