"""The StandardAuthorizer's decisions, Kafka against kemu on the secured pair: which of DESCRIBE (Metadata),
READ (Fetch), WRITE (Produce) and DESCRIBE_CONFIGS (DescribeConfigs) a principal gets on a topic from a few
ACLs: DENY over ALLOW, ALL, the User:* principal, hosts, prefixed and literal patterns, and the operations an
ALLOW implies (READ, WRITE, DELETE, ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS; a DENY implies
nothing). Each scenario has a user and topics of its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.security_acls import ALLOW, DENY, DESCRIBE, LITERAL, PREFIXED, READ, WRITE, creation
from compat_tests.differential.security_brokers import (  # noqa: F401 (secured_pair_fixture: the fixture)
    Secured,
    SecuredPair,
    secured_pair_fixture,
)
from compat_tests.differential.security_sasl import answer
from compat_tests.differential.test_security_authorization import grant, make_topic, metadata_body
from tests.handlers.data_plane import batch, produce_body

ALL, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS = 2, 6, 7, 10, 11
PRODUCE, FETCH, METADATA, DESCRIBE_CONFIGS_KEY = 0, 1, 3, 32


def acl(user: str, name: str, operation: int, permission: int = ALLOW, pattern: int = LITERAL,
        host: str = "*", principal: str | None = None) -> dict[str, Any]:
    return creation(user, resource_name=name, operation=operation, permission_type=permission,
                    resource_pattern_type=pattern, host=host, principal=principal or f"User:{user}")


# user -> (its topics, its ACLs)
SCENARIOS: dict[str, tuple[str, list[str], list[dict[str, Any]]]] = {
    "deny_beats_allow": ("user-1", ["dec1-t", "dec1-u"], [
        acl("user-1", "dec1-", ALL, pattern=PREFIXED), acl("user-1", "dec1-t", READ, DENY)]),
    "wildcard_principal_and_name": ("user-2", ["dec2-t", "dec2-u"], [
        acl("user-2", "dec2-t", READ, principal="User:*"), acl("user-2", "dec2-u", WRITE)]),
    "hosts": ("user-3", ["dec3-elsewhere", "dec3-here"], [
        acl("user-3", "dec3-elsewhere", ALL, host="10.0.0.1"), acl("user-3", "dec3-here", ALL, host="127.0.0.1")]),
    "implied_operations": ("user-4", ["dec4-w", "dec4-d", "dec4-a", "dec4-ac"], [
        acl("user-4", "dec4-w", WRITE), acl("user-4", "dec4-d", DELETE), acl("user-4", "dec4-a", ALTER),
        acl("user-4", "dec4-ac", ALTER_CONFIGS)]),
    "deny_describe_only": ("user-5", ["dec5-t"], [
        acl("user-5", "dec5-", ALL, pattern=PREFIXED), acl("user-5", "dec5-t", DESCRIBE, DENY)]),
    "prefix_is_not_a_literal": ("user-6", ["dec6-topic", "dec6"], [
        acl("user-6", "dec6-top", READ, pattern=PREFIXED), acl("user-6", "dec6-topic-x", READ),
        acl("user-6", "dec6", DESCRIBE_CONFIGS)]),
}


def decisions(secured: Secured, user: str, topics: list[str]) -> dict[str, Any]:
    with secured.as_user(user) as connection:
        found = answer(connection, METADATA, 12, metadata_body(topics))
        fetched = answer(connection, FETCH, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": name, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                        "last_fetched_epoch": -1, "log_start_offset": -1,
                                                        "partition_max_bytes": 1 << 20}]} for name in topics]})
        produced = answer(connection, PRODUCE, 9, produce_body({(name, 0): batch(b"v") for name in topics}))
        configs = answer(connection, DESCRIBE_CONFIGS_KEY, 4, {
            "resources": [{"resource_type": 2, "resource_name": name, "configuration_keys": ["retention.ms"]}
                          for name in topics], "include_synonyms": False, "include_documentation": False})
    assert all(isinstance(got, dict) for got in (found, fetched, produced, configs))
    return {name: {
        "describe": next((t["error_code"], t["topic_authorized_operations"]) for t in found["topics"]
                         if t["name"] == name),
        "read": next(t["partitions"][0]["error_code"] for t in fetched["responses"] if t["topic"] == name),
        "write": next(t["partition_responses"][0]["error_code"] for t in produced["responses"] if t["name"] == name),
        "describe_configs": next(r["error_code"] for r in configs["results"] if r["resource_name"] == name),
    } for name in topics}


@pytest.mark.parametrize("case", list(SCENARIOS))
def test_decisions(secured_pair: SecuredPair, case: str) -> None:
    user, topics, acls = SCENARIOS[case]

    def run(secured: Secured) -> dict[str, Any]:
        for name in topics:
            make_topic(secured, name)
        grant(secured, *acls)
        return decisions(secured, user, topics)

    kafka, kemu = secured_pair.both(run)
    check(f"security.decisions.{case}", kafka, kemu)
