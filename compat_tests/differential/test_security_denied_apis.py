"""Every other API a client uses, asked by a principal without ACLs (alice), Kafka (StandardAuthorizer) against
kemu on the secured pair: which *_AUTHORIZATION_FAILED code each answers where, with which message, and
what it leaves out. The topic and group exist (made by the super user), so a refusal cannot be told apart
from an unknown resource by accident.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.security_brokers import (  # noqa: F401 (secured_pair_fixture: the fixture)
    SecuredPair,
    secured_pair_fixture,
)
from compat_tests.differential.security_sasl import answer
from compat_tests.differential.test_security_authorization import make_topic

TOPIC, GROUP, TXN = "authz-sweep", "authz-sweep-group", "authz-sweep-txn"
PARTITION = [{"partition_index": 0}]

REQUESTS: dict[str, tuple[int, int, dict[str, Any]]] = {
    "offset_fetch_v7": (9, 7, {"group_id": GROUP, "topics": [{"name": TOPIC, "partition_indexes": [0]}],
                               "require_stable": False}),
    "offset_fetch_v8_all_topics": (9, 8, {"groups": [{"group_id": GROUP, "topics": None}], "require_stable": False}),
    "heartbeat": (12, 4, {"group_id": GROUP, "generation_id": 1, "member_id": "m", "group_instance_id": None}),
    "leave_group": (13, 5, {"group_id": GROUP, "members": [{"member_id": "m", "group_instance_id": None,
                                                              "reason": None}]}),
    "sync_group": (14, 5, {"group_id": GROUP, "generation_id": 1, "member_id": "m", "group_instance_id": None,
                           "protocol_type": "consumer", "protocol_name": "range", "assignments": []}),
    "list_groups": (16, 5, {"states_filter": [], "types_filter": []}),
    "delete_records": (21, 2, {"topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "offset": 0}]}],
                               "timeout_ms": 30000}),
    "offset_for_leader_epoch": (23, 4, {"replica_id": -1, "topics": [
        {"topic": TOPIC, "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}),
    "add_partitions_to_txn": (24, 3, {"v3_and_below_transactional_id": TXN, "v3_and_below_producer_id": 1,
                                      "v3_and_below_producer_epoch": 0,
                                      "v3_and_below_topics": [{"name": TOPIC, "partitions": [0]}]}),
    "add_offsets_to_txn": (25, 4, {"transactional_id": TXN, "producer_id": 1, "producer_epoch": 0,
                                   "group_id": GROUP}),
    "end_txn": (26, 4, {"transactional_id": TXN, "producer_id": 1, "producer_epoch": 0, "committed": True}),
    "txn_offset_commit": (28, 4, {"transactional_id": TXN, "group_id": GROUP, "producer_id": 1, "producer_epoch": 0,
                                  "generation_id": -1, "member_id": "", "group_instance_id": None,
                                  "topics": [{"name": TOPIC, "partitions": [
                                      {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                                       "committed_metadata": None}]}]}),
    "describe_configs_topic": (32, 4, {"resources": [{"resource_type": 2, "resource_name": TOPIC,
                                                      "configuration_keys": None}],
                                       "include_synonyms": False, "include_documentation": False}),
    "create_partitions": (37, 3, {"topics": [{"name": TOPIC, "count": 2, "assignments": None}], "timeout_ms": 30000,
                                  "validate_only": False}),
    "delete_groups": (42, 2, {"groups_names": [GROUP]}),
    "incremental_alter_configs": (44, 1, {"resources": [
        {"resource_type": 2, "resource_name": TOPIC, "configs": [{"name": "retention.ms", "config_operation": 0,
                                                                  "value": "1000"}]},
        {"resource_type": 4, "resource_name": "1", "configs": [{"name": "log.cleaner.threads", "config_operation": 0,
                                                                "value": "1"}]}], "validate_only": False}),
    "offset_delete": (47, 0, {"group_id": GROUP, "topics": [{"name": TOPIC, "partitions": PARTITION}]}),
    "describe_producers": (61, 0, {"topics": [{"name": TOPIC, "partition_indexes": [0]}]}),
    "describe_transactions": (65, 0, {"transactional_ids": [TXN]}),
    "list_transactions": (66, 1, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1}),
    "describe_log_dirs_v1_every_topic": (35, 1, {"topics": None}),
    "describe_log_dirs_v4_every_topic": (35, 4, {"topics": None}),
    "describe_log_dirs_v4_the_topic": (35, 4, {"topics": [{"topic": TOPIC, "partitions": [0]}]}),
    "describe_topic_partitions": (75, 0, {"topics": [{"name": TOPIC}], "response_partition_limit": 2000,
                                          "cursor": None}),
    "consumer_group_describe": (69, 0, {"group_ids": [GROUP], "include_authorized_operations": True}),
}


@pytest.mark.parametrize("case", list(REQUESTS))
def test_denied(secured_pair: SecuredPair, case: str) -> None:
    key, version, body = REQUESTS[case]

    def run(secured: Any) -> Any:
        make_topic(secured, TOPIC)
        with secured.as_user("alice") as connection:
            return answer(connection, key, version, body)

    kafka, kemu = secured_pair.both(run)
    check(f"security.denied.{case}", kafka, kemu)
