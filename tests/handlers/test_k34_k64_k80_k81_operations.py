"""The operator's APIs: AlterReplicaLogDirs (kemu's one log dir: every replica is in it already, each refusal in
Kafka's order), UnregisterBroker (a stopped broker no longer listed, a running one out of its partitions until it
starts again), AddRaftVoter and RemoveRaftVoter (the checks of a static single-voter quorum's leader, then
UNSUPPORTED_VERSION), and the ALTER on the cluster they all need."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.config import BrokerConfig
from kemu.testing.harness import InProcessBroker
from kemu.wire.errors import ErrorCode
from tests.handlers.config_wire import create_topic
from tests.handlers.harness import Broker, Connection, MakeBroker, broker_config

ALTER_LOG_DIRS, UNREGISTER, ADD_VOTER, REMOVE_VOTER = 34, 64, 80, 81
METADATA, DESCRIBE_CLUSTER, CREATE_TOPICS = 3, 60, 19
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
DIRECTORY = uuid.UUID(int=1)
ZERO = uuid.UUID(int=0)
CONTROLLER = [{"name": "CONTROLLER", "host": "localhost", "port": 19093}]
ADD_UNSUPPORTED = "Cluster doesn't support adding voter because the kraft.version feature is 0"
REMOVE_UNSUPPORTED = "Cluster doesn't support removing voter because the kraft.version feature is 0"


def alter(*dirs: tuple[str, list[tuple[str, list[int]]]]) -> dict[str, Any]:
    return {"dirs": [{"path": path, "topics": [{"name": name, "partitions": partitions} for name, partitions in topics]}
                     for path, topics in dirs]}


def outcomes(body: dict[str, Any]) -> list[tuple[str, list[tuple[int, int]]]]:
    return [(t["topic_name"], [(p["partition_index"], p["error_code"]) for p in t["partitions"]])
            for t in body["results"]]


def log_dir(running: Broker | InProcessBroker) -> str:
    return str(running.broker.data_dir.absolute())


@pytest.mark.parametrize("version", [1, 2])
def test_a_replica_moved_to_the_dir_it_is_in_is_answered_none(conn: Connection, broker: Broker, version: int) -> None:
    create_topic(conn, "t", 2)
    body = conn.request(ALTER_LOG_DIRS, version, alter((log_dir(broker), [("t", [0, 1])])))
    assert outcomes(body) == [("t", [(0, 0), (1, 0)])]
    assert body["throttle_time_ms"] == 0
    for path in ("/nonexistent/dir", "data", log_dir(broker) + "/"):  # only the exact absolute path is known
        assert outcomes(conn.request(ALTER_LOG_DIRS, version, alter((path, [("t", [0])])))) == [
            ("t", [(0, ErrorCode.LOG_DIR_NOT_FOUND)])]


def test_each_partition_is_refused_in_kafkas_order(conn: Connection, broker: Broker) -> None:
    create_topic(conn, "t", 2)
    here, nowhere = log_dir(broker), "/nonexistent/dir"
    fits, too_long = "n" * 213, "n" * 214  # "<topic>-<partition>.<32 hex>-future" within 255 characters or not
    body = conn.request(ALTER_LOG_DIRS, 2, alter(
        (here, [("t", [0, 2, -1]), ("missing", [0]), (fits, [0, 10]), (too_long, [0])]),
        (nowhere, [("t", [1]), (too_long, [1])])))
    assert outcomes(body) == [
        ("t", [(0, 0), (2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (-1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
               (1, ErrorCode.LOG_DIR_NOT_FOUND)]),
        ("missing", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
        (fits, [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (10, ErrorCode.INVALID_TOPIC_EXCEPTION)]),
        (too_long, [(0, ErrorCode.INVALID_TOPIC_EXCEPTION), (1, ErrorCode.INVALID_TOPIC_EXCEPTION)])]
    # A character outside the BMP is two of Java's: 107 of them and "-0" fill the 255 characters.
    assert outcomes(conn.request(ALTER_LOG_DIRS, 2, alter((here, [("\U0001f600" * 107, [0])]))))[0][1] == [
        (0, ErrorCode.INVALID_TOPIC_EXCEPTION)]


def test_a_partition_named_twice_is_answered_once_for_the_last_dir(conn: Connection, broker: Broker) -> None:
    create_topic(conn, "t")
    here, nowhere = log_dir(broker), "/nonexistent/dir"
    assert outcomes(conn.request(ALTER_LOG_DIRS, 2, alter((here, [("t", [0, 0])])))) == [("t", [(0, 0)])]
    assert outcomes(conn.request(ALTER_LOG_DIRS, 2, alter((here, [("t", [0])]), (nowhere, [("t", [0])])))) == [
        ("t", [(0, ErrorCode.LOG_DIR_NOT_FOUND)])]
    assert outcomes(conn.request(ALTER_LOG_DIRS, 2, alter((nowhere, [("t", [0])]), (here, [("t", [0])])))) == [
        ("t", [(0, 0)])]
    assert conn.request(ALTER_LOG_DIRS, 2, alter((nowhere, []), (here, [("t", [])])))["results"] == []


def test_a_replica_whose_files_failed_is_a_storage_error(make_broker: MakeBroker) -> None:
    with make_broker() as running, running.connect() as conn:
        create_topic(conn, "t")
        partition = running.call(running.broker.partition, "t", 0)
        assert partition is not None
        # What a failed append leaves: the partition offline until the broker restarts.
        running.call(setattr, partition, "storage_failure", "disk full")
        body = conn.request(ALTER_LOG_DIRS, 2, alter((log_dir(running), [("t", [0])])))
    assert outcomes(body) == [("t", [(0, ErrorCode.KAFKA_STORAGE_ERROR)])]


@pytest.fixture
def cluster() -> Iterator[InProcessBroker]:
    with InProcessBroker(BrokerConfig(port=0, brokers=3)) as running:
        yield running


def test_at_a_broker_without_a_replica_it_is_replica_not_available(cluster: InProcessBroker) -> None:
    cluster.call(lambda: create_topics(cluster.broker, [NewTopic("t", 1, 2)]))  # replicas 1 and 2
    results = {}
    for node in (1, 2, 3):
        with cluster.connect(node=node) as conn:
            results[node] = outcomes(conn.request(ALTER_LOG_DIRS, 2, alter((log_dir(cluster), [("t", [0])]))))
    assert results == {1: [("t", [(0, 0)])], 2: [("t", [(0, 0)])],  # a follower's replica is there too
                       3: [("t", [(0, ErrorCode.REPLICA_NOT_AVAILABLE)])]}


def test_unregistering_an_unknown_broker_is_refused(conn: Connection) -> None:
    for broker_id in (99, -1, 0):
        assert conn.request(UNREGISTER, 0, {"broker_id": broker_id}) == {
            "throttle_time_ms": 0, "error_code": ErrorCode.BROKER_ID_NOT_REGISTERED,
            "error_message": f"Broker ID {broker_id} is not currently registered"}


def described(conn: Connection) -> list[tuple[int, bool]]:
    body = conn.request(DESCRIBE_CLUSTER, 2, {"include_fenced_brokers": True})
    return [(b["broker_id"], b["is_fenced"]) for b in body["brokers"]]


def test_an_unregistered_stopped_broker_is_no_longer_listed_until_it_starts(cluster: InProcessBroker) -> None:
    cluster.call(lambda: cluster.broker.stop_node(3))
    with cluster.connect(node=1) as conn:
        assert described(conn) == [(1, False), (2, False), (3, True)]
        assert conn.request(UNREGISTER, 0, {"broker_id": 3}) == {"throttle_time_ms": 0, "error_code": 0,
                                                                 "error_message": None}
        assert described(conn) == [(1, False), (2, False)]
        assert conn.request(UNREGISTER, 0, {"broker_id": 3})["error_code"] == ErrorCode.BROKER_ID_NOT_REGISTERED
    cluster.call(lambda: cluster.broker.start_node(3))  # a broker that starts registers again
    with cluster.connect(node=1) as conn:
        assert described(conn) == [(1, False), (2, False), (3, False)]


def metadata(conn: Connection, topic: str) -> tuple[list[int], dict[str, Any]]:
    body = conn.request(METADATA, 12, {"topics": [{"name": topic, "topic_id": ZERO}],
                                      "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
    [partition] = body["topics"][0]["partitions"]
    return [b["node_id"] for b in body["brokers"]], partition


def test_an_unregistered_running_broker_leaves_its_partitions(cluster: InProcessBroker) -> None:
    cluster.call(lambda: create_topics(cluster.broker, [NewTopic("shared", 1, 2), NewTopic("alone", 1, 1)]))
    with cluster.connect(node=2) as conn:
        assert conn.request(UNREGISTER, 0, {"broker_id": 1})["error_code"] == 0
        brokers, shared = metadata(conn, "shared")
        _, alone = metadata(conn, "alone")
        # Kafka's controller fences it out: the leadership to the other in-sync replica, the ISR without it
        # unless it was the last member, which keeps a partition without a leader.
        assert brokers == [2, 3]
        assert (shared["leader_id"], shared["isr_nodes"], shared["offline_replicas"]) == (2, [2], [1])
        assert (alone["leader_id"], alone["isr_nodes"], alone["error_code"]) == (
            -1, [1], ErrorCode.LEADER_NOT_AVAILABLE)
        assert described(conn) == [(2, False), (3, False)]
        assert cluster.call(lambda: cluster.broker.controller_id) == 2
        created = conn.request(CREATE_TOPICS, 7, {"topics": [{"name": "three", "num_partitions": 1,
                                                              "replication_factor": 3, "assignments": [],
                                                              "configs": []}], "timeout_ms": 5000,
                                                  "validate_only": True})
        assert created["topics"][0]["error_code"] == ErrorCode.INVALID_REPLICATION_FACTOR  # two brokers to place on
    with cluster.connect(node=1) as own:  # it still serves its listener, no longer a broker of the cluster
        assert metadata(own, "shared")[0] == [2, 3]
    cluster.call(lambda: cluster.broker.stop_node(1))
    cluster.call(lambda: cluster.broker.start_node(1))
    with cluster.connect(node=2) as conn:
        brokers, shared = metadata(conn, "shared")
        _, alone = metadata(conn, "alone")
    assert brokers == [1, 2, 3]
    assert (shared["leader_id"], shared["isr_nodes"]) == (2, [1, 2])
    assert alone["leader_id"] == 1


def add(version: int = 1, **fields: Any) -> dict[str, Any]:
    return {"cluster_id": None, "timeout_ms": 30000, "voter_id": 2, "voter_directory_id": DIRECTORY,
            "listeners": CONTROLLER, "ack_when_committed": True, **fields}


def remove(**fields: Any) -> dict[str, Any]:
    return {"cluster_id": None, "voter_id": 1, "voter_directory_id": DIRECTORY, **fields}


def answer(body: dict[str, Any]) -> tuple[int, str | None]:
    assert body["throttle_time_ms"] == 0
    return body["error_code"], body["error_message"]


@pytest.mark.parametrize("version", [0, 1])
def test_adding_a_voter_to_the_static_quorum_is_unsupported(conn: Connection, broker: Broker, version: int) -> None:
    unsupported = (ErrorCode.UNSUPPORTED_VERSION, ADD_UNSUPPORTED)
    assert answer(conn.request(ADD_VOTER, version, add(version))) == unsupported
    assert answer(conn.request(ADD_VOTER, version, add(version, cluster_id=broker.broker.cluster_id))) == unsupported
    assert answer(conn.request(ADD_VOTER, version, add(version, voter_id=1))) == unsupported  # the one voter
    lower = [{"name": "controller", "host": "h", "port": 1}]  # listener names are normalised to upper case
    assert answer(conn.request(ADD_VOTER, version, add(version, listeners=lower))) == unsupported
    if version >= 1:
        assert answer(conn.request(ADD_VOTER, 1, add(1, ack_when_committed=False))) == unsupported


def test_a_voter_change_is_checked_before_it_is_refused(conn: Connection, broker: Broker) -> None:
    cluster_id = broker.broker.cluster_id
    for request, key in ((add(), ADD_VOTER), (remove(), REMOVE_VOTER)):
        for given in ("other", ""):
            mismatch = f'The given id "{given}" doesn\'t match the cluster id "{cluster_id}"'
            assert answer(conn.request(key, 0, {**request, "cluster_id": given, "voter_id": -1})) == (
                ErrorCode.INCONSISTENT_CLUSTER_ID, mismatch)
        change = "Add" if key == ADD_VOTER else "Remove"
        for invalid in ({"voter_directory_id": ZERO}, {"voter_id": -1}):
            assert answer(conn.request(key, 0, {**request, **invalid})) == (
                ErrorCode.INVALID_REQUEST, f"{change} voter request didn't include a valid voter")


def test_a_voter_added_without_the_controller_listener_names_its_endpoints(conn: Connection) -> None:
    def refused(listeners: list[dict[str, Any]]) -> tuple[int, str | None]:
        return answer(conn.request(ADD_VOTER, 1, add(listeners=listeners)))

    def message(endpoints: str) -> tuple[int, str]:
        return (ErrorCode.INVALID_REQUEST, f"Add voter request didn't include the endpoint (Endpoints(endpoints="
                                           f"{{{endpoints}}})) for the default listener ListenerName(CONTROLLER)")

    assert refused([]) == message("")
    plaintext = {"name": "PLAINTEXT", "host": "localhost", "port": 19092}
    ssl = {"name": "ssl", "host": "broker.example", "port": 19094}
    # Java's HashMap order, as Kafka 4.3 printed the same two (recorded in the corpus): SSL first either way.
    both = message("ListenerName(SSL)=broker.example/<unresolved>:19094, "
                   "ListenerName(PLAINTEXT)=localhost/<unresolved>:19092")
    assert refused([plaintext, ssl]) == refused([ssl, plaintext]) == both
    last = message("ListenerName(PLAINTEXT)=localhost/<unresolved>:1")  # a name given twice: the last wins
    assert refused([plaintext, {**plaintext, "port": 1}]) == last


def test_removing_a_voter_from_the_static_quorum_is_unsupported(conn: Connection, broker: Broker) -> None:
    unsupported = (ErrorCode.UNSUPPORTED_VERSION, REMOVE_UNSUPPORTED)
    assert answer(conn.request(REMOVE_VOTER, 0, remove())) == unsupported  # the one voter, by another directory
    assert answer(conn.request(REMOVE_VOTER, 0, remove(voter_id=7))) == unsupported
    assert answer(conn.request(REMOVE_VOTER, 0, remove(cluster_id=broker.broker.cluster_id))) == unsupported


def test_each_needs_alter_on_the_cluster(make_broker: MakeBroker) -> None:
    config = broker_config(properties={"authorizer.class.name": STANDARD, "allow.everyone.if.no.acl.found": "false"})
    with make_broker(config) as running, running.connect() as conn:
        moved = conn.request(ALTER_LOG_DIRS, 2, alter((log_dir(running), [("t", [0, 0])]), ("/x", [("u", [1])])))
        unregistered = conn.request(UNREGISTER, 0, {"broker_id": 1})
        added = conn.request(ADD_VOTER, 1, add())
        removed = conn.request(REMOVE_VOTER, 0, remove())
        assert running.broker.cluster.node(1).registered
    denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    # getErrorResponse: every partition as the request lists it, duplicates kept.
    assert outcomes(moved) == [("t", [(0, denied), (0, denied)]), ("u", [(1, denied)])]
    assert answer(added) == answer(removed) == (denied, denied.message)
    # UnregisterBroker is authorized by the controller, whose refusal quotes the request (AuthHelper).
    code, message = answer(unregistered)
    assert code == denied and message.startswith("Request Request(") and message.endswith(" needs ALTER permission.")
