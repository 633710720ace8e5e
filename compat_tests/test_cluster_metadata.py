"""A three-broker kemu as every client sees it: kcat -L, confluent-kafka's and kafka-python's admin APIs
show the same brokers (ids, ports, racks), controller, and partition leaders, replicas and ISRs — before and
after a broker stops (kafka-python's DescribeCluster v2 asks for fenced brokers too, and still lists it, as
Kafka lists a broker that shut down) and a leader moves. Topics beyond the live brokers' count are refused with Kafka's
message. A consumer with client.rack reads from the replica in its rack (KIP-392)."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, ElectionType, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import TopicPartition as KafkaTopicPartition
from kafka.admin import KafkaAdminClient

from compat_tests.external_clients import Kcat
from kemu.server.hooks import Exchange
from kemu.testing import Broker

RACKS = ["rack-a", "rack-b", "rack-c"]
FETCH = 1
Layout = tuple[list[tuple[int, int]], dict[int, tuple[int, list[int], list[int]]]]


def kcat_view(kcat: Kcat, broker: Broker) -> Layout:
    found = kcat.metadata(broker.bootstrap_servers, "t")
    brokers = sorted((b["id"], int(b["name"].rsplit(":", 1)[1])) for b in found["brokers"])
    [topic] = found["topics"]
    return brokers, {p["partition"]: (p["leader"], [r["id"] for r in p["replicas"]], [r["id"] for r in p["isrs"]])
                     for p in topic["partitions"]}


def confluent_view(broker: Broker) -> Layout:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    cluster = admin.describe_cluster().result(10)
    topic = admin.list_topics("t", timeout=10).topics["t"]
    return (sorted((n.id, n.port) for n in cluster.nodes),
            {p.id: (p.leader, list(p.replicas), list(p.isrs)) for p in topic.partitions.values()})


def kafka_python_view(broker: Broker) -> Layout:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        cluster = admin.describe_cluster()
        [topic] = admin.describe_topics(["t"])
    finally:
        admin.close()
    return (sorted((b["broker_id"], b["port"]) for b in cluster["brokers"]),
            {p["partition_index"]: (p["leader_id"], p["replica_nodes"], p["isr_nodes"]) for p in topic["partitions"]})


def ports(broker: Broker) -> list[int]:
    return [int(address.rsplit(":", 1)[1]) for address in broker.bootstrap_servers.split(",")]


@pytest.mark.kemu(brokers=3, racks=RACKS)
def test_every_client_sees_the_same_cluster(kemu_broker: Broker, kcat: Kcat) -> None:
    kemu_broker.create_topic("t", partitions=3, replication_factor=3)
    first, second, third = ports(kemu_broker)
    expected: Layout = ([(1, first), (2, second), (3, third)],
                        {0: (1, [1, 2, 3], [1, 2, 3]), 1: (2, [2, 3, 1], [2, 3, 1]), 2: (3, [3, 1, 2], [3, 1, 2])})
    assert kcat_view(kcat, kemu_broker) == confluent_view(kemu_broker) == kafka_python_view(kemu_broker) == expected
    admin = AdminClient({"bootstrap.servers": kemu_broker.bootstrap_servers})
    assert sorted((n.id, n.rack) for n in admin.describe_cluster().result(10).nodes) == list(
        zip([1, 2, 3], RACKS, strict=True))

    kemu_broker.stop_broker(2)
    kemu_broker.move_leader("t", 2, 1)
    moved: Layout = ([(1, first), (3, third)],
                     {0: (1, [1, 2, 3], [1, 3]), 1: (3, [2, 3, 1], [3, 1]), 2: (1, [3, 1, 2], [3, 1])})
    assert kcat_view(kcat, kemu_broker) == confluent_view(kemu_broker) == moved
    assert kafka_python_view(kemu_broker) == ([(1, first), (2, second), (3, third)], moved[1])  # 2 is fenced

    kemu_broker.start_broker(2)
    back: Layout = ([(1, first), (2, second), (3, third)],
                    {0: (1, [1, 2, 3], [1, 2, 3]), 1: (3, [2, 3, 1], [2, 3, 1]), 2: (1, [3, 1, 2], [3, 1, 2])})
    assert kcat_view(kcat, kemu_broker) == confluent_view(kemu_broker) == kafka_python_view(kemu_broker) == back


@pytest.mark.kemu(brokers=2)
def test_a_replication_factor_beyond_the_live_brokers_is_refused_with_kafkas_message(kemu_broker: Broker) -> None:
    admin = AdminClient({"bootstrap.servers": kemu_broker.bootstrap_servers})
    [future] = admin.create_topics([NewTopic("too-wide", 1, 3)]).values()
    with pytest.raises(KafkaException) as refused:
        future.result(10)
    assert refused.value.args[0].str() == ("Unable to replicate the partition 3 time(s): The target replication "
                                           "factor of 3 cannot be reached because only 2 broker(s) are registered "
                                           "or some brokers have all their log directories cordoned.")


@pytest.mark.kemu(brokers=3, racks=RACKS,
                  config={"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"})
def test_a_consumer_with_client_rack_fetches_from_the_replica_in_its_rack(kemu_broker: Broker) -> None:
    kemu_broker.create_topic("t", partitions=1, replication_factor=3)
    producer = Producer({"bootstrap.servers": kemu_broker.bootstrap_servers})
    for number in range(10):
        producer.produce("t", f"v{number}".encode(), partition=0)
    assert producer.flush(10) == 0
    follower_fetches: list[int] = []

    def seen(exchange: Exchange) -> None:
        if exchange.request.header.api_key == FETCH and exchange.ctx.node_id == 3 and exchange.response:
            follower_fetches.extend(len(p["records"] or b"") for t in exchange.response["responses"]
                                    for p in t["partitions"])

    kemu_broker.hooks.observe(seen)
    consumer = Consumer({"bootstrap.servers": kemu_broker.bootstrap_servers, "group.id": "racked",
                         "client.rack": "rack-c", "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.assign([TopicPartition("t", 0, 0)])
    values: list[bytes] = []
    while len(values) < 10:
        values += [m.value() or b"" for m in consumer.consume(10, 1.0) if m.error() is None]
    consumer.close()
    assert values == [f"v{n}".encode() for n in range(10)]
    assert kemu_broker.leader("t", 0) == 1
    assert sum(follower_fetches) > 0, "the consumer in rack-c read nothing from broker 3, the replica in its rack"


@pytest.mark.kemu(brokers=3)
def test_admin_elect_leaders_brings_the_preferred_leader_back(kemu_broker: Broker) -> None:
    kemu_broker.create_topic("t", partitions=3, replication_factor=3)
    kemu_broker.stop_broker(1)
    kemu_broker.start_broker(1)
    moved = [index for index in range(3) if kemu_broker.leader("t", index) != [1, 2, 3][index]]
    assert moved == [0]
    admin = AdminClient({"bootstrap.servers": kemu_broker.bootstrap_servers})
    partitions = [TopicPartition("t", index) for index in range(3)]
    results = admin.elect_leaders(ElectionType.PREFERRED, partitions).result(10)
    assert results[TopicPartition("t", 0)] is None
    assert results[TopicPartition("t", 1)].code() == KafkaError.ELECTION_NOT_NEEDED
    assert [kemu_broker.leader("t", index) for index in range(3)] == [1, 2, 3]
    [topic] = kafka_python_view(kemu_broker)[1:]
    assert topic[0] == (1, [1, 2, 3], [1, 2, 3])


@pytest.mark.kemu(brokers=3)
def test_kafka_python_reassigns_a_partition(kemu_broker: Broker) -> None:
    kemu_broker.create_topic("t", partitions=1, replication_factor=2)
    admin = KafkaAdminClient(bootstrap_servers=kemu_broker.bootstrap_servers)
    try:
        results = admin.alter_partition_reassignments({KafkaTopicPartition("t", 0): [3, 2]})
        assert results == {KafkaTopicPartition("t", 0): None}
        assert admin.list_partition_reassignments() == {}
    finally:
        admin.close()
    assert kafka_python_view(kemu_broker)[1] == {0: (3, [3, 2], [3, 2])}


@pytest.mark.kemu(config={"broker.rack": "rack-by-setting"})
def test_the_broker_rack_setting_places_the_broker(kemu_broker: Broker) -> None:
    # As in a server.properties: the setting, not only --rack, gives the broker its rack.
    admin = AdminClient({"bootstrap.servers": kemu_broker.bootstrap_servers})
    assert [(n.id, n.rack) for n in admin.describe_cluster().result(10).nodes] == [(1, "rack-by-setting")]
