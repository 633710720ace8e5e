"""The `cluster` group: recorded against a three-node Kafka, replayed against a three-broker kemu. A request for
a group or a transaction sent to a broker that is not its coordinator is refused with NOT_COORDINATOR (on one
node every coordinator is local, so only a cluster shows it), and the same requests to the coordinator."""

from __future__ import annotations

from compat_tests.conformance.scripts import COORDINATOR_SETTLING, step
from compat_tests.conformance.scripts.groups import LOADING, SUBSCRIPTION
from compat_tests.conformance.steps import Script, Step

GROUP = "conf-cluster-g-{run}"
TID = "conf-cluster-t-{run}"
TOPIC = "conf-cluster-missing-{run}"
# Kafka places the leaders of its internal topics' partitions from a random start: which node coordinates a
# group or a transaction differs from one cluster to the next.
PLACED = {"varying": {"node_id": "any:node_id", "port": "any:port"},
          "why": "Kafka places internal partitions' leaders from a random start: the coordinator's node differs "
                 "from one cluster to the next"}


def _group_calls(node: str) -> list[Step]:
    return [
        step("join group", 11, 9, {"group_id": GROUP, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000,
                                   "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                                   "protocols": [{"name": "range", "metadata": SUBSCRIPTION}]}, node=node),
        step("sync group", 14, 5, {"group_id": GROUP, "generation_id": 1, "member_id": "m",
                                   "protocol_type": "consumer", "protocol_name": "range", "assignments": []},
             node=node),
        step("heartbeat", 12, 4, {"group_id": GROUP, "generation_id": 1, "member_id": "m"}, node=node),
        step("leave group", 13, 5, {"group_id": GROUP, "members": [{"member_id": "m", "reason": None}]}, node=node),
        step("offset commit", 8, 9, {"group_id": GROUP, "generation_id_or_member_epoch": -1, "member_id": "",
                                     "topics": [{"name": TOPIC, "partitions": [
                                         {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                                          "committed_metadata": ""}]}]}, node=node),
        step("offset fetch", 9, 8, {"groups": [{"group_id": GROUP, "topics": None}], "require_stable": False},
             node=node),
        step("describe groups", 15, 5, {"groups": [GROUP], "include_authorized_operations": False}, node=node),
        step("offset delete", 47, 0, {"group_id": GROUP, "topics": [{"name": TOPIC, "partitions": [
            {"partition_index": 0}]}]}, node=node),
        step("delete groups", 42, 2, {"groups_names": [GROUP]}, node=node),
        step("consumer group heartbeat", 68, 1, {
            "group_id": GROUP, "member_id": "conf-member-{run}-ffffffffffff", "member_epoch": 0,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": [TOPIC], "topic_partitions": []}, node=node),
        step("consumer group describe", 69, 0, {"group_ids": [GROUP], "include_authorized_operations": False},
             node=node),
        step("txn offset commit", 28, 3, {"transactional_id": TID, "group_id": GROUP, "producer_id": 5,
                                          "producer_epoch": 0, "generation_id": -1, "member_id": "",
                                          "topics": [{"name": TOPIC, "partitions": [
                                              {"partition_index": 0, "committed_offset": 1,
                                               "committed_leader_epoch": -1, "committed_metadata": ""}]}]},
             node=node),
    ]


def _transaction_calls(node: str) -> list[Step]:
    return [
        step("init producer id", 22, 5, {"transactional_id": TID, "transaction_timeout_ms": 60000,
                                         "producer_id": -1, "producer_epoch": -1}, node=node),
        step("add partitions to txn", 24, 3, {"v3_and_below_transactional_id": TID, "v3_and_below_producer_id": 5,
                                              "v3_and_below_producer_epoch": 0,
                                              "v3_and_below_topics": [{"name": TOPIC, "partitions": [0]}]},
             node=node),
        step("add offsets to txn", 25, 4, {"transactional_id": TID, "producer_id": 5, "producer_epoch": 0,
                                           "group_id": GROUP}, node=node),
        step("end txn", 26, 4, {"transactional_id": TID, "producer_id": 5, "producer_epoch": 0, "committed": True},
             node=node),
        step("describe transactions", 65, 0, {"transactional_ids": [TID]}, node=node),
    ]


def scripts() -> list[Script]:
    wrong = [
        step("brokers", 3, 12, {"topics": [], "allow_auto_topic_creation": False}, capture={"brokers": "brokers"},
             key_by={"brokers": "node_id"}, varying={"controller_id": "any:node_id"},
             why="the active controller of a three-node KRaft quorum is whichever won the election"),
        step("find the group coordinator", 10, 4, {"key_type": 0, "coordinator_keys": [GROUP]},
             retry_on=COORDINATOR_SETTLING, capture={"group_coordinator": "coordinators/0/node_id"}, **PLACED),
        step("find the transaction coordinator", 10, 4, {"key_type": 1, "coordinator_keys": [TID]},
             retry_on=COORDINATOR_SETTLING, capture={"txn_coordinator": "coordinators/0/node_id"}, **PLACED),
        *_group_calls("not {$group_coordinator}"),
        *_transaction_calls("not {$txn_coordinator}"),
    ]
    right = wrong[:3]
    right += [
        step("join group at its coordinator", 11, 9, wrong[3].request, node="{$group_coordinator}",
             retry_on=COORDINATOR_SETTLING, why=LOADING),
        step("init producer id at its coordinator", 22, 5, wrong[-5].request, node="{$txn_coordinator}",
             retry_on=COORDINATOR_SETTLING + (51,), why=LOADING),
        step("describe the transaction at its coordinator", 65, 0, {"transactional_ids": [TID]},
             node="{$txn_coordinator}"),
    ]
    # AlterPartitionReassignments v1 (KIP-860): a change of replication factor refused or allowed. The controller
    # answers these; a topic placed on node 1 by hand needs no wait for its leader.
    topic = "conf-cluster-rf-{run}"
    reassign = [
        step("create a topic on node 1", 19, 4, {"topics": [{"name": topic, "num_partitions": -1,
                                                             "replication_factor": -1, "configs": [],
                                                             "assignments": [{"partition_index": 0,
                                                                              "broker_ids": [1]}]}],
                                                 "timeout_ms": 30000, "validate_only": False}),
        *(step(name, 45, 1, {"timeout_ms": 30000, "allow_replication_factor_change": allow, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "replicas": replicas}]}]})
          for name, allow, replicas in (("grow refused", False, [1, 2]), ("grow with a missing broker", False, [1, 9]),
                                        ("move within the factor", False, [2]), ("grow allowed", True, [2, 3]),
                                        ("shrink refused", False, [3]))),
    ]
    return [Script("cluster.not_coordinator", wrong, group="cluster"),
            Script("cluster.at_the_coordinator", right, group="cluster"),
            Script("cluster.reassignments", reassign, group="cluster")]
