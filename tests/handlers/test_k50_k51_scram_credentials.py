"""DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554): the store behind SCRAM logins,
Kafka's per-user errors, and the credential derived from the salted password the client sends."""

from __future__ import annotations

import hashlib

from kemu.security.scram import credential_from_password
from kemu.wire.errors import ErrorCode
from tests.handlers.harness import Broker, Connection

DESCRIBE, ALTER = 50, 51
SHA256, SHA512 = 1, 2


def _upsert(name: str, mechanism: int = SHA512, iterations: int = 4096, password: str = "pw") -> dict[str, object]:
    salt = b"salt-" + name.encode()
    digest = "sha512" if mechanism == SHA512 else "sha256"
    salted = hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)
    return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": salt, "salted_password": salted}


def _alter(conn: Connection, deletions: list[dict[str, object]] | None = None,
           upsertions: list[dict[str, object]] | None = None) -> dict[str, tuple[int, str | None]]:
    answer = conn.request(ALTER, 0, {"deletions": deletions or [], "upsertions": upsertions or []})
    return {r["user"]: (r["error_code"], r["error_message"]) for r in answer["results"]}


def test_upsert_describe_and_delete(conn: Connection, broker: Broker) -> None:
    # One user a request, whatever the mechanism (ScramControlManager): a second one cancels both.
    assert _alter(conn, upsertions=[_upsert("alice"), _upsert("alice", SHA256, 8192), _upsert("bob")]) == {
        "alice": (ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"),
        "bob": (0, None)}
    assert _alter(conn, upsertions=[_upsert("alice")]) == {"alice": (0, None)}
    assert _alter(conn, upsertions=[_upsert("alice", SHA256, 8192)]) == {"alice": (0, None)}
    everyone = conn.request(DESCRIBE, 0, {"users": None})
    assert everyone["error_code"] == 0
    assert {r["user"]: [(c["mechanism"], c["iterations"]) for c in r["credential_infos"]]
            for r in everyone["results"]} == {"alice": [(SHA256, 8192), (SHA512, 4096)], "bob": [(SHA512, 4096)]}
    # What a SCRAM login checks against is what the password derives: the client's salted password kept as keys.
    stored = broker.call(lambda: broker.broker.scram_credentials.get("alice", "SCRAM-SHA-512"))
    assert stored == credential_from_password("SCRAM-SHA-512", "pw", 4096, b"salt-alice")
    assert _alter(conn, deletions=[{"name": "bob", "mechanism": SHA512}]) == {"bob": (0, None)}
    answer = conn.request(DESCRIBE, 0, {"users": [{"name": "bob"}, {"name": "alice"}, {"name": "alice"}]})
    assert [(r["user"], r["error_code"], r["error_message"]) for r in answer["results"]] == [
        ("bob", ErrorCode.RESOURCE_NOT_FOUND, "Attempt to describe a user credential that does not exist: bob"),
        ("alice", ErrorCode.DUPLICATE_RESOURCE,
         "Cannot describe SCRAM credentials for the same user twice in a single request: alice"),
    ]


def test_refusals_leave_that_users_credentials_alone(conn: Connection) -> None:
    assert _alter(conn, deletions=[{"name": "carol", "mechanism": SHA256}],
                  upsertions=[_upsert("dave", iterations=1024), _upsert("erin", iterations=20000),
                              {**_upsert("frank"), "mechanism": 7}, _upsert(""), _upsert("gina"),
                              _upsert("gina"), _upsert("hank")]) == {
        "carol": (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "dave": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "erin": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        "frank": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "gina": (ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"),
        "hank": (0, None),
    }
    answer = conn.request(DESCRIBE, 0, {"users": []})
    assert [r["user"] for r in answer["results"]] == ["hank"]


def test_results_in_kafkas_hash_map_order_and_an_empty_salted_password(conn: Connection) -> None:
    """ScramControlManager lists deletions, upsertions, then refusals, each in its HashMap's order (Java's
    order for these names, from jshell: [scram-user, alice, scram-i]); an empty salted password fails Java's
    HMAC: UNKNOWN_SERVER_ERROR, no message."""
    body = conn.request(ALTER, 0, {"deletions": [], "upsertions": [
        _upsert("scram-i", iterations=1), _upsert("alice", iterations=1),
        {**_upsert("scram-user"), "salted_password": b""}]})
    assert [(r["user"], r["error_code"], r["error_message"]) for r in body["results"]] == [
        ("scram-user", ErrorCode.UNKNOWN_SERVER_ERROR, None),
        ("alice", ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        ("scram-i", ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")]


def test_describe_without_users_and_without_the_cluster_closes_as_kafka_does() -> None:
    """Kafka's error response for `users: null` dereferences the null list: the connection is closed."""
    from kemu.handlers.k50_describe_user_scram_credentials import error_response
    from kemu.wire.codec import decode_request, encode_request

    request = decode_request(encode_request(DESCRIBE, 0, 1, {"users": None}))
    assert error_response(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None) is None
    named = decode_request(encode_request(DESCRIBE, 0, 1, {"users": [{"name": "a"}]}))
    assert error_response(named, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None) is not None
