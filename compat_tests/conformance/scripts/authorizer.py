"""The `authorizer` group: recorded against a Kafka whose StandardAuthorizer has no ACL and does not allow
everyone when none is found, the PLAINTEXT client (User:ANONYMOUS) not a super user; replayed against a broker
with the same settings. Every call a client makes, denied as Kafka denies it (or answered, where Kafka
authorizes nothing)."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import batch, produce, step
from compat_tests.conformance.scripts.admin import _create, _describe
from compat_tests.conformance.scripts.data import _fetch
from compat_tests.conformance.scripts.groups import SUBSCRIPTION, commit, fetch_offsets
from compat_tests.conformance.scripts.operations import NOWHERE, _add, _alter, _remove
from compat_tests.conformance.scripts.security import ACL, DESCRIBE, FILTER
from compat_tests.conformance.scripts.share import _acknowledge
from compat_tests.conformance.scripts.share import _fetch as _share_fetch
from compat_tests.conformance.scripts.streams import heartbeat as _streams_heartbeat
from compat_tests.conformance.scripts.telemetry import RANDOM_ID, ZERO
from compat_tests.conformance.scripts.tokens import HOUR, MISSING_HMAC, create
from compat_tests.conformance.scripts.unsupported import API_VERSIONS_KEYS, EPOCH
from compat_tests.conformance.steps import Script, Step

# Kafka's message for a denied controller call quotes its request object: connection id, ports, the session
# object's identity hash, the buffer's positions.
QUOTING = {"elect leaders", "alter partition reassignments", "list partition reassignments", "describe acls",
           "create acls", "delete acls", "alter scram credentials", "update features", "unregister broker"}
QUOTING_WHY = ("Kafka's message quotes its Request object (connection id with ports, session identity hash, "
               "buffer positions), different on every run")
TOPIC = "conf-authz-{run}"
GROUP = "conf-authz-g-{run}"
TID = "conf-authz-t-{run}"
SHARE_GROUP = "conf-authz-s-{run}"
STREAMS_GROUP = "conf-authz-streams-{run}"
MEMBER = "conf-authz-member-{run}"
# No topic of this run exists (the principal may not create one), so a request naming topics by id names one
# no broker knows: Kafka resolves ids to names before it authorizes, and answers UNKNOWN_TOPIC_ID.
UNKNOWN_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


def scripts() -> list[Script]:
    steps = [
        step("metadata no topics", 3, 12, {"topics": [], "allow_auto_topic_creation": False}),
        step("metadata null name", 3, 12, {"topics": [{"topic_id": "AAAAAAAAAAAAAAAAAAAAAA", "name": None}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": True}),
        step("metadata topic", 3, 12, {"topics": [{"name": TOPIC}], "allow_auto_topic_creation": True}),
        step("metadata all topics", 3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": True}),
        step("metadata cluster operations", 3, 10, {"topics": [], "allow_auto_topic_creation": False,
                                                    "include_cluster_authorized_operations": True}),
        step("describe topic partitions", 75, 0, {"topics": [{"name": TOPIC}], "response_partition_limit": 10,
                                                  "cursor": None}),
        step("create topic", 19, 7, _create(TOPIC, 7)),
        step("create topic v4", 19, 4, _create(TOPIC, 4)),
        step("delete topic", 20, 6, {"topics": [{"name": TOPIC, "topic_id": "AAAAAAAAAAAAAAAAAAAAAA"}],
                                     "timeout_ms": 30000}),
        step("create partitions", 37, 3, {"topics": [{"name": TOPIC, "count": 3, "assignments": None}],
                                          "timeout_ms": 30000, "validate_only": False}),
        produce(TOPIC, ["x"], name="produce"),
        step("fetch", 1, 12, _fetch(12, topic=TOPIC)),
        step("list offsets", 2, 9, {"replica_id": -1, "isolation_level": 0, "timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}),
        step("offset for leader epoch", 23, 4, {"replica_id": -1, "topics": [
            {"topic": TOPIC, "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}),
        step("delete records", 21, 2, {"timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "offset": 1}]}]}),
        step("describe producers", 61, 0, {"topics": [{"name": TOPIC, "partition_indexes": [0]}]}),
        step("find group coordinator", 10, 4, {"key_type": 0, "coordinator_keys": [GROUP]}),
        step("find transaction coordinator", 10, 4, {"key_type": 1, "coordinator_keys": [TID]}),
        step("join group", 11, 9, {"group_id": GROUP, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000,
                                   "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                                   "protocols": [{"name": "range", "metadata": SUBSCRIPTION}]}),
        step("sync group", 14, 5, {"group_id": GROUP, "generation_id": 1, "member_id": "m",
                                   "protocol_type": "consumer", "protocol_name": "range", "assignments": []}),
        step("heartbeat", 12, 4, {"group_id": GROUP, "generation_id": 1, "member_id": "m"}),
        step("leave group", 13, 5, {"group_id": GROUP, "members": [{"member_id": "m", "reason": None}]}),
        commit(9, GROUP, name="offset commit"),
        fetch_offsets(8, GROUP, name="offset fetch"),
        fetch_offsets(5, GROUP, name="offset fetch v5"),
        step("offset delete", 47, 0, {"group_id": GROUP, "topics": [{"name": TOPIC, "partitions": [
            {"partition_index": 0}]}]}),
        step("describe groups", 15, 5, {"groups": [GROUP], "include_authorized_operations": True}),
        step("list groups", 16, 5, {"states_filter": [], "types_filter": []}),
        step("delete groups", 42, 2, {"groups_names": [GROUP]}),
        step("consumer group heartbeat", 68, 1, {
            "group_id": GROUP, "member_id": "conf-member-{run}-cccccccccccc", "member_epoch": 0,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": [TOPIC], "topic_partitions": []}),
        step("consumer group describe", 69, 1, {"group_ids": [GROUP], "include_authorized_operations": True}),
        step("init transactional producer id", 22, 5, {"transactional_id": TID, "transaction_timeout_ms": 60000,
                                                       "producer_id": -1, "producer_epoch": -1}),
        step("init idempotent producer id", 22, 5, {"transactional_id": None, "transaction_timeout_ms": -1,
                                                    "producer_id": -1, "producer_epoch": -1}),
        step("add partitions to txn", 24, 3, {"v3_and_below_transactional_id": TID, "v3_and_below_producer_id": 5,
                                              "v3_and_below_producer_epoch": 0,
                                              "v3_and_below_topics": [{"name": TOPIC, "partitions": [0]}]}),
        step("add offsets to txn", 25, 4, {"transactional_id": TID, "producer_id": 5, "producer_epoch": 0,
                                           "group_id": GROUP}),
        step("txn offset commit", 28, 4, {"transactional_id": TID, "group_id": GROUP, "producer_id": 5,
                                          "producer_epoch": 0, "generation_id": -1, "member_id": "",
                                          "topics": [{"name": TOPIC, "partitions": [
                                              {"partition_index": 0, "committed_offset": 1,
                                               "committed_leader_epoch": -1, "committed_metadata": ""}]}]}),
        step("end txn", 26, 4, {"transactional_id": TID, "producer_id": 5, "producer_epoch": 0, "committed": True}),
        step("write txn markers", 27, 1, {"markers": [
            {"producer_id": 5, "producer_epoch": 0, "transaction_result": False,
             "topics": [{"name": TOPIC, "partition_indexes": [0]}], "coordinator_epoch": 0}]}),
        step("describe transactions", 65, 0, {"transactional_ids": [TID]}),
        step("list transactions", 66, 1, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1}),
        step("describe topic configs", 32, 4, _describe([(2, TOPIC, ["retention.ms"])])),
        step("describe broker configs", 32, 4, _describe([(4, "1", ["num.partitions"])])),
        step("alter configs", 33, 2, {"resources": [{"resource_type": 2, "resource_name": TOPIC, "configs": [
            {"name": "retention.ms", "value": "1000"}]}], "validate_only": False}),
        step("incremental alter configs", 44, 1, {"resources": [{"resource_type": 2, "resource_name": TOPIC,
                                                                 "configs": [{"name": "retention.ms",
                                                                              "config_operation": 0,
                                                                              "value": "1000"}]}],
                                                  "validate_only": False}),
        step("describe log dirs", 35, 4, {"topics": None}),
        step("elect leaders", 43, 2, {"election_type": 0, "timeout_ms": 30000,
                                      "topic_partitions": [{"topic": TOPIC, "partitions": [0]}]}),
        step("alter partition reassignments", 45, 0, {"timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "replicas": [1]}]}]}),
        step("list partition reassignments", 46, 0, {"timeout_ms": 30000, "topics": None}),
        step("describe cluster", 60, 1, {"include_cluster_authorized_operations": True, "endpoint_type": 1}),
        step("update features", 57, 2, {"timeout_ms": 30000, "validate_only": True, "feature_updates": [
            {"feature": "transaction.version", "max_version_level": 1, "upgrade_type": 2}]}),
        step("describe acls", 29, 3, DESCRIBE),
        step("create acls", 30, 3, {"creations": [ACL]}),
        step("delete acls", 31, 3, {"filters": [FILTER]}),
        step("alter scram credentials", 51, 0, {"deletions": [{"name": "conf-user-{run}", "mechanism": 1}],
                                                "upsertions": []}),
        step("describe quorum", 55, 2, {"topics": [{"topic_name": "__cluster_metadata",
                                                    "partitions": [{"partition_index": 0}]}]}),
        step("alter replica log dirs", 34, 2, _alter((NOWHERE, [(TOPIC, [0])]))),
        step("unregister broker", 64, 0, {"broker_id": 99}),
        step("add raft voter", 80, 1, _add(1)),
        step("remove raft voter", 81, 0, _remove()),
        step("list config resources", 74, 1, {"resource_types": []}),
        step("list config resources v0", 74, 0, {}),
        step("produce v13 unknown topic id", 0, 13, {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
                                                     "topic_data": [{"topic_id": "AAAAAAAAAAAAAAAAAAAAAQ",
                                                                     "partition_data": [{"index": 0, "records": [
                                                                         batch(["x"])]}]}]}),
        *newest_versions(),
        *share_groups(),
        *streams_groups(),
        *quotas_tokens_telemetry(),
        step("api versions", 18, 4, {"client_software_name": "kemu-conformance", "client_software_version": "1"},
             key_by=API_VERSIONS_KEYS, **EPOCH),
    ]
    steps += sasl()
    for denied in steps:
        if denied.name in QUOTING:
            denied.varying, denied.why = {"error_message": "request_text"}, QUOTING_WHY
    return [Script("authorizer.denied", steps, group="authorizer")]


def _by_unknown_id(body: dict[str, Any]) -> dict[str, Any]:
    """A share-fetch body naming the topic UNKNOWN_ID instead of a captured one."""
    for topic in body["topics"]:
        topic["topic_id"] = UNKNOWN_ID
    return body


def newest_versions() -> list[Step]:
    """The keys the first steps send at an older version, at their newest, and the versions whose checks
    differ: a follower's Fetch (CLUSTER_ACTION), FindCoordinator below v4 (one key, a top-level error) and for a
    share-coordinator key (CLUSTER_ACTION, v6), AddPartitionsToTxn v4+ (brokers only: CLUSTER_ACTION),
    DescribeLogDirs below v3 (no error code: an empty answer)."""
    partitions = [{"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                   "committed_metadata": ""}]
    return [
        step("produce transactional", 0, 9, {
            "transactional_id": TID, "acks": -1, "timeout_ms": 30000,
            "topic_data": [{"name": TOPIC, "partition_data": [{"index": 0, "records": [
                batch(["x"], producer_id=5, producer_epoch=0, base_sequence=0, transactional=True)]}]}]}),
        produce(TOPIC, ["x"], version=12, name="produce v12"),
        step("fetch v18 unknown topic id", 1, 18, _fetch(18, topic=TOPIC) | {"topics": [
            {"topic_id": UNKNOWN_ID, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                    "last_fetched_epoch": -1, "log_start_offset": -1,
                                                    "partition_max_bytes": 1 << 20}]}]}),
        step("fetch as a follower", 1, 12, _fetch(12, topic=TOPIC) | {"replica_id": 1}),
        step("list offsets v11", 2, 11, {"replica_id": -1, "isolation_level": 0, "timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}),
        # v0 asks for every topic with an empty list (null from v1): those the principal may not DESCRIBE are
        # left out, as from "metadata all topics".
        step("metadata v0 all topics", 3, 0, {"topics": []}),
        step("metadata v13", 3, 13, {"topics": [{"name": TOPIC}], "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": True}),
        step("offset commit v10", 8, 10, {
            "group_id": GROUP, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"topic_id": UNKNOWN_ID, "partitions": partitions}]}),
        # Before v2 a group's error has no top-level code: Kafka sets it on every partition asked.
        step("offset fetch v1", 9, 1, {"group_id": GROUP, "topics": [{"name": TOPIC, "partition_indexes": [0, 1]}]}),
        step("offset fetch v10", 9, 10, {"require_stable": False, "groups": [
            {"group_id": GROUP, "member_id": None, "member_epoch": -1,
             "topics": [{"topic_id": UNKNOWN_ID, "partition_indexes": [0]}]}]}),
        step("offset fetch v10 all topics", 9, 10, {"require_stable": True, "groups": [
            {"group_id": GROUP, "member_id": None, "member_epoch": -1, "topics": None}]}),
        step("find group coordinator v3", 10, 3, {"key": GROUP, "key_type": 0}),
        step("find transaction coordinator v3", 10, 3, {"key": TID, "key_type": 1}),
        step("find group coordinator v0", 10, 0, {"key": GROUP}),
        step("find share coordinator", 10, 6, {"key_type": 2, "coordinator_keys": [f"{SHARE_GROUP}:{UNKNOWN_ID}:0"]}),
        step("describe groups v6", 15, 6, {"groups": [GROUP], "include_authorized_operations": True}),
        step("delete topic v5", 20, 5, {"topic_names": [TOPIC], "timeout_ms": 30000}),
        step("delete topic by unknown id", 20, 6, {"topics": [{"name": None, "topic_id": UNKNOWN_ID}],
                                                   "timeout_ms": 30000}),
        step("add partitions to txn v5", 24, 5, {"transactions": [
            {"transactional_id": TID, "producer_id": 5, "producer_epoch": 0, "verify_only": True,
             "topics": [{"name": TOPIC, "partitions": [0]}]}]}),
        step("end txn v5", 26, 5, {"transactional_id": TID, "producer_id": 5, "producer_epoch": 0,
                                   "committed": False}),
        step("txn offset commit v5", 28, 5, {"transactional_id": TID, "group_id": GROUP, "producer_id": 5,
                                             "producer_epoch": 0, "generation_id": -1, "member_id": "",
                                             "group_instance_id": None,
                                             "topics": [{"name": TOPIC, "partitions": partitions}]}),
        step("describe group configs", 32, 4, _describe([(32, GROUP, None)])),
        step("describe client metrics configs", 32, 4, _describe([(16, "conf-authz-cm-{run}", None)])),
        step("describe broker logger configs", 32, 4, _describe([(8, "1", None)])),
        step("incremental alter broker configs", 44, 1, {"resources": [
            {"resource_type": 4, "resource_name": "1", "configs": [
                {"name": "log.cleaner.threads", "config_operation": 0, "value": "1"}]}], "validate_only": True}),
        step("incremental alter group configs", 44, 1, {"resources": [
            {"resource_type": 32, "resource_name": GROUP, "configs": [
                {"name": "consumer.session.timeout.ms", "config_operation": 0, "value": "45000"}]}],
            "validate_only": True}),
        step("describe log dirs v5", 35, 5, {"topics": None}),
        step("describe log dirs v1", 35, 1, {"topics": [{"topic": TOPIC, "partitions": [0]}]}),
        step("describe cluster v2", 60, 2, {"include_cluster_authorized_operations": True, "endpoint_type": 1,
                                            "include_fenced_brokers": True}),
        step("list transactions v2", 66, 2, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                                             "transactional_id_pattern": None}),
        step("consumer group heartbeat before a member id", 68, 1, {
            "group_id": GROUP, "member_id": "", "member_epoch": 0, "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": [TOPIC], "topic_partitions": []}),
        step("consumer group describe v0", 69, 0, {"group_ids": [GROUP], "include_authorized_operations": False}),
    ]


def streams_groups() -> list[Step]:
    """Streams groups: READ on the group before anything of the request is looked at; DESCRIBE for
    StreamsGroupDescribe."""
    return [
        step("streams group heartbeat", 88, 0, _streams_heartbeat(STREAMS_GROUP, MEMBER, 0)),
        step("streams group heartbeat without member id", 88, 0, _streams_heartbeat(STREAMS_GROUP, "", 0)),
        step("streams group describe", 89, 0, {"group_ids": [STREAMS_GROUP], "include_authorized_operations": True}),
    ]


def share_groups() -> list[Step]:
    """Share groups: READ on the group before the member id is looked at; a ShareFetch or ShareAcknowledge
    without a group id refused before any authorization."""
    return [
        step("share group heartbeat", 76, 1, {"group_id": SHARE_GROUP, "member_id": MEMBER, "member_epoch": 0,
                                              "rack_id": None, "subscribed_topic_names": [TOPIC]}),
        step("share group heartbeat without member id", 76, 1, {
            "group_id": SHARE_GROUP, "member_id": "", "member_epoch": 0, "rack_id": None,
            "subscribed_topic_names": [TOPIC]}),
        step("share group describe", 77, 1, {"group_ids": [SHARE_GROUP], "include_authorized_operations": True}),
        *(step(f"share fetch v{v}", 78, v, _by_unknown_id(_share_fetch(v, SHARE_GROUP, MEMBER, 0))) for v in (1, 2)),
        step("share fetch without member id", 78, 2, _by_unknown_id(_share_fetch(2, SHARE_GROUP, "", 0))),
        step("share fetch without group id", 78, 2, _by_unknown_id(_share_fetch(2, None, MEMBER, 0))),
        *(step(f"share acknowledge v{v}", 79, v, _acknowledge(v, SHARE_GROUP, MEMBER, 1)) for v in (1, 2)),
        step("share acknowledge without group id", 79, 2,
             _acknowledge(2, SHARE_GROUP, MEMBER, 1) | {"group_id": None}),
        *(step(f"describe share group offsets v{v}", 90, v, {"groups": [
            {"group_id": SHARE_GROUP, "topics": [{"topic_name": TOPIC, "partitions": [0]}]}]}) for v in (0, 1)),
        step("describe all share group offsets", 90, 1, {"groups": [{"group_id": SHARE_GROUP, "topics": None}]}),
        step("alter share group offsets", 91, 0, {"group_id": SHARE_GROUP, "topics": [
            {"topic_name": TOPIC, "partitions": [{"partition_index": 0, "start_offset": 0}]}]}),
        step("delete share group offsets", 92, 0, {"group_id": SHARE_GROUP, "topics": [{"topic_name": TOPIC}]}),
    ]


def quotas_tokens_telemetry() -> list[Step]:
    """Client quotas and SCRAM credentials (DESCRIBE_CONFIGS, ALTER_CONFIGS, DESCRIBE on the cluster: not for
    every user, `users` null, whose denial Kafka never answers, its error response failing on the null list); the
    delegation-token keys, which Kafka refuses on PLAINTEXT before it authorizes anything (their denials are
    the `tokens` group's, on SASL); telemetry, which authorizes nothing."""
    return [
        *(step(f"describe client quotas v{v}", 48, v, {"components": [], "strict": False}) for v in (0, 1)),
        *(step(f"alter client quotas v{v}", 49, v, {"entries": [
            {"entity": [{"entity_type": "user", "entity_name": "conf-authz-u-{run}"}],
             "ops": [{"key": "producer_byte_rate", "value": 1048576.0, "remove": False}]}],
            "validate_only": False}) for v in (0, 1)),
        step("describe scram credentials", 50, 0, {"users": [{"name": "conf-authz-u-{run}"}]}),
        step("create delegation token", 38, 3, create(3)),
        step("renew delegation token", 39, 2, {"hmac": MISSING_HMAC, "renew_period_ms": HOUR}),
        step("expire delegation token", 40, 2, {"hmac": MISSING_HMAC, "expiry_time_period_ms": -1}),
        step("describe delegation tokens", 41, 3, {"owners": None}),
        step("get telemetry subscriptions", 71, 0, {"client_instance_id": ZERO}, **RANDOM_ID),
        step("push telemetry of an id never got", 72, 0, {
            "client_instance_id": "kemuTelemetryAuthAAAAA", "subscription_id": 0, "terminating": False,
            "compression_type": 0, "metrics": ""}),
    ]


def sasl() -> list[Step]:
    """SaslHandshake and SaslAuthenticate authorize nothing: on PLAINTEXT both are answered ILLEGAL_SASL_STATE;
    last, as a client's connection would not go on after them."""
    return [
        step("sasl handshake", 17, 1, {"mechanism": "PLAIN"}),
        step("sasl authenticate", 36, 2, {"auth_bytes": "00616c69636500736563726574"}),
    ]
