"""ACLs with confluent-kafka (librdkafka): AdminClient create/describe/delete_acls against kemu's
StandardAuthorizer, the answer of a broker without one, ACLs kept across a restart, and each denial as
librdkafka reports it — a producer without WRITE, a consumer without READ on its group, a transactional
producer without WRITE on its transactional id; and kcat's metadata without the topics it may not describe."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from compat_tests.acl_support import ANONYMOUS, acl_server, authorizer_server
from compat_tests.external_clients import Kcat
from compat_tests.kemu_process import KemuServeProcess, running
from compat_tests.polling import wait_for

__all__ = ["acl_server"]

TIMEOUT = 15


def binding(resource: ResourceType, name: str, op: AclOperation, *, principal: str = ANONYMOUS,
            permission: AclPermissionType = AclPermissionType.ALLOW,
            pattern: ResourcePatternType = ResourcePatternType.LITERAL, host: str = "*") -> AclBinding:
    return AclBinding(resource, name, pattern, principal, host, op, permission)


def every(resource: ResourceType = ResourceType.ANY, name: str | None = None,
          pattern: ResourcePatternType = ResourcePatternType.ANY) -> AclBindingFilter:
    return AclBindingFilter(resource, name, pattern, None, None, AclOperation.ANY, AclPermissionType.ANY)


def create(admin: AdminClient, *bindings: AclBinding) -> None:
    for future in admin.create_acls(list(bindings)).values():
        future.result(timeout=TIMEOUT)


def new_topic(bootstrap: str, name: str) -> AdminClient:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, num_partitions=1)])[name].result(timeout=TIMEOUT)
    return admin


def test_create_describe_and_delete_acls(acl_server: KemuServeProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": acl_server.bootstrap})
    read = binding(ResourceType.TOPIC, topic_name, AclOperation.READ, principal="User:alice")
    deny_prefix = binding(ResourceType.TOPIC, topic_name, AclOperation.WRITE, principal="User:bob",
                          permission=AclPermissionType.DENY, pattern=ResourcePatternType.PREFIXED, host="10.0.0.1")
    group = binding(ResourceType.GROUP, f"{topic_name}-group", AclOperation.DESCRIBE, principal="User:*")
    create(admin, read, deny_prefix, group)

    found = admin.describe_acls(every()).result(timeout=TIMEOUT)
    assert {read, deny_prefix, group} <= set(found)
    matching = admin.describe_acls(every(ResourceType.TOPIC, topic_name, ResourcePatternType.MATCH)).result(
        timeout=TIMEOUT)
    assert set(matching) >= {read, deny_prefix}
    assert group not in matching
    literal = admin.describe_acls(every(ResourceType.TOPIC, topic_name, ResourcePatternType.LITERAL)).result(
        timeout=TIMEOUT)
    assert literal == [read]

    by_filter = admin.delete_acls([every(ResourceType.TOPIC, topic_name, ResourcePatternType.LITERAL),
                                   every(ResourceType.GROUP, f"{topic_name}-group")])
    assert [future.result(timeout=TIMEOUT) for future in by_filter.values()] == [[read], [group]]
    left = admin.describe_acls(every()).result(timeout=TIMEOUT)
    assert read not in left and group not in left and deny_prefix in left


def test_an_invalid_acl_is_refused_with_kafka_s_error(acl_server: KemuServeProcess) -> None:
    admin = AdminClient({"bootstrap.servers": acl_server.bootstrap})
    [future] = admin.create_acls([binding(ResourceType.BROKER, "my-cluster", AclOperation.ALTER)]).values()
    with pytest.raises(KafkaException) as refused:
        future.result(timeout=TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.INVALID_REQUEST
    assert "The only valid name for the CLUSTER resource is kafka-cluster" in refused.value.args[0].str()


def test_a_broker_without_an_authorizer_answers_security_disabled(kemu_server: KemuServeProcess,
                                                                  topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})
    [future] = admin.create_acls([binding(ResourceType.TOPIC, topic_name, AclOperation.READ)]).values()
    with pytest.raises(KafkaException) as refused:
        future.result(timeout=TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.SECURITY_DISABLED
    assert "No Authorizer is configured." in refused.value.args[0].str()
    # librdkafka drops DescribeAcls' top-level error (against Kafka too): an empty, successful listing.
    assert admin.describe_acls(every()).result(timeout=TIMEOUT) == []


def test_acls_survive_a_restart(tmp_path: Path, topic_name: str) -> None:
    for server in running(authorizer_server(tmp_path / "data")):
        kept = binding(ResourceType.TRANSACTIONAL_ID, topic_name, AclOperation.WRITE,
                       permission=AclPermissionType.DENY, pattern=ResourcePatternType.PREFIXED)
        create(AdminClient({"bootstrap.servers": server.bootstrap}), kept)
        server.restart()
        admin = AdminClient({"bootstrap.servers": server.bootstrap})
        assert admin.describe_acls(every()).result(timeout=TIMEOUT) == [kept]


def test_a_producer_without_write_gets_topic_authorization_failed(acl_server: KemuServeProcess,
                                                                   topic_name: str) -> None:
    admin = new_topic(acl_server.bootstrap, topic_name)
    create(admin, binding(ResourceType.TOPIC, topic_name, AclOperation.READ))  # READ and DESCRIBE, no WRITE

    def delivered(producer: Producer) -> list[KafkaError | None]:
        errors: list[KafkaError | None] = []
        producer.produce(topic_name, b"v", on_delivery=lambda err, _msg: errors.append(err))
        producer.flush(TIMEOUT)
        return errors

    [error] = delivered(Producer({"bootstrap.servers": acl_server.bootstrap, "message.send.max.retries": 0}))
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    create(admin, binding(ResourceType.TOPIC, topic_name, AclOperation.WRITE))
    assert delivered(Producer({"bootstrap.servers": acl_server.bootstrap})) == [None]


def test_a_consumer_without_read_on_its_group_gets_group_authorization_failed(acl_server: KemuServeProcess,
                                                                               topic_name: str) -> None:
    admin = new_topic(acl_server.bootstrap, topic_name)
    group = f"{topic_name}-group"
    create(admin, binding(ResourceType.TOPIC, topic_name, AclOperation.READ),
           binding(ResourceType.GROUP, group, AclOperation.DESCRIBE))  # it may find the coordinator, not join
    consumer = Consumer({"bootstrap.servers": acl_server.bootstrap, "group.id": group,
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic_name])

        def group_error() -> KafkaError | None:
            message = consumer.poll(0.2)
            error = message.error() if message is not None else None
            return error if error is not None and error.code() != KafkaError._PARTITION_EOF else None

        error = wait_for(group_error, what="the consumer's group error")
        assert error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    finally:
        consumer.close()


def test_a_transactional_producer_without_write_on_its_id_gets_transactional_id_authorization_failed(
        acl_server: KemuServeProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": acl_server.bootstrap})
    transactional_id = f"{topic_name}-tx"
    create(admin, binding(ResourceType.TRANSACTIONAL_ID, transactional_id, AclOperation.DESCRIBE))
    producer = Producer({"bootstrap.servers": acl_server.bootstrap, "transactional.id": transactional_id})
    with pytest.raises(KafkaException) as refused:
        producer.init_transactions(TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_kcat_lists_only_the_topics_it_may_describe(acl_server: KemuServeProcess, kcat: Kcat, topic_name: str) -> None:
    visible, hidden = f"{topic_name}-visible", f"{topic_name}-hidden"
    admin = new_topic(acl_server.bootstrap, visible)
    new_topic(acl_server.bootstrap, hidden)
    create(admin, binding(ResourceType.TOPIC, hidden, AclOperation.DESCRIBE, principal="User:alice"))
    listed = {t["topic"]: t for t in kcat.metadata(acl_server.bootstrap)["topics"]}
    assert visible in listed and hidden not in listed
    [named] = kcat.metadata(acl_server.bootstrap, hidden)["topics"]
    assert named["error"] == "Broker: Topic authorization failed"
