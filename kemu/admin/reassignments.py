"""Partition reassignment (AlterPartitionReassignments), as the KRaft controller validates it. Followers are
metadata over the one log, so a new replica is caught up the moment it is added: a reassignment completes
at once, and none is ever in progress for ListPartitionReassignments to show."""

from __future__ import annotations

from kemu.admin.topics import assignment_problem
from kemu.broker.broker import Broker
from kemu.wire.errors import ErrorCode


def reassign(broker: Broker, topic: str, index: int, replicas: list[int] | None) -> tuple[ErrorCode, str | None]:
    """Give partition `topic`-`index` the replica list `replicas` (None: cancel, and nothing is pending)."""
    found = broker.topics.get(topic)
    if found is None or not 0 <= index < len(found.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    if replicas is None:
        return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None
    problem = assignment_problem(list(replicas), list(broker.cluster.nodes), None)
    if problem is not None:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem
    live = [r for r in replicas if broker.cluster.is_live(r)]
    if not live:
        return (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment for {topic}-{index} has no live broker to lead it.")
    partition = found.partitions[index]
    partition.replicas = list(replicas)
    partition.isr = live
    partition.offline_replicas = [r for r in replicas if r not in live]
    if partition.leader_id not in live:
        partition.elect(live[0])
    broker.storage.save(broker.topics)
    return ErrorCode.NONE, None
