"""Who answers for a partition in a cluster: the node a request reached must lead it (or, for a consumer's
fetch, hold a replica of it); else NOT_LEADER_OR_FOLLOWER, with the current leader and its endpoint where
the response version has room for them (KIP-951), so the client goes there without a metadata round trip."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from kemu.broker.broker import BrokerCore
from kemu.broker.partition import Partition

if TYPE_CHECKING:
    # Fetch's structs; Produce's (ProduceResponseResponsesPartitionResponsesCurrentLeader,
    # ProduceResponseNodeEndpoints) have the same fields, so a TypedDict of either is one of the other.
    from kemu.wire.messages.k01_fetch import FetchResponseNodeEndpoints as NodeEndpoint
    from kemu.wire.messages.k01_fetch import FetchResponseResponsesPartitionsCurrentLeader as CurrentLeader


def leads(node_id: int, partition: Partition) -> bool:
    return partition.leader_id == node_id


def current_leader(partition: Partition) -> CurrentLeader:
    """The tagged current_leader of Produce v10+ and Fetch v12+ answers."""
    return {"leader_id": partition.leader_id, "leader_epoch": partition.leader_epoch}


def node_endpoints(broker: BrokerCore, node_ids: Collection[int]) -> list[NodeEndpoint]:
    """The tagged node_endpoints of Produce v10+ and Fetch v16+: where the named (live) leaders listen."""
    if not node_ids:
        return []
    out: list[NodeEndpoint] = []
    for node_id in sorted(set(node_ids)):
        node = broker.broker_node(node_id)
        if node is not None:
            out.append({"node_id": node.node_id, "host": node.host, "port": node.port, "rack": node.rack})
    return out
