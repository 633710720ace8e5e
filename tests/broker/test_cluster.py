"""The cluster one core emulates: nodes with ids and racks, Kafka's rack-aware placement, the ISR as the live
replicas, and leaders that move with bumped epochs when a node stops, starts again or is elected."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.broker import BrokerCore
from kemu.broker.cluster import Cluster, rack_alternated
from kemu.broker.config import BrokerConfig
from kemu.broker.errors import ApiError
from kemu.broker.partition import NO_LEADER
from kemu.clock import VirtualClock
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerCore]:
    created = BrokerCore(BrokerConfig(data_dir=str(tmp_path), brokers=3, port=0), VirtualClock())
    yield created
    created.close()


def create(broker: BrokerCore, name: str, partitions: int, factor: int) -> None:
    [outcome] = create_topics(broker, [NewTopic(name, partitions, factor)])
    assert outcome.error is ErrorCode.NONE, outcome.message


def test_nodes_have_consecutive_ids_and_the_racks_given() -> None:
    cluster = Cluster(4, 3, ["a", "b"])
    assert [(n.node_id, n.rack) for n in cluster] == [(4, "a"), (5, "b"), (6, None)]
    assert cluster.live_ids() == [4, 5, 6]


def test_rack_alternated_order_takes_one_broker_of_each_rack_in_turn() -> None:
    cluster = Cluster(1, 6, ["x", "x", "x", "y", "y", "z"])
    assert rack_alternated(list(cluster)) == [1, 4, 6, 2, 5, 3]
    assert rack_alternated(list(Cluster(1, 3, []))) == [1, 2, 3]


def test_replicas_of_a_partition_land_on_different_racks() -> None:
    cluster = Cluster(1, 4, ["a", "a", "b", "b"])
    for index in range(8):
        replicas = cluster.place(index, 2)
        assert len({cluster.node(r).rack for r in replicas}) == 2, replicas
    assert [cluster.place(i, 3)[0] for i in range(4)] == [1, 3, 2, 4]  # leaders spread over every broker


def test_replication_factor_beyond_the_live_brokers_is_refused_with_kafkas_message(broker: BrokerCore) -> None:
    [outcome] = create_topics(broker, [NewTopic("t", 1, 4)])
    assert outcome.error is ErrorCode.INVALID_REPLICATION_FACTOR
    assert outcome.message == ("Unable to replicate the partition 4 time(s): The target replication factor of 4 "
                               "cannot be reached because only 3 broker(s) are registered or some brokers have "
                               "all their log directories cordoned.")
    broker.stop_node(3)
    [outcome] = create_topics(broker, [NewTopic("t", 1, 3)])
    assert outcome.message is not None and "only 2 broker(s) are registered" in outcome.message


def test_a_stopped_leader_hands_over_to_the_next_isr_replica_with_the_next_epoch(broker: BrokerCore) -> None:
    create(broker, "t", 3, 3)
    partition = broker.topics.get("t").partitions[0]  # type: ignore[union-attr]
    partition.append(build_batch([NewRecord(value=b"a")]))
    assert (partition.replicas, partition.leader_id, partition.leader_epoch) == ([1, 2, 3], 1, 0)
    broker.stop_node(1)
    assert (partition.leader_id, partition.leader_epoch, partition.isr) == (2, 1, [2, 3])
    assert partition.offline_replicas == [1]
    assert [n.node_id for n in broker.brokers()] == [2, 3]
    # The new epoch starts at the log end, and stamps what is appended from now on.
    assert partition.log.end_offset_for_epoch(1) == (1, 1)
    assert partition.append(build_batch([NewRecord(value=b"b")])).batch.partition_leader_epoch == 1
    broker.start_node(1)
    assert (partition.leader_id, partition.leader_epoch, partition.isr, partition.offline_replicas) == (
        2, 1, [1, 2, 3], [])


def test_the_last_isr_member_stays_in_the_isr_without_a_leader_until_it_returns(broker: BrokerCore) -> None:
    create(broker, "t", 1, 2)
    partition = broker.topics.get("t").partitions[0]  # type: ignore[union-attr]
    broker.stop_node(2)
    assert (partition.leader_id, partition.isr) == (1, [1])
    broker.stop_node(1)
    assert (partition.leader_id, partition.isr, partition.leader_epoch) == (NO_LEADER, [1], 1)
    broker.start_node(2)  # not in the ISR: it may not lead (no unclean election)
    assert partition.leader_id == NO_LEADER
    broker.start_node(1)  # the one that was in the ISR leads again, and the waiting one catches up
    assert (partition.leader_id, partition.isr, partition.leader_epoch) == (1, [1, 2], 2)


def test_the_last_live_broker_cannot_be_stopped(broker: BrokerCore) -> None:
    broker.stop_node(1)
    broker.stop_node(2)
    with pytest.raises(ApiError):
        broker.stop_node(3)


def test_an_unregistered_node_is_neither_placed_nor_elected_until_it_starts_again(broker: BrokerCore) -> None:
    create(broker, "t", 1, 3)
    broker.unregister_node(1)  # running: it leaves the ISR and its leadership, as a fenced node does
    topic = broker.topics.get("t")
    assert topic is not None
    partition = topic.partitions[0]
    assert (partition.leader_id, partition.isr, broker.live_broker_ids()) == (2, [2, 3], [2, 3])
    assert broker.place(0, 2) == [2, 3]
    with pytest.raises(ApiError) as refused:
        broker.unregister_node(1)
    assert (refused.value.code, refused.value.message) == (ErrorCode.BROKER_ID_NOT_REGISTERED,
                                                           "Broker ID 1 is not currently registered")
    broker.stop_node(2)
    broker.stop_node(1)  # still running, though unregistered: not the last node with a listener
    with pytest.raises(ApiError):
        broker.stop_node(3)
    broker.start_node(1)  # registers again
    assert broker.live_broker_ids() == [1, 3]
    assert (partition.leader_id, partition.isr) == (3, [1, 3])


def test_a_leader_is_elected_only_among_live_isr_replicas(broker: BrokerCore) -> None:
    create(broker, "t", 1, 2)
    partition = broker.topics.get("t").partitions[0]  # type: ignore[union-attr]
    broker.elect_leader(partition, 2)
    assert (partition.leader_id, partition.leader_epoch) == (2, 1)
    with pytest.raises(ApiError) as refused:
        broker.elect_leader(partition, 3)
    assert refused.value.code is ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE


def test_leaders_and_replicas_survive_a_restart(tmp_path: Path) -> None:
    config = BrokerConfig(data_dir=str(tmp_path), brokers=3, port=0)
    first = BrokerCore(config, VirtualClock())
    create(first, "t", 2, 3)
    first.elect_leader(first.topics.get("t").partitions[1], 1)  # type: ignore[union-attr]
    first.close()
    again = BrokerCore(config, VirtualClock())
    try:
        partition = again.topics.get("t").partitions[1]  # type: ignore[union-attr]
        assert (partition.replicas, partition.leader_id, partition.leader_epoch) == ([2, 3, 1], 1, 1)
    finally:
        again.close()
