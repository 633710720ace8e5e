"""`reset()` seen through confluent-kafka: a broker a test filled — topics, a consumer group's committed
offsets, an open transaction, a dynamic broker config — is empty after it, on the same bootstrap address,
and a producer of the broker as it was finds its transaction gone rather than carried over."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from kemu.testing import Broker

TIMEOUT_S = 15


def fill(broker: Broker) -> Producer:
    """Everything a test leaves behind; returns its transactional producer, its transaction still open."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic("orders", num_partitions=2)])["orders"].result(timeout=TIMEOUT_S)
    resource = ConfigResource(ResourceType.BROKER, "1", incremental_configs=[
        ConfigEntry("message.max.bytes", "1000", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(timeout=TIMEOUT_S)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "tx"})
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce("orders", b"open", partition=0)
    producer.flush(TIMEOUT_S)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "readers"})
    try:
        consumer.commit(offsets=[TopicPartition("orders", 1, 7)], asynchronous=False)
    finally:
        consumer.close()
    return producer


def test_reset_leaves_nothing_a_client_can_find() -> None:
    with Broker() as broker:
        address = broker.bootstrap_servers
        stale = fill(broker)
        admin = AdminClient({"bootstrap.servers": address})
        assert "orders" in admin.list_topics(timeout=TIMEOUT_S).topics
        assert [g.group_id for g in admin.list_consumer_groups().result(timeout=TIMEOUT_S).valid] == ["readers"]

        broker.reset()

        assert broker.bootstrap_servers == address
        admin = AdminClient({"bootstrap.servers": address})
        assert [t for t in admin.list_topics(timeout=TIMEOUT_S).topics if not t.startswith("__")] == []
        assert admin.list_consumer_groups().result(timeout=TIMEOUT_S).valid == []
        broker_configs = ConfigResource(ResourceType.BROKER, "1")
        described = admin.describe_configs([broker_configs])[broker_configs].result(timeout=TIMEOUT_S)
        assert described["message.max.bytes"].value != "1000"
        # The old producer's open transaction went with the broker it was on: the new one knows no such
        # producer, and says so.
        with pytest.raises(KafkaException, match="INVALID_PRODUCER_ID_MAPPING"):
            stale.commit_transaction(TIMEOUT_S)

        # And the broker works as new. (A client left running from before may reconnect, as librdkafka does,
        # and auto-create the topics it knew about: a test closes its clients, or uses names of its own.)
        broker.create_topic("payments")
        producer = Producer({"bootstrap.servers": address, "enable.idempotence": True})
        producer.produce("payments", b"fresh")
        assert producer.flush(TIMEOUT_S) == 0
        assert [r.value for r in broker.records("payments")] == [b"fresh"]
