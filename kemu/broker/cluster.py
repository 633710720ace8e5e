"""The nodes of the cluster one kemu process emulates, and where partitions and their leaders live among them.

Every node is a broker with its own id, rack and listener over the one shared core: a partition's log
exists once, and its followers are metadata over that log. So a follower is always caught up, the ISR is
the live replicas, and the high watermark (what the ISR has) is the log end. What moves is who may answer
for a partition: its leader, chosen from the live ISR, with the leader epoch bumped on every change, as
Kafka's controller does (PartitionChangeBuilder). A node that stops leaves every ISR it was in unless it
was the last member (Kafka keeps that one, with no leader, until it returns); one that starts again
rejoins the ISR of its replicas and takes back leaderless partitions. Leaders do not move back on their
own (Kafka's auto.leader.rebalance runs every 5 minutes and only past an imbalance); ElectLeaders does it.

Placement is Kafka's rack-aware assignment (AdminUtils.assignReplicasToBrokersRackAware with a fixed start,
which is what the striped placer gives with racks): the live brokers in rack-alternated order (one of each
rack in turn), partition i led by the i-th of that list and followed by the next ones, so the replicas of
a partition land on as many racks as there are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kemu.broker.partition import NO_LEADER, Partition


@dataclass(slots=True)
class Node:
    """One broker of the cluster as the controller sees it: whether it runs and is registered, and where."""

    node_id: int
    rack: str | None
    alive: bool = True
    port: int | None = None  # where its listener is bound, set by the server; None before it binds
    # Registered with the controller (KRaft's broker registration): UnregisterBroker takes it away, the node's
    # next start gives it back, as a Kafka broker registers again when it restarts.
    registered: bool = True

    @property
    def usable(self) -> bool:
        """Running and registered: a node that may lead, be placed on, and be listed to clients."""
        return self.alive and self.registered


class UnknownNode(LookupError):
    pass


class Cluster:
    """The nodes by id, in id order."""

    def __init__(self, first_id: int, count: int, racks: Iterable[str | None]) -> None:
        rack_list = list(racks)
        self.nodes = {first_id + i: Node(first_id + i, rack_list[i] if i < len(rack_list) else None)
                      for i in range(count)}

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes.values())

    def node(self, node_id: int) -> Node:
        found = self.nodes.get(node_id)
        if found is None:
            raise UnknownNode(f"no broker {node_id}")
        return found

    def live_ids(self) -> list[int]:
        return [n.node_id for n in self.nodes.values() if n.usable]

    def is_live(self, node_id: int) -> bool:
        found = self.nodes.get(node_id)
        return found is not None and found.usable

    def place(self, index: int, factor: int) -> list[int]:
        """The replicas of partition `index` with `factor` replicas, over the live brokers."""
        return self.place_all(range(index, index + 1), factor)[0]

    def place_all(self, indexes: range, factor: int) -> list[list[int]]:
        """`place` for many partitions, the broker order worked out once (10,000 of them in a request)."""
        ordered = rack_alternated([n for n in self.nodes.values() if n.usable])
        return [[ordered[(index + i) % len(ordered)] for i in range(factor)] for index in indexes]


def rack_alternated(nodes: list[Node]) -> list[int]:
    """AdminUtils.getRackAlternatedBrokerList: racks in name order, each rack's brokers in id order, taking
    one broker of each rack in turn. Without racks, the ids in order."""
    by_rack: dict[str, list[int]] = {}
    for node in sorted(nodes, key=lambda n: n.node_id):
        by_rack.setdefault(node.rack or "", []).append(node.node_id)
    if len(by_rack) <= 1:
        return sorted(n.node_id for n in nodes)
    queues = [by_rack[rack] for rack in sorted(by_rack)]
    out: list[int] = []
    depth = 0
    while len(out) < len(nodes):
        for queue in queues:
            if depth < len(queue):
                out.append(queue[depth])
        depth += 1
    return out


# ---- leadership changes -------------------------------------------------------------------------------
def leave(partition: Partition, node_id: int, cluster: Cluster) -> bool:
    """`node_id` stopped: out of the ISR (unless it is the last member), its leadership to the next live ISR
    replica in replica order, or to nobody. True if the leader changed."""
    if node_id not in partition.replicas:
        return False
    if node_id not in partition.offline_replicas:
        partition.offline_replicas = [r for r in partition.replicas
                                      if r in partition.offline_replicas or r == node_id]
    if node_id in partition.isr and len(partition.isr) > 1:
        partition.isr = [r for r in partition.isr if r != node_id]
    if partition.leader_id != node_id:
        return False
    successor = next((r for r in partition.replicas if r in partition.isr and cluster.is_live(r)), NO_LEADER)
    partition.elect(successor)
    return True


def rejoin(partition: Partition, node_id: int, cluster: Cluster) -> bool:
    """`node_id` started again: back in the ISR where there is a leader to catch up from (it has the one
    log, so it is caught up at once), and leader where it is the last ISR member. Replicas that were left
    waiting outside the ISR of a leaderless partition join it then too. True if the leader changed."""
    if node_id not in partition.replicas:
        return False
    partition.offline_replicas = [r for r in partition.offline_replicas if r != node_id]
    if node_id not in partition.isr:
        if partition.leader_id == NO_LEADER:
            return False  # nobody to catch up from: it waits outside the ISR (no unclean election)
        partition.isr = [r for r in partition.replicas if r in partition.isr or r == node_id]
        return False
    if partition.leader_id == NO_LEADER:
        partition.elect(node_id)
        partition.isr = [r for r in partition.replicas if r in partition.isr or cluster.is_live(r)]
        return True
    return False


def eligible_leader(partition: Partition, node_id: int, cluster: Cluster) -> str | None:
    """Why `node_id` may not lead `partition` (Kafka's message), or None if it may."""
    if node_id not in partition.replicas:
        return f"Broker {node_id} is not a replica of {partition.topic}-{partition.index}."
    if not cluster.is_live(node_id):
        return f"Broker {node_id} is not alive."
    if node_id not in partition.isr:
        return f"Broker {node_id} is not in the ISR of {partition.topic}-{partition.index}."
    return None
