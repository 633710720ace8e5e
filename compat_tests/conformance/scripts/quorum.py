"""DescribeQuorum and ListConfigResources at every version, with what Kafka refuses; in the `cluster` group,
DescribeConfigs of each broker by its own id at that broker (and by another's), DescribeQuorum and
ListConfigResources of a three-node cluster."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import LEADER_SETTLING, SETTLING_WHY, create_topic, step, versions
from compat_tests.conformance.scripts.admin import BROKER_RESOURCE, _describe
from compat_tests.conformance.steps import Script, Step

METADATA_TOPIC = "__cluster_metadata"
TOPIC = "conf-lcr-{run}"
OTHER = "conf-lcr-other-{run}"
BROKER_LOGGER_RESOURCE, CLIENT_METRICS_RESOURCE, GROUP_RESOURCE, TOPIC_RESOURCE = 8, 16, 32, 2
# The metadata log's length: how much metadata the cluster wrote before (topics, configs, a no-op record every
# metadata.max.idle.interval.ms), not a behaviour.
QUORUM = {"varying": {"high_watermark": "any:metadata_offset", "log_end_offset": "any:metadata_offset",
                      "port": "any:port", "last_fetch_timestamp": "any:timestamp",
                      "last_caught_up_timestamp": "any:timestamp"},
          "why": "the metadata log's offsets grow with what the cluster wrote and with its idle no-op records; "
                 "the controller listener's port is chosen at start; the leader reports the time of the request "
                 "as its own fetch and catch-up times"}
# One node's quorum: its epoch too, which counts the elections (a single controller starting on a loaded
# machine can take more than one: the replay against Kafka itself once saw 3).
ONE_NODE_QUORUM = {"varying": {**QUORUM["varying"], "leader_epoch": "any:leader_epoch"},
                   "why": f"{QUORUM['why']}; the epoch counts the quorum's elections, and a single controller "
                          "starting on a loaded machine can take more than one"}
# The static broker configs that name a node (the listeners carry ports, compared elsewhere).
NODE_CONFIGS = ["broker.id", "node.id", "broker.rack", "process.roles", "num.partitions"]


def _quorum(topics: list[tuple[str, list[int]]]) -> dict[str, Any]:
    return {"topics": [{"topic_name": name, "partitions": [{"partition_index": p} for p in partitions]}
                       for name, partitions in topics]}


def _resources(*types: int) -> dict[str, Any]:
    return {"resource_types": list(types)}


def quorum_scripts() -> list[Script]:
    describe = [step(f"v{version}", 55, version, _quorum([(METADATA_TOPIC, [0])]), **ONE_NODE_QUORUM)
                for version in versions(55)]
    describe += [
        step("unknown partition", 55, 2, _quorum([(METADATA_TOPIC, [1])]), **ONE_NODE_QUORUM),
        step("another topic", 55, 2, _quorum([("conf-dq-{run}", [0])]), **ONE_NODE_QUORUM),
        step("two partitions", 55, 2, _quorum([(METADATA_TOPIC, [0, 0])]), **ONE_NODE_QUORUM),
        step("two topics", 55, 2, _quorum([(METADATA_TOPIC, [0]), ("conf-dq-{run}", [0])]), **ONE_NODE_QUORUM),
        step("no topics", 55, 2, _quorum([]), **ONE_NODE_QUORUM),
        step("unknown partition v0", 55, 0, _quorum([(METADATA_TOPIC, [3])]), **ONE_NODE_QUORUM),
    ]
    listing = [*create_topic(TOPIC), *create_topic(OTHER)]
    for version in versions(74):
        listing.append(step(f"v{version}", 74, version, _resources(), only_run=("config_resources",),
                            key_by={"config_resources": "resource_name"}))
    listing += [
        step("topics", 74, 1, _resources(TOPIC_RESOURCE), only_run=("config_resources",),
             key_by={"config_resources": "resource_name"}),
        step("brokers", 74, 1, _resources(BROKER_RESOURCE)),
        step("broker loggers", 74, 1, _resources(BROKER_LOGGER_RESOURCE)),
        step("brokers and loggers", 74, 1, _resources(BROKER_RESOURCE, BROKER_LOGGER_RESOURCE)),
        step("loggers and brokers", 74, 1, _resources(BROKER_LOGGER_RESOURCE, BROKER_RESOURCE)),
        step("client metrics", 74, 1, _resources(CLIENT_METRICS_RESOURCE)),
        step("groups", 74, 1, _resources(GROUP_RESOURCE)),
        step("unknown type", 74, 1, _resources(BROKER_RESOURCE, 3)),
        step("type 0", 74, 1, _resources(0)),
        step("a type twice", 74, 1, _resources(BROKER_RESOURCE, BROKER_RESOURCE)),
    ]
    return [Script("describe_quorum.versions", describe), Script("list_config_resources.versions", listing)]


def _at(node: int) -> list[Step]:
    other = 1 if node != 1 else 2
    return [
        step(f"broker {node} at node {node}", 32, 4, _describe([(BROKER_RESOURCE, str(node), NODE_CONFIGS)],
                                                               synonyms=True),
             key_by={"configs": "name"}, node=str(node)),
        step(f"broker {other} at node {node}", 32, 4, _describe([(BROKER_RESOURCE, str(other), NODE_CONFIGS)]),
             node=str(node)),
        step(f"broker logger {node} at node {node}", 32, 4,
             _describe([(BROKER_LOGGER_RESOURCE, str(node), ["root"])]), node=str(node)),
        step(f"broker logger {other} at node {node}", 32, 4,
             _describe([(BROKER_LOGGER_RESOURCE, str(other), ["root"])]), node=str(node)),
    ]


def _brokers() -> Step:
    """The nodes' addresses, which the steps sent to a node (`node=`) connect to."""
    return step("brokers", 3, 12, {"topics": [], "allow_auto_topic_creation": False}, capture={"brokers": "brokers"},
                key_by={"brokers": "node_id"}, varying={"controller_id": "any:node_id"},
                why="the active controller of a three-node KRaft quorum is whichever won the election")


def cluster_scripts() -> list[Script]:
    steps = [
        _brokers(),
        *_at(1), *_at(2), *_at(3),
        step("list brokers", 74, 1, _resources(BROKER_RESOURCE), key_by={"config_resources": "resource_name"}),
        step("list broker loggers at node 2", 74, 1, _resources(BROKER_LOGGER_RESOURCE),
             key_by={"config_resources": "resource_name"}, node="2"),
        step("describe quorum at node 3", 55, 2, _quorum([(METADATA_TOPIC, [0])]), node="3",
             key_by={"current_voters": "replica_id", "observers": "replica_id", "nodes": "node_id"},
             varying={**QUORUM["varying"], "leader_id": "any:node_id", "leader_epoch": "any:leader_epoch"},
             why=f"{QUORUM['why']}; which node leads the quorum, and after how many elections, is the election's"),
    ]
    return [Script("cluster.broker_configs", steps, group="cluster"),
            Script("cluster.broker_alter", _alter_steps(), group="cluster")]


SET, DELETE = 0, 1
ALTERED = "message.max.bytes"


def _incremental(node: str, op: int, value: str | None) -> dict[str, Any]:
    return {"resources": [{"resource_type": BROKER_RESOURCE, "resource_name": node,
                           "configs": [{"name": ALTERED, "config_operation": op, "value": value}]}],
            "validate_only": False}


def _applied_at(node: str, name: str) -> list[Step]:
    """A topic created after a change, waited for at `node`: once that node serves it, it has applied the change
    (the metadata log is one ordered log)."""
    topic = f"conf-alter-barrier-{name}-{{run}}"
    return [
        step(f"create {topic}", 19, 4, {"topics": [{"name": topic, "num_partitions": 1, "replication_factor": 3,
                                                    "configs": []}], "timeout_ms": 30000, "validate_only": False}),
        step(f"{topic} known at node {node}", 32, 4, _describe([(TOPIC_RESOURCE, topic, ["retention.ms"])]),
             retry_on=LEADER_SETTLING, why=SETTLING_WHY, node=node),
    ]


def _described(node: str) -> Step:
    return step(f"broker {node}'s {ALTERED} at node {node}", 32, 4,
                _describe([(BROKER_RESOURCE, node, [ALTERED])], synonyms=True), key_by={"configs": "name"},
                node=node)


def _alter_steps() -> list[Step]:
    """IncrementalAlterConfigs and AlterConfigs of one broker at that broker (its own value, under which the
    cluster default lies) and at another (refused, naming the id the node expected)."""
    return [
        _brokers(),
        step("set on broker 2 at node 2", 44, 1, _incremental("2", SET, "2000000"), node="2"),
        step("set on broker 3 at node 2", 44, 1, _incremental("3", SET, "2000000"), node="2"),
        step("legacy set on broker 3 at node 1", 33, 2, {"resources": [
            {"resource_type": BROKER_RESOURCE, "resource_name": "3",
             "configs": [{"name": ALTERED, "value": "2000000"}]}], "validate_only": False}, node="1"),
        *_applied_at("2", "set"),
        _described("2"), _described("1"),
        step("delete on broker 2 at node 2", 44, 1, _incremental("2", DELETE, None), node="2"),
        *_applied_at("2", "deleted"),
        _described("2"),
    ]


def scripts() -> list[Script]:
    return [*quorum_scripts(), *cluster_scripts()]
