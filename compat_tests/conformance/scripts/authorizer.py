"""The `authorizer` group: recorded against a Kafka whose StandardAuthorizer has no ACL and does not allow
everyone when none is found, the PLAINTEXT client (User:ANONYMOUS) not a super user; replayed against a broker
with the same settings. Every call a client makes, denied as Kafka denies it (or answered, where Kafka
authorizes nothing)."""

from __future__ import annotations

from compat_tests.conformance.scripts import batch, produce, step
from compat_tests.conformance.scripts.admin import _create, _describe
from compat_tests.conformance.scripts.data import _fetch
from compat_tests.conformance.scripts.groups import SUBSCRIPTION, commit, fetch_offsets
from compat_tests.conformance.scripts.security import ACL, DESCRIBE, FILTER
from compat_tests.conformance.scripts.unsupported import API_VERSIONS_KEYS, EPOCH
from compat_tests.conformance.steps import Script

# Kafka's message for a denied controller call quotes its request object: connection id, ports, the session
# object's identity hash, the buffer's positions.
QUOTING = {"elect leaders", "alter partition reassignments", "list partition reassignments", "describe acls",
           "create acls", "delete acls", "alter scram credentials", "update features"}
QUOTING_WHY = ("Kafka's message quotes its Request object (connection id with ports, session identity hash, "
               "buffer positions), different on every run")
TOPIC = "conf-authz-{run}"
GROUP = "conf-authz-g-{run}"
TID = "conf-authz-t-{run}"


def scripts() -> list[Script]:
    steps = [
        step("metadata no topics", 3, 12, {"topics": [], "allow_auto_topic_creation": False}),
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
        step("list config resources", 74, 1, {"resource_types": []}),
        step("list config resources v0", 74, 0, {}),
        step("produce v13 unknown topic id", 0, 13, {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
                                                     "topic_data": [{"topic_id": "AAAAAAAAAAAAAAAAAAAAAQ",
                                                                     "partition_data": [{"index": 0, "records": [
                                                                         batch(["x"])]}]}]}),
        step("api versions", 18, 4, {"client_software_name": "kemu-conformance", "client_software_version": "1"},
             key_by=API_VERSIONS_KEYS, **EPOCH),
    ]
    for denied in steps:
        if denied.name in QUOTING:
            denied.varying, denied.why = {"error_message": "request_text"}, QUOTING_WHY
    return [Script("authorizer.denied", steps, group="authorizer")]
