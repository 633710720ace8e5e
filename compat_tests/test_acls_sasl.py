"""ACLs for SASL principals, with confluent-kafka over SASL_PLAINTEXT (PLAIN): a super user manages the ACLs,
each user gets exactly what its ACLs allow — alice may write the topic but not read it in a group, bob may
read it in his group but not write it — and ANONYMOUS on the PLAINTEXT listener sees no topic at all
(allow.everyone.if.no.acl.found=false)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from compat_tests.acl_support import STANDARD_AUTHORIZER
from compat_tests.polling import wait_for
from kemu.testing import Broker
from kemu.testing.certs import sasl_settings

pytestmark = pytest.mark.timeout(120)

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
TIMEOUT = 15


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    data_dir: Path = tmp_path_factory.mktemp("kemu-sasl-acls")
    config = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "inter.broker.listener.name": "PLAINTEXT",
        **sasl_settings("sasl_plaintext", ("PLAIN",), USERS),
        "authorizer.class.name": STANDARD_AUTHORIZER,
        "super.users": "User:admin",
        "group.initial.rebalance.delay.ms": "0",
    }
    running = Broker(config=config, data_dir=str(data_dir))
    try:
        yield running
    finally:
        running.close()


def as_user(broker: Broker, user: str) -> dict[str, Any]:
    return {"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": USERS[user]}


def allow(principal: str, resource: ResourceType, name: str, op: AclOperation) -> AclBinding:
    return AclBinding(resource, name, ResourcePatternType.LITERAL, principal, "*", op, AclPermissionType.ALLOW)


def produce(settings: dict[str, Any], topic: str) -> KafkaError | None:
    errors: list[KafkaError | None] = []
    producer = Producer({**settings, "message.send.max.retries": 0})
    producer.produce(topic, b"by " + settings["sasl.username"].encode(), on_delivery=lambda e, _m: errors.append(e))
    producer.flush(TIMEOUT)
    [error] = errors
    return error


def first_event(settings: dict[str, Any], topic: str, group: str) -> bytes | KafkaError:
    """The first record the consumer gets, or its first error."""
    consumer = Consumer({**settings, "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        def event() -> bytes | KafkaError | None:
            message = consumer.poll(0.2)
            if message is None:
                return None
            error = message.error()
            if error is None:
                return message.value()
            return None if error.code() == KafkaError._PARTITION_EOF else error

        return wait_for(event, what=f"{settings['sasl.username']}'s first record or error", timeout=60)
    finally:
        consumer.close()


def test_each_sasl_user_gets_what_its_acls_allow(broker: Broker, topic_name: str) -> None:
    group = f"{topic_name}-readers"
    admin = AdminClient(as_user(broker, "admin"))
    admin.create_topics([NewTopic(topic_name, num_partitions=1)])[topic_name].result(timeout=TIMEOUT)
    for future in admin.create_acls([
        allow("User:alice", ResourceType.TOPIC, topic_name, AclOperation.WRITE),
        allow("User:bob", ResourceType.TOPIC, topic_name, AclOperation.READ),
        allow("User:bob", ResourceType.GROUP, group, AclOperation.READ),
        allow("User:alice", ResourceType.GROUP, group, AclOperation.DESCRIBE),
    ]).values():
        future.result(timeout=TIMEOUT)

    alice, bob = as_user(broker, "alice"), as_user(broker, "bob")
    assert produce(alice, topic_name) is None
    denied = produce(bob, topic_name)
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    assert first_event(bob, topic_name, group) == b"by alice"
    refused = first_event(alice, topic_name, group)
    assert isinstance(refused, KafkaError) and refused.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_acls_are_only_for_who_may_alter_the_cluster(broker: Broker, topic_name: str) -> None:
    alice = AdminClient(as_user(broker, "alice"))
    [future] = alice.create_acls([allow("User:alice", ResourceType.TOPIC, topic_name, AclOperation.ALL)]).values()
    with pytest.raises(KafkaException) as refused:
        future.result(timeout=TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED


def test_anonymous_on_the_plaintext_listener_sees_no_topic(broker: Broker, topic_name: str) -> None:
    admin = AdminClient(as_user(broker, "admin"))
    admin.create_topics([NewTopic(topic_name, num_partitions=1)])[topic_name].result(timeout=TIMEOUT)
    assert topic_name in admin.list_topics(timeout=TIMEOUT).topics
    anonymous = AdminClient({"bootstrap.servers": broker.bootstrap("PLAINTEXT")})
    assert topic_name not in anonymous.list_topics(timeout=TIMEOUT).topics
