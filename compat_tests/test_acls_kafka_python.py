"""ACLs with kafka-python: KafkaAdminClient create/describe/delete_acls (with the USER resource type of
v3), SecurityDisabledError from a broker without an authorizer, and each denial as kafka-python raises it —
a producer without WRITE, a consumer without READ on its group, a transactional producer without WRITE on
its transactional id."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import (
    GroupAuthorizationFailedError,
    SecurityDisabledError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)

from compat_tests.acl_support import ANONYMOUS, acl_server
from compat_tests.kemu_process import KemuServeProcess

__all__ = ["acl_server"]

TIMEOUT = 15


def acl(resource: ResourceType, name: str, op: ACLOperation, *, principal: str = ANONYMOUS,
        permission: ACLPermissionType = ACLPermissionType.ALLOW,
        pattern: ACLResourcePatternType = ACLResourcePatternType.LITERAL, host: str = "*") -> ACL:
    return ACL(principal, host, op, permission, ResourcePattern(resource, name, pattern))


def every(resource: ResourceType = ResourceType.ANY, name: str | None = None,
          pattern: ACLResourcePatternType = ACLResourcePatternType.ANY) -> ACLFilter:
    return ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                     ResourcePatternFilter(resource, name, pattern))


def admin_of(server: KemuServeProcess) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=TIMEOUT * 1000)


def create(admin: KafkaAdminClient, *acls: ACL) -> None:
    assert admin.create_acls(list(acls)) == {"succeeded": list(acls), "failed": []}


def test_create_describe_and_delete_acls(acl_server: KemuServeProcess, topic_name: str) -> None:
    admin = admin_of(acl_server)
    try:
        write = acl(ResourceType.TOPIC, topic_name, ACLOperation.WRITE, principal="User:alice")
        prefixed = acl(ResourceType.GROUP, topic_name, ACLOperation.READ, permission=ACLPermissionType.DENY,
                       pattern=ACLResourcePatternType.PREFIXED, host="10.0.0.7")
        user = acl(ResourceType.USER, f"User:{topic_name}", ACLOperation.DESCRIBE, principal="User:*")
        create(admin, write, prefixed, user)

        found, error = admin.describe_acls(every())
        assert error.errno == 0 and {repr(a) for a in (write, prefixed, user)} <= {repr(a) for a in found}
        found, _ = admin.describe_acls(every(ResourceType.GROUP, f"{topic_name}-group", ACLResourcePatternType.MATCH))
        assert found == [prefixed]
        found, _ = admin.describe_acls(every(ResourceType.USER))  # kafka-python asks v3 for USER
        assert user in found

        [(_, deleted, error)] = admin.delete_acls([every(ResourceType.TOPIC, topic_name,
                                                         ACLResourcePatternType.LITERAL)])
        assert (deleted, error.errno) == ([write], 0)
        found, _ = admin.describe_acls(every(ResourceType.TOPIC, topic_name, ACLResourcePatternType.LITERAL))
        assert found == []
    finally:
        admin.close()


def test_a_broker_without_an_authorizer_raises_security_disabled(kemu_server: KemuServeProcess) -> None:
    admin = admin_of(kemu_server)
    try:
        with pytest.raises(SecurityDisabledError):
            admin.describe_acls(every())
        result = admin.create_acls([acl(ResourceType.TOPIC, "t", ACLOperation.READ)])
        assert result["succeeded"] == [] and result["failed"] == [SecurityDisabledError]
    finally:
        admin.close()


def test_a_producer_without_write_raises_topic_authorization_failed(acl_server: KemuServeProcess,
                                                                     topic_name: str) -> None:
    admin = admin_of(acl_server)
    try:
        admin.create_topics([NewTopic(topic_name, 1, 1)])
        create(admin, acl(ResourceType.TOPIC, topic_name, ACLOperation.DESCRIBE))
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=acl_server.bootstrap, retries=0)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(topic_name, b"v").get(timeout=TIMEOUT)
    finally:
        producer.close()


def test_a_consumer_without_read_on_its_group_raises_group_authorization_failed(acl_server: KemuServeProcess,
                                                                                 topic_name: str) -> None:
    group = f"{topic_name}-group"
    admin = admin_of(acl_server)
    try:
        admin.create_topics([NewTopic(topic_name, 1, 1)])
        create(admin, acl(ResourceType.TOPIC, topic_name, ACLOperation.READ),
               acl(ResourceType.GROUP, group, ACLOperation.DESCRIBE))
    finally:
        admin.close()
    consumer = KafkaConsumer(topic_name, bootstrap_servers=acl_server.bootstrap, group_id=group,
                             auto_offset_reset="earliest")
    try:
        with pytest.raises(GroupAuthorizationFailedError):
            for _ in range(50):
                consumer.poll(timeout_ms=200)
    finally:
        consumer.close()


def test_a_transactional_producer_without_write_on_its_id_raises_transactional_id_authorization_failed(
        acl_server: KemuServeProcess, topic_name: str) -> None:
    transactional_id = f"{topic_name}-tx"
    admin = admin_of(acl_server)
    try:
        create(admin, acl(ResourceType.TRANSACTIONAL_ID, transactional_id, ACLOperation.DESCRIBE))
    finally:
        admin.close()
    with pytest.raises(TransactionalIdAuthorizationFailedError):
        producer = KafkaProducer(bootstrap_servers=acl_server.bootstrap, transactional_id=transactional_id)
        try:
            producer.init_transactions()
        finally:
            producer.close(timeout=5)
