"""The Java Admin 4.3's operator calls (src/Operations.java) against `kemu serve` and the reference Kafka, the
outcomes compared: alterReplicaLogDirs (AlterReplicaLogDirs v2) of a replica to its broker's own log dir and the
refusals, unregisterBroker (UnregisterBroker v0) of an id no broker has, and addRaftVoter / removeRaftVoter
(AddRaftVoter v1, RemoveRaftVoter v0) on a static quorum. No call unregisters a live broker or changes the
voters: both brokers serve the rest of the session."""

from __future__ import annotations

from typing import Any

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.conftest import JavaKemu
from compat_tests.java.java_client import JavaClient
from compat_tests.test_transactions_support import create_topics, unique

PROGRAM = "Operations"
ALTER_LOG_DIRS, UNREGISTER, ADD_VOTER, REMOVE_VOTER = 34, 64, 80, 81
ERRORS = "org.apache.kafka.common.errors."
UNSUPPORTED = ERRORS + "UnsupportedVersionException"
INVALID = ERRORS + "InvalidRequestException"


def versions(kemu: JavaKemu, api_key: int) -> set[int]:
    return {entry["version"] for entry in kemu.exchanges(api_key)}


def test_alter_replica_log_dirs(java_pair: Pair, java_kemu: JavaKemu, java: JavaClient) -> None:
    topic = unique("java-ops-dirs")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=1)
        return java.run(PROGRAM, target.bootstrap, "log-dirs", topic)

    kafka, result = java_pair.both(scenario)
    check(f"java.{java.line}.alter_replica_log_dirs", kafka, result)
    assert result == {"dirs": 1, "to its own dir": None, "to an unknown dir": ERRORS + "LogDirNotFoundException",
                      "unknown partition": ERRORS + "UnknownTopicOrPartitionException",
                      "unknown topic": ERRORS + "UnknownTopicOrPartitionException"}
    assert versions(java_kemu, ALTER_LOG_DIRS) == {2}


def test_unregister_an_unknown_broker(java_pair: Pair, java_kemu: JavaKemu, java: JavaClient) -> None:
    kafka, result = java_pair.both(lambda target: java.run(PROGRAM, target.bootstrap, "unregister", "99"))
    check(f"java.{java.line}.unregister_broker", kafka, result)
    assert result == {"class": ERRORS + "BrokerIdNotRegisteredException",
                      "message": "Broker ID 99 is not currently registered"}
    assert versions(java_kemu, UNREGISTER) == {0}


def test_raft_voter_changes_on_a_static_quorum(java_pair: Pair, java_kemu: JavaKemu, java: JavaClient) -> None:
    kafka, result = java_pair.both(lambda target: java.run(PROGRAM, target.bootstrap, "raft-voters"))
    check(f"java.{java.line}.raft_voters", kafka, result)
    assert result == {
        "add": {"class": UNSUPPORTED,
                "message": "Cluster doesn't support adding voter because the kraft.version feature is 0"},
        "remove": {"class": UNSUPPORTED,
                   "message": "Cluster doesn't support removing voter because the kraft.version feature is 0"},
        "add to another cluster": ERRORS + "InconsistentClusterIdException",
        "remove from another cluster": ERRORS + "InconsistentClusterIdException",
        "add without a directory": {"class": INVALID, "message": "Add voter request didn't include a valid voter"},
        "remove without a directory": {"class": INVALID,
                                       "message": "Remove voter request didn't include a valid voter"},
        "add without the controller endpoint": {"class": INVALID, "message": (
            "Add voter request didn't include the endpoint (Endpoints(endpoints={ListenerName(PLAINTEXT)="
            "localhost/<unresolved>:19092})) for the default listener ListenerName(CONTROLLER)")},
    }
    assert versions(java_kemu, ADD_VOTER) == {1} and versions(java_kemu, REMOVE_VOTER) == {0}
