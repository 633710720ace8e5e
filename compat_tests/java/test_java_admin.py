"""The Java admin's calls that Spark's Kafka source makes (src/AdminCalls.java; kafka-clients 4.3 and 3.9,
the line Spark's connector runs) against `kemu serve`, each run against the reference Kafka too, the outcomes
compared: describeTopics paged through DescribeTopicPartitions (key 75; kemu's transcript shows each page) and
describeCluster, both with the authorized operations a broker without an authorizer grants; listOffsets by
OffsetSpec (earliest, latest under both isolation levels, maxTimestamp, forTimestamp) and deleteRecords."""

from __future__ import annotations

import math
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.conftest import BOTH_LINES, JavaKemu
from compat_tests.java.java_client import JavaClient
from compat_tests.polling import wait_for
from compat_tests.test_transactions_support import create_topics, unique

PROGRAM = "AdminCalls"
DESCRIBE_TOPIC_PARTITIONS = 75
UNKNOWN_TOPIC = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"
OFFSET_OUT_OF_RANGE = "org.apache.kafka.common.errors.OffsetOutOfRangeException"
# What a broker without an authorizer grants on a topic: every operation a topic supports.
ALL_TOPIC_OPERATIONS = ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE"]


def pages_naming(server: JavaKemu, topics: set[str]) -> list[dict[str, Any]]:
    """The DescribeTopicPartitions exchanges whose requests name only these topics."""
    return [entry for entry in server.exchanges(DESCRIBE_TOPIC_PARTITIONS)
            if {note["topic"] for note in entry["request"]["partitions"]} <= topics]


def timestamped(bootstrap: str, topic: str, partition: int, timestamps: list[int]) -> None:
    """Plain records "t<n>" with these timestamps (CreateTime), delivered."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for n, timestamp in enumerate(timestamps):
        producer.produce(topic, value=f"t{n}".encode(), partition=partition, timestamp=timestamp)
    assert producer.flush(15) == 0


@BOTH_LINES
def test_describe_topics_pages_through_describe_topic_partitions(java_pair: Pair, java_kemu: JavaKemu,
                                                                 java: JavaClient) -> None:
    prefix = unique("java-describe")
    sizes = {f"{prefix}-a": 3, f"{prefix}-b": 2, f"{prefix}-c": 4}
    missing = f"{prefix}-missing"
    limit = 2

    def scenario(target: Target) -> Any:
        for name, partitions in sizes.items():
            create_topics(target.bootstrap, [name], partitions=partitions)
        # Kafka answers CreateTopics once its controller committed the topics; its broker's metadata follows a
        # moment later, and describeTopics does not retry a topic it is told is unknown.
        admin = AdminClient({"bootstrap.servers": target.bootstrap})

        def listed() -> bool:
            topics = admin.list_topics(timeout=10).topics
            return all(name in topics and topics[name].error is None for name in sizes)

        wait_for(listed, what="the new topics in the metadata")
        return java.run(PROGRAM, target.bootstrap, "describe-topics", str(limit), f"{prefix}-c", f"{prefix}-a",
                        missing, f"{prefix}-b")

    def observed(result: Any) -> Any:
        # byId is keyed by the topic ids, which differ: the names it found, and whether its ids are the ones
        # describing by name gave.
        by_name = result["byName"]
        return {"byName": by_name, "byIdNames": sorted(result["byId"].values()),
                "byIdMatches": result["byId"] == {by_name[name]["id"]: name for name in result["byId"].values()}}

    kafka, result = java_pair.both(scenario)
    check(f"java.{java.line}.describe_topics", observed(kafka), observed(result), varying={"id": "topic_id"})
    described = result["byName"]
    assert described[missing] == {"error": UNKNOWN_TOPIC}
    for name, partitions in sizes.items():
        topic = described[name]
        assert (topic["name"], topic["internal"]) == (name, False)
        assert topic["authorizedOperations"] == ALL_TOPIC_OPERATIONS
        assert topic["partitions"] == [{"partition": p, "leader": 1, "replicas": [1], "isr": [1]}
                                       for p in range(partitions)]
    # The ids DescribeTopicPartitions gave are the topics' ids: describing by id (Metadata) finds them.
    assert result["byId"] == {described[name]["id"]: name for name in sizes}

    # 9 partitions at 2 a page: 5 requests, each answered with at most 2 partitions.
    pages = wait_for(lambda: (found := pages_naming(java_kemu, {*sizes, missing})) and len(found) >= 5 and found,
                     what="the DescribeTopicPartitions exchanges in the transcript")
    assert len(pages) == math.ceil(sum(sizes.values()) / limit)
    answered = [(note["topic"], note.get("partition")) for page in pages for note in page["response"]["partitions"]]
    assert all(len([n for n in page["response"]["partitions"] if "partition" in n]) <= limit for page in pages)
    assert sorted(answered) == sorted([(name, p) for name, count in sizes.items() for p in range(count)]
                                      + [(missing, None)])


@BOTH_LINES
def test_describe_cluster_with_its_authorized_operations(java_pair: Pair, java_kemu: JavaKemu,
                                                         java: JavaClient) -> None:
    kafka, result = java_pair.both(lambda target: java.run(PROGRAM, target.bootstrap, "cluster"))
    check(f"java.{java.line}.describe_cluster", kafka, result, varying={"clusterId": "cluster_id"})
    cluster_id = AdminClient({"bootstrap.servers": java_kemu.bootstrap}).list_topics(timeout=10).cluster_id
    assert result == {"clusterId": cluster_id, "controller": 1,
                      "nodes": [{"id": 1, "host": java_kemu.host, "port": java_kemu.port}],
                      "authorizedOperations": ["ALTER", "ALTER_CONFIGS", "CLUSTER_ACTION", "CREATE", "DESCRIBE",
                                               "DESCRIBE_CONFIGS", "IDEMPOTENT_WRITE"]}


@BOTH_LINES
def test_list_offsets_by_spec_and_timestamp(java_pair: Pair, java: JavaClient) -> None:
    topic, open_id = unique("java-offsets"), unique("java-offsets-open")

    def scenario(target: Target) -> Any:
        bootstrap = target.bootstrap
        create_topics(bootstrap, [topic], partitions=2)
        timestamped(bootstrap, topic, 0, [1000, 2000, 3000, 4000, 5000])
        timestamped(bootstrap, topic, 1, [10_000, 10_001])
        # Partition 1 ends in a transaction left open while the offsets are listed.
        open_txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": open_id})
        open_txn.init_transactions(15)
        open_txn.begin_transaction()
        for n in range(2):
            open_txn.produce(topic, value=f"o{n}".encode(), partition=1, timestamp=20_000 + n)
        assert open_txn.flush(15) == 0
        try:
            return java.run(PROGRAM, bootstrap, "list-offsets", topic, "2", "2500", "6000", "10001")
        finally:
            open_txn.abort_transaction(15)

    kafka, result = java_pair.both(scenario)
    check(f"java.{java.line}.list_offsets", kafka, result)

    def at(partition: int, spec: str) -> tuple[int, int]:
        answer = result[str(partition)][spec]
        return answer["offset"], answer["timestamp"]

    assert at(0, "earliest") == (0, -1) and at(0, "latest") == (5, -1)
    assert at(0, "latest:read_committed") == (5, -1)
    assert at(0, "maxTimestamp") == (4, 5000)
    assert at(0, "forTimestamp:2500") == (2, 3000)
    assert at(0, "forTimestamp:6000") == (-1, -1)
    assert at(1, "latest") == (4, -1)  # the high watermark, past the open transaction
    assert at(1, "latest:read_committed") == (2, -1)  # the LSO: where the open transaction starts
    assert at(1, "forTimestamp:10001") == (1, 10_001)
    assert at(1, "maxTimestamp") == (3, 20_001)


@BOTH_LINES
def test_delete_records(java_pair: Pair, java: JavaClient) -> None:
    topic = unique("java-delete")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=1)
        timestamped(target.bootstrap, topic, 0, [1000, 2000, 3000, 4000, 5000])
        return java.run(PROGRAM, target.bootstrap, "delete-records", topic, "0", "1500", "2", "99")

    kafka, steps = java_pair.both(scenario)
    check(f"java.{java.line}.delete_records", kafka, steps)
    # Offset 1 (timestamp 2000) is gone: the first record at or after 1500 is now offset 2.
    assert steps[0] == {"lowWatermark": 2, "earliest": 2, "forTimestamp": {"offset": 2, "timestamp": 3000}}
    assert steps[1] == {"error": OFFSET_OUT_OF_RANGE, "earliest": 2,
                        "forTimestamp": {"offset": 2, "timestamp": 3000}}
