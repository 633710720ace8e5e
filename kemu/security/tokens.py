"""Delegation tokens (KIP-48) as a KRaft Kafka keeps them: the controller's DelegationTokenControlManager
(create, renew, expire, the sweep of expired tokens), the brokers' DelegationTokenCache (tokens by id and by
HMAC, each with SCRAM credentials whose password is the token's HMAC in base64) and DelegationTokenManager's
describe filter. Synchronous and socket-free: time is passed in, from the broker's injected clock.

A token is enabled by `delegation.token.secret.key`; its HMAC is HmacSHA512 keyed with that secret over the
token id, recomputed (never stored) as Kafka recomputes it from its metadata records. The tokens themselves
are persisted in the data directory (`kemu-delegation-tokens.json`), as Kafka keeps them in its metadata log,
and so outlive a restart; every node of a many-broker kemu reads the one store.

Outcomes are Kafka's error names (`kemu.wire.errors.ErrorCode` members): this room does not import the wire.
"""

from __future__ import annotations

import base64
import hashlib
import hmac as hmac_module
import json
import logging
import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from kemu.hashing import java_hash_map_order
from kemu.security.errors import SecurityConfigError
from kemu.security.scram import MIN_ITERATIONS, SCRAM_MECHANISMS, ScramCredential, credential_from_password

log = logging.getLogger("kemu.security")

TOKENS_FILE = "kemu-delegation-tokens.json"
SECRET_KEY = "delegation.token.secret.key"
MAX_LIFETIME = "delegation.token.max.lifetime.ms"
EXPIRY_TIME = "delegation.token.expiry.time.ms"
EXPIRY_CHECK_INTERVAL = "delegation.token.expiry.check.interval.ms"
_DEFAULTS = {MAX_LIFETIME: 7 * 24 * 60 * 60 * 1000, EXPIRY_TIME: 24 * 60 * 60 * 1000,
             EXPIRY_CHECK_INTERVAL: 60 * 60 * 1000}
_LONG_MAX = 2**63 - 1
USER_TYPE = "User"
NONE, AUTH_DISABLED, NOT_FOUND, OWNER_MISMATCH, EXPIRED, INVALID_PRINCIPAL_TYPE = (
    "NONE", "DELEGATION_TOKEN_AUTH_DISABLED", "DELEGATION_TOKEN_NOT_FOUND", "DELEGATION_TOKEN_OWNER_MISMATCH",
    "DELEGATION_TOKEN_EXPIRED", "INVALID_PRINCIPAL_TYPE")


class TokenSettings(NamedTuple):
    secret: str | None  # None (or unset, or empty): tokens are disabled
    max_lifetime_ms: int
    expiry_time_ms: int
    expiry_check_interval_ms: int

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> TokenSettings:
        values = {}
        for name, default in _DEFAULTS.items():
            raw = properties.get(name, "").strip()
            try:
                value = int(raw) if raw else default
            except ValueError:
                raise SecurityConfigError(f"Invalid value {raw} for configuration {name}: Not a number of type LONG")\
                    from None
            if value < 1:
                raise SecurityConfigError(f"Invalid value {value} for configuration {name}: Value must be at least 1")
            values[name] = value
        secret = properties.get(SECRET_KEY) or None
        return cls(secret, values[MAX_LIFETIME], values[EXPIRY_TIME], values[EXPIRY_CHECK_INTERVAL])


class TokenInfo(NamedTuple):
    """Kafka's TokenInformation; principals in their "Type:name" form."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    max_ms: int
    expiry_ms: int

    def owner_or_renewer(self, principal: str) -> bool:
        return principal == self.owner or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_ms < now_ms or self.expiry_ms < now_ms


def principal_type_and_name(principal: str) -> tuple[str, str]:
    kind, _, name = principal.partition(":")
    return kind, name


def new_token_id() -> str:
    """Kafka's Uuid.randomUuid().toString(): a random (version 4) UUID in URL-safe base64 without padding, never
    starting with a dash."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _sum(now: int, duration: int) -> int:
    """DelegationTokenControlManager.sum: saturated at Long.MAX_VALUE."""
    return _LONG_MAX if now > _LONG_MAX - duration else now + duration


class DelegationTokens:
    """The tokens of the cluster, written through to the data directory on every change."""

    def __init__(self, settings: TokenSettings, data_dir: Path | None,
                 new_token_id: Callable[[], str] = new_token_id) -> None:
        self.settings = settings
        self._path = None if data_dir is None else data_dir / TOKENS_FILE
        self._new_token_id = new_token_id
        self._tokens: dict[str, TokenInfo] = {}
        self._by_hmac: dict[bytes, str] = {}
        self._credentials: dict[tuple[str, str], ScramCredential] = {}  # (token id, mechanism), made when asked
        if self._path is not None and self._path.exists():
            for entry in json.loads(self._path.read_text())["tokens"]:
                self._add(TokenInfo(entry["token_id"], entry["owner"], entry["requester"], tuple(entry["renewers"]),
                                    int(entry["issue_ms"]), int(entry["max_ms"]), int(entry["expiry_ms"])))

    @property
    def enabled(self) -> bool:
        return self.settings.secret is not None

    def hmac(self, token_id: str) -> bytes:
        assert self.settings.secret is not None
        return hmac_module.new(self.settings.secret.encode("utf-8"), token_id.encode("utf-8"), hashlib.sha512).digest()

    # ---- the controller's requests -------------------------------------------------------------------
    def create(self, owner: str, requester: str, renewers: Iterable[str], max_lifetime_ms: int,
               now_ms: int) -> tuple[str, TokenInfo | None]:
        if not self.enabled:
            return AUTH_DISABLED, None
        max_life = self.settings.max_lifetime_ms
        if max_lifetime_ms > 0:
            max_life = min(max_life, max_lifetime_ms)
        max_ms = _sum(now_ms, max_life)
        expiry_ms = min(max_ms, _sum(now_ms, self.settings.expiry_time_ms))
        renewers = tuple(renewers)
        if any(principal_type_and_name(r)[0] != USER_TYPE for r in renewers):
            return INVALID_PRINCIPAL_TYPE, None
        token = TokenInfo(self._new_token_id(), owner, requester, renewers, now_ms, max_ms, expiry_ms)
        self._add(token)
        self._save()
        log.info("created delegation token %s for owner %s", token.token_id, owner)
        return NONE, token

    def _known(self, hmac: bytes) -> tuple[str, TokenInfo | None]:
        if not self.enabled:
            return AUTH_DISABLED, None
        token = self.for_hmac(hmac)
        return (NOT_FOUND, None) if token is None else (NONE, token)

    def _set_expiry(self, token: TokenInfo, expiry_ms: int) -> tuple[str, int]:
        self._tokens[token.token_id] = token._replace(expiry_ms=expiry_ms)
        self._save()
        return NONE, expiry_ms

    def renew(self, hmac: bytes, principal: str, renew_period_ms: int, now_ms: int) -> tuple[str, int]:
        """The outcome and the new expiry timestamp (0 on an error, the response's default)."""
        code, token = self._known(hmac)
        if token is None:
            return code, 0
        if token.expired(now_ms):
            return EXPIRED, 0
        if not token.owner_or_renewer(principal):
            return OWNER_MISMATCH, 0
        period = self.settings.expiry_time_ms
        if renew_period_ms > 0:
            period = min(period, renew_period_ms)
        return self._set_expiry(token, min(token.max_ms, now_ms + period))

    def expire(self, hmac: bytes, principal: str, expiry_period_ms: int, now_ms: int) -> tuple[str, int]:
        """A negative period removes the token at once; else it expires after the period (at most its max)."""
        code, token = self._known(hmac)
        if token is None:
            return code, 0
        if not token.owner_or_renewer(principal):
            return OWNER_MISMATCH, 0
        if expiry_period_ms < 0:
            self._remove(token.token_id)
            self._save()
            return NONE, now_ms
        if token.expired(now_ms):
            return EXPIRED, 0
        return self._set_expiry(token, min(token.max_ms, _sum(now_ms, expiry_period_ms)))

    def sweep(self, now_ms: int) -> list[str]:
        """The controller's periodic sweep: every expired token removed; their ids."""
        gone = [token.token_id for token in self.tokens() if token.expired(now_ms)]
        for token_id in gone:
            token = self._tokens[token_id]
            log.info("Delegation token expired for token: %s for owner: %s", token_id, token.owner)
            self._remove(token_id)
        if gone:
            self._save()
        return gone

    # ---- the brokers' cache --------------------------------------------------------------------------
    def tokens(self) -> list[TokenInfo]:
        """In the order Kafka's token cache (a hash map by token id) lists them."""
        return [self._tokens[token_id] for token_id in java_hash_map_order(self._tokens)]

    def token(self, token_id: str) -> TokenInfo | None:
        return self._tokens.get(token_id)

    def for_hmac(self, hmac: bytes) -> TokenInfo | None:
        token_id = self._by_hmac.get(bytes(hmac))
        return None if token_id is None else self._tokens.get(token_id)

    def describe(self, requester: str, owners: list[str] | None, may_describe_token: Callable[[str], bool],
                 may_describe_owner: Callable[[str], bool]) -> list[TokenInfo]:
        """DelegationTokenManager.filterToken over the cache: the tokens of the owners asked (an owner or a
        renewer of theirs), then the requester's own, and others' only with DESCRIBE on the token or
        DESCRIBE_TOKENS on its owner."""
        found = []
        for token in self.tokens():
            if owners is not None and not any(token.owner_or_renewer(owner) for owner in owners):
                continue
            if token.owner_or_renewer(requester) or may_describe_token(token.token_id) \
                    or may_describe_owner(token.owner):
                found.append(token)
        return found

    def scram_credential(self, token_id: str, mechanism: str) -> ScramCredential | None:
        """DelegationTokenCache.credential: the token's SCRAM credential, its password the HMAC in base64,
        salted afresh and at the mechanism's minimum iterations, as DelegationTokenManager makes it."""
        if token_id not in self._tokens or mechanism not in SCRAM_MECHANISMS or not self.enabled:
            return None
        credential = self._credentials.get((token_id, mechanism))
        if credential is None:
            password = base64.b64encode(self.hmac(token_id)).decode()
            credential = credential_from_password(mechanism, password, MIN_ITERATIONS)
            self._credentials[(token_id, mechanism)] = credential
        return credential

    # ---- storage -------------------------------------------------------------------------------------
    def _add(self, token: TokenInfo) -> None:
        self._tokens[token.token_id] = token
        if self.enabled:
            self._by_hmac[self.hmac(token.token_id)] = token.token_id

    def _remove(self, token_id: str) -> None:
        self._tokens.pop(token_id, None)
        self._by_hmac = {h: t for h, t in self._by_hmac.items() if t != token_id}
        for mechanism in SCRAM_MECHANISMS:
            self._credentials.pop((token_id, mechanism), None)

    def _save(self) -> None:
        if self._path is None:
            return
        entries = [{"token_id": t.token_id, "owner": t.owner, "requester": t.requester, "renewers": list(t.renewers),
                    "issue_ms": t.issue_ms, "max_ms": t.max_ms, "expiry_ms": t.expiry_ms}
                   for t in self._tokens.values()]
        tmp = self._path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"version": 1, "tokens": entries}, indent=1))
        os.replace(tmp, self._path)
