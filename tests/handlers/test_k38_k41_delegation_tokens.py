"""Delegation tokens (keys 38-41) in-process: the broker's refusals (PLAINTEXT, 1-way SSL, token-authenticated
connections, another owner without CREATE_TOKENS, a renewer that is not a User), the controller's answers
(disabled without a secret, lifetimes, renew by owner or renewer only, expire at once or later, not found,
expired), the describe filter and its ACLs, the sweep of expired tokens on the broker's clock, and the
tokens' persistence across a restart."""

from __future__ import annotations

import base64
import hashlib
import hmac
from pathlib import Path
from typing import Any

import pytest

from kemu.authorizer.acls import AclBinding, AclOperation, PatternType, PermissionType, ResourceType
from kemu.clock import VirtualClock
from kemu.wire.errors import ErrorCode
from tests.handlers.harness import Broker, Connection, MakeBroker, advance, broker_config

CREATE, RENEW, EXPIRE, DESCRIBE = 38, 39, 40, 41
SECRET = "kemu-token-secret"
HOUR, DAY = 3_600_000, 86_400_000
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def _properties(**extra: str) -> dict[str, str]:
    return {"delegation.token.secret.key": SECRET, **extra}


def _sasl(conn: Connection, principal: str = "User:alice") -> Connection:
    """As if the connection had authenticated over SASL_PLAINTEXT."""
    conn.client.security_protocol = "SASL_PLAINTEXT"  # type: ignore[attr-defined]
    conn.client.principal = principal  # type: ignore[attr-defined]
    return conn


def _create(conn: Connection, version: int = 3, renewers: list[str] = (), max_lifetime_ms: int = -1,
            owner: tuple[str | None, str | None] = (None, None)) -> dict[str, Any]:
    body: dict[str, Any] = {"renewers": [dict(zip(("principal_type", "principal_name"), r.split(":", 1),
                                                  strict=True)) for r in renewers],
                            "max_lifetime_ms": max_lifetime_ms}
    if version >= 3:
        body |= {"owner_principal_type": owner[0], "owner_principal_name": owner[1]}
    return conn.request(CREATE, version, body)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(1_800_000_000_000)


@pytest.fixture
def tokens_broker(make_broker: MakeBroker, clock: VirtualClock, tmp_path: Path) -> Any:
    with make_broker(broker_config(properties=_properties(), data_dir=str(tmp_path)), clock=clock) as broker:
        yield broker


def test_plaintext_and_token_sessions_are_refused_with_error_timestamps(tokens_broker: Broker) -> None:
    conn = tokens_broker.connect()
    created = _create(conn)
    assert created["error_code"] == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    assert (created["principal_type"], created["principal_name"]) == ("User", "ANONYMOUS")
    assert (created["issue_timestamp_ms"], created["expiry_timestamp_ms"], created["max_timestamp_ms"],
            created["token_id"], created["hmac"]) == (-1, -1, -1, "", b"")
    for key in (RENEW, EXPIRE):
        period = "renew_period_ms" if key == RENEW else "expiry_time_period_ms"
        answer = conn.request(key, 2, {"hmac": b"x", period: 1})
        assert (answer["error_code"], answer["expiry_timestamp_ms"]) == (
            ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1)
    assert conn.request(DESCRIBE, 3, {"owners": None}) == {
        "error_code": ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "tokens": [], "throttle_time_ms": 0}
    # 1-way SSL: no client certificate, so ANONYMOUS.
    conn.client.security_protocol = "SSL"  # type: ignore[attr-defined]
    assert _create(conn)["error_code"] == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    token_session = _sasl(tokens_broker.connect())
    token_session.client.token_authenticated = True  # type: ignore[attr-defined]
    assert _create(token_session)["error_code"] == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    assert token_session.request(DESCRIBE, 3, {"owners": None})["error_code"] == \
        ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


def test_without_a_secret_key_tokens_are_disabled(broker: Broker) -> None:
    conn = _sasl(broker.connect())
    created = _create(conn)
    # The controller's refusal: the response's defaults, not the broker's -1s.
    assert (created["error_code"], created["issue_timestamp_ms"], created["token_id"]) == (
        ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, 0, "")
    assert (created["token_requester_principal_type"], created["token_requester_principal_name"]) == (
        "User", "alice")
    assert conn.request(RENEW, 2, {"hmac": b"x", "renew_period_ms": 1})["error_code"] == \
        ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
    assert conn.request(EXPIRE, 1, {"hmac": b"x", "expiry_time_period_ms": 1})["error_code"] == \
        ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
    assert conn.request(DESCRIBE, 1, {"owners": None})["error_code"] == ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED


def test_create_renew_expire_and_the_lifetimes(tokens_broker: Broker, clock: VirtualClock) -> None:
    conn = _sasl(tokens_broker.connect())
    now = clock.now_ms()
    created = _create(conn, renewers=["User:bob"])
    assert created["error_code"] == 0
    assert (created["issue_timestamp_ms"], created["expiry_timestamp_ms"], created["max_timestamp_ms"]) == (
        now, now + DAY, now + 7 * DAY)
    token_id, token_hmac = created["token_id"], created["hmac"]
    assert token_hmac == hmac.new(SECRET.encode(), token_id.encode(), hashlib.sha512).digest()
    short = _create(conn, max_lifetime_ms=HOUR)
    assert (short["expiry_timestamp_ms"], short["max_timestamp_ms"]) == (now + HOUR, now + HOUR)
    assert _create(conn, renewers=["Group:x"])["error_code"] == ErrorCode.INVALID_PRINCIPAL_TYPE

    advance(tokens_broker, 1000)
    renewed = conn.request(RENEW, 2, {"hmac": token_hmac, "renew_period_ms": HOUR})
    assert (renewed["error_code"], renewed["expiry_timestamp_ms"]) == (0, now + 1000 + HOUR)
    # A period of 0 or below is the default, and never past the max timestamp.
    assert conn.request(RENEW, 2, {"hmac": token_hmac, "renew_period_ms": -1})["expiry_timestamp_ms"] == \
        now + 1000 + DAY
    assert conn.request(RENEW, 1, {"hmac": short["hmac"], "renew_period_ms": DAY})["expiry_timestamp_ms"] == \
        now + HOUR
    bob = _sasl(tokens_broker.connect(), "User:bob")
    assert bob.request(RENEW, 2, {"hmac": token_hmac, "renew_period_ms": HOUR})["error_code"] == 0
    carol = _sasl(tokens_broker.connect(), "User:carol")
    assert carol.request(RENEW, 2, {"hmac": token_hmac, "renew_period_ms": HOUR})["error_code"] == \
        ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
    assert carol.request(EXPIRE, 2, {"hmac": token_hmac, "expiry_time_period_ms": -1})["error_code"] == \
        ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
    assert conn.request(RENEW, 2, {"hmac": b"nope", "renew_period_ms": HOUR}) == {
        "error_code": ErrorCode.DELEGATION_TOKEN_NOT_FOUND, "expiry_timestamp_ms": 0, "throttle_time_ms": 0}

    expire_later = conn.request(EXPIRE, 2, {"hmac": token_hmac, "expiry_time_period_ms": 5000})
    assert expire_later == {"error_code": 0, "expiry_timestamp_ms": clock.now_ms() + 5000, "throttle_time_ms": 0}
    advance(tokens_broker, 6000)
    assert conn.request(RENEW, 2, {"hmac": token_hmac, "renew_period_ms": HOUR})["error_code"] == \
        ErrorCode.DELEGATION_TOKEN_EXPIRED
    assert conn.request(EXPIRE, 2, {"hmac": token_hmac, "expiry_time_period_ms": 1})["error_code"] == \
        ErrorCode.DELEGATION_TOKEN_EXPIRED
    # Expired but not yet swept: still described; a negative period removes it at once all the same.
    assert token_id in {t["token_id"] for t in conn.request(DESCRIBE, 3, {"owners": None})["tokens"]}
    gone = conn.request(EXPIRE, 2, {"hmac": token_hmac, "expiry_time_period_ms": -1})
    assert gone == {"error_code": 0, "expiry_timestamp_ms": clock.now_ms(), "throttle_time_ms": 0}
    assert conn.request(EXPIRE, 2, {"hmac": token_hmac, "expiry_time_period_ms": -1})["error_code"] == \
        ErrorCode.DELEGATION_TOKEN_NOT_FOUND
    assert token_id not in {t["token_id"] for t in conn.request(DESCRIBE, 3, {"owners": None})["tokens"]}


def test_the_sweep_removes_expired_tokens_every_check_interval(make_broker: MakeBroker, clock: VirtualClock) -> None:
    config = broker_config(properties=_properties(**{"delegation.token.expiry.check.interval.ms": "60000",
                                                     "delegation.token.expiry.time.ms": "10000"}))
    with make_broker(config, clock=clock) as broker:
        conn = _sasl(broker.connect())
        token_id = _create(conn)["token_id"]
        advance(broker, 11_000)  # expired, not yet swept
        assert [t["token_id"] for t in conn.request(DESCRIBE, 2, {"owners": None})["tokens"]] == [token_id]
        advance(broker, 50_000)  # the first sweep, a minute after start
        assert conn.request(DESCRIBE, 2, {"owners": None})["tokens"] == []


def test_describe_filters_by_owner_and_visibility(tokens_broker: Broker) -> None:
    alice = _sasl(tokens_broker.connect())
    bob = _sasl(tokens_broker.connect(), "User:bob")
    carol = _sasl(tokens_broker.connect(), "User:carol")
    shared = _create(alice, renewers=["User:bob"])["token_id"]
    own = _create(alice)["token_id"]
    bobs = _create(bob, version=1)["token_id"]

    def described(conn: Connection, owners: list[str] | None, version: int = 3) -> set[str]:
        body = None if owners is None else [dict(zip(("principal_type", "principal_name"), o.split(":", 1),
                                                     strict=True)) for o in owners]
        answer = conn.request(DESCRIBE, version, {"owners": body})
        assert answer["error_code"] == 0
        return {t["token_id"] for t in answer["tokens"]}

    # Without an authorizer every token may be described (AuthHelper allows all); the owners asked still filter.
    assert described(carol, None) == {shared, own, bobs}
    assert described(alice, []) == set()
    assert described(carol, ["User:alice"]) == {shared, own}
    assert described(carol, ["User:bob"]) == {shared, bobs}  # bob renews alice's shared token
    token = alice.request(DESCRIBE, 3, {"owners": [{"principal_type": "User", "principal_name": "alice"}]})
    by_id = {t["token_id"]: t for t in token["tokens"]}
    assert by_id[shared]["renewers"] == [{"principal_type": "User", "principal_name": "bob"}]
    assert (by_id[shared]["token_requester_principal_type"], by_id[shared]["token_requester_principal_name"]) == (
        "User", "alice")
    assert by_id[shared]["hmac"] == hmac.new(SECRET.encode(), shared.encode(), hashlib.sha512).digest()


def test_acls_for_other_owners_and_others_tokens(make_broker: MakeBroker, tmp_path: Path) -> None:
    properties = _properties(**{"authorizer.class.name": STANDARD, "super.users": "User:admin"})
    with make_broker(broker_config(properties=properties, data_dir=str(tmp_path))) as broker:
        admin, alice, carol = (_sasl(broker.connect(), p) for p in ("User:admin", "User:alice", "User:carol"))
        # The requester may always create its own token; for another owner it needs CREATE_TOKENS on that USER.
        mine = _create(alice)
        assert mine["error_code"] == 0
        refused = _create(alice, owner=("User", "dave"))
        assert (refused["error_code"], refused["principal_name"], refused["token_requester_principal_name"],
                refused["issue_timestamp_ms"]) == (ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, "dave", "alice",
                                                   -1)
        authorizer = broker.broker.authorizer
        assert authorizer is not None

        def grant(resource: ResourceType, name: str, op: AclOperation, principal: str) -> None:
            binding = AclBinding(resource, name, PatternType.LITERAL, principal, "*", op, PermissionType.ALLOW)
            broker.call(lambda: authorizer.create([binding]))

        grant(ResourceType.USER, "User:dave", AclOperation.CREATE_TOKENS, "User:alice")
        for_dave = _create(alice, owner=("User", "dave"))
        assert (for_dave["error_code"], for_dave["principal_name"], for_dave["token_requester_principal_name"]) == (
            0, "dave", "alice")
        # The owner's token is described to its requester only as to anyone: alice neither owns nor renews it.
        assert {t["token_id"] for t in alice.request(DESCRIBE, 3, {"owners": None})["tokens"]} == {mine["token_id"]}
        assert carol.request(DESCRIBE, 3, {"owners": None})["tokens"] == []
        grant(ResourceType.DELEGATION_TOKEN, mine["token_id"], AclOperation.DESCRIBE, "User:carol")
        assert [t["token_id"] for t in carol.request(DESCRIBE, 3, {"owners": None})["tokens"]] == [mine["token_id"]]
        grant(ResourceType.USER, "User:dave", AclOperation.DESCRIBE_TOKENS, "User:carol")
        assert {t["token_id"] for t in carol.request(DESCRIBE, 3, {"owners": None})["tokens"]} == {
            mine["token_id"], for_dave["token_id"]}
        assert len(admin.request(DESCRIBE, 3, {"owners": None})["tokens"]) == 2


def test_tokens_outlive_a_restart(make_broker: MakeBroker, clock: VirtualClock, tmp_path: Path) -> None:
    config = broker_config(properties=_properties(), data_dir=str(tmp_path))
    with make_broker(config, clock=clock) as broker:
        created = _create(_sasl(broker.connect()), renewers=["User:bob"])
    with make_broker(config, clock=clock) as broker:
        conn = _sasl(broker.connect())
        [token] = conn.request(DESCRIBE, 3, {"owners": None})["tokens"]
        assert (token["token_id"], token["hmac"], token["expiry_timestamp"], token["renewers"]) == (
            created["token_id"], created["hmac"], created["expiry_timestamp_ms"],
            [{"principal_type": "User", "principal_name": "bob"}])
        assert broker.call(lambda: broker.broker.token_credential(created["token_id"], "SCRAM-SHA-256")) is not None
        password = base64.b64encode(created["hmac"]).decode()
        credential = broker.call(lambda: broker.broker.token_credential(created["token_id"], "SCRAM-SHA-512"))
        assert credential is not None and credential.owner_name == "alice"
        assert credential.credential is not None and credential.credential.iterations == 4096
        assert password  # the SCRAM password a client logs in with (tests/security/test_token_authentication.py)


def test_a_null_owner_type_is_kafkas_unknown_server_error(tokens_broker: Broker) -> None:
    answer = _create(_sasl(tokens_broker.connect()), owner=(None, "dave"))
    assert (answer["error_code"], answer["principal_name"], answer["token_requester_principal_name"]) == (
        ErrorCode.UNKNOWN_SERVER_ERROR, "ANONYMOUS", "ANONYMOUS")
