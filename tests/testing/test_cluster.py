"""kemu.testing.Broker(brokers=N): N listeners over one core, the same Metadata from each, brokers stopped
(listener closed, leaders moved) and started again on their ports, leaders and coordinators moved on demand."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.testing import Broker, BrokerError
from kemu.testing.control import ControlEndpoint
from kemu.wire.errors import ErrorCode
from tests.server.kafka_socket import KafkaSocket
from tests.testing.test_control_openapi import send

METADATA = 3


def metadata(port: int) -> dict[str, Any]:
    with KafkaSocket(("127.0.0.1", port)) as conn:
        return conn.request(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False})


def ports(broker: Broker) -> list[int]:
    return [int(address.rsplit(":", 1)[1]) for address in broker.bootstrap_servers.split(",")]


def test_every_broker_of_a_cluster_answers_the_same_metadata() -> None:
    with Broker(brokers=3, racks=["a", "b", "c"]) as cluster:
        cluster.create_topic("t", partitions=3, replication_factor=3)
        answers = [metadata(port) for port in ports(cluster)]
        assert len(set(ports(cluster))) == 3
        first = answers[0]
        assert [(b["node_id"], b["port"], b["rack"]) for b in first["brokers"]] == [
            (1, ports(cluster)[0], "a"), (2, ports(cluster)[1], "b"), (3, ports(cluster)[2], "c")]
        assert all(answer == first for answer in answers)
        [topic] = first["topics"]
        assert [(p["leader_id"], p["replica_nodes"], p["isr_nodes"]) for p in topic["partitions"]] == [
            (1, [1, 2, 3], [1, 2, 3]), (2, [2, 3, 1], [2, 3, 1]), (3, [3, 1, 2], [3, 1, 2])]


def test_a_stopped_broker_closes_its_listener_and_its_leaderships_move() -> None:
    with Broker(brokers=3) as cluster:
        cluster.create_topic("t", partitions=3, replication_factor=2)
        second = ports(cluster)[1]
        cluster.stop_broker(2)
        with pytest.raises(ConnectionRefusedError):
            metadata(second)
        answer = metadata(ports(cluster)[0])
        assert [b["node_id"] for b in answer["brokers"]] == [1, 3]
        [topic] = answer["topics"]
        assert [(p["leader_id"], p["leader_epoch"], p["isr_nodes"], p["offline_replicas"])
                for p in topic["partitions"]] == [(1, 0, [1], [2]), (3, 1, [3], [2]), (3, 0, [3, 1], [])]
        cluster.start_broker(2)
        answer = metadata(second)
        assert [b["node_id"] for b in answer["brokers"]] == [1, 2, 3]
        [topic] = answer["topics"]
        assert [(p["leader_id"], p["isr_nodes"]) for p in topic["partitions"]] == [
            (1, [1, 2]), (3, [2, 3]), (3, [3, 1])]


def test_leaders_and_coordinators_move_on_demand() -> None:
    with Broker(brokers=3) as cluster:
        cluster.create_topic("t", replication_factor=3)
        cluster.move_leader("t", 0, 3)
        assert cluster.leader("t", 0) == 3
        before = cluster.coordinator("group", "g")
        target = 1 + before % 3
        cluster.move_coordinator("group", "g", target)
        assert cluster.coordinator("group", "g") == target
        cluster.move_coordinator("transaction", "tx", 2)
        assert cluster.coordinator("transaction", "tx") == 2
        cluster.create_topic("one", replication_factor=1)
        with pytest.raises(BrokerError) as refused:
            cluster.move_leader("one", 0, 2)
        assert refused.value.code is ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
        with pytest.raises(BrokerError):
            cluster.stop_broker(9)


def test_the_control_endpoint_stops_and_starts_brokers_and_moves_leaders() -> None:
    with Broker(brokers=3) as cluster, ControlEndpoint(cluster) as control:
        cluster.create_topic("t", replication_factor=3)
        stopped = send(control.url, "POST", "/brokers/1/stop")
        assert stopped.status == 200
        assert [(b["node_id"], b["alive"]) for b in stopped.json()["brokers"]] == [(1, False), (2, True), (3, True)]
        assert cluster.leader("t", 0) == 2
        moved = send(control.url, "POST", "/topics/t/partitions/0/leader", body={"node_id": 3})
        assert (moved.status, moved.json()["leader"], moved.json()["leader_epoch"], moved.json()["isr"]) == (
            200, 3, 2, [2, 3])
        refused = send(control.url, "POST", "/topics/t/partitions/0/leader", body={"node_id": 1})
        assert (refused.status, refused.json()["error"]["code"]) == (400, "ELIGIBLE_LEADERS_NOT_AVAILABLE")
        assert send(control.url, "POST", "/brokers/1/start").status == 200
        assert metadata(ports(cluster)[0])["topics"][0]["partitions"][0]["isr_nodes"] == [1, 2, 3]


def test_every_broker_of_a_cluster_comes_back_on_its_port_after_a_restart() -> None:
    with Broker(brokers=3) as cluster:
        before = ports(cluster)
        cluster.restart()
        assert ports(cluster) == before
        cluster.kill()
        assert ports(cluster) == before
        assert [b["port"] for b in metadata(before[2])["brokers"]] == before


def test_the_control_endpoint_moves_a_coordinator() -> None:
    with Broker(brokers=3) as cluster, ControlEndpoint(cluster) as control:
        target = 1 + cluster.coordinator("transaction", "tx") % 3
        moved = send(control.url, "POST", "/coordinators/transaction/tx/leader", body={"node_id": target})
        assert (moved.status, moved.json()) == (200, {"kind": "transaction", "key": "tx", "node_id": target})
        assert cluster.coordinator("transaction", "tx") == target
        assert send(control.url, "POST", "/coordinators/other/tx/leader", body={"node_id": 1}).status == 400
