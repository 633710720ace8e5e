"""The operator's APIs of a cluster: AlterReplicaLogDirs (moving a replica to another log directory of its
broker), UnregisterBroker, and AddRaftVoter and RemoveRaftVoter (changing the metadata quorum's voters), at every
version, with what Kafka refuses; in the `cluster` group, AlterReplicaLogDirs at a broker that is not a replica of
the partition and UnregisterBroker forwarded by a broker that is not the controller.

No step unregisters a live broker: Kafka accepts it, and the broker stays unregistered until it restarts (its
heartbeats are refused from then on), its partitions without a leader; every later step on that Kafka would
see it."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import LEADER_SETTLING, SETTLING_WHY, create_topic, step, versions
from compat_tests.conformance.scripts.quorum import _brokers
from compat_tests.conformance.steps import Script, Step

TOPIC = "conf-ops-{run}"
MISSING = "conf-ops-missing-{run}"
NOWHERE = "/nonexistent/conf-ops-log-dir"
DISK = {"varying": {"log_dir": "log_dir", "total_bytes": "any:disk_bytes", "usable_bytes": "any:disk_bytes"},
        "why": "the log dir's path and its disk's sizes are the machine's, not the broker's behaviour"}
BY_NAME = {"results": "topic_name", "partitions": "partition_index"}


# A three-node Kafka has a log directory per node; a three-broker kemu's brokers share its one data directory.
NODE_DISK = {"varying": {**DISK["varying"], "log_dir": "any:log_dir"},
             "why": f"{DISK['why']}; each node of the reference cluster has its own directory, the brokers of a "
                    "three-broker kemu share one"}


def _log_dir(name: str, node: str = "") -> Step:
    """DescribeLogDirs of no partition: the broker's log directory, captured as `{$<name>}`."""
    return step(f"log dir {name}", 35, 4, {"topics": []}, capture={name: "results/0/log_dir"}, node=node,
                **(NODE_DISK if node else DISK))


def _alter(*dirs: tuple[str, list[tuple[str, list[int]]]]) -> dict[str, Any]:
    return {"dirs": [{"path": path, "topics": [{"name": name, "partitions": partitions}
                                               for name, partitions in topics]}
                     for path, topics in dirs]}


def _named(length: int) -> str:
    """A topic name `length` characters long once `{run}` (10 characters) is replaced."""
    return "conf-" + "x" * (length - len("conf--") - 10) + "-{run}"


def log_dirs_scripts() -> list[Script]:
    here = "{$log_dir}"
    steps = [*create_topic(TOPIC, partitions=2), _log_dir("log_dir")]
    steps += [step(f"to its own dir v{version}", 34, version, _alter((here, [(TOPIC, [0, 1])])), key_by=BY_NAME)
              for version in versions(34)]
    steps += [
        step("to an unknown dir", 34, 2, _alter((NOWHERE, [(TOPIC, [0, 1])])), key_by=BY_NAME),
        step("to a relative dir", 34, 2, _alter(("data", [(TOPIC, [0])]))),
        step("unknown topic", 34, 2, _alter((here, [(MISSING, [0])]))),
        step("unknown topic to an unknown dir", 34, 2, _alter((NOWHERE, [(MISSING, [0])]))),
        step("unknown partition", 34, 2, _alter((here, [(TOPIC, [2])]))),
        step("negative partition", 34, 2, _alter((here, [(TOPIC, [-1])]))),
        step("a partition twice", 34, 2, _alter((here, [(TOPIC, [0, 0])]))),
        # Kafka keeps one directory per partition (a map): the last one named wins.
        step("a partition to two dirs, the unknown last", 34, 2, _alter((here, [(TOPIC, [0])]),
                                                                         (NOWHERE, [(TOPIC, [0])]))),
        step("a partition to two dirs, its own last", 34, 2, _alter((NOWHERE, [(TOPIC, [0])]),
                                                                     (here, [(TOPIC, [0])]))),
        step("several", 34, 2, _alter((here, [(TOPIC, [0]), (MISSING, [0, 1])]), (NOWHERE, [(TOPIC, [1])])),
             key_by=BY_NAME),
        step("a dir without topics", 34, 2, _alter((NOWHERE, []))),
        step("a topic without partitions", 34, 2, _alter((here, [(TOPIC, [])]))),
        step("no dirs", 34, 2, _alter()),
        # The future replica's directory, "<topic>-<partition>.<32 hex digits>-future", must fit in 255 characters:
        # a name of 213 characters does with a one-digit partition, not with a two-digit one nor at 214; the name is
        # checked before the directory.
        step("name that fits", 34, 2, _alter((here, [(_named(213), [0])]))),
        step("name too long", 34, 2, _alter((here, [(_named(214), [0])]))),
        step("name too long for its partition", 34, 2, _alter((here, [(_named(213), [10])]))),
        step("name too long to an unknown dir", 34, 2, _alter((NOWHERE, [(_named(214), [0])]))),
        step("v1 several", 34, 1, _alter((here, [(TOPIC, [1]), (MISSING, [3])])), key_by=BY_NAME),
    ]
    return [Script("alter_replica_log_dirs.cases", steps)]


def unregister_scripts() -> list[Script]:
    steps = [step(f"unknown broker v{version}", 64, version, {"broker_id": 99}) for version in versions(64)]
    steps += [
        step("negative broker id", 64, 0, {"broker_id": -1}),
        step("broker id 0", 64, 0, {"broker_id": 0}),
    ]
    return [Script("unregister_broker.cases", steps)]


DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAQ"  # a directory id that is not the zero UUID (no voter's: static voters have none)
NO_DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAA"  # the zero UUID: no directory id
CONTROLLER = [{"name": "CONTROLLER", "host": "localhost", "port": 19093}]
OTHER_CLUSTER = {"varying": {"error_message": "any:cluster_id_message"},
                 "why": "the message quotes the cluster's own id, fresh on every cluster"}


def _add(version: int, voter: int = 2, directory: str = DIRECTORY, listeners: list[dict[str, Any]] | None = None,
         cluster_id: str | None = None, ack: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"cluster_id": cluster_id, "timeout_ms": 30000, "voter_id": voter,
                            "voter_directory_id": directory,
                            "listeners": CONTROLLER if listeners is None else listeners}
    if version >= 1:
        body["ack_when_committed"] = ack
    return body


def _remove(voter: int = 1, directory: str = DIRECTORY, cluster_id: str | None = None) -> dict[str, Any]:
    return {"cluster_id": cluster_id, "voter_id": voter, "voter_directory_id": directory}


def voter_scripts() -> list[Script]:
    steps = [step("cluster", 60, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 1},
                  capture={"cluster_id": "cluster_id"}, key_by={"brokers": "broker_id"})]
    steps += [step(f"add v{version}", 80, version, _add(version)) for version in versions(80)]
    steps += [
        step("add with the cluster id", 80, 1, _add(1, cluster_id="{$cluster_id}")),
        step("add not waiting for the commit", 80, 1, _add(1, ack=False)),
        step("add the voter there is", 80, 1, _add(1, voter=1)),
        step("add another cluster's", 80, 1, _add(1, cluster_id="conf-other-cluster"), **OTHER_CLUSTER),
        step("add with an empty cluster id", 80, 1, _add(1, cluster_id=""), **OTHER_CLUSTER),
        step("add without a directory", 80, 1, _add(1, directory=NO_DIRECTORY)),
        step("add a negative voter id", 80, 1, _add(1, voter=-1)),
        step("add without listeners", 80, 1, _add(1, listeners=[])),
        step("add without the controller listener", 80, 1,
             _add(1, listeners=[{"name": "PLAINTEXT", "host": "localhost", "port": 19092}])),
        step("add with two other listeners", 80, 1,
             _add(1, listeners=[{"name": "PLAINTEXT", "host": "localhost", "port": 19092},
                                {"name": "SSL", "host": "broker.example", "port": 19094}])),
        step("add with a lower-case controller listener", 80, 1,
             _add(1, listeners=[{"name": "controller", "host": "localhost", "port": 19093}])),
        step("add another cluster's without a directory", 80, 1,
             _add(1, directory=NO_DIRECTORY, cluster_id="conf-other-cluster"), **OTHER_CLUSTER),
    ]
    steps += [step(f"remove v{version}", 81, version, _remove()) for version in versions(81)]
    steps += [
        step("remove with the cluster id", 81, 0, _remove(cluster_id="{$cluster_id}")),
        step("remove an unknown voter", 81, 0, _remove(voter=7)),
        step("remove another cluster's", 81, 0, _remove(cluster_id="conf-other-cluster"), **OTHER_CLUSTER),
        step("remove without a directory", 81, 0, _remove(directory=NO_DIRECTORY)),
        step("remove a negative voter id", 81, 0, _remove(voter=-1)),
    ]
    return [Script("raft_voters.cases", steps)]


def cluster_scripts() -> list[Script]:
    """One partition on node 2 alone (placed by hand: Kafka's placement starts at random), moved at each node to
    that node's own log dir."""
    topic = "conf-ops-placed-{run}"
    steps = [
        _brokers(),
        step(f"create {topic}", 19, 7, {"topics": [{"name": topic, "num_partitions": -1, "replication_factor": -1,
                                                    "assignments": [{"partition_index": 0, "broker_ids": [2]}],
                                                    "configs": []}], "timeout_ms": 30000, "validate_only": False}),
        step(f"{topic} served at node 2", 2, 9, {"replica_id": -1, "isolation_level": 0, "timeout_ms": 30000,
                                                 "topics": [{"name": topic, "partitions": [
                                                     {"partition_index": 0, "current_leader_epoch": -1,
                                                      "timestamp": -1}]}]},
             retry_on=LEADER_SETTLING, why=SETTLING_WHY, node="2"),
    ]
    for node in ("1", "2", "3"):
        steps += [
            _log_dir(f"log_dir_{node}", node=node),
            step(f"{topic} to node {node}'s own dir", 34, 2, _alter((f"{{$log_dir_{node}}}", [(topic, [0])])),
                 node=node),
        ]
    steps.append(step("unregister an unknown broker at node 3", 64, 0, {"broker_id": 7}, node="3"))
    return [Script("cluster.operations", steps, group="cluster")]


def scripts() -> list[Script]:
    return [*log_dirs_scripts(), *unregister_scripts(), *voter_scripts(), *cluster_scripts()]
