"""DescribeAcls, CreateAcls and DeleteAcls: Kafka's answers without an authorizer, the cluster checks, each
ACL's validation, filters by pattern type, and ACLs kept across a restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kemu.authorizer.acls import AclBinding, AclOperation, PatternType, PermissionType, ResourceType
from kemu.wire.errors import ErrorCode
from tests.handlers.harness import Broker, Connection, MakeBroker, broker_config

DESCRIBE, CREATE, DELETE, API_VERSIONS = 29, 30, 31, 18
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
OP_ANY, ALL, READ, WRITE, ALTER = 1, 2, 3, 4, 7
PERM_ANY, DENY, ALLOW = 1, 2, 3
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def with_authorizer(tmp_path: Path | None = None, **settings: str) -> Any:
    properties = {"authorizer.class.name": STANDARD, **settings}
    return broker_config(properties=properties, **({"data_dir": str(tmp_path)} if tmp_path else {}))


@pytest.fixture
def admin_conn(make_broker: MakeBroker) -> Iterator[Connection]:
    """A connection of a super user: ANONYMOUS is one on this broker."""
    with make_broker(with_authorizer(**{"super.users": "User:ANONYMOUS"})) as running, running.connect() as conn:
        yield conn


def creation(resource: int, name: str, op: int, permission: int = ALLOW, *, pattern: int = LITERAL,
             principal: str = "User:alice", host: str = "*") -> dict[str, Any]:
    return {"resource_type": resource, "resource_name": name, "resource_pattern_type": pattern,
            "principal": principal, "host": host, "operation": op, "permission_type": permission}


def acl_filter(resource: int = ANY, name: str | None = None, pattern: int = ANY, *, principal: str | None = None,
               host: str | None = None, op: int = OP_ANY, permission: int = PERM_ANY) -> dict[str, Any]:
    return {"resource_type_filter": resource, "resource_name_filter": name, "pattern_type_filter": pattern,
            "principal_filter": principal, "host_filter": host, "operation": op, "permission_type": permission}


def create(conn: Connection, *creations: dict[str, Any], version: int = 3) -> list[tuple[int, str | None]]:
    body = conn.request(CREATE, version, {"creations": list(creations)})
    return [(r["error_code"], r["error_message"]) for r in body["results"]]


def described(conn: Connection, version: int = 3, **filter_args: Any) -> list[tuple[Any, ...]]:
    body = conn.request(DESCRIBE, version, acl_filter(**filter_args))
    assert (body["error_code"], body["error_message"]) == (0, "")  # Kafka's default message, ""
    return [(r["resource_type"], r["resource_name"], r["pattern_type"], a["principal"], a["host"], a["operation"],
             a["permission_type"]) for r in body["resources"] for a in r["acls"]]


def test_api_versions_advertises_the_acl_apis_as_kafka_4_does(conn: Connection) -> None:
    keys = {k["api_key"]: (k["min_version"], k["max_version"]) for k in conn.request(API_VERSIONS, 2, {})["api_keys"]}
    assert keys[DESCRIBE] == keys[CREATE] == keys[DELETE] == (1, 3)


def test_without_an_authorizer_every_acl_api_is_security_disabled(conn: Connection) -> None:
    assert create(conn, creation(TOPIC, "t", READ)) == [(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")]
    body = conn.request(DESCRIBE, 3, acl_filter())
    assert (body["error_code"], body["error_message"]) == (54, "No Authorizer is configured on the broker")
    [result] = conn.request(DELETE, 3, {"filters": [acl_filter()]})["filter_results"]
    assert (result["error_code"], result["error_message"]) == (54, "No Authorizer is configured.")


@pytest.mark.parametrize("version", [1, 2, 3])
def test_create_describe_delete(admin_conn: Connection, version: int) -> None:
    made = [creation(TOPIC, "orders", READ), creation(TOPIC, "ord", WRITE, DENY, pattern=PREFIXED, host="10.0.0.1"),
            creation(GROUP, "readers", READ, principal="User:*"), creation(CLUSTER, "kafka-cluster", ALTER)]
    assert create(admin_conn, *made, version=version) == [(0, "")] * 4
    assert create(admin_conn, made[0], version=version) == [(0, "")]  # again: no second copy
    everything = described(admin_conn, version)
    assert everything == [(TOPIC, "orders", LITERAL, "User:alice", "*", READ, ALLOW),
                          (TOPIC, "ord", PREFIXED, "User:alice", "10.0.0.1", WRITE, DENY),
                          (GROUP, "readers", LITERAL, "User:*", "*", READ, ALLOW),
                          (CLUSTER, "kafka-cluster", LITERAL, "User:alice", "*", ALTER, ALLOW)]
    assert described(admin_conn, version, resource=TOPIC, name="orders", pattern=MATCH) == everything[:2]
    assert described(admin_conn, version, resource=TOPIC, name="orders", pattern=LITERAL) == everything[:1]
    assert described(admin_conn, version, pattern=PREFIXED) == everything[1:2]
    assert described(admin_conn, version, principal="User:*") == everything[2:3]
    assert described(admin_conn, version, permission=DENY) == everything[1:2]

    body = admin_conn.request(DELETE, version, {"filters": [acl_filter(resource=TOPIC), acl_filter(op=WRITE)]})
    matched = [[(m["resource_name"], m["pattern_type"], m["operation"], m["error_code"]) for m in r["matching_acls"]]
               for r in body["filter_results"]]
    assert matched == [[("orders", LITERAL, READ, 0), ("ord", PREFIXED, WRITE, 0)], [("ord", PREFIXED, WRITE, 0)]]
    assert described(admin_conn, version) == everything[2:]


def test_each_acl_is_validated_on_its_own(admin_conn: Connection) -> None:
    assert create(admin_conn, creation(CLUSTER, "my-cluster", ALTER), creation(TOPIC, "", READ),
                  creation(TOPIC, "t", READ, principal="alice"), creation(TOPIC, "t", READ)) == [
        (42, "The only valid name for the CLUSTER resource is kafka-cluster"),
        (42, "Invalid empty resource name"),
        (42, "Could not parse principal from `alice` (no colon is present separating the principal type from "
             "the principal name)"),
        (0, "")]
    assert [acl[1] for acl in described(admin_conn)] == ["t"]


@pytest.mark.parametrize("bad", [{"resource_type": ANY}, {"resource_pattern_type": MATCH},
                                 {"resource_pattern_type": ANY}, {"operation": OP_ANY}, {"permission_type": PERM_ANY}])
def test_any_in_a_creation_fails_the_whole_request(admin_conn: Connection, bad: dict[str, int]) -> None:
    results = create(admin_conn, creation(TOPIC, "fine", READ), {**creation(TOPIC, "t", READ), **bad})
    # An IllegalArgumentException Kafka did not expect: no message.
    assert results == [(ErrorCode.UNKNOWN_SERVER_ERROR, None)] * 2
    assert described(admin_conn) == []


@pytest.mark.parametrize(("key", "body"), [
    (CREATE, {"creations": [{**creation(TOPIC, "t", READ), "operation": 0}]}),
    (CREATE, {"creations": [{**creation(TOPIC, "t", READ), "resource_type": 0}]}),
    (DESCRIBE, acl_filter(pattern=0)),
    (DELETE, {"filters": [acl_filter(permission=0)]}),
])
def test_an_unknown_element_is_a_request_kafka_cannot_parse(admin_conn: Connection, key: int,
                                                            body: dict[str, Any]) -> None:
    admin_conn.send(key, 3, body)
    assert admin_conn.closed_by_peer()


@pytest.mark.parametrize(("field", "message"), [("resource_type", "Invalid resourceType UNKNOWN"),
                                                ("resource_pattern_type", "Invalid patternType UNKNOWN"),
                                                ("operation", "Invalid operation UNKNOWN"),
                                                ("permission_type", "Invalid permissionType UNKNOWN")])
def test_a_code_kafka_does_not_know_is_refused_for_that_acl_alone(admin_conn: Connection, field: str,
                                                                  message: str) -> None:
    """A code other than 0 that Kafka does not know reads as UNKNOWN: the request parses, and the controller
    refuses that one creation; a DescribeAcls filter with it matches nothing, a DeleteAcls one is refused."""
    assert create(admin_conn, {**creation(TOPIC, "t", READ), field: 99}, creation(TOPIC, "t", READ)) == [
        (42, message), (0, "")]
    assert described(admin_conn, resource=99) == []
    body = admin_conn.request(DELETE, 3, {"filters": [acl_filter(pattern=99), acl_filter(op=99), acl_filter()]})
    assert [(r["error_code"], r["error_message"], len(r["matching_acls"])) for r in body["filter_results"]] == [
        (42, "Unknown patternFilter.", 0), (42, "Unknown entryFilter.", 0), (0, None, 1)]


def test_only_who_may_alter_or_describe_the_cluster_manages_acls(make_broker: MakeBroker) -> None:
    with make_broker(with_authorizer()) as broker, broker.connect() as conn:
        # Kafka's AuthHelper.authorizeClusterOperation message, quoting the request (its text is
        # tests/handlers/test_authorization_order.py's), the same for every creation.
        refused = create(conn, creation(TOPIC, "t", READ), creation(TOPIC, "u", READ))
        assert [code for code, _ in refused] == [31, 31] and refused[0][1] == refused[1][1]
        assert str(refused[0][1]).startswith("Request Request(") and str(refused[0][1]).endswith(
            " needs ALTER permission.")
        body = conn.request(DESCRIBE, 3, acl_filter())
        assert body["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        [result] = conn.request(DELETE, 3, {"filters": [acl_filter()]})["filter_results"]
        assert result["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        authorizer = broker.broker.authorizer
        assert authorizer is not None
        broker.call(authorizer.create, [AclBinding(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL,
                                                   "User:admin", "127.0.0.1", AclOperation.ALTER,
                                                   PermissionType.ALLOW)])
        conn.client.principal = "User:admin"  # as a SASL login would set it
        assert create(conn, creation(TOPIC, "t", READ)) == [(0, "")]
        # ALTER on the cluster implies DESCRIBE on it
        assert described(conn, resource=TOPIC) == [(TOPIC, "t", LITERAL, "User:alice", "*", READ, ALLOW)]
        conn.client.principal = "User:ANONYMOUS"
        assert [code for code, _ in create(conn, creation(TOPIC, "u", READ))] == [31]


def test_acls_survive_a_restart_in_the_data_directory(make_broker: MakeBroker, tmp_path: Path) -> None:
    config = with_authorizer(tmp_path, **{"super.users": "User:ANONYMOUS"})
    with make_broker(config) as broker, broker.connect() as conn:
        assert create(conn, creation(TOPIC, "kept", WRITE, DENY, pattern=PREFIXED)) == [(0, "")]
    with make_broker(config) as broker, broker.connect() as conn:
        assert described(conn) == [(TOPIC, "kept", PREFIXED, "User:alice", "*", WRITE, DENY)]


def test_acls_are_kept_when_the_authorizer_is_off_and_back_on(make_broker: MakeBroker, tmp_path: Path,
                                                               broker: Broker) -> None:
    on = with_authorizer(tmp_path, **{"super.users": "User:ANONYMOUS"})
    with make_broker(on) as running, running.connect() as conn:
        assert create(conn, creation(GROUP, "g", READ)) == [(0, "")]
    with make_broker(broker_config(data_dir=str(tmp_path))) as running, running.connect() as conn:
        assert conn.request(DESCRIBE, 3, acl_filter())["error_code"] == ErrorCode.SECURITY_DISABLED
    with make_broker(on) as running, running.connect() as conn:
        assert [acl[1] for acl in described(conn)] == ["g"]
