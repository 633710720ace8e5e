"""DescribeQuorum (the single-voter quorum kemu is: one voter, its other brokers observers) and
ListConfigResources (each type in Kafka's order, what kemu keeps of it), with Kafka's errors; DescribeConfigs
of each broker of a three-broker kemu at that broker, by its own id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.config import BrokerConfig
from kemu.clock import VirtualClock
from kemu.testing.harness import InProcessBroker
from kemu.wire.errors import ErrorCode
from kemu.wire.schema import ZERO_UUID
from tests.handlers.config_wire import create_topic
from tests.handlers.harness import Connection, MakeBroker, broker_config

DESCRIBE_QUORUM, LIST_CONFIG_RESOURCES, DESCRIBE_CONFIGS = 55, 74, 32
METADATA_LOG = "__cluster_metadata"
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def quorum_body(*topics: tuple[str, list[int]]) -> dict[str, Any]:
    return {"topics": [{"topic_name": name, "partitions": [{"partition_index": p} for p in partitions]}
                       for name, partitions in topics]}


@pytest.fixture
def cluster() -> Iterator[InProcessBroker]:
    with InProcessBroker(BrokerConfig(port=0, brokers=3, racks=("a", "b", "c"))) as running:
        yield running


@pytest.mark.parametrize("version", range(3))
def test_describe_quorum_of_one_node_every_version(make_broker: MakeBroker, version: int) -> None:
    clock = VirtualClock(1_700_000_000_000)
    with make_broker(clock=clock) as running, running.connect() as conn:
        clock.advance(2_600)  # five no-op records' worth of a quiet metadata log
        body = conn.request(DESCRIBE_QUORUM, version, quorum_body((METADATA_LOG, [0])))
        host, port = running.call(running.broker.advertised_endpoint)
    assert body["error_code"] == 0
    [topic] = body["topics"]
    [partition] = topic["partitions"]
    assert (topic["topic_name"], partition["partition_index"], partition["error_code"]) == (METADATA_LOG, 0, 0)
    assert (partition["leader_id"], partition["leader_epoch"], partition["high_watermark"]) == (1, 1, 5)
    [voter] = partition["current_voters"]
    assert (voter["replica_id"], voter["log_end_offset"]) == (1, 5)
    assert partition["observers"] == []
    if version >= 1:  # the leader's own fetch and catch-up: the time of the request
        assert voter["last_fetch_timestamp"] == voter["last_caught_up_timestamp"] == 1_700_000_002_600
    if version >= 2:
        assert voter["replica_directory_id"] == ZERO_UUID and body["error_message"] == ""
        assert body["nodes"] == [{"node_id": 1, "listeners": [{"name": "CONTROLLER", "host": host, "port": port}]}]


@pytest.mark.parametrize("topics", [
    [(METADATA_LOG, [1])], [("t", [0])], [(METADATA_LOG, [0, 0])], [(METADATA_LOG, [0]), ("t", [0])],
])
def test_describe_quorum_of_anything_else_is_unknown_topic_or_partition(conn: Connection,
                                                                       topics: list[tuple[str, list[int]]]) -> None:
    body = conn.request(DESCRIBE_QUORUM, 2, quorum_body(*topics))
    assert (body["error_code"], body["nodes"]) == (0, [])
    assert [(t["topic_name"], [(p["partition_index"], p["error_code"], p["error_message"], p["leader_id"],
                                p["current_voters"]) for p in t["partitions"]]) for t in body["topics"]] == [
        (name, [(index, 3, "This server does not host this topic-partition.", 0, []) for index in partitions])
        for name, partitions in topics]
    assert conn.request(DESCRIBE_QUORUM, 2, quorum_body())["topics"] == []


def test_describe_quorum_of_three_brokers_has_one_voter_and_two_observers(cluster: InProcessBroker) -> None:
    with cluster.connect(node=3) as conn:
        [partition] = conn.request(DESCRIBE_QUORUM, 2, quorum_body((METADATA_LOG, [0])))["topics"][0]["partitions"]
    assert partition["leader_id"] == 1
    assert [v["replica_id"] for v in partition["current_voters"]] == [1]
    assert [o["replica_id"] for o in partition["observers"]] == [2, 3]
    assert {o["log_end_offset"] for o in partition["observers"]} == {partition["high_watermark"]}
    cluster.call(lambda: cluster.broker.stop_node(3))
    with cluster.connect(node=2) as conn:
        [partition] = conn.request(DESCRIBE_QUORUM, 2, quorum_body((METADATA_LOG, [0])))["topics"][0]["partitions"]
    assert [o["replica_id"] for o in partition["observers"]] == [2]


def test_list_config_resources_every_type_in_kafkas_order(conn: Connection) -> None:
    create_topic(conn, "t")
    everything = conn.request(LIST_CONFIG_RESOURCES, 1, {"resource_types": []})
    assert everything["error_code"] == 0
    assert everything["config_resources"] == [
        {"resource_name": "1", "resource_type": BROKER_LOGGER}, {"resource_name": "1", "resource_type": BROKER},
        {"resource_name": "t", "resource_type": TOPIC}]
    asked = conn.request(LIST_CONFIG_RESOURCES, 1, {"resource_types": [TOPIC, BROKER, TOPIC]})
    assert asked["config_resources"] == [{"resource_name": "1", "resource_type": BROKER},
                                         {"resource_name": "t", "resource_type": TOPIC}]
    for kind in (GROUP, CLIENT_METRICS):  # none set
        assert conn.request(LIST_CONFIG_RESOURCES, 1, {"resource_types": [kind]})["config_resources"] == []
    assert conn.request(LIST_CONFIG_RESOURCES, 0, {}) == {"throttle_time_ms": 0, "error_code": 0,
                                                         "config_resources": []}


@pytest.mark.parametrize("types", [[3], [0], [BROKER, 1], [64]])
def test_list_config_resources_of_a_type_v1_lacks_is_unsupported_version(conn: Connection, types: list[int]) -> None:
    body = conn.request(LIST_CONFIG_RESOURCES, 1, {"resource_types": types})
    assert (body["error_code"], body["config_resources"]) == (ErrorCode.UNSUPPORTED_VERSION, [])


def test_list_config_resources_lists_each_live_broker(cluster: InProcessBroker) -> None:
    cluster.call(lambda: cluster.broker.stop_node(2))
    with cluster.connect(node=3) as conn:
        body = conn.request(LIST_CONFIG_RESOURCES, 1, {"resource_types": [BROKER]})
    assert [r["resource_name"] for r in body["config_resources"]] == ["1", "3"]


def test_both_need_cluster_rights(make_broker: MakeBroker) -> None:
    config = broker_config(properties={"authorizer.class.name": STANDARD, "allow.everyone.if.no.acl.found": "false"})
    with make_broker(config) as running, running.connect() as conn:
        quorum = conn.request(DESCRIBE_QUORUM, 2, quorum_body((METADATA_LOG, [0])))
        listing = conn.request(LIST_CONFIG_RESOURCES, 1, {"resource_types": []})
    assert quorum == {"error_code": 31, "error_message": "Cluster authorization failed.", "topics": [], "nodes": []}
    assert (listing["error_code"], listing["config_resources"]) == (31, [])


def _broker_configs(conn: Connection, kind: int, name: str, keys: list[str]) -> dict[str, Any]:
    [result] = conn.request(DESCRIBE_CONFIGS, 4, {
        "resources": [{"resource_type": kind, "resource_name": name, "configuration_keys": keys}],
        "include_synonyms": False, "include_documentation": False})["results"]
    return dict(result)


def test_describe_configs_of_each_broker_by_its_own_id_and_rack(cluster: InProcessBroker) -> None:
    for node, rack in ((1, "a"), (2, "b"), (3, "c")):
        with cluster.connect(node=node) as conn:
            own = _broker_configs(conn, BROKER, str(node), ["node.id", "broker.id", "broker.rack", "listeners"])
            other = _broker_configs(conn, BROKER, str(node % 3 + 1), ["node.id"])
            logger = _broker_configs(conn, BROKER_LOGGER, str(node), ["root"])
            other_logger = _broker_configs(conn, BROKER_LOGGER, str(node % 3 + 1), ["root"])
        port = cluster.call(cluster.broker.listen_port, node)
        values = {c["name"]: c["value"] for c in own["configs"]}
        assert values == {"node.id": str(node), "broker.id": str(node), "broker.rack": rack,
                          "listeners": f"PLAINTEXT://127.0.0.1:{port}"}, node
        assert (other["error_code"], other["error_message"]) == (
            42, f"Unexpected broker id, expected {node} or empty string, but received {node % 3 + 1}")
        assert logger["error_code"] == 0 and [c["documentation"] for c in logger["configs"]] == [""]
        assert other_logger["error_message"] == f"Unexpected broker id, expected {node} but received {node % 3 + 1}"


def test_describe_configs_of_a_node_keeps_its_id_over_the_properties() -> None:
    config = BrokerConfig(port=0, brokers=2, properties={"node.id": "1", "broker.id": "1"})
    with InProcessBroker(config) as running:
        running.call(lambda: create_topics(running.broker, [NewTopic("t", 1, 1)]))
        with running.connect(node=2) as conn:
            values = {c["name"]: c["value"] for c in _broker_configs(conn, BROKER, "2", ["node.id", "broker.id"])[
                "configs"]}
    assert values == {"node.id": "2", "broker.id": "2"}
