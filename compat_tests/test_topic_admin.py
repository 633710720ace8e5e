"""Topic admin through each stock client: list, create 3 partitions, see them led in Metadata,
delete, see the topic gone.

Absence is always checked with an all-topics Metadata request: several clients ask for a named
topic with AllowAutoTopicCreation=true, which on a real broker would re-create a deleted topic.
"""

from __future__ import annotations

import asyncio

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic as AioNewTopic
from confluent_kafka.admin import AdminClient, ClusterMetadata
from confluent_kafka.admin import NewTopic as ConfluentNewTopic
from kafka.admin import KafkaAdminClient

from compat_tests.external_clients import Kafkajs, Kcat
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for, wait_for_async
from compat_tests.topic_metadata import PartitionView, assert_single_broker_topic, led_partitions

PARTITIONS = 3


# --- confluent-kafka (librdkafka) ----------------------------------------------------------------


def _confluent_partitions(metadata: ClusterMetadata, topic: str) -> list[PartitionView]:
    found = metadata.topics.get(topic)
    if found is None or found.error is not None:
        return []
    return [
        PartitionView(p.id, p.leader, tuple(p.replicas), tuple(p.isrs), p.error.code() if p.error else 0)
        for p in found.partitions.values()
    ]


def test_confluent_kafka_topic_lifecycle(kemu_server: KemuServeProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})

    before = admin.list_topics(timeout=10)
    assert topic_name not in before.topics
    assert [(b.host, b.port) for b in before.brokers.values()] == [(kemu_server.host, kemu_server.port)]

    # No replication factor: the broker's default (-1 on the wire), as most applications create topics.
    futures = admin.create_topics([ConfluentNewTopic(topic_name, num_partitions=PARTITIONS)], operation_timeout=10)
    assert futures[topic_name].result(timeout=15) is None

    partitions = wait_for(
        lambda: led_partitions(_confluent_partitions(admin.list_topics(timeout=10), topic_name)),
        what=f"{topic_name} with led partitions in Metadata",
    )
    broker_ids = set(admin.list_topics(timeout=10).brokers)
    assert_single_broker_topic(partitions, count=PARTITIONS, broker_ids=broker_ids)

    futures = admin.delete_topics([topic_name], operation_timeout=10)
    assert futures[topic_name].result(timeout=15) is None
    wait_for(lambda: topic_name not in admin.list_topics(timeout=10).topics, what=f"{topic_name} to disappear")


# --- kafka-python --------------------------------------------------------------------------------


def _kafka_python_partitions(described: list[dict], topic: str) -> list[PartitionView]:
    for entry in described:
        if entry["name"] == topic and entry["error_code"] == 0:
            return [
                PartitionView(
                    p["partition_index"], p["leader_id"], tuple(p["replica_nodes"]), tuple(p["isr_nodes"]),
                    p["error_code"],
                )  # fmt: skip
                for p in entry["partitions"]
            ]
    return []


def test_kafka_python_topic_lifecycle(kemu_server: KemuServeProcess, topic_name: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kemu_server.bootstrap, client_id="kemu-compat-kafka-python")
    try:
        assert topic_name not in admin.list_topics()
        cluster = admin.describe_cluster()
        assert [(b["host"], b["port"]) for b in cluster["brokers"]] == [(kemu_server.host, kemu_server.port)]

        result = admin.create_topics({topic_name: {"num_partitions": PARTITIONS, "replication_factor": 1}})
        assert [(t["name"], t["error_code"]) for t in result["topics"]] == [(topic_name, 0)]

        # describe_topics sends AllowAutoTopicCreation=false, so it is safe to name the topic here.
        partitions = wait_for(
            lambda: led_partitions(_kafka_python_partitions(admin.describe_topics([topic_name]), topic_name)),
            what=f"{topic_name} with led partitions in Metadata",
        )
        assert_single_broker_topic(
            partitions, count=PARTITIONS, broker_ids={b["broker_id"] for b in cluster["brokers"]}
        )

        result = admin.delete_topics([topic_name])
        assert [(t["name"], t["error_code"]) for t in result["topics"]] == [(topic_name, 0)]
        wait_for(lambda: topic_name not in admin.list_topics(), what=f"{topic_name} to disappear")
    finally:
        admin.close()


# --- aiokafka ------------------------------------------------------------------------------------


def _aiokafka_partitions(described: list[dict], topic: str) -> list[PartitionView]:
    for entry in described:
        if entry["topic"] == topic and entry["error_code"] == 0:
            return [
                PartitionView(p["partition"], p["leader"], tuple(p["replicas"]), tuple(p["isr"]), p["error_code"])
                for p in entry["partitions"]
            ]
    return []


async def _aiokafka_topic_lifecycle(server: KemuServeProcess, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=server.bootstrap, client_id="kemu-compat-aiokafka")
    await admin.start()
    try:
        assert topic not in await admin.list_topics()
        cluster = await admin.describe_cluster()
        assert [(b["host"], b["port"]) for b in cluster["brokers"]] == [(server.host, server.port)]

        response = await admin.create_topics([AioNewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
        assert [(t[0], t[1]) for t in response.topic_errors] == [(topic, 0)]

        # aiokafka names topics in Metadata with AllowAutoTopicCreation=true; fine while the topic exists.
        async def led() -> list[PartitionView]:
            return led_partitions(_aiokafka_partitions(await admin.describe_topics([topic]), topic))

        partitions = await wait_for_async(led, what=f"{topic} with led partitions in Metadata")
        assert_single_broker_topic(
            partitions, count=PARTITIONS, broker_ids={b["node_id"] for b in cluster["brokers"]}
        )

        response = await admin.delete_topics([topic])
        assert [(t[0], t[1]) for t in response.topic_error_codes] == [(topic, 0)]

        async def gone() -> bool:
            return topic not in await admin.list_topics()

        await wait_for_async(gone, what=f"{topic} to disappear")
    finally:
        await admin.close()


def test_aiokafka_topic_lifecycle(kemu_server: KemuServeProcess, topic_name: str) -> None:
    asyncio.run(_aiokafka_topic_lifecycle(kemu_server, topic_name))


# --- kafkajs -------------------------------------------------------------------------------------


def _kafkajs_partitions(metadata: dict, topic: str) -> list[PartitionView]:
    for entry in metadata["topics"]:
        if entry["name"] == topic:
            return [
                PartitionView(
                    p["partitionId"], p["leader"], tuple(p["replicas"]), tuple(p["isr"]), p["partitionErrorCode"]
                )
                for p in entry["partitions"]
            ]
    return []


def test_kafkajs_topic_lifecycle(kemu_server: KemuServeProcess, kafkajs: Kafkajs, topic_name: str) -> None:
    bootstrap = kemu_server.bootstrap
    assert topic_name not in kafkajs.admin(bootstrap, "list")["topics"]
    cluster = kafkajs.admin(bootstrap, "describe-cluster")
    assert [(b["host"], b["port"]) for b in cluster["brokers"]] == [(kemu_server.host, kemu_server.port)]

    # kafkajs answers created=false when the topic already existed, so true proves a creation.
    assert kafkajs.admin(bootstrap, "create", topic_name, str(PARTITIONS), "1") == {"created": True}

    partitions = wait_for(
        lambda: led_partitions(_kafkajs_partitions(kafkajs.admin(bootstrap, "metadata", topic_name), topic_name)),
        what=f"{topic_name} with led partitions in Metadata",
    )
    assert_single_broker_topic(partitions, count=PARTITIONS, broker_ids={b["nodeId"] for b in cluster["brokers"]})

    assert kafkajs.admin(bootstrap, "delete", topic_name) == {"deleted": [topic_name]}
    wait_for(lambda: topic_name not in kafkajs.admin(bootstrap, "list")["topics"], what=f"{topic_name} to disappear")


# --- kcat ----------------------------------------------------------------------------------------


def _kcat_partitions(metadata: dict, topic: str) -> list[PartitionView]:
    for entry in metadata["topics"]:
        if entry["topic"] == topic and "error" not in entry:
            return [
                PartitionView(
                    p["partition"],
                    p["leader"],
                    tuple(r["id"] for r in p["replicas"]),
                    tuple(r["id"] for r in p["isrs"]),
                    1 if "error" in p else 0,
                )
                for p in entry["partitions"]
            ]
    return []


def _kcat_metadata_with_led_topic(kcat: Kcat, bootstrap: str, topic: str) -> dict | None:
    """All-topics `kcat -L -J`, if it shows `topic` with every partition led."""
    metadata = kcat.metadata(bootstrap)
    return metadata if led_partitions(_kcat_partitions(metadata, topic)) else None


def test_kcat_lists_cluster(kemu_server: KemuServeProcess, kcat: Kcat, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})
    futures = admin.create_topics([ConfluentNewTopic(topic_name, num_partitions=PARTITIONS)], operation_timeout=10)
    futures[topic_name].result(timeout=15)

    metadata = wait_for(
        lambda: _kcat_metadata_with_led_topic(kcat, kemu_server.bootstrap, topic_name),
        what=f"kcat -L to show {topic_name} with led partitions",
    )
    assert [b["name"] for b in metadata["brokers"]] == [kemu_server.bootstrap]
    assert_single_broker_topic(
        _kcat_partitions(metadata, topic_name),
        count=PARTITIONS,
        broker_ids={b["id"] for b in metadata["brokers"]},
    )


def test_kcat_metadata_for_unknown_topic_auto_creates_it(
    kemu_server: KemuServeProcess, kcat: Kcat, topic_name: str
) -> None:
    assert all(t["topic"] != topic_name for t in kcat.metadata(kemu_server.bootstrap)["topics"])

    # kcat's handle is a producer, and librdkafka producers ask for a named topic with
    # AllowAutoTopicCreation=true; the broker's default auto.create.topics.enable=true creates it
    # with num.partitions=1. The first answer may still say UNKNOWN_TOPIC_OR_PARTITION, as Kafka 4.3's does.
    kcat.metadata(kemu_server.bootstrap, topic_name)

    metadata = wait_for(
        lambda: _kcat_metadata_with_led_topic(kcat, kemu_server.bootstrap, topic_name),
        what=f"kcat -L to show the auto-created {topic_name}",
    )
    assert_single_broker_topic(
        _kcat_partitions(metadata, topic_name), count=1, broker_ids={b["id"] for b in metadata["brokers"]}
    )
