"""ACL denials as aiokafka raises them (it has no ACL admin API; the ACLs are made with confluent-kafka's):
a producer without WRITE, a consumer without READ on its group, a transactional producer without WRITE on
its transactional id — and the same clients going through once the ACL allows them."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import (
    GroupAuthorizationFailedError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailed,
)

from compat_tests.acl_support import acl_server, allow_anonymous
from compat_tests.kemu_process import KemuServeProcess

__all__ = ["acl_server"]

TIMEOUT_MS = 15000


def test_a_producer_without_write_raises_topic_authorization_failed(acl_server: KemuServeProcess,
                                                                     topic_name: str) -> None:
    allow_anonymous(acl_server.bootstrap, "TOPIC", topic_name, "DESCRIBE", topic=topic_name)

    async def send() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=acl_server.bootstrap, request_timeout_ms=TIMEOUT_MS)
        await producer.start()
        try:
            await producer.send_and_wait(topic_name, b"v")
        finally:
            await producer.stop()

    with pytest.raises(TopicAuthorizationFailedError):
        asyncio.run(send())
    allow_anonymous(acl_server.bootstrap, "TOPIC", topic_name, "WRITE")
    asyncio.run(send())


def test_a_consumer_without_read_on_its_group_raises_group_authorization_failed(acl_server: KemuServeProcess,
                                                                                 topic_name: str) -> None:
    group = f"{topic_name}-group"
    allow_anonymous(acl_server.bootstrap, "TOPIC", topic_name, "READ", topic=topic_name)
    allow_anonymous(acl_server.bootstrap, "GROUP", group, "DESCRIBE")

    async def consume() -> None:
        consumer = AIOKafkaConsumer(topic_name, bootstrap_servers=acl_server.bootstrap, group_id=group,
                                    auto_offset_reset="earliest", request_timeout_ms=TIMEOUT_MS)
        await consumer.start()
        try:
            await asyncio.wait_for(consumer.getone(), timeout=TIMEOUT_MS / 1000)
        finally:
            await consumer.stop()

    with pytest.raises(GroupAuthorizationFailedError):
        asyncio.run(consume())


def test_a_transactional_producer_without_write_on_its_id_raises_transactional_id_authorization_failed(
        acl_server: KemuServeProcess, topic_name: str) -> None:
    transactional_id = f"{topic_name}-tx"
    allow_anonymous(acl_server.bootstrap, "TRANSACTIONAL_ID", transactional_id, "DESCRIBE")

    async def start() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=acl_server.bootstrap, transactional_id=transactional_id,
                                    request_timeout_ms=TIMEOUT_MS)
        try:
            await producer.start()  # InitProducerId
        finally:
            await producer.stop()

    with pytest.raises(TransactionalIdAuthorizationFailed):
        asyncio.run(start())
    allow_anonymous(acl_server.bootstrap, "TRANSACTIONAL_ID", transactional_id, "WRITE")
    asyncio.run(start())
