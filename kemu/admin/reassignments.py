"""Partition reassignment (AlterPartitionReassignments), as the KRaft controller validates it. Followers are
metadata over the one log, so a new replica is caught up the moment it is added: a reassignment completes
at once, and none is ever in progress for ListPartitionReassignments to show."""

from __future__ import annotations

from kemu.admin.topics import assignment_problem
from kemu.broker.broker import BrokerCore
from kemu.wire.errors import ErrorCode


def reassign(broker: BrokerCore, topic: str, index: int, replicas: list[int] | None,
             allow_replication_factor_change: bool = True) -> tuple[ErrorCode, str | None]:
    """Give partition `topic`-`index` the replica list `replicas` (None: cancel, and nothing is pending); with
    `allow_replication_factor_change` false, only a list as long as the current one (KIP-860)."""
    found = broker.topics.get(topic)
    if found is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}."
    if not 0 <= index < len(found.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic}:{index}."
    if replicas is None:
        return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None
    problem = assignment_problem(list(replicas), list(broker.cluster.nodes), None)
    if problem is not None:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem
    partition = found.partitions[index]
    if not allow_replication_factor_change and len(replicas) != len(partition.replicas):
        # ReplicationControlManager.validatePartitionReplicationFactorUnchanged (no reassignment is ever pending).
        return (ErrorCode.INVALID_REPLICATION_FACTOR,
                f"The replication factor is changed from {len(partition.replicas)} to {len(replicas)}")
    live = [r for r in replicas if broker.cluster.is_live(r)]
    if not live:
        return (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment for {topic}-{index} has no live broker to lead it.")
    partition.replicas = list(replicas)
    partition.isr = live
    partition.offline_replicas = [r for r in replicas if r not in live]
    if partition.leader_id not in live:
        partition.elect(live[0])
    broker.storage.save(broker.topics, changed=[found])  # only this topic's entry is encoded again
    return ErrorCode.NONE, None
