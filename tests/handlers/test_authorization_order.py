"""Where a denial comes in the order of Kafka's checks, and the shape of a denied answer, for the cases the
authorizer corpus (which has no topic, group or ACL of its own) cannot show: a Fetch's READ asked before the
topic is looked up while an unknown topic id is refused first, a follower's Fetch needing CLUSTER_ACTION
only, a share-coordinator lookup refused as a whole, and the per-entry answers of a denied ElectLeaders and
DescribeUserScramCredentials; the message of a denied cluster operation, which quotes the request."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.authorizer.acls import AclOperation, ResourceType
from kemu.wire.errors import ErrorCode
from tests.handlers.data_plane import fetch_body, fetch_partitions
from tests.handlers.harness import Broker, MakeBroker
from tests.handlers.test_authorization import config, deny, grant

FETCH, FIND_COORDINATOR, DESCRIBE_ACLS, ELECT_LEADERS, DESCRIBE_SCRAM = 1, 10, 29, 43, 50
SHARE = 2  # FindCoordinator's key type of a share coordinator
E, Op, Res = ErrorCode, AclOperation, ResourceType


@pytest.fixture
def authorizing(make_broker: MakeBroker) -> Iterator[Callable[[bool], Broker]]:
    """Starts brokers with the StandardAuthorizer and the topics "open" and "closed": allowing what no ACL
    names (the tests deny what they mean to), or nothing (the principal of the authorizer corpus)."""
    with ExitStack() as stack:
        def start(allow_everyone: bool) -> Broker:
            running = stack.enter_context(make_broker(config(allow_everyone)))
            running.call(lambda: create_topics(running.broker, [NewTopic("open", 1, 1), NewTopic("closed", 1, 1)]))
            return running

        yield start


def fetch_codes(broker: Broker, partitions: list[tuple[str, int]], version: int = 12,
                replica_id: int = -1) -> list[tuple[str, int]]:
    with broker.connect() as conn:
        body = fetch_body([(topic, index, 0) for topic, index in partitions], version=version)
        answer = conn.request(FETCH, version, body | {"replica_id": replica_id})
    return [(topic, data["error_code"]) for topic, data in fetch_partitions(answer, version)]


def test_a_consumer_denied_read_learns_nothing_of_whether_a_topic_exists(authorizing: Callable[[bool], Broker]) -> None:
    open_broker = authorizing(True)
    deny(open_broker, Res.TOPIC, "missing", Op.READ)
    assert sorted(fetch_codes(open_broker, [("missing", 0), ("also-missing", 0), ("open", 5)])) == [
        ("also-missing", E.UNKNOWN_TOPIC_OR_PARTITION), ("missing", E.TOPIC_AUTHORIZATION_FAILED),
        ("open", E.UNKNOWN_TOPIC_OR_PARTITION)]


def test_an_unknown_topic_id_is_refused_before_any_authorization(authorizing: Callable[[bool], Broker]) -> None:
    closed_broker = authorizing(False)
    unknown = uuid.uuid4()
    with closed_broker.connect() as conn:
        answer = conn.request(FETCH, 13, fetch_body([(unknown, 0, 0)], version=13))
    assert [(topic, data["error_code"]) for topic, data in fetch_partitions(answer, 13)] == [
        (unknown, E.UNKNOWN_TOPIC_ID)]


def test_a_follower_needs_cluster_action_and_nothing_on_the_topics(authorizing: Callable[[bool], Broker]) -> None:
    open_broker = authorizing(True)
    deny(open_broker, Res.TOPIC, "closed", Op.READ)
    # CLUSTER_ACTION allowed (no ACL on the cluster): READ on the topic is not asked, an unknown one is unknown.
    assert fetch_codes(open_broker, [("closed", 0), ("missing", 0)], replica_id=1) == [
        ("closed", E.NONE), ("missing", E.UNKNOWN_TOPIC_OR_PARTITION)]
    deny(open_broker, Res.CLUSTER, "kafka-cluster", Op.CLUSTER_ACTION)
    assert fetch_codes(open_broker, [("open", 0), ("missing", 0)], replica_id=1) == [
        ("open", E.TOPIC_AUTHORIZATION_FAILED), ("missing", E.TOPIC_AUTHORIZATION_FAILED)]


def test_a_share_coordinator_lookup_needs_cluster_action(authorizing: Callable[[bool], Broker]) -> None:
    closed_broker, open_broker = authorizing(False), authorizing(True)
    keys = ["g:AAAAAAAAAAAAAAAAAAAAAQ:0", "g:AAAAAAAAAAAAAAAAAAAAAQ:1"]
    with closed_broker.connect() as conn:
        refused = conn.request(FIND_COORDINATOR, 6, {"key_type": SHARE, "coordinator_keys": keys})
        # Below v6 a share key is invalid, which Kafka says before it authorizes.
        old = conn.request(FIND_COORDINATOR, 5, {"key_type": SHARE, "coordinator_keys": keys[:1]})
    assert [(c["key"], c["error_code"], c["error_message"]) for c in refused["coordinators"]] == [
        (key, E.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.") for key in keys]
    assert old["coordinators"][0]["error_code"] == E.INVALID_REQUEST
    with open_broker.connect() as conn:
        allowed = conn.request(FIND_COORDINATOR, 6, {"key_type": SHARE, "coordinator_keys": keys[:1]})
    # With CLUSTER_ACTION the key finds its __share_group_state partition's leader.
    assert (allowed["coordinators"][0]["error_code"], allowed["coordinators"][0]["node_id"]) == (E.NONE, 1)


def test_a_denied_election_answers_every_partition_asked(authorizing: Callable[[bool], Broker]) -> None:
    closed_broker = authorizing(False)
    asked = [{"topic": "open", "partitions": [0, 3]}, {"topic": "missing", "partitions": [1]}]
    with closed_broker.connect() as conn:
        denied = conn.request(ELECT_LEADERS, 2, {"election_type": 0, "timeout_ms": 1000, "topic_partitions": asked})
        everything = conn.request(ELECT_LEADERS, 2, {"election_type": 0, "timeout_ms": 1000,
                                                     "topic_partitions": None})
    assert denied["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
    assert [(r["topic"], [(p["partition_id"], p["error_code"]) for p in r["partition_result"]])
            for r in denied["replica_election_results"]] == [
        ("open", [(0, E.CLUSTER_AUTHORIZATION_FAILED), (3, E.CLUSTER_AUTHORIZATION_FAILED)]),
        ("missing", [(1, E.CLUSTER_AUTHORIZATION_FAILED)])]
    assert (everything["error_code"], everything["replica_election_results"]) == (E.CLUSTER_AUTHORIZATION_FAILED, [])


def test_a_denied_scram_description_answers_each_user_named_unnamed(authorizing: Callable[[bool], Broker]) -> None:
    closed_broker = authorizing(False)
    with closed_broker.connect() as conn:
        denied = conn.request(DESCRIBE_SCRAM, 0, {"users": [{"name": "alice"}, {"name": "bob"}]})
    assert denied["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
    assert [(r["user"], r["error_code"], r["credential_infos"]) for r in denied["results"]] == [
        ("", E.CLUSTER_AUTHORIZATION_FAILED, []), ("", E.CLUSTER_AUTHORIZATION_FAILED, [])]


def test_describe_on_the_cluster_lets_the_scram_description_through(authorizing: Callable[[bool], Broker]) -> None:
    closed_broker = authorizing(False)
    grant(closed_broker, Res.CLUSTER, "kafka-cluster", Op.DESCRIBE)
    with closed_broker.connect() as conn:
        answer = conn.request(DESCRIBE_SCRAM, 0, {"users": [{"name": "alice"}]})
    assert answer["error_code"] == E.NONE
    assert [(r["user"], r["error_code"]) for r in answer["results"]] == [("alice", E.RESOURCE_NOT_FOUND)]


QUOTED = re.compile(r"Request Request\(processor=0, connectionId=127\.0\.0\.1:(\d+)-127\.0\.0\.1:(\d+)-0-\d+, "
                    r"session=org\.apache\.kafka\.network\.Session@[0-9a-f]+, listenerName=ListenerName\(PLAINTEXT\), "
                    r"securityProtocol=PLAINTEXT, buffer=null, envelope=None\) needs (\w+) permission\.")


@pytest.mark.real_socket
def test_a_denied_cluster_operation_quotes_the_request(authorizing: Callable[[bool], Broker]) -> None:
    """AuthHelper.authorizeClusterOperation's message names the connection (the broker's port, then the
    client's) and the operation, and differs from one request to the next (Java's identity hash of the
    request's session)."""
    closed_broker = authorizing(False)
    describe = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
                "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}
    with closed_broker.connect() as conn:
        first, second = (conn.request(DESCRIBE_ACLS, 3, describe) for _ in range(2))
        elect = conn.request(ELECT_LEADERS, 2, {"election_type": 0, "timeout_ms": 1000, "topic_partitions": [
            {"topic": "open", "partitions": [0]}]})
    texts = [first["error_message"], second["error_message"],
             elect["replica_election_results"][0]["partition_result"][0]["error_message"]]
    matches = [QUOTED.fullmatch(text) for text in texts]
    assert all(matches), texts
    assert [match.group(3) for match in matches if match] == ["DESCRIBE", "DESCRIBE", "ALTER"]
    assert {match.group(1) for match in matches if match} == {str(closed_broker.address[1])}
    assert len(set(texts)) == 3
