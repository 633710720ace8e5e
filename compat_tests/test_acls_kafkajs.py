"""ACLs with kafkajs: admin createAcls/describeAcls/deleteAcls, and each denial as kafkajs throws it — a
producer without WRITE, a consumer without READ on its group, a transactional producer without WRITE on its
transactional id (the ACL-less cases go through once the ACL allows them)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compat_tests.acl_support import acl_server, allow_anonymous
from compat_tests.external_clients import Kafkajs, KafkajsError
from compat_tests.kemu_process import KemuServeProcess

__all__ = ["acl_server"]

TOPIC, GROUP = 2, 3
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
OP_ANY, READ, WRITE, DESCRIBE = 1, 3, 4, 8
PERM_ANY, DENY, ALLOW = 1, 2, 3


def acl(resource: int, name: str, op: int, permission: int = ALLOW, *, pattern: int = LITERAL,
        principal: str = "User:alice", host: str = "*") -> dict[str, Any]:
    return {"resourceType": resource, "resourceName": name, "resourcePatternType": pattern, "principal": principal,
            "host": host, "operation": op, "permissionType": permission}


def acl_filter(resource: int = ANY, name: str | None = None, pattern: int = ANY) -> dict[str, Any]:
    found: dict[str, Any] = {"resourceType": resource, "resourcePatternType": pattern, "operation": OP_ANY,
                             "permissionType": PERM_ANY}
    if name is not None:
        found["resourceName"] = name
    return found


def listed(described: dict[str, Any]) -> list[tuple[Any, ...]]:
    return sorted((r["resourceType"], r["resourceName"], r["resourcePatternType"], a["principal"], a["host"],
                   a["operation"], a["permissionType"]) for r in described["resources"] for a in r["acls"])


def test_create_describe_and_delete_acls(kafkajs: Kafkajs, acl_server: KemuServeProcess, topic_name: str) -> None:
    boot = acl_server.bootstrap
    made = [acl(TOPIC, topic_name, READ), acl(TOPIC, topic_name, WRITE, DENY, pattern=PREFIXED, host="10.1.1.1"),
            acl(GROUP, f"{topic_name}-g", DESCRIBE, principal="User:*")]
    assert kafkajs.run("acls", boot, "create", json.dumps(made)) == {"created": True}
    on_topic = listed(kafkajs.run("acls", boot, "describe", json.dumps(acl_filter(TOPIC, topic_name, MATCH))))
    assert on_topic == sorted([(TOPIC, topic_name, LITERAL, "User:alice", "*", READ, ALLOW),
                               (TOPIC, topic_name, PREFIXED, "User:alice", "10.1.1.1", WRITE, DENY)])
    on_group = listed(kafkajs.run("acls", boot, "describe", json.dumps(acl_filter(GROUP, f"{topic_name}-g"))))
    assert on_group == [(GROUP, f"{topic_name}-g", LITERAL, "User:*", "*", DESCRIBE, ALLOW)]

    deleted = kafkajs.run("acls", boot, "delete", json.dumps([acl_filter(TOPIC, topic_name, LITERAL)]))
    [response] = deleted["filterResponses"]
    assert response["errorCode"] == 0
    assert [(m["resourceName"], m["operation"]) for m in response["matchingAcls"]] == [(topic_name, READ)]
    assert len(listed(kafkajs.run("acls", boot, "describe", json.dumps(acl_filter(TOPIC, topic_name, MATCH))))) == 1


def test_a_broker_without_an_authorizer_throws_security_disabled(kafkajs: Kafkajs,
                                                                 kemu_server: KemuServeProcess) -> None:
    with pytest.raises(KafkajsError) as thrown:
        kafkajs.run("acls", kemu_server.bootstrap, "describe", json.dumps(acl_filter()))
    assert thrown.value.type == "SECURITY_DISABLED"


def test_a_producer_without_write_throws_topic_authorization_failed(kafkajs: Kafkajs, acl_server: KemuServeProcess,
                                                                     topic_name: str) -> None:
    allow_anonymous(acl_server.bootstrap, "TOPIC", topic_name, "DESCRIBE", topic=topic_name)
    with pytest.raises(KafkajsError) as thrown:
        kafkajs.run("acls", acl_server.bootstrap, "produce", topic_name)
    assert "TOPIC_AUTHORIZATION_FAILED" in _types(thrown.value)
    allow_anonymous(acl_server.bootstrap, "TOPIC", topic_name, "WRITE")
    [sent] = kafkajs.run("acls", acl_server.bootstrap, "produce", topic_name)
    assert (sent["topicName"], sent["errorCode"]) == (topic_name, 0)


def test_a_consumer_without_read_on_its_group_throws_group_authorization_failed(
        kafkajs: Kafkajs, acl_server: KemuServeProcess, topic_name: str) -> None:
    group = f"{topic_name}-group"
    allow_anonymous(acl_server.bootstrap, "TOPIC", topic_name, "READ", topic=topic_name)
    allow_anonymous(acl_server.bootstrap, "GROUP", group, "DESCRIBE")
    with pytest.raises(KafkajsError) as thrown:
        kafkajs.run("acls", acl_server.bootstrap, "consume", topic_name, group)
    assert "GROUP_AUTHORIZATION_FAILED" in _types(thrown.value)


def test_a_transactional_producer_without_write_on_its_id_throws_transactional_id_authorization_failed(
        kafkajs: Kafkajs, acl_server: KemuServeProcess, topic_name: str) -> None:
    transactional_id = f"{topic_name}-tx"
    allow_anonymous(acl_server.bootstrap, "TOPIC", topic_name, "WRITE", topic=topic_name)
    allow_anonymous(acl_server.bootstrap, "TRANSACTIONAL_ID", transactional_id, "DESCRIBE")
    with pytest.raises(KafkajsError) as thrown:
        kafkajs.run("acls", acl_server.bootstrap, "transaction", topic_name, transactional_id)
    assert "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in _types(thrown.value)
    allow_anonymous(acl_server.bootstrap, "TRANSACTIONAL_ID", transactional_id, "WRITE")
    assert kafkajs.run("acls", acl_server.bootstrap, "transaction", topic_name, transactional_id) == {
        "committed": True}


def _types(error: KafkajsError) -> list[str | None]:
    """The error's Kafka type, its aggregated errors' and its cause's (kafkajs wraps some in a retry error)."""
    cause = error.error.get("cause") or {}
    return [*error.types, cause.get("type")]
