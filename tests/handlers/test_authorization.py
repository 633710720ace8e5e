"""The authorizer's checks in the handlers: each API's error code for a denied resource, topics hidden
from Metadata, auto-creation needing CREATE, the authorized-operations bitfields, the idempotent and
transactional producer rules. ACLs are made on the core; the connection's principal is set as a SASL login
would set it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.authorizer.acls import AclBinding, AclOperation, PatternType, PermissionType, ResourceType, all_operations
from kemu.wire.errors import ErrorCode
from tests.handlers.data_plane import batch, fetch_body, fetch_partitions, produce, produce_body
from tests.handlers.group_wire import (
    LEAVE,
    SYNC,
    commit_body,
    find_coordinator,
    group_config,
    join_body,
    partition_codes,
    stable_single_member_group,
    sync_body,
)
from tests.handlers.harness import Broker, Connection, MakeBroker

Op, Res = AclOperation, ResourceType
PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH = 0, 1, 2, 3, 8, 9
JOIN, HEARTBEAT, DESCRIBE_GROUPS, INIT, ADD_PARTITIONS, ADD_OFFSETS, END_TXN = 11, 12, 15, 22, 24, 25, 26
DESCRIBE_CLUSTER, DESCRIBE_TOPIC_PARTITIONS = 60, 75
E = ErrorCode
NO_ID = uuid.UUID(int=0)
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def config(allow_everyone: bool) -> Any:
    return group_config(properties={"authorizer.class.name": STANDARD,
                                     "allow.everyone.if.no.acl.found": str(allow_everyone).lower()})


@pytest.fixture
def open_broker(make_broker: MakeBroker) -> Iterator[Broker]:
    """Open to everyone where no ACL names a resource: the tests deny what they mean to."""
    with make_broker(config(True)) as running, running.connect() as conn:
        find_coordinator(conn, "any")  # the offsets topic, for the groups' coordinators
        running.call(lambda: create_topics(running.broker, [NewTopic("open", 1, 1), NewTopic("closed", 1, 1)]))
        yield running


@pytest.fixture
def closed_broker(make_broker: MakeBroker) -> Iterator[Broker]:
    with make_broker(config(False)) as running:
        running.call(lambda: create_topics(running.broker, [NewTopic("open", 1, 1)]))
        yield running


def grant(broker: Broker, resource: ResourceType, name: str, *ops: AclOperation,
          permission: PermissionType = PermissionType.ALLOW, principal: str = "User:ANONYMOUS",
          pattern: PatternType = PatternType.LITERAL) -> None:
    authorizer = broker.broker.authorizer
    assert authorizer is not None
    made = [AclBinding(resource, name, pattern, principal, "*", op, permission) for op in ops]
    assert broker.call(authorizer.create, made) == [None] * len(made)


def deny(broker: Broker, resource: ResourceType, name: str, *ops: AclOperation) -> None:
    """Everything on the resource but `ops`: an ACL on a resource closes it to whoever it does not allow,
    whatever allow.everyone.if.no.acl.found says."""
    grant(broker, resource, name, Op.ALL)
    grant(broker, resource, name, *ops, permission=PermissionType.DENY)


def metadata(conn: Connection, names: list[str] | None, **extra: Any) -> dict[str, dict[str, Any]]:
    topics = None if names is None else [{"topic_id": NO_ID, "name": n} for n in names]
    body = conn.request(METADATA, 12, {"topics": topics, "allow_auto_topic_creation": True, **extra})
    return {t["name"]: t for t in body["topics"]}


def test_produce_needs_write_on_the_topic(open_broker: Broker) -> None:
    deny(open_broker, Res.TOPIC, "closed", Op.WRITE)
    with open_broker.connect() as conn:
        assert produce(conn, "closed", batch(b"v"))["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        assert produce(conn, "open", batch(b"v"))["error_code"] == 0
        assert produce(conn, "not-there", batch(b"v"))["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION


def test_a_transactional_produce_needs_write_on_the_transactional_id(open_broker: Broker) -> None:
    deny(open_broker, Res.TRANSACTIONAL_ID, "tx", Op.WRITE)
    records = batch(b"v", producer_id=1, producer_epoch=0, base_sequence=0, transactional=True)
    with open_broker.connect() as conn:
        body = conn.request(PRODUCE, 11, produce_body({("open", 0): records}, transactional_id="tx"))
        assert body["responses"][0]["partition_responses"][0]["error_code"] == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_fetch_and_list_offsets_need_read_and_describe(open_broker: Broker) -> None:
    deny(open_broker, Res.TOPIC, "closed", Op.READ)
    with open_broker.connect() as conn:
        fetched = conn.request(FETCH, 12, fetch_body([("closed", 0, 0), ("open", 0, 0)]))
        codes = {topic: data["error_code"] for topic, data in fetch_partitions(fetched)}
        assert codes == {"closed": E.TOPIC_AUTHORIZATION_FAILED, "open": 0}
        deny(open_broker, Res.TOPIC, "closed", Op.DESCRIBE)
        body = conn.request(LIST_OFFSETS, 9, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": n, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}
            for n in ("closed", "open")]})
        assert [t["partitions"][0]["error_code"] for t in body["topics"]] == [E.TOPIC_AUTHORIZATION_FAILED, 0]


def test_metadata_hides_what_may_not_be_described(open_broker: Broker) -> None:
    deny(open_broker, Res.TOPIC, "closed", Op.DESCRIBE)
    with open_broker.connect() as conn:
        assert "closed" not in metadata(conn, None) and "open" in metadata(conn, None)
        named = metadata(conn, ["closed", "open"])
        assert (named["closed"]["error_code"], named["closed"]["partitions"]) == (E.TOPIC_AUTHORIZATION_FAILED, [])
        assert named["open"]["error_code"] == 0


def test_a_topic_of_neither_name_nor_id_is_kafkas_error_response_beside_a_prefixed_acl(open_broker: Broker) -> None:
    """Metadata v12 names a topic by neither name nor id: Kafka 4.3 answers the request's error response,
    UNKNOWN_SERVER_ERROR (recorded in the conformance corpus). kemu used to hand the authorizer the null name,
    which a prefixed ACL failed with a traceback (None.startswith); the answer is now Kafka's, on purpose."""
    grant(open_broker, Res.TOPIC, "logs-", Op.READ, pattern=PatternType.PREFIXED)
    with open_broker.connect() as conn:
        body = conn.request(METADATA, 12, {"topics": [{"topic_id": NO_ID, "name": None}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": True})
        [topic] = body["topics"]
        assert (topic["error_code"], body["brokers"]) == (E.UNKNOWN_SERVER_ERROR, [])


def test_auto_creation_needs_create_on_the_cluster_or_the_topic(closed_broker: Broker) -> None:
    grant(closed_broker, Res.TOPIC, "new-", Op.DESCRIBE, pattern=PatternType.PREFIXED)
    grant(closed_broker, Res.TOPIC, "new-allowed", Op.CREATE)
    with closed_broker.connect() as conn:
        answered = metadata(conn, ["new-denied", "new-allowed", "hidden"])
        assert answered["new-denied"]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        assert answered["hidden"]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        assert answered["new-allowed"]["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
        assert closed_broker.broker.topics.get("new-denied") is None
        assert closed_broker.broker.topics.get("new-allowed") is not None
        grant(closed_broker, Res.CLUSTER, "kafka-cluster", Op.CREATE)
        assert metadata(conn, ["new-by-cluster"])["new-by-cluster"]["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION


def test_authorized_operations_are_what_the_acls_allow(closed_broker: Broker) -> None:
    grant(closed_broker, Res.TOPIC, "open", Op.READ, Op.ALTER_CONFIGS)
    grant(closed_broker, Res.CLUSTER, "kafka-cluster", Op.IDEMPOTENT_WRITE)
    with closed_broker.connect() as conn:
        body = conn.request(METADATA, 10, {"topics": [{"topic_id": NO_ID, "name": "open"}],
                                           "allow_auto_topic_creation": False,
                                           "include_cluster_authorized_operations": True,
                                           "include_topic_authorized_operations": True})
        # READ 3, DESCRIBE 8 (implied by READ), DESCRIBE_CONFIGS 10 (implied by ALTER_CONFIGS), ALTER_CONFIGS 11
        assert body["topics"][0]["topic_authorized_operations"] == (1 << 3) | (1 << 8) | (1 << 10) | (1 << 11)
        # the cluster is not describable: 0, whatever else is allowed on it
        assert body["cluster_authorized_operations"] == 0
        cluster = conn.request(DESCRIBE_CLUSTER, 0, {"include_cluster_authorized_operations": True})
        assert cluster["cluster_authorized_operations"] == 0
        grant(closed_broker, Res.CLUSTER, "kafka-cluster", Op.DESCRIBE)
        cluster = conn.request(DESCRIBE_CLUSTER, 0, {"include_cluster_authorized_operations": True})
        assert cluster["cluster_authorized_operations"] == (1 << 8) | (1 << 12)
        not_asked = conn.request(DESCRIBE_CLUSTER, 0, {"include_cluster_authorized_operations": False})
        assert not_asked["cluster_authorized_operations"] == -2147483648
        conn.client.principal = "User:alice"
        body = conn.request(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": True})
        assert body["topics"] == []


def test_groups_need_read_and_describe(open_broker: Broker) -> None:
    deny(open_broker, Res.GROUP, "denied", Op.READ)
    deny(open_broker, Res.GROUP, "hidden", Op.DESCRIBE)
    with open_broker.connect() as conn:
        assert conn.request(JOIN, 9, join_body("denied"))["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        heartbeat = {"group_id": "denied", "generation_id": 1, "member_id": "m", "group_instance_id": None}
        assert conn.request(HEARTBEAT, 4, heartbeat)["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        assert find_coordinator(conn, "hidden")["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        assert find_coordinator(conn, "denied")["error_code"] == 0  # DENY READ does not deny DESCRIBE
        committed = conn.request(OFFSET_COMMIT, 9, commit_body("denied", {("open", 0): 1}))
        assert partition_codes(committed["topics"]) == {("open", 0): E.GROUP_AUTHORIZATION_FAILED}
        [described] = conn.request(DESCRIBE_GROUPS, 5, {"groups": ["hidden"], "include_authorized_operations": True})[
            "groups"]
        assert described["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        fetched = conn.request(OFFSET_FETCH, 9, {"groups": [{"group_id": "hidden", "member_id": None,
                                                              "member_epoch": -1, "topics": None}],
                                                 "require_stable": False})
        assert fetched["groups"][0]["error_code"] == E.GROUP_AUTHORIZATION_FAILED


def test_offsets_need_read_on_the_topic_to_commit_and_describe_to_fetch(open_broker: Broker) -> None:
    deny(open_broker, Res.TOPIC, "closed", Op.READ)
    with open_broker.connect() as conn:
        committed = conn.request(OFFSET_COMMIT, 9, commit_body("g", {("closed", 0): 1, ("open", 0): 2}))
        assert partition_codes(committed["topics"]) == {("closed", 0): E.TOPIC_AUTHORIZATION_FAILED, ("open", 0): 0}
        deny(open_broker, Res.TOPIC, "open", Op.DESCRIBE)
        fetched = conn.request(OFFSET_FETCH, 7, {"group_id": "g", "topics": None, "require_stable": False})
        assert fetched["topics"] == []  # committed on "open", which it may no longer describe
        fetched = conn.request(OFFSET_FETCH, 7, {"group_id": "g", "require_stable": False,
                                                 "topics": [{"name": "open", "partition_indexes": [0]}]})
        [[partition]] = [t["partitions"] for t in fetched["topics"]]
        assert (partition["error_code"], partition["committed_offset"]) == (E.TOPIC_AUTHORIZATION_FAILED, -1)


def init(conn: Connection, transactional_id: str | None) -> dict[str, Any]:
    return conn.request(INIT, 5, {"transactional_id": transactional_id, "transaction_timeout_ms": 60000,
                                  "producer_id": -1, "producer_epoch": -1})


def test_an_idempotent_producer_needs_idempotent_write_or_write_on_some_topic(closed_broker: Broker) -> None:
    with closed_broker.connect() as conn:
        assert init(conn, None)["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
        grant(closed_broker, Res.TOPIC, "open", Op.WRITE)  # KIP-679: WRITE on any topic is enough
        assert init(conn, None)["error_code"] == 0
        conn.client.principal = "User:alice"
        assert init(conn, None)["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
        grant(closed_broker, Res.CLUSTER, "kafka-cluster", Op.IDEMPOTENT_WRITE, principal="User:alice")
        assert init(conn, None)["error_code"] == 0


def test_transactions_need_write_on_the_transactional_id(open_broker: Broker) -> None:
    deny(open_broker, Res.TRANSACTIONAL_ID, "tx", Op.WRITE)
    with open_broker.connect() as conn:
        assert init(conn, "tx")["error_code"] == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert find_coordinator(conn, "tx", key_type=1)["error_code"] == 0  # DESCRIBE is not denied
        deny(open_broker, Res.TRANSACTIONAL_ID, "tx", Op.DESCRIBE)
        assert find_coordinator(conn, "tx", key_type=1)["error_code"] == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        added = conn.request(ADD_PARTITIONS, 3, {"v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": 1,
                                                 "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [
                                                     {"name": "open", "partitions": [0]}]})
        assert added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"] == \
            E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        for key, body in ((ADD_OFFSETS, {"group_id": "g"}), (END_TXN, {"committed": True})):
            answer = conn.request(key, 3, {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0, **body})
            assert answer["error_code"] == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, key


def test_a_transaction_s_topics_and_group_are_checked_too(open_broker: Broker) -> None:
    deny(open_broker, Res.TOPIC, "closed", Op.WRITE)
    deny(open_broker, Res.GROUP, "g", Op.READ)
    with open_broker.connect() as conn:
        started = init(conn, "tx")
        pid, epoch = started["producer_id"], started["producer_epoch"]
        added = conn.request(ADD_PARTITIONS, 3, {
            "v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch,
            "v3_and_below_topics": [{"name": "closed", "partitions": [0]}, {"name": "open", "partitions": [0]}]})
        codes = {t["name"]: t["results_by_partition"][0]["partition_error_code"]
                 for t in added["results_by_topic_v3_and_below"]}
        assert codes == {"closed": E.TOPIC_AUTHORIZATION_FAILED, "open": E.OPERATION_NOT_ATTEMPTED}
        answer = conn.request(ADD_OFFSETS, 3, {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch,
                                               "group_id": "g"})
        assert answer["error_code"] == E.GROUP_AUTHORIZATION_FAILED


def test_describe_topic_partitions_hides_what_may_not_be_described(open_broker: Broker) -> None:
    deny(open_broker, Res.TOPIC, "closed", Op.WRITE, Op.DESCRIBE)
    with open_broker.connect() as conn:
        every = conn.request(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [], "response_partition_limit": 100,
                                                            "cursor": None})
        assert "closed" not in {t["name"] for t in every["topics"]}
        named = conn.request(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": "closed"}, {"name": "open"}],
                                                            "response_partition_limit": 100, "cursor": None})
        answered = {t["name"]: (t["error_code"], t["topic_authorized_operations"]) for t in named["topics"]}
        # "open" has no ACL: every topic operation, as allow.everyone.if.no.acl.found lets it
        assert answered == {"closed": (E.TOPIC_AUTHORIZATION_FAILED, -2147483648),
                            "open": (0, all_operations(Res.TOPIC))}


CREATE_TOPICS, DELETE_TOPICS, DELETE_RECORDS, CREATE_PARTITIONS = 19, 20, 21, 37
LIST_GROUPS, DELETE_GROUPS, DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER = 16, 42, 32, 33, 44
WRITE_MARKERS, DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS, OFFSET_FOR_EPOCH = 27, 61, 65, 66, 23
DESCRIBE_SCRAM, CONSUMER_HEARTBEAT = 50, 68


def test_topic_administration_needs_create_delete_and_alter(open_broker: Broker) -> None:
    deny(open_broker, Res.TOPIC, "closed", Op.DELETE, Op.ALTER)
    deny(open_broker, Res.TOPIC, "no-create", Op.CREATE)
    deny(open_broker, Res.CLUSTER, "kafka-cluster", Op.CREATE)  # else CREATE on the cluster would do
    with open_broker.connect() as conn:
        created = conn.request(CREATE_TOPICS, 7, {"topics": [
            {"name": n, "num_partitions": 1, "replication_factor": 1} for n in ("no-create", "fresh")]})
        assert {t["name"]: (t["error_code"], t["error_message"]) for t in created["topics"]} == {
            "no-create": (E.TOPIC_AUTHORIZATION_FAILED, "Authorization failed."), "fresh": (0, None)}
        grown = conn.request(CREATE_PARTITIONS, 3, {"topics": [{"name": n, "count": 2, "assignments": None}
                                                               for n in ("closed", "open")], "validate_only": False})
        assert {r["name"]: r["error_code"] for r in grown["results"]} == {"closed": E.TOPIC_AUTHORIZATION_FAILED,
                                                                          "open": 0}
        records = conn.request(DELETE_RECORDS, 2, {"topics": [{"name": "closed", "partitions": [
            {"partition_index": 0, "offset": 0}]}], "timeout_ms": 1000})
        assert records["topics"][0]["partitions"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        closed_id = open_broker.broker.topics.get("closed").topic_id  # type: ignore[union-attr]
        by_id = conn.request(DELETE_TOPICS, 6, {"topics": [{"name": None, "topic_id": closed_id}]})
        assert by_id["responses"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        by_name = conn.request(DELETE_TOPICS, 5, {"topic_names": ["closed", "fresh"]})
        assert {r["name"]: r["error_code"] for r in by_name["responses"]} == {"closed": E.TOPIC_AUTHORIZATION_FAILED,
                                                                             "fresh": 0}
        assert open_broker.broker.topics.get("closed") is not None


def test_configs_need_describe_configs_and_alter_configs(open_broker: Broker) -> None:
    deny(open_broker, Res.TOPIC, "closed", Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS)
    deny(open_broker, Res.CLUSTER, "kafka-cluster", Op.DESCRIBE_CONFIGS)
    with open_broker.connect() as conn:
        described = conn.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 2, "resource_name": n, "configuration_keys": None} for n in ("closed", "open")] + [
            {"resource_type": 4, "resource_name": "1", "configuration_keys": None}]})
        assert [r["error_code"] for r in described["results"]] == [E.TOPIC_AUTHORIZATION_FAILED, 0,
                                                                    E.CLUSTER_AUTHORIZATION_FAILED]
        change = {"name": "retention.ms", "value": "1000"}
        altered = conn.request(ALTER_CONFIGS, 2, {"resources": [
            {"resource_type": 2, "resource_name": n, "configs": [change]} for n in ("closed", "open")],
            "validate_only": True})
        assert [r["error_code"] for r in altered["responses"]] == [E.TOPIC_AUTHORIZATION_FAILED, 0]
        incremental = conn.request(INCREMENTAL_ALTER, 1, {"resources": [
            {"resource_type": 2, "resource_name": "closed", "configs": [{**change, "config_operation": 0}]}],
            "validate_only": True})
        assert incremental["responses"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED


def test_group_administration_needs_describe_and_delete(open_broker: Broker) -> None:
    deny(open_broker, Res.GROUP, "hidden", Op.DESCRIBE, Op.DELETE)
    with open_broker.connect() as conn:
        for group in ("hidden", "shown"):
            committed = conn.request(OFFSET_COMMIT, 9, commit_body(group, {("open", 0): 1}))
            assert partition_codes(committed["topics"]) == {("open", 0): 0}

        def listed() -> set[str]:
            return {g["group_id"] for g in conn.request(LIST_GROUPS, 4, {"states_filter": []})["groups"]}

        assert {"shown", "hidden"} <= listed()  # the cluster has no ACL: DESCRIBE on it is open
        grant(open_broker, Res.CLUSTER, "kafka-cluster", Op.ALTER, principal="User:alice")
        assert "shown" in listed() and "hidden" not in listed()
        grant(open_broker, Res.CLUSTER, "kafka-cluster", Op.DESCRIBE)
        assert {"shown", "hidden"} <= listed()
        deleted = conn.request(DELETE_GROUPS, 2, {"groups_names": ["hidden"]})
        assert deleted["results"][0]["error_code"] == E.GROUP_AUTHORIZATION_FAILED


def test_transaction_and_producer_administration(open_broker: Broker) -> None:
    deny(open_broker, Res.TRANSACTIONAL_ID, "secret", Op.DESCRIBE)
    deny(open_broker, Res.TOPIC, "closed", Op.READ, Op.DESCRIBE)
    with open_broker.connect() as conn:
        assert init(conn, "visible")["error_code"] == 0
        described = conn.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["secret", "visible"]})
        assert [s["error_code"] for s in described["transaction_states"]] == [
            E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 0]
        producers = conn.request(DESCRIBE_PRODUCERS, 0, {"topics": [{"name": "closed", "partition_indexes": [0]}]})
        assert producers["topics"][0]["partitions"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        epochs = conn.request(OFFSET_FOR_EPOCH, 4, {"replica_id": -1, "topics": [{"topic": "closed", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]})
        assert epochs["topics"][0]["partitions"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        assert init(conn, "secret")["error_code"] == 0  # WRITE is allowed (ALL), only DESCRIBE denied
        listed = conn.request(LIST_TRANSACTIONS, 0, {"state_filters": [], "producer_id_filters": []})
        assert {s["transactional_id"] for s in listed["transaction_states"]} == {"visible"}


def test_cluster_operations_need_cluster_acls(closed_broker: Broker) -> None:
    with closed_broker.connect() as conn:
        marker = {"producer_id": 1, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
                  "topics": [{"name": "open", "partition_indexes": [0]}]}
        markers = conn.request(WRITE_MARKERS, 1, {"markers": [marker]})
        assert markers["markers"][0]["topics"][0]["partitions"][0]["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
        assert conn.request(DESCRIBE_SCRAM, 0, {"users": []})["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED


def test_a_kip_848_member_needs_read_on_the_group_and_describe_on_its_topics(open_broker: Broker) -> None:
    deny(open_broker, Res.GROUP, "denied", Op.READ)
    deny(open_broker, Res.TOPIC, "closed", Op.DESCRIBE)
    with open_broker.connect() as conn:
        def heartbeat(group: str, topics: list[str]) -> int:
            body = {"group_id": group, "member_id": "", "member_epoch": 0, "instance_id": None, "rack_id": None,
                    "rebalance_timeout_ms": 10000, "subscribed_topic_names": topics, "server_assignor": None,
                    "topic_partitions": []}
            return int(conn.request(CONSUMER_HEARTBEAT, 0, body)["error_code"])

        assert heartbeat("denied", ["open"]) == E.GROUP_AUTHORIZATION_FAILED
        assert heartbeat("members", ["open", "closed"]) == E.TOPIC_AUTHORIZATION_FAILED
        assert heartbeat("members", ["open"]) == 0


def test_an_acl_s_host_is_the_client_s_address(closed_broker: Broker) -> None:
    authorizer = closed_broker.broker.authorizer
    assert authorizer is not None
    elsewhere = AclBinding(Res.TOPIC, "open", PatternType.LITERAL, "User:ANONYMOUS", "10.0.0.1", Op.WRITE,
                           PermissionType.ALLOW)
    closed_broker.call(authorizer.create, [elsewhere])
    with closed_broker.connect() as conn:
        assert produce(conn, "open", batch(b"v"))["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        closed_broker.call(authorizer.create, [AclBinding(Res.TOPIC, "open", PatternType.LITERAL, "User:ANONYMOUS",
                                                          conn.client.host, Op.WRITE, PermissionType.ALLOW)])
        assert produce(conn, "open", batch(b"v"))["error_code"] == 0


def test_group_authorized_operations_and_the_other_classic_calls(open_broker: Broker) -> None:
    deny(open_broker, Res.GROUP, "denied", Op.READ)
    with open_broker.connect() as conn:
        assert conn.request(SYNC, 5, sync_body("denied", "m", 1))["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        left = conn.request(LEAVE, 4, {"group_id": "denied", "members": [{"member_id": "m", "group_instance_id": None,
                                                                          "reason": None}]})
        assert left["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        joined = stable_single_member_group(conn, "shown")
        assert joined["error_code"] == 0
        [classic] = conn.request(DESCRIBE_GROUPS, 5, {"groups": ["shown"],
                                                      "include_authorized_operations": True})["groups"]
        assert classic["authorized_operations"] == all_operations(Res.GROUP)  # no ACL names it
        [denied] = conn.request(DESCRIBE_GROUPS, 5, {"groups": ["denied"], "include_authorized_operations": True})[
            "groups"]
        # ALL allowed, READ denied: every group operation but READ (3)
        assert (denied["error_code"], denied["authorized_operations"]) == (0, all_operations(Res.GROUP) & ~(1 << 3))
