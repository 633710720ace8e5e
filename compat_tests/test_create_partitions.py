"""CreatePartitions with every client that has it: a topic grown from 1 to 3 partitions is seen with 3 led
partitions in Metadata at once, a record produced to a new partition is kept, and a shrink is refused
with Kafka's INVALID_PARTITIONS."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions
from aiokafka.admin import NewTopic as AioNewTopic
from aiokafka.errors import InvalidPartitionsError as AioInvalidPartitionsError
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import NewPartitions as ConfluentNewPartitions
from confluent_kafka.admin import NewTopic as ConfluentNewTopic
from kafka.admin import KafkaAdminClient
from kafka.admin import NewTopic as KafkaNewTopic
from kafka.errors import InvalidPartitionsError

from compat_tests.external_clients import Kafkajs, KafkajsError
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.topic_metadata import PartitionView, assert_single_broker_topic, led_partitions

TIMEOUT_S = 15
GROWN = 3


def _confluent_partitions(admin: AdminClient, topic: str) -> list[PartitionView]:
    found = admin.list_topics(topic, timeout=10).topics.get(topic)
    if found is None or found.error is not None:
        return []
    return [PartitionView(p.id, p.leader, tuple(p.replicas), tuple(p.isrs), p.error.code() if p.error else 0)
            for p in found.partitions.values()]


def test_confluent_kafka(kemu_server: KemuServeProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})
    assert admin.create_topics([ConfluentNewTopic(topic_name, 1)])[topic_name].result(TIMEOUT_S) is None
    assert admin.create_partitions([ConfluentNewPartitions(topic_name, GROWN)])[topic_name].result(TIMEOUT_S) is None
    partitions = led_partitions(_confluent_partitions(admin, topic_name))
    assert_single_broker_topic(partitions, count=GROWN, broker_ids=set(admin.list_topics(timeout=10).brokers))

    delivered: list[tuple[KafkaError | None, int | None]] = []
    producer = Producer({"bootstrap.servers": kemu_server.bootstrap})
    producer.produce(topic_name, b"into the new partition", partition=GROWN - 1,
                     on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
    assert producer.flush(TIMEOUT_S) == 0
    assert delivered == [(None, 0)]

    with pytest.raises(KafkaException) as caught:
        admin.create_partitions([ConfluentNewPartitions(topic_name, 2)])[topic_name].result(TIMEOUT_S)
    error = caught.value.args[0]
    assert (error.code(), error.str()) == (
        KafkaError.INVALID_PARTITIONS, f"The topic {topic_name} currently has 3 partition(s); 2 would not be an "
                                       "increase.")


def test_kafka_python(kemu_server: KemuServeProcess, topic_name: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kemu_server.bootstrap, client_id="kemu-compat-kafka-python")
    try:
        admin.create_topics([KafkaNewTopic(topic_name, 1, 1)])
        response = admin.create_partitions({topic_name: GROWN})
        assert [(r.name, r.error_code) for r in response.results] == [(topic_name, 0)]
        [described] = admin.describe_topics([topic_name])
        assert sorted(p["partition_index"] for p in described["partitions"]) == list(range(GROWN))
        with pytest.raises(InvalidPartitionsError, match="Topic already has 3 partition"):
            admin.create_partitions({topic_name: GROWN})
    finally:
        admin.close()


async def _aiokafka(server: KemuServeProcess, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=server.bootstrap, client_id="kemu-compat-aiokafka")
    await admin.start()
    try:
        await admin.create_topics([AioNewTopic(topic, num_partitions=1, replication_factor=1)])
        response = await admin.create_partitions({topic: NewPartitions(GROWN)})
        assert [(name, code) for name, code, _message in response.topic_errors] == [(topic, 0)]
        [described] = await admin.describe_topics([topic])
        assert sorted(p["partition"] for p in described["partitions"]) == list(range(GROWN))
        with pytest.raises(AioInvalidPartitionsError) as caught:
            await admin.create_partitions({topic: NewPartitions(1)}, validate_only=True)
        assert f"The topic {topic} currently has 3 partition(s); 1 would not be an increase." in str(caught.value)
    finally:
        await admin.close()


def test_aiokafka(kemu_server: KemuServeProcess, topic_name: str) -> None:
    asyncio.run(_aiokafka(kemu_server, topic_name))


def test_kafkajs(kemu_server: KemuServeProcess, kafkajs: Kafkajs, topic_name: str) -> None:
    assert kafkajs.admin(kemu_server.bootstrap, "create", topic_name, "1") == {"created": True}
    assert kafkajs.run("create_partitions", kemu_server.bootstrap, "grow", topic_name, str(GROWN)) == {"grown": True}
    assert kafkajs.run("create_partitions", kemu_server.bootstrap, "partitions", topic_name) == list(range(GROWN))
    with pytest.raises(KafkajsError) as caught:
        kafkajs.run("create_partitions", kemu_server.bootstrap, "grow", topic_name, "2")
    assert caught.value.type == "INVALID_PARTITIONS"
