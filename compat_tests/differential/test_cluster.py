"""Three brokers, Kafka 4.3 (three KRaft nodes, `reference_kafka_cluster`) against `kemu serve --brokers 3`, by
raw requests: the brokers and controller Metadata and DescribeCluster list, the shape of replica-3 topics,
CreateTopics beyond the brokers, FindCoordinator, and a Produce sent to a broker that does not lead.

Where replicas are placed is each broker's own choice (Kafka's StripedReplicaPlacer starts at a random broker;
kemu places deterministically): observations keep what a client can rely on, not which node got what —
how many replicas, that the ISR is the replica set, that the leader is the first replica, that three
partitions have three leaders, that each broker answers the same, that a coordinator is the leader of its
internal partition, and what a broker that is not the leader says and points to.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.conftest import kemu_twin_args
from compat_tests.differential.security_sasl import answer
from compat_tests.differential.targets import Pair, Target
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.reference.kafka import ReferenceKafka
from tests.handlers.data_plane import batch, produce_body

PRODUCE, METADATA, FIND_COORDINATOR, CREATE_TOPICS, DESCRIBE_CLUSTER = 0, 3, 10, 19, 60
BANNER = re.compile(r"kemu serving on (\S+)")
# What Kafka's three-node reference has that a one-node one does not: internal topics with three replicas.
CLUSTER_SETTINGS = {"offsets.topic.replication.factor": "3", "transaction.state.log.replication.factor": "3"}
READY_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Cluster(Target):
    """Three brokers: `brokers` each one's address by node id (the Target itself is the first)."""

    brokers: Mapping[int, tuple[str, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, brokers: Mapping[int, tuple[str, int]]) -> Cluster:
        host, port = brokers[min(brokers)]
        return cls(name, host, port, brokers)

    def at(self, node_id: int) -> Target:
        host, port = self.brokers[node_id]
        return Target(self.name, host, port)


def serving_three(directory: Path, *extra_args: str) -> Iterator[dict[int, tuple[str, int]]]:
    """A `kemu serve --brokers 3` configured as the reference cluster is: each broker's address by node id."""
    process = KemuServeProcess(directory, extra_args=("--brokers", "3", *extra_args,
                                                      *kemu_twin_args(CLUSTER_SETTINGS)))
    process.start()
    try:
        match = BANNER.search(process.output())
        assert match is not None, process.output()
        addresses = [item.rsplit(":", 1) for item in match.group(1).split(",")]
        yield {index + 1: (host, int(port)) for index, (host, port) in enumerate(addresses)}
    finally:
        process.stop_cleanly()


def cluster_pair(kafka: ReferenceKafka, kemu: dict[int, tuple[str, int]]) -> Pair[Cluster]:
    return Pair(kafka=Cluster.of("kafka", dict(zip(kafka.node_ids, kafka.addresses, strict=True))),
                kemu=Cluster.of("kemu", kemu))


@pytest.fixture(scope="module")
def kemu_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, tuple[str, int]]]:
    yield from serving_three(tmp_path_factory.mktemp("kemu-cluster"))


@pytest.fixture(scope="module")
def clusters(reference_kafka_cluster: ReferenceKafka, kemu_cluster: dict[int, tuple[str, int]]) -> Pair[Cluster]:
    return cluster_pair(reference_kafka_cluster, kemu_cluster)


def metadata(target: Target, topics: list[str] | None, version: int = 12) -> dict[str, Any]:
    return target.request(METADATA, version, {
        "topics": None if topics is None else [{"name": name, "topic_id": uuid.UUID(int=0)} for name in topics],
        "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False})


def create_topic(target: Target, name: str, partitions: int, replication_factor: int,
                 validate_only: bool = False, assignments: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return target.request(CREATE_TOPICS, 7, {"topics": [
        {"name": name, "num_partitions": partitions, "replication_factor": replication_factor,
         "assignments": assignments or [], "configs": []}], "timeout_ms": 30000, "validate_only": validate_only})


NOT_LEADER_OR_FOLLOWER = 6


def wait_for_topic(cluster: Cluster, name: str, partitions: int) -> dict[str, Any]:
    """The topic as every broker shows it, once each shows all partitions with a leader (Kafka's brokers learn
    of it from the metadata log, a moment after the controller answers)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        seen = [metadata(cluster.at(node), [name])["topics"][0] for node in sorted(cluster.brokers)]
        if all(t["error_code"] == 0 and len(t["partitions"]) == partitions
               and all(p["leader_id"] >= 0 for p in t["partitions"]) for t in seen):
            return seen[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"{cluster.name}: topic {name} not ready on every broker: {seen}")
        time.sleep(0.1)


def shape(topic: dict[str, Any], brokers: list[int]) -> dict[str, Any]:
    partitions = sorted(topic["partitions"], key=lambda p: p["partition_index"])
    return {
        "error_code": topic["error_code"], "is_internal": topic["is_internal"],
        "partitions": [{"partition_index": p["partition_index"], "error_code": p["error_code"],
                        "replicas": len(p["replica_nodes"]), "distinct_replicas": len(set(p["replica_nodes"])),
                        "replicas_are_brokers": set(p["replica_nodes"]) <= set(brokers),
                        "isr_is_replicas": sorted(p["isr_nodes"]) == sorted(p["replica_nodes"]),
                        "leader_is_first_replica": p["leader_id"] == p["replica_nodes"][0],
                        "leader_epoch": p["leader_epoch"], "offline": p["offline_replicas"]} for p in partitions],
        "leaders": len({p["leader_id"] for p in partitions}),
        # Kafka's striped placement puts each broker once in each position across consecutive partitions.
        "each_broker_once_per_position": all(
            sorted(p["replica_nodes"][position] for p in partitions[:len(brokers)]) == sorted(brokers)
            for position in range(len(partitions[0]["replica_nodes"]))) if len(partitions) >= len(brokers) else None,
    }


def test_brokers_and_controller(clusters: Pair[Cluster]) -> None:
    def run(cluster: Cluster) -> dict[str, Any]:
        answers = {node: metadata(cluster.at(node), []) for node in sorted(cluster.brokers)}
        described = cluster.request(DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": False,
                                                           "endpoint_type": 1})
        # v2 (KIP-1073): fenced brokers too when asked; none is fenced here.
        with_fenced = cluster.request(DESCRIBE_CLUSTER, 2, {"include_cluster_authorized_operations": False,
                                                            "endpoint_type": 1, "include_fenced_brokers": True})
        first = answers[min(answers)]
        return {
            "brokers": [{"node_id": b["node_id"], "rack": b["rack"],
                         "at_its_address": (b["host"], b["port"]) == cluster.brokers[b["node_id"]]}
                        for b in first["brokers"]],
            "controller_is_a_broker": first["controller_id"] in cluster.brokers,
            "every_broker_lists_the_same_brokers": all(a["brokers"] == first["brokers"] for a in answers.values()),
            "describe_cluster": {
                "error_code": described["error_code"],
                "brokers": sorted(b["broker_id"] for b in described["brokers"]),
                "controller_is_a_broker": described["controller_id"] in cluster.brokers,
            },
            "describe_cluster_v2": sorted((b["broker_id"], b["is_fenced"]) for b in with_fenced["brokers"]),
        }

    kafka, kemu = clusters.both(run)
    check("cluster.brokers", kafka, kemu)


@pytest.mark.parametrize(("partitions", "replication_factor"), [(3, 3), (6, 3), (3, 2), (1, 1)])
def test_replicated_topic_shape(clusters: Pair[Cluster], partitions: int, replication_factor: int) -> None:
    name = f"cluster-shape-{partitions}-{replication_factor}"

    def run(cluster: Cluster) -> dict[str, Any]:
        created = create_topic(cluster, name, partitions, replication_factor)["topics"][0]
        topic = wait_for_topic(cluster, name, partitions)
        others = [metadata(cluster.at(node), [name])["topics"][0] for node in sorted(cluster.brokers)]
        return {"created": {k: created[k] for k in ("error_code", "error_message", "num_partitions",
                                                    "replication_factor")},
                "topic": shape(topic, sorted(cluster.brokers)),
                "every_broker_shows_the_same": all(o["partitions"] == topic["partitions"] for o in others)}

    kafka, kemu = clusters.both(run)
    check(f"cluster.topic.{partitions}x{replication_factor}", kafka, kemu)


@pytest.mark.parametrize("case", ["rf4", "rf4_validate_only", "rf0", "assignment_unknown_broker",
                                  "assignment_duplicate_broker", "assignment_uneven"])
def test_create_topics_beyond_the_brokers(clusters: Pair[Cluster], case: str) -> None:
    name = f"cluster-create-{case}".replace("_", "-")
    args: dict[str, Any] = {
        "rf4": {"partitions": 1, "replication_factor": 4},
        "rf4_validate_only": {"partitions": 1, "replication_factor": 4, "validate_only": True},
        "rf0": {"partitions": 1, "replication_factor": 0},
        "assignment_unknown_broker": {"partitions": -1, "replication_factor": -1,
                                      "assignments": [{"partition_index": 0, "broker_ids": [1, 4]}]},
        "assignment_duplicate_broker": {"partitions": -1, "replication_factor": -1,
                                        "assignments": [{"partition_index": 0, "broker_ids": [1, 1]}]},
        "assignment_uneven": {"partitions": -1, "replication_factor": -1,
                              "assignments": [{"partition_index": 0, "broker_ids": [1, 2]},
                                              {"partition_index": 1, "broker_ids": [3]}]},
    }[case]

    def run(cluster: Cluster) -> dict[str, Any]:
        created = create_topic(cluster, name, **args)["topics"][0]
        return {k: created[k] for k in ("name", "error_code", "error_message")}

    kafka, kemu = clusters.both(run)
    check(f"cluster.create.{case}", kafka, kemu)


def java_abs_hash_partition(key: str, partitions: int) -> int:
    """Kafka's placement of a group or transactional id: Utils.abs(key.hashCode()) % partitions (written here,
    not taken from kemu, which is what is being checked)."""
    value = 0
    units = key.encode("utf-16-be")
    for index in range(0, len(units), 2):
        value = (31 * value + (units[index] << 8 | units[index + 1])) & 0xFFFFFFFF
    signed = value - (1 << 32) if value & 0x80000000 else value
    return (0 if signed == -(1 << 31) else abs(signed)) % partitions


def internal_leader(cluster: Cluster, topic: str, key: str) -> int:
    found = metadata(cluster, [topic])["topics"][0]
    count = len(found["partitions"])
    wanted = java_abs_hash_partition(key, count)
    return next(p["leader_id"] for p in found["partitions"] if p["partition_index"] == wanted)


@pytest.mark.parametrize(("key_type", "topic"), [(0, "__consumer_offsets"), (1, "__transaction_state")])
def test_find_coordinator(clusters: Pair[Cluster], key_type: int, topic: str) -> None:
    keys = [f"cluster-coordinator-{index}" for index in range(4)]

    def run(cluster: Cluster) -> dict[str, Any]:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:  # the first asking makes the internal topic; Kafka answers COORDINATOR_NOT_AVAILABLE till then
            found = {node: cluster.at(node).request(FIND_COORDINATOR, 4, {"key_type": key_type,
                                                                          "coordinator_keys": keys})
                     for node in sorted(cluster.brokers)}
            if all(c["error_code"] == 0 for f in found.values() for c in f["coordinators"]):
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"{cluster.name}: no coordinators: {found}")
            time.sleep(0.2)
        first = found[min(found)]["coordinators"]
        internal = wait_for_topic(cluster, topic, len(metadata(cluster, [topic])["topics"][0]["partitions"]))
        return {
            "internal_topic": {"partitions": len(internal["partitions"]),
                               "replicas": sorted({len(p["replica_nodes"]) for p in internal["partitions"]}),
                               "is_internal": internal["is_internal"]},
            "every_broker_answers_the_same": all(f["coordinators"] == first for f in found.values()),
            "coordinators": [{"key": c["key"], "error_code": c["error_code"], "error_message": c["error_message"],
                              "is_the_partition_leader": c["node_id"] == internal_leader(cluster, topic, c["key"]),
                              "at_its_address": (c["host"], c["port"]) == cluster.brokers[c["node_id"]]}
                             for c in first],
        }

    kafka, kemu = clusters.both(run)
    check(f"cluster.find_coordinator.{key_type}", kafka, kemu)


@pytest.mark.parametrize("replication_factor", [1, 3])
@pytest.mark.parametrize("version", [9, 11])
def test_produce_to_a_broker_that_does_not_lead(clusters: Pair[Cluster], replication_factor: int,
                                                version: int) -> None:
    name = f"cluster-produce-{replication_factor}-v{version}"

    def run(cluster: Cluster) -> dict[str, Any]:
        create_topic(cluster, name, 1, replication_factor)
        topic = wait_for_topic(cluster, name, 1)
        leader = topic["partitions"][0]["leader_id"]
        replicas = topic["partitions"][0]["replica_nodes"]
        others = [node for node in sorted(cluster.brokers) if node != leader]
        elsewhere: dict[str, list[dict[str, Any]]] = {"follower": [], "not_a_replica": []}
        for node in others:
            with cluster.at(node).connect() as connection:
                got = answer(connection, PRODUCE, version, produce_body({(name, 0): batch(b"v")}, acks=-1))
            assert isinstance(got, dict), got
            part = got["responses"][0]["partition_responses"][0]
            seen: dict[str, Any] = {"error_code": part["error_code"], "error_message": part["error_message"],
                                    "base_offset": part["base_offset"]}
            if "current_leader" in part:
                seen["current_leader_is_the_leader"] = part["current_leader"]["leader_id"] == leader
                seen["current_leader_epoch"] = part["current_leader"]["leader_epoch"]
                seen["node_endpoints"] = [{"is_the_leader": e["node_id"] == leader,
                                           "at_its_address": (e["host"], e["port"]) == cluster.brokers[e["node_id"]]}
                                          for e in got.get("node_endpoints", [])]
            elsewhere["follower" if node in replicas else "not_a_replica"].append(seen)
        with cluster.at(leader).connect() as connection:
            led = answer(connection, PRODUCE, version, produce_body({(name, 0): batch(b"v")}, acks=-1))
        assert isinstance(led, dict), led
        part = led["responses"][0]["partition_responses"][0]
        return {"elsewhere": elsewhere, "at_the_leader": {"error_code": part["error_code"],
                                                          "base_offset": part["base_offset"]}}

    kafka, kemu = clusters.both(run)
    check(f"cluster.produce_elsewhere.rf{replication_factor}.v{version}", kafka, kemu)


def coordinator_of(cluster: Cluster, key_type: int, key: str) -> int:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        found = cluster.request(FIND_COORDINATOR, 4, {"key_type": key_type, "coordinator_keys": [key]})
        coordinator = found["coordinators"][0]
        if coordinator["error_code"] == 0:
            return int(coordinator["node_id"])
        if time.monotonic() > deadline:
            raise AssertionError(f"{cluster.name}: no coordinator for {key}: {found}")
        time.sleep(0.2)


def test_coordinator_requests_sent_elsewhere(clusters: Pair[Cluster]) -> None:
    """JoinGroup, OffsetFetch and a transactional InitProducerId sent to a broker that does not coordinate
    the id: NOT_COORDINATOR, and to the coordinator: served."""
    group, txn = "cluster-elsewhere-group", "cluster-elsewhere-txn"
    join = {"group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}], "reason": None}
    fetch = {"groups": [{"group_id": group, "topics": None}], "require_stable": False}
    init = {"transactional_id": txn, "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}

    def run(cluster: Cluster) -> dict[str, Any]:
        group_node, txn_node = coordinator_of(cluster, 0, group), coordinator_of(cluster, 1, txn)
        found: dict[str, Any] = {}
        for label, node in (("elsewhere", next(n for n in sorted(cluster.brokers) if n != group_node)),
                            ("coordinator", group_node)):
            joined = cluster.at(node).request(11, 9, join)
            fetched = cluster.at(node).request(9, 8, fetch)
            found[f"group_{label}"] = {"join": {"error_code": joined["error_code"],
                                                "member_id_given": bool(joined["member_id"])},
                                       "offset_fetch": [g["error_code"] for g in fetched["groups"]]}
        for label, node in (("elsewhere", next(n for n in sorted(cluster.brokers) if n != txn_node)),
                            ("coordinator", txn_node)):
            started = init_producer_id_at(cluster.at(node), init)
            found[f"txn_{label}"] = {"error_code": started["error_code"],
                                     "has_producer_id": started["producer_id"] >= 0}
        return found

    kafka, kemu = clusters.both(run)
    check("cluster.coordinator_elsewhere", kafka, kemu)


def init_producer_id_at(target: Target, body: dict[str, Any]) -> dict[str, Any]:
    """InitProducerId, asked again while the coordinator is still loading (Kafka, after the first use of
    __transaction_state)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        got = target.request(22, 4, body)
        if got["error_code"] not in (14, 15) or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


@pytest.mark.parametrize("api", ["list_offsets", "fetch"])
def test_partition_requests_sent_to_a_follower(clusters: Pair[Cluster], api: str) -> None:
    """ListOffsets sent to a follower (NOT_LEADER_OR_FOLLOWER), and a consumer's Fetch v12 sent to one (no replica
    selector), which a follower in sync may answer."""
    name = f"cluster-follower-{api}".replace("_", "-")

    def run(cluster: Cluster) -> dict[str, Any]:
        create_topic(cluster, name, 1, 3)
        topic = wait_for_topic(cluster, name, 1)
        leader = topic["partitions"][0]["leader_id"]
        follower = next(n for n in topic["partitions"][0]["replica_nodes"] if n != leader)
        if api == "list_offsets":
            got = cluster.at(follower).request(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": name, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
            part = got["topics"][0]["partitions"][0]
            return {"error_code": part["error_code"], "offset": part["offset"]}
        fetch = {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": name, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                        "last_fetched_epoch": -1, "log_start_offset": -1,
                                                        "partition_max_bytes": 1 << 20}]}]}
        # A v11+ consumer may read from an in-sync follower (FetchParams.fetchOnlyLeader is false with client
        # metadata), but a Kafka follower makes its local replica a moment after its metadata shows the topic
        # and answers NOT_LEADER_OR_FOLLOWER until then: the steady answer is compared, asked for up to 10 s.
        deadline = time.monotonic() + 10
        while True:
            part = cluster.at(follower).request(1, 12, fetch)["responses"][0]["partitions"][0]
            if part["error_code"] != NOT_LEADER_OR_FOLLOWER or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        seen = {"error_code": part["error_code"], "high_watermark": part["high_watermark"],
                "records": part["records"]}
        if "current_leader" in part:
            seen["current_leader_is_the_leader"] = part["current_leader"]["leader_id"] == leader
        return seen

    kafka, kemu = clusters.both(run)
    check(f"cluster.follower.{api}", kafka, kemu)


def test_controller_id_over_requests(clusters: Pair[Cluster]) -> None:
    """The controller a client is told of, over 12 Metadata and 12 DescribeCluster requests."""
    def run(cluster: Cluster) -> dict[str, Any]:
        return {
            "metadata": sorted({metadata(cluster, [])["controller_id"] for _ in range(12)}),
            "describe_cluster": sorted({cluster.request(DESCRIBE_CLUSTER, 1, {
                "include_cluster_authorized_operations": False, "endpoint_type": 1})["controller_id"]
                for _ in range(12)}),
        }

    kafka, kemu = clusters.both(run)
    check("cluster.controller_id", kafka, kemu)
