"""Three brokers in three racks, Kafka 4.3 (three KRaft nodes, each its own `broker.rack`) against
`kemu serve --brokers 3 --rack a,b,c`: each broker describes its own configs by its own id (its node.id,
broker.id and rack) and refuses another's, and every broker lists the racks in Metadata and DescribeCluster
and the brokers in ListConfigResources alike."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from compat_tests import jars
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair
from compat_tests.differential.test_cluster import Cluster, cluster_pair, metadata, serving_three
from compat_tests.external_clients import tool_missing
from compat_tests.reference.fixtures import _running
from compat_tests.reference.kafka import KAFKA_JAR_SET, ReferenceKafka, find_java

DESCRIBE_CONFIGS, DESCRIBE_CLUSTER, LIST_CONFIG_RESOURCES = 32, 60, 74
BROKER, BROKER_LOGGER = 4, 8
RACKS = {1: "rack-a", 2: "rack-b", 3: "rack-c"}
NODE_CONFIGS = ["broker.id", "node.id", "broker.rack", "process.roles"]


@pytest.fixture(scope="module")
def racked_kafka() -> Iterator[ReferenceKafka]:
    java = find_java()
    if java is None:
        tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
    yield from _running(ReferenceKafka(classpath=jars.classpath(KAFKA_JAR_SET), java=java, nodes=3,
                                       node_settings={node: {"broker.rack": rack} for node, rack in RACKS.items()}))


@pytest.fixture(scope="module")
def racked_kemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, tuple[str, int]]]:
    yield from serving_three(tmp_path_factory.mktemp("kemu-racks"),
                             "--rack", ",".join(RACKS[node] for node in sorted(RACKS)))


@pytest.fixture(scope="module")
def racked(racked_kafka: ReferenceKafka, racked_kemu: dict[int, tuple[str, int]]) -> Pair[Cluster]:
    return cluster_pair(racked_kafka, racked_kemu)


def describe(cluster: Cluster, at: int, kind: int, name: str, keys: list[str]) -> dict[str, Any]:
    [result] = cluster.at(at).request(DESCRIBE_CONFIGS, 4, {
        "resources": [{"resource_type": kind, "resource_name": name, "configuration_keys": keys}],
        "include_synonyms": True, "include_documentation": False})["results"]
    result["configs"] = {config["name"]: config for config in result["configs"]}
    return dict(result)


def test_each_broker_describes_itself_by_its_own_id(racked: Pair[Cluster]) -> None:
    def run(cluster: Cluster) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        for node in sorted(cluster.brokers):
            other = node % 3 + 1
            answers[f"node {node}"] = {
                "itself": describe(cluster, node, BROKER, str(node), NODE_CONFIGS),
                "another": describe(cluster, node, BROKER, str(other), NODE_CONFIGS),
                "its logger": describe(cluster, node, BROKER_LOGGER, str(node), ["root"]),
                "another's logger": describe(cluster, node, BROKER_LOGGER, str(other), ["root"]),
            }
        return answers

    kafka, kemu = racked.both(run)
    check("cluster.racks.describe_configs", kafka, kemu)
    assert {node: answer["itself"]["configs"]["broker.rack"]["value"]
            for node, answer in kemu.items()} == {f"node {node}": rack for node, rack in RACKS.items()}


def test_every_broker_lists_the_racks_and_the_brokers(racked: Pair[Cluster]) -> None:
    def run(cluster: Cluster) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        for node in sorted(cluster.brokers):
            target = cluster.at(node)
            described = target.request(DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": False,
                                                             "endpoint_type": 1})
            listed = target.request(LIST_CONFIG_RESOURCES, 1, {"resource_types": [BROKER, BROKER_LOGGER]})
            answers[f"node {node}"] = {
                "metadata": sorted((b["node_id"], b["rack"]) for b in metadata(target, [])["brokers"]),
                "describe_cluster": sorted((b["broker_id"], b["rack"]) for b in described["brokers"]),
                "config_resources": sorted((r["resource_type"], r["resource_name"])
                                           for r in listed["config_resources"]),
            }
        return answers

    kafka, kemu = racked.both(run)
    check("cluster.racks.listed", kafka, kemu)
    assert kemu["node 2"]["metadata"] == sorted(RACKS.items())
