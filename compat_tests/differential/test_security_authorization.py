"""Authorization, Kafka (StandardAuthorizer) against kemu, on the secured pair by raw requests: what a
principal without ACLs (alice) gets from each API (the *_AUTHORIZATION_FAILED codes, topics hidden or not),
what one with a few ACLs (bob) is shown as its authorized operations, and the SCRAM credential APIs' errors.

Topics and groups are made as the super user over PLAINTEXT; names are the test's own (`authz-<test>`).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.security_acls import (
    CREATE_ACLS,
    DESCRIBE,
    GROUP,
    PREFIXED,
    READ,
    TOPIC,
    TRANSACTIONAL_ID,
    WRITE,
    creation,
    settle,
)
from compat_tests.differential.security_brokers import (  # noqa: F401 (secured_pair_fixture: the fixture)
    SCRAM_USER,
    Secured,
    SecuredPair,
    secured_pair_fixture,
)
from compat_tests.differential.security_sasl import answer, salted_password
from tests.handlers.data_plane import batch, produce_body
from tests.server.kafka_socket import KafkaSocket

PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = 0, 1, 2, 3, 8, 9, 10
JOIN_GROUP, DESCRIBE_GROUPS, CREATE_TOPICS, DELETE_TOPICS, INIT_PRODUCER_ID = 11, 15, 19, 20, 22
DESCRIBE_CONFIGS, DESCRIBE_SCRAM, ALTER_SCRAM, DESCRIBE_CLUSTER = 32, 50, 51, 60
CLUSTER_ACTION, IDEMPOTENT_WRITE = 9, 12


def make_topic(secured: Secured, name: str, partitions: int = 1) -> None:
    made = secured.request(CREATE_TOPICS, 7, {"topics": [{"name": name, "num_partitions": partitions,
                                                          "replication_factor": 1, "assignments": [],
                                                          "configs": []}], "timeout_ms": 30000,
                                              "validate_only": False})
    assert made["topics"][0]["error_code"] in (0, 36), made  # made, or already there (TOPIC_ALREADY_EXISTS)
    settle(secured)


def grant(secured: Secured, *creations: dict[str, Any]) -> None:
    made = secured.request(CREATE_ACLS, 3, {"creations": list(creations)})
    assert not any(result["error_code"] for result in made["results"]), made
    settle(secured)


def metadata_body(topics: list[str] | None, *, auto_create: bool = False, operations: bool = True) -> dict[str, Any]:
    return {"topics": None if topics is None else [{"name": name, "topic_id": uuid.UUID(int=0)} for name in topics],
            "allow_auto_topic_creation": auto_create, "include_cluster_authorized_operations": operations,
            "include_topic_authorized_operations": operations}


def ours(body: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A Metadata answer with only this test's topics (others' are in the same brokers), keyed by name."""
    found = {key: value for key, value in body.items() if key != "topics"}
    found["topics"] = {topic["name"]: topic for topic in body["topics"] if topic["name"].startswith(prefix)}
    return found


def as_alice(secured: Secured, api_key: int, version: int, body: dict[str, Any]) -> Any:
    with secured.as_user("alice") as connection:
        return answer(connection, api_key, version, body)


@pytest.mark.parametrize("version", [4, 8, 10, 12])
@pytest.mark.parametrize("auto_create", [False, True])
def test_metadata_hides_what_alice_may_not_describe(secured_pair: SecuredPair, version: int,
                                                    auto_create: bool) -> None:
    prefix = f"authz-md-v{version}-{int(auto_create)}-"
    existing, unknown = prefix + "existing", prefix + "unknown"

    def run(secured: Secured) -> Any:
        make_topic(secured, existing)
        body = metadata_body([existing, unknown], auto_create=auto_create, operations=version >= 8)
        named = as_alice(secured, METADATA, version, body)
        listed = as_alice(secured, METADATA, version, metadata_body(None, operations=version >= 8))
        settle(secured)
        return {"named": ours(named, prefix), "all": ours(listed, prefix),
                "unknown_made": ours(secured.request(METADATA, 12, metadata_body([unknown])), prefix)}

    kafka, kemu = secured_pair.both(run)
    check(f"security.authz.metadata.v{version}.auto{int(auto_create)}", kafka, kemu)


def test_produce_fetch_and_list_offsets_need_topic_acls(secured_pair: SecuredPair) -> None:
    name = "authz-data"

    def run(secured: Secured) -> Any:
        make_topic(secured, name)
        produced = as_alice(secured, PRODUCE, 9, produce_body({(name, 0): batch(b"v")}))
        fetched = as_alice(secured, FETCH, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": name, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                        "fetch_offset": 0, "last_fetched_epoch": -1,
                                                        "log_start_offset": -1,
                                                        "partition_max_bytes": 1 << 20}]}]})
        listed = as_alice(secured, LIST_OFFSETS, 7, {
            "replica_id": -1, "isolation_level": 0,
            "topics": [{"name": name, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                       "timestamp": -1}]}]})
        return {"produce": produced, "fetch": fetched, "list_offsets": listed}

    kafka, kemu = secured_pair.both(run)
    check("security.authz.data", kafka, kemu)


def test_create_and_delete_topics_need_acls(secured_pair: SecuredPair) -> None:
    name = "authz-create"

    def run(secured: Secured) -> Any:
        make_topic(secured, name + "-existing")
        created = as_alice(secured, CREATE_TOPICS, 7, {
            "topics": [{"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
                       for n in (name + "-new", name + "-existing")], "timeout_ms": 30000, "validate_only": False})
        deleted = as_alice(secured, DELETE_TOPICS, 6, {
            "topics": [{"name": n, "topic_id": uuid.UUID(int=0)} for n in (name + "-existing", name + "-unknown")],
            "timeout_ms": 30000})
        # Both answer in a hash order of their own (kemu shuffles DeleteTopics' on purpose): keyed by name.
        return {"create": created,
                "delete": {**deleted, "responses": {r["name"]: r for r in deleted["responses"]}}}

    kafka, kemu = secured_pair.both(run)
    check("security.authz.create_delete_topics", kafka, kemu)


def test_groups_need_group_acls(secured_pair: SecuredPair) -> None:
    group, topic = "authz-group", "authz-group-topic"

    def run(secured: Secured) -> Any:
        make_topic(secured, topic)
        return {
            "find_coordinator": as_alice(secured, FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]}),
            "join": as_alice(secured, JOIN_GROUP, 9, {
                "group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
                "group_instance_id": None, "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": b""}], "reason": None}),
            "offset_commit": as_alice(secured, OFFSET_COMMIT, 8, {
                "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                           "committed_leader_epoch": -1,
                                                           "committed_metadata": None}]}]}),
            "offset_fetch": as_alice(secured, OFFSET_FETCH, 8, {
                "groups": [{"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]}],
                "require_stable": False}),
            "describe": as_alice(secured, DESCRIBE_GROUPS, 5, {"groups": [group],
                                                              "include_authorized_operations": True}),
        }

    kafka, kemu = secured_pair.both(run)
    check("security.authz.groups", kafka, kemu)


@pytest.mark.parametrize("transactional_id", [None, "authz-txn"])
def test_init_producer_id_needs_acls(secured_pair: SecuredPair, transactional_id: str | None) -> None:
    def run(secured: Secured) -> Any:
        found = {"init": as_alice(secured, INIT_PRODUCER_ID, 4, {
            "transactional_id": transactional_id, "transaction_timeout_ms": 60000, "producer_id": -1,
            "producer_epoch": -1})}
        if transactional_id is not None:
            found["find_coordinator"] = as_alice(secured, FIND_COORDINATOR, 4, {
                "key_type": 1, "coordinator_keys": [transactional_id]})
        return found

    kafka, kemu = secured_pair.both(run)
    kind = "transactional" if transactional_id else "idempotent"
    scenario = "security.authz.init_producer_id" + (".idempotent" if kind == "idempotent" else ".transactional")
    check(scenario, kafka, kemu)


def test_cluster_apis_without_acls(secured_pair: SecuredPair) -> None:
    def run(secured: Secured) -> Any:
        return {
            "describe_cluster": as_alice(secured, DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True,
                                                                        "endpoint_type": 1}),
            "describe_configs": as_alice(secured, DESCRIBE_CONFIGS, 4, {
                "resources": [{"resource_type": 4, "resource_name": "1", "configuration_keys": ["log.retention.ms"]},
                              {"resource_type": 2, "resource_name": "authz-none", "configuration_keys": None}],
                "include_synonyms": False, "include_documentation": False}),
            "describe_scram": as_alice(secured, DESCRIBE_SCRAM, 0, {"users": None}),
            "alter_scram": as_alice(secured, ALTER_SCRAM, 0, {"deletions": [{"name": "x", "mechanism": 1}],
                                                              "upsertions": []}),
        }

    kafka, kemu = secured_pair.both(run)
    check("security.authz.cluster_apis", kafka, kemu)


def test_authorized_operations(secured_pair: SecuredPair) -> None:
    """bob may DESCRIBE topics prefixed authz-ops-, READ one of them, READ a group, DESCRIBE the cluster and
    CLUSTER_ACTION it: Metadata v8+, DescribeCluster and DescribeGroups show the bitfields of what he may do."""
    prefix = "authz-ops-"

    def run(secured: Secured) -> Any:
        for name in (prefix + "described", prefix + "read"):
            make_topic(secured, name)
        grant(secured, creation("bob", resource_name=prefix, resource_pattern_type=PREFIXED, operation=DESCRIBE),
              creation("bob", resource_name=prefix + "read", operation=READ),
              creation("bob", resource_type=GROUP, resource_name=prefix + "group", operation=READ),
              creation("bob", resource_type=4, resource_name="kafka-cluster", operation=DESCRIBE),
              creation("bob", resource_type=4, resource_name="kafka-cluster", operation=CLUSTER_ACTION))
        coordinator_ready(secured, prefix + "group")
        with secured.as_user("bob") as connection:
            metadata = answer(connection, METADATA, 12, metadata_body([prefix + "described", prefix + "read",
                                                                       prefix + "unknown"]))
            cluster = answer(connection, DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True,
                                                               "endpoint_type": 1})
            groups = answer(connection, DESCRIBE_GROUPS, 5, {"groups": [prefix + "group", prefix + "other"],
                                                             "include_authorized_operations": True})
        return {"metadata": ours(metadata, prefix), "describe_cluster": cluster, "describe_groups": groups}

    kafka, kemu = secured_pair.both(run)
    check("security.authz.authorized_operations", kafka, kemu)


def coordinator_ready(secured: Secured, group: str) -> None:
    """Wait (as the super user) until the group's coordinator answers: the first FindCoordinator makes
    __consumer_offsets, and until its partition is loaded Kafka answers a DescribeGroups NOT_COORDINATOR."""
    deadline = time.monotonic() + 30.0
    while True:
        found = secured.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})
        described = secured.request(DESCRIBE_GROUPS, 5, {"groups": [group], "include_authorized_operations": False})
        if found["coordinators"][0]["error_code"] == 0 and described["groups"][0]["error_code"] == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{secured.name}: no coordinator for {group}: {found} {described}")
        time.sleep(0.2)


# What a producer retries: the transaction coordinator (and its producer id block) is still being made or
# loaded. Kafka answers these for a moment after the first use of __transaction_state; kemu has it at once.
RETRIED = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


def init_producer_id(connection: KafkaSocket, transactional_id: str | None) -> Any:
    """InitProducerId as a producer does it: a transactional one finds its coordinator first (the first
    FindCoordinator makes __transaction_state; until then Kafka answers NOT_COORDINATOR), and each is asked
    again while the answer is one it retries; the last answer."""
    deadline = time.monotonic() + 30.0
    while transactional_id is not None:
        found = answer(connection, FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": [transactional_id]})
        if (not isinstance(found, dict) or found["coordinators"][0]["error_code"] not in RETRIED
                or time.monotonic() > deadline):
            break
        time.sleep(0.2)
    while True:
        got = answer(connection, INIT_PRODUCER_ID, 4, {"transactional_id": transactional_id,
                                                       "transaction_timeout_ms": 60000, "producer_id": -1,
                                                       "producer_epoch": -1})
        if not isinstance(got, dict) or got["error_code"] not in RETRIED or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


@pytest.mark.parametrize("grant_kind", ["topic_write", "idempotent_write", "transactional_id"])
def test_init_producer_id_with_acls(secured_pair: SecuredPair, grant_kind: str) -> None:
    """bob with WRITE on a topic or IDEMPOTENT_WRITE on the cluster may be idempotent (KIP-679); with WRITE on
    a transactional id, transactional with it (and only it)."""
    txn = f"authz-ipid-{grant_kind}".replace("_", "-")

    def run(secured: Secured) -> Any:
        acl = {"topic_write": creation("bob", resource_name=txn, operation=WRITE),
               "idempotent_write": creation("bob", resource_type=4, resource_name="kafka-cluster",
                                            operation=IDEMPOTENT_WRITE),
               "transactional_id": creation("bob", resource_type=TRANSACTIONAL_ID, resource_name=txn,
                                            operation=WRITE)}[grant_kind]
        grant(secured, acl)
        found = {}
        with secured.as_user("bob") as connection:
            for label, transactional_id in (("idempotent", None), ("granted_id", txn), ("other_id", txn + "-x")):
                got = init_producer_id(connection, transactional_id)
                found[label] = got if not isinstance(got, dict) else {
                    "error_code": got["error_code"], "has_producer_id": got["producer_id"] >= 0}
        return found

    kafka, kemu = secured_pair.both(run)
    check(f"security.authz.init_producer_id_granted.{grant_kind}", kafka, kemu)


def test_operations_not_requested(secured_pair: SecuredPair) -> None:
    def run(secured: Secured) -> Any:
        with secured.as_user("bob") as connection:
            return {"metadata": ours(answer(connection, METADATA, 12, metadata_body(["authz-nr"], operations=False)),
                                     "authz-nr"),
                    "describe_cluster": answer(connection, DESCRIBE_CLUSTER, 1, {
                        "include_cluster_authorized_operations": False, "endpoint_type": 1})}

    kafka, kemu = secured_pair.both(run)
    check("security.authz.operations_not_requested", kafka, kemu)


def upsertion(name: str, mechanism: int = 1, iterations: int = 4096) -> dict[str, Any]:
    salt = b"0123456789abcdef"
    digest = "SCRAM-SHA-256" if mechanism != 2 else "SCRAM-SHA-512"
    return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": salt,
            "salted_password": salted_password(digest, "pw", salt, max(iterations, 1))}


def sorted_results(body: Any) -> Any:
    """SCRAM results with each user's mechanisms sorted: Kafka's ScramImage keeps them in a HashMap keyed by an
    enum, whose order follows identity hash codes and so changes from one JVM run to the next. (The users'
    order, a HashMap's of strings, is Kafka's every time, and compared.)"""
    if isinstance(body, dict) and "results" in body:
        return {**body, "results": [
            {**r, "credential_infos": sorted(r["credential_infos"], key=lambda c: c["mechanism"])}
            if "credential_infos" in r else r for r in body["results"]]}
    return body


ALTERATIONS: dict[str, dict[str, Any]] = {
    "too_few_iterations": {"deletions": [], "upsertions": [upsertion("scram-a", iterations=4095)]},
    "too_many_iterations": {"deletions": [], "upsertions": [upsertion("scram-b", iterations=16385)]},
    "unknown_mechanism": {"deletions": [], "upsertions": [upsertion("scram-c", mechanism=3)]},
    "mechanism_0": {"deletions": [], "upsertions": [upsertion("scram-d", mechanism=0)]},
    "empty_name": {"deletions": [], "upsertions": [upsertion("")]},
    "empty_salt": {"deletions": [], "upsertions": [{**upsertion("scram-e"), "salt": b""}]},
    "empty_password": {"deletions": [], "upsertions": [{**upsertion("scram-f"), "salted_password": b""}]},
    "delete_unknown": {"deletions": [{"name": "scram-nobody", "mechanism": 1}], "upsertions": []},
    "delete_unknown_mechanism": {"deletions": [{"name": SCRAM_USER, "mechanism": 3}], "upsertions": []},
    "delete_empty_name": {"deletions": [{"name": "", "mechanism": 1}], "upsertions": []},
    "same_user_twice": {"deletions": [], "upsertions": [upsertion("scram-g"), upsertion("scram-g", 2)]},
    "delete_and_upsert": {"deletions": [{"name": "scram-h", "mechanism": 1}], "upsertions": [upsertion("scram-h")]},
    "one_good_one_bad": {"deletions": [], "upsertions": [upsertion("scram-i"), upsertion("scram-j", iterations=1)]},
    "nothing": {"deletions": [], "upsertions": []},
}


@pytest.mark.parametrize("case", list(ALTERATIONS))
def test_alter_user_scram_credentials(secured_pair: SecuredPair, case: str) -> None:
    def run(secured: Secured) -> Any:
        altered = sorted_results(secured.request(ALTER_SCRAM, 0, ALTERATIONS[case]))
        settle(secured)
        names = sorted({entry["name"] for part in ALTERATIONS[case].values() for entry in part if entry["name"]})
        described = secured.request(DESCRIBE_SCRAM, 0, {"users": [{"name": n} for n in names]}) if names else None
        return {"altered": altered, "described": sorted_results(described) if described else None}

    kafka, kemu = secured_pair.both(run)
    check(f"security.scram.alter.{case}", kafka, kemu)


DESCRIPTIONS: dict[str, list[str] | None] = {
    "known": [SCRAM_USER], "unknown": ["scram-nobody"], "known_and_unknown": [SCRAM_USER, "scram-nobody"],
    "duplicate": [SCRAM_USER, SCRAM_USER], "empty_name": [""], "none": [],
}


@pytest.mark.parametrize("case", list(DESCRIPTIONS))
def test_describe_user_scram_credentials(secured_pair: SecuredPair, case: str) -> None:
    users = DESCRIPTIONS[case]
    body = {"users": None if users is None else [{"name": name} for name in users]}
    kafka, kemu = secured_pair.both(lambda secured: sorted_results(secured.request(DESCRIBE_SCRAM, 0, body)))
    check(f"security.scram.describe.{case}", kafka, kemu)


def test_describe_every_scram_user_lists_ours(secured_pair: SecuredPair) -> None:
    def run(secured: Secured) -> Any:
        body = secured.request(DESCRIBE_SCRAM, 0, {"users": None})
        return sorted_results({**body, "results": [r for r in body["results"] if r["user"] == SCRAM_USER]})

    kafka, kemu = secured_pair.both(run)
    check("security.scram.describe.all", kafka, kemu)


def test_topic_acl_grants_the_topic(secured_pair: SecuredPair) -> None:
    """bob with READ on one of two topics: Fetch authorizes each topic on its own."""
    prefix = "authz-mixed-"

    def run(secured: Secured) -> Any:
        for name in (prefix + "granted", prefix + "other"):
            make_topic(secured, name)
        grant(secured, creation("bob", resource_type=TOPIC, resource_name=prefix + "granted", operation=READ))
        with secured.as_user("bob") as connection:
            return answer(connection, FETCH, 12, {
                "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
                "topics": [{"topic": prefix + suffix, "partitions": [
                    {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                     "log_start_offset": -1, "partition_max_bytes": 1 << 20}]} for suffix in ("granted", "other")]})

    kafka, kemu = secured_pair.both(run)
    check("security.authz.fetch_mixed", kafka, kemu)
