"""A cluster of three nodes over one core: each node answers only for what it leads (NOT_LEADER_OR_FOLLOWER
with the current leader and its endpoint, KIP-951) and coordinates only what its internal-topic partitions
lead (NOT_COORDINATOR); a consumer with client metadata may read from an in-sync follower, and the leader
sends it to a replica in its rack when the RackAwareReplicaSelector is configured (KIP-392)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.config import BrokerConfig
from kemu.testing.harness import InProcessBroker
from kemu.wire.errors import ErrorCode
from tests.handlers.data_plane import FETCH, LIST_OFFSETS, batch, fetch_body, fetch_partitions, produce, values_of

FIND_COORDINATOR, INIT_PRODUCER_ID, HEARTBEAT, METADATA, ELECT_LEADERS, DESCRIBE_CLUSTER = 10, 22, 12, 3, 43, 60
ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS = 45, 46


@pytest.fixture
def cluster() -> Iterator[InProcessBroker]:
    config = BrokerConfig(port=0, brokers=3, racks=("a", "b", "c"), offsets_topic_replication_factor=3,
                          transaction_state_log_replication_factor=3,
                          properties={"replica.selector.class":
                                      "org.apache.kafka.common.replica.RackAwareReplicaSelector"})
    with InProcessBroker(config) as broker:
        [outcome] = broker.call(lambda: create_topics(broker.broker, [NewTopic("t", 3, 3)]))
        assert outcome.error is ErrorCode.NONE
        yield broker


def leader_of(cluster: InProcessBroker, index: int) -> int:
    topic = cluster.broker.topics.get("t")
    assert topic is not None
    return topic.partitions[index].leader_id


def test_produce_to_a_follower_names_the_leader_and_its_endpoint(cluster: InProcessBroker) -> None:
    assert leader_of(cluster, 0) == 1
    with cluster.connect(node=2) as follower:
        body = follower.request(0, 11, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch(b"x")}]}]})
    [response] = body["responses"][0]["partition_responses"]
    assert response["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert response["current_leader"] == {"leader_id": 1, "leader_epoch": 0}
    [endpoint] = body["node_endpoints"]
    assert (endpoint["node_id"], endpoint["rack"]) == (1, "a")
    with cluster.connect(node=1) as leader:
        assert produce(leader, "t", batch(b"x"))["error_code"] == 0
        assert produce(leader, "t", batch(b"y"), version=9)["error_code"] == 0


def test_after_the_leader_stops_its_successor_takes_writes_with_the_next_epoch(cluster: InProcessBroker) -> None:
    cluster.call(lambda: cluster.broker.stop_node(1))
    with cluster.connect(node=2) as successor:
        assert produce(successor, "t", batch(b"x"))["error_code"] == 0
        [(_, data)] = fetch_partitions(successor.request(FETCH, 12, fetch_body(
            [("t", 0, 0)], version=12, current_leader_epoch=0)))
    assert data["error_code"] == ErrorCode.FENCED_LEADER_EPOCH
    assert data["current_leader"] == {"leader_id": 2, "leader_epoch": 1}


def test_acks_all_fails_when_the_isr_is_below_min_insync_replicas(cluster: InProcessBroker) -> None:
    [outcome] = cluster.call(lambda: create_topics(cluster.broker, [
        NewTopic("strict", 1, 3, configs=[("min.insync.replicas", "3")])]))
    assert outcome.error is ErrorCode.NONE
    cluster.call(lambda: cluster.broker.stop_node(3))
    with cluster.connect(node=1) as leader:
        assert produce(leader, "strict", batch(b"x"))["error_code"] == ErrorCode.NOT_ENOUGH_REPLICAS
        assert produce(leader, "strict", batch(b"x"), acks=1)["error_code"] == 0
    cluster.call(lambda: cluster.broker.start_node(3))
    with cluster.connect(node=1) as leader:
        assert produce(leader, "strict", batch(b"y"))["error_code"] == 0


def test_a_consumer_reads_from_an_in_sync_follower_and_is_sent_to_its_rack(cluster: InProcessBroker) -> None:
    with cluster.connect(node=1) as leader:
        produce(leader, "t", batch(b"a", b"b"))
        # Fetch v10 has no client metadata: only the leader serves it.
        with cluster.connect(node=2) as follower:
            [(_, old)] = fetch_partitions(follower.request(FETCH, 10, fetch_body([("t", 0, 0)], version=10)), 10)
            [(_, new)] = fetch_partitions(follower.request(FETCH, 12, fetch_body([("t", 0, 0)], version=12)))
        assert old["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert (new["error_code"], values_of(new["records"])) == (0, [b"a", b"b"])
        body: dict[str, Any] = fetch_body([("t", 0, 0)], version=12)
        [(_, sent)] = fetch_partitions(leader.request(FETCH, 12, {**body, "rack_id": "c"}))
        assert (sent["preferred_read_replica"], sent["records"]) == (3, b"")
        [(_, local)] = fetch_partitions(leader.request(FETCH, 12, {**body, "rack_id": "a"}))
        assert (local["preferred_read_replica"], values_of(local["records"])) == (-1, [b"a", b"b"])
        [(_, elsewhere)] = fetch_partitions(leader.request(FETCH, 12, {**body, "rack_id": "z"}))
        assert elsewhere["preferred_read_replica"] == -1


def test_list_offsets_is_answered_by_the_leader_only(cluster: InProcessBroker) -> None:
    request = {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 1, "current_leader_epoch": -1, "timestamp": -1}]}]}
    with cluster.connect(node=1) as not_leader, cluster.connect(node=2) as leader:
        assert not_leader.request(LIST_OFFSETS, 7, request)["topics"][0]["partitions"][0]["error_code"] == \
            ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert leader.request(LIST_OFFSETS, 7, request)["topics"][0]["partitions"][0]["error_code"] == 0


def test_coordinators_answer_only_on_their_node(cluster: InProcessBroker) -> None:
    with cluster.connect(node=1) as conn:
        found = conn.request(FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": ["tx"]})["coordinators"][0]
        group = conn.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g"]})["coordinators"][0]
    owner = found["node_id"]
    other = 1 + owner % 3
    init = {"transactional_id": "tx", "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}
    with cluster.connect(node=other) as elsewhere:
        assert elsewhere.request(INIT_PRODUCER_ID, 4, init)["error_code"] == ErrorCode.NOT_COORDINATOR
        heartbeat = {"group_id": "g", "generation_id": 1, "member_id": "m", "group_instance_id": None}
        if group["node_id"] != other:
            assert elsewhere.request(HEARTBEAT, 4, heartbeat)["error_code"] == ErrorCode.NOT_COORDINATOR
    with cluster.connect(node=owner) as home:
        assert home.request(INIT_PRODUCER_ID, 4, init)["error_code"] == 0
    # The coordinator moves with its partition's leadership, and FindCoordinator follows.
    topic = cluster.broker.topics.get("__transaction_state")
    assert topic is not None
    partition = topic.partitions[cluster.coordinators.txn.partition_of("tx")]
    cluster.call(lambda: cluster.broker.elect_leader(partition, other))
    with cluster.connect(node=owner) as conn:
        moved = conn.request(FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": ["tx"]})["coordinators"][0]
        assert moved["node_id"] == other
        assert conn.request(INIT_PRODUCER_ID, 4, init)["error_code"] == ErrorCode.NOT_COORDINATOR


def test_metadata_shows_a_leaderless_partition_as_leader_not_available(cluster: InProcessBroker) -> None:
    [outcome] = cluster.call(lambda: create_topics(cluster.broker, [NewTopic("single", 1, 1)]))
    assert outcome.error is ErrorCode.NONE
    cluster.call(lambda: cluster.broker.stop_node(1))
    with cluster.connect(node=2) as conn:
        body = conn.request(METADATA, 12, {"topics": [{"topic_id": uuid.UUID(int=0), "name": "single"}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False})
    assert [b["node_id"] for b in body["brokers"]] == [2, 3]
    assert body["controller_id"] == 2
    [partition] = body["topics"][0]["partitions"]
    assert (partition["error_code"], partition["leader_id"], partition["offline_replicas"]) == (
        ErrorCode.LEADER_NOT_AVAILABLE, -1, [1])


def elect(cluster: InProcessBroker, version: int, body: dict[str, Any]) -> list[tuple[str, int, int]]:
    with cluster.connect() as conn:
        answer = conn.request(ELECT_LEADERS, version, body)
    return [(t["topic"], p["partition_id"], p["error_code"]) for t in answer["replica_election_results"]
            for p in t["partition_result"]]


def test_elect_leaders_moves_leadership_back_to_the_preferred_replica(cluster: InProcessBroker) -> None:
    cluster.call(lambda: cluster.broker.stop_node(1))
    cluster.call(lambda: cluster.broker.start_node(1))
    assert [leader_of(cluster, i) for i in range(3)] == [2, 2, 3]  # partition 0's leadership moved away
    wanted = {"election_type": 0, "timeout_ms": 1000, "topic_partitions": [{"topic": "t", "partitions": [0, 1, 9]}]}
    assert elect(cluster, 2, wanted) == [("t", 0, 0), ("t", 1, ErrorCode.ELECTION_NOT_NEEDED),
                                         ("t", 9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    topic = cluster.broker.topics.get("t")
    assert topic is not None and (topic.partitions[0].leader_id, topic.partitions[0].leader_epoch) == (1, 2)
    # Every partition (null): only those that changed are answered; none are left to change.
    assert elect(cluster, 2, {"election_type": 0, "timeout_ms": 1000, "topic_partitions": None}) == []


def test_preferred_election_needs_the_preferred_replica_in_sync_and_unclean_takes_any_live_one(
        cluster: InProcessBroker) -> None:
    [outcome] = cluster.call(lambda: create_topics(cluster.broker, [NewTopic("pair", 1, 2)]))
    assert outcome.error is ErrorCode.NONE
    cluster.call(lambda: cluster.broker.stop_node(1))
    one = {"topic_partitions": [{"topic": "pair", "partitions": [0]}], "timeout_ms": 1000}
    assert elect(cluster, 1, {**one, "election_type": 0}) == [("pair", 0, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE)]
    assert elect(cluster, 1, {**one, "election_type": 1}) == [("pair", 0, ErrorCode.ELECTION_NOT_NEEDED)]
    cluster.call(lambda: cluster.broker.stop_node(2))  # no leader now: 2 was the last in-sync replica
    cluster.call(lambda: cluster.broker.start_node(1))  # back, but never caught up: outside the ISR
    topic = cluster.broker.topics.get("pair")
    assert topic is not None and topic.partitions[0].leader_id == -1
    assert elect(cluster, 1, {**one, "election_type": 1}) == [("pair", 0, 0)]
    assert (topic.partitions[0].leader_id, topic.partitions[0].isr) == (1, [1])


def test_a_reassignment_completes_at_once_and_none_is_left_in_progress(cluster: InProcessBroker) -> None:
    [outcome] = cluster.call(lambda: create_topics(cluster.broker, [NewTopic("moving", 1, 2)]))
    assert outcome.error is ErrorCode.NONE
    body = {"timeout_ms": 1000, "topics": [{"name": "moving", "partitions": [
        {"partition_index": 0, "replicas": [3, 2]}, {"partition_index": 5, "replicas": [1]}]},
        {"name": "other", "partitions": [{"partition_index": 0, "replicas": None}]}]}
    with cluster.connect() as conn:
        answer = conn.request(ALTER_REASSIGNMENTS, 0, body)
        listed = conn.request(LIST_REASSIGNMENTS, 0, {"timeout_ms": 1000, "topics": None})
        bad = conn.request(ALTER_REASSIGNMENTS, 0, {"timeout_ms": 1000, "topics": [{"name": "moving", "partitions": [
            {"partition_index": 0, "replicas": [2, 9]}]}]})
    assert [(t["name"], p["partition_index"], p["error_code"]) for t in answer["responses"] for p in t["partitions"]] \
        == [("moving", 0, 0), ("moving", 5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ("other", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    topic = cluster.broker.topics.get("moving")
    assert topic is not None
    partition = topic.partitions[0]
    assert (partition.replicas, partition.isr, partition.leader_id, partition.leader_epoch) == ([3, 2], [3, 2], 3, 1)
    assert listed["topics"] == []
    [[refused]] = [t["partitions"] for t in bad["responses"]]
    assert (refused["error_code"], refused["error_message"]) == (
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes broker 9, but no such broker is registered.")


def test_a_reassignment_may_refuse_a_change_of_replication_factor(cluster: InProcessBroker) -> None:
    # AlterPartitionReassignments v1 (KIP-860): with allow_replication_factor_change false, only as many replicas.
    [outcome] = cluster.call(lambda: create_topics(cluster.broker, [NewTopic("rf", 1, 2)]))
    assert outcome.error is ErrorCode.NONE

    def reassign(version: int, allow: bool, replicas: list[int]) -> tuple[bool, int, str | None]:
        with cluster.connect() as conn:
            answer = conn.request(ALTER_REASSIGNMENTS, version, {
                "timeout_ms": 1000, "allow_replication_factor_change": allow,
                "topics": [{"name": "rf", "partitions": [{"partition_index": 0, "replicas": replicas}]}]})
        [[partition]] = [t["partitions"] for t in answer["responses"]]
        return answer["allow_replication_factor_change"], partition["error_code"], partition["error_message"]

    assert reassign(1, False, [1, 2, 3]) == (
        False, ErrorCode.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 2 to 3")
    assert reassign(1, False, [3]) == (
        False, ErrorCode.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 2 to 1")
    # The replica list is checked first.
    assert reassign(1, False, [3, 9, 2])[1] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert reassign(1, False, [3, 1]) == (False, 0, None)
    assert reassign(1, True, [1, 2, 3]) == (True, 0, None)
    assert reassign(0, False, [2]) == (True, 0, None)  # v0 always allows it (and carries no echo: the default)
    topic = cluster.broker.topics.get("rf")
    assert topic is not None and topic.partitions[0].replicas == [2]


def test_a_stopped_broker_is_described_fenced_when_asked(cluster: InProcessBroker) -> None:
    # DescribeCluster v2 (KIP-1073): a broker that shut down stays registered, fenced; listed only when asked.
    with cluster.connect(node=1) as first:
        [node_1] = [b for b in first.request(DESCRIBE_CLUSTER, 2, {})["brokers"] if b["broker_id"] == 1]
    cluster.call(lambda: cluster.broker.stop_node(1))
    with cluster.connect(node=2) as conn:
        def described(version: int, include_fenced: bool) -> list[tuple[int, bool]]:
            body = conn.request(DESCRIBE_CLUSTER, version, {"include_fenced_brokers": include_fenced})
            return [(b["broker_id"], b["is_fenced"]) for b in body["brokers"]]

        assert described(1, True) == described(2, False) == [(2, False), (3, False)]  # v1 has no such field
        assert described(2, True) == [(1, True), (2, False), (3, False)]
        [fenced] = [b for b in conn.request(DESCRIBE_CLUSTER, 2, {"include_fenced_brokers": True})["brokers"]
                    if b["broker_id"] == 1]
    assert fenced == {**node_1, "is_fenced": True}
    cluster.call(lambda: cluster.broker.start_node(1))
    with cluster.connect(node=2) as conn:
        body = conn.request(DESCRIBE_CLUSTER, 2, {"include_fenced_brokers": True})
    assert [(b["broker_id"], b["is_fenced"]) for b in body["brokers"]] == [(1, False), (2, False), (3, False)]
