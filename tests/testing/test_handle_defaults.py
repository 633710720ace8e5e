"""The handle's defaults are the broker's and the clients': `create_topic` without a count makes
`num.partitions` partitions, and a keyed `produce` without a partition goes where a Kafka producer's default
partitioner (murmur2 of the key) sends it, as confluent-kafka's Java-compatible partitioner shows."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from kemu.hashing import murmur2
from kemu.testing import Broker


@pytest.mark.kemu(config={"num.partitions": "3"})
def test_create_topic_takes_num_partitions(kemu_broker: Broker) -> None:
    kemu_broker.create_topic("defaults")
    kemu_broker.create_topic("chosen", partitions=2)
    topics = AdminClient({"bootstrap.servers": kemu_broker.bootstrap_servers}).list_topics(timeout=30).topics
    assert len(topics["defaults"].partitions) == 3
    assert len(topics["chosen"].partitions) == 2


def test_keyed_produce_partitions_as_the_java_partitioner(kemu_broker: Broker) -> None:
    keys = [f"customer-{n}" for n in range(40)]
    kemu_broker.create_topic("by-client", partitions=7)
    kemu_broker.create_topic("by-handle", partitions=7)
    delivered: dict[str, int] = {}

    def report(error: object, message: object) -> None:
        assert error is None, error
        delivered[message.key().decode()] = message.partition()  # type: ignore[attr-defined]

    producer = Producer({"bootstrap.servers": kemu_broker.bootstrap_servers, "partitioner": "murmur2_random"})
    for key in keys:
        producer.produce("by-client", b"v", key=key, on_delivery=report)
    assert producer.flush(30) == 0
    for key in keys:
        kemu_broker.produce("by-handle", "v", key=key)
    handle = {record.key.decode(): record.partition for record in kemu_broker.records("by-handle")
              if record.key is not None}
    assert handle == delivered
    assert len(set(handle.values())) > 3  # the keys really spread


def test_a_record_without_a_key_goes_to_partition_0(kemu_broker: Broker) -> None:
    kemu_broker.create_topic("unkeyed", partitions=3)
    kemu_broker.produce("unkeyed", "v")
    assert [record.partition for record in kemu_broker.records("unkeyed")] == [0]


def test_murmur2_agrees_with_kafka_python() -> None:
    # kafka-python's port of Kafka's Utils.murmur2, unsigned; every tail length and a few word counts.
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    inputs = [b"21", b"foobar", b"a-little-bit-longer-string", bytes(range(256))] + [
        bytes((7 * n + 3) % 256 for n in range(length)) for length in range(0, 24)]
    for data in inputs:
        expected = kafka_python_murmur2(data)
        assert murmur2(data) == (expected - (1 << 32) if expected >= 1 << 31 else expected), data
