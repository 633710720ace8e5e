"""ElectLeaders (key 43), versions 0-2: move leaderships back to the preferred replica (election type 0,
and v0) or to any live replica of a partition no in-sync replica can lead (type 1, unclean).

As the KRaft controller does it (ReplicationControlManager.electLeaders): per partition, an unknown topic or
partition is UNKNOWN_TOPIC_OR_PARTITION; a preferred election where the preferred replica (the first of the
replica list) leads already is ELECTION_NOT_NEEDED, where it is offline or out of the ISR
PREFERRED_LEADER_NOT_AVAILABLE; an unclean election of a partition that has a leader is
ELECTION_NOT_NEEDED, of one with no live replica ELIGIBLE_LEADERS_NOT_AVAILABLE. A null partition list asks
for every partition and is answered only for those that changed leader. The new leader gets the next
leader epoch. An unclean leader loses nothing here (the one log has every record), and the ISR restarts
from it. Without ALTER on the cluster every partition asked is CLUSTER_AUTHORIZATION_FAILED, as is the whole
request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.broker.broker import BrokerCore
from kemu.broker.errors import ApiError
from kemu.broker.partition import NO_LEADER, Partition
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, each, error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k43_elect_leaders import (
        ElectLeadersRequest,
        ElectLeadersResponse,
        ElectLeadersResponseReplicaElectionResultsPartitionResult,
    )

KEY = 43

PREFERRED, UNCLEAN = 0, 1


async def handle(ctx: RequestContext, request: Incoming[ElectLeadersRequest]) -> ElectLeadersResponse:
    body, broker = request.body, ctx.broker
    authz.authorize_cluster_operation(ctx, request, authz.ALTER)
    unclean = request.version >= 1 and body["election_type"] == UNCLEAN
    if request.version >= 1 and body["election_type"] not in (PREFERRED, UNCLEAN):
        raise ApiError(ErrorCode.INVALID_REQUEST, f"Unknown election type {body['election_type']}")
    wanted: list[tuple[str, int]] | None = None
    if body["topic_partitions"] is not None:
        wanted = list(dict.fromkeys((t["topic"], index) for t in body["topic_partitions"] for index in t["partitions"]))
    results: dict[str, list[ElectLeadersResponseReplicaElectionResultsPartitionResult]] = {}
    targets = wanted if wanted is not None else [(t.name, p.index) for t in broker.topics for p in t.partitions]
    for name, index in targets:
        code, message = _elect(broker, name, index, unclean)
        if wanted is None and code is not ErrorCode.NONE:
            continue  # asked for everything: only the partitions that changed are reported
        results.setdefault(name, []).append({"partition_id": index, "error_code": int(code), "error_message": message})
    return {"error_code": 0, "replica_election_results": [
        {"topic": name, "partition_result": parts} for name, parts in results.items()]}


def _elect(broker: BrokerCore, name: str, index: int, unclean: bool) -> tuple[ErrorCode, str | None]:
    topic = broker.topics.get(name)
    if topic is None:  # the controller's ReplicationControlManager.electLeader, word for word
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}"
    if not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{index}"
    partition = topic.partitions[index]
    if unclean:
        return _unclean(broker, partition)
    preferred = partition.replicas[0]
    if partition.leader_id == preferred:
        return ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
    if not broker.cluster.is_live(preferred) or preferred not in partition.isr:
        return (ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                f"Failed to elect leader for partition {name}-{index} under strategy "
                "PreferredReplicaPartitionLeaderElectionStrategy")
    broker.elect_leader(partition, preferred)
    return ErrorCode.NONE, None


def _unclean(broker: BrokerCore, partition: Partition) -> tuple[ErrorCode, str | None]:
    if partition.leader_id != NO_LEADER:
        return ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
    live = [r for r in partition.replicas if broker.cluster.is_live(r)]
    if not live:
        return (ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                f"Failed to elect leader for partition {partition.topic}-{partition.index} under strategy "
                "UncleanLeaderElectionStrategy")
    partition.isr = [live[0]]
    partition.elect(live[0])
    topic = broker.topics.get(partition.topic)
    broker.storage.save(broker.topics, changed=None if topic is None else [topic])  # this topic's entry only
    return ErrorCode.NONE, None


# Kafka's ElectLeadersRequest.getErrorResponse: the error for every partition asked (none for a null list,
# "every partition"), each with the message, besides the top-level code.
error_response = error_responder(KEY, replica_election_results=each(
    "topic_partitions", topic="topic", partition_result=each("partitions", partition_id=ITEM)))
