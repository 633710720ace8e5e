"""Topic and cluster administration: CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs,
AlterConfigs, IncrementalAlterConfigs, DescribeLogDirs, ElectLeaders, the partition reassignment calls and
DescribeCluster, each at its versions and with the requests Kafka refuses."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import barrier, create_topic, produce, step, versions
from compat_tests.conformance.scripts.unsupported import API_VERSIONS_KEYS, EPOCH, SOFTWARE
from compat_tests.conformance.steps import Script, Step

TOPIC = "conf-admin-{run}"
TOPIC_CONFIGS = ["cleanup.policy", "retention.ms", "segment.bytes", "max.message.bytes", "min.insync.replicas",
                 "message.timestamp.type", "compression.type"]
BROKER_CONFIGS = ["num.partitions", "auto.create.topics.enable", "log.retention.hours", "message.max.bytes",
                  "offsets.topic.replication.factor", "group.initial.rebalance.delay.ms", "log.segment.bytes"]
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4


def _create(name: str, version: int, partitions: int = 1, replication: int = 1, *,
            configs: dict[str, str] | None = None, validate_only: bool = False) -> dict[str, Any]:
    return {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": replication,
                        "assignments": [], "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
            "timeout_ms": 30000, "validate_only": validate_only}


def create_topics() -> list[Script]:
    sweep = [step(f"v{version}", 19, version, _create(f"conf-create-v{version}-{{run}}", version, 2,
                                                       configs={"retention.ms": "3600000"}),
                  key_by={"configs": "name"})
             for version in versions(19)]
    name = "conf-create-{run}"
    errors = [step("create", 19, 7, _create(name, 7), key_by={"configs": "name"})]
    for version in (2, 5, 7):
        errors += [
            step(f"exists v{version}", 19, version, _create(name, version), key_by={"configs": "name"}),
            step(f"bad config value v{version}", 19, version,
                 _create(f"conf-bad-{{run}}-{version}", version, configs={"cleanup.policy": "bogus"})),
            step(f"unknown config v{version}", 19, version,
                 _create(f"conf-unknown-{{run}}-{version}", version, configs={"no.such.config": "1"})),
            step(f"zero partitions v{version}", 19, version, _create(f"conf-zero-{{run}}-{version}", version, 0)),
            step(f"replication 3 v{version}", 19, version, _create(f"conf-rf-{{run}}-{version}", version, 1, 3)),
            step(f"bad name v{version}", 19, version, _create("bad/name{run}", version)),
        ]
    errors += [
        step("validate only", 19, 7, _create("conf-validate-{run}", 7, 3, validate_only=True),
             key_by={"configs": "name"}),
        step("name too long", 19, 7, _create("x" * 240 + "{run}", 7)),
        step("name dot", 19, 7, _create(".", 7)),
        step("default partitions", 19, 7, _create("conf-default-{run}", 7, -1, -1), key_by={"configs": "name"}),
        step("assignments", 19, 7, {"topics": [{"name": "conf-assigned-{run}", "num_partitions": -1,
                                                "replication_factor": -1,
                                                "assignments": [{"partition_index": 0, "broker_ids": [1]},
                                                                {"partition_index": 1, "broker_ids": [1]}],
                                                "configs": []}], "timeout_ms": 30000, "validate_only": False},
             key_by={"configs": "name"}),
        step("assignment to a missing broker", 19, 7, {
            "topics": [{"name": "conf-assigned-bad-{run}", "num_partitions": -1, "replication_factor": -1,
                        "assignments": [{"partition_index": 0, "broker_ids": [7]}], "configs": []}],
            "timeout_ms": 30000, "validate_only": False}),
        step("twice in one request", 19, 7, {"topics": _create("conf-twice-{run}", 7)["topics"] * 2,
                                             "timeout_ms": 30000, "validate_only": False}),
        step("bad retention", 19, 7, _create("conf-badret-{run}", 7, configs={"retention.ms": "forever"})),
    ]
    return [Script("create_topics.versions", sweep), Script("create_topics.errors", errors)]


def delete_topics() -> list[Script]:
    sweep = []
    for version in versions(20):
        name = f"conf-delete-v{version}-{{run}}"
        sweep += create_topic(name)
        if version >= 6:
            body: dict[str, Any] = {"topics": [{"name": name, "topic_id": "AAAAAAAAAAAAAAAAAAAAAA"}]}
        else:
            body = {"topic_names": [name]}
        sweep.append(step(f"v{version}", 20, version, {**body, "timeout_ms": 30000}))
    errors = create_topic("conf-delete-byid-{run}")
    errors += [
        step("by topic id v6", 20, 6, {"topics": [{"name": None, "topic_id": "{$topic_id}"}], "timeout_ms": 30000}),
        step("unknown topic v1", 20, 1, {"topic_names": ["conf-delete-missing-{run}"], "timeout_ms": 30000}),
        step("unknown topic v5", 20, 5, {"topic_names": ["conf-delete-missing-{run}"], "timeout_ms": 30000}),
        step("unknown topic v6", 20, 6, {"topics": [{"name": "conf-delete-missing-{run}",
                                                     "topic_id": "AAAAAAAAAAAAAAAAAAAAAA"}], "timeout_ms": 30000}),
        step("unknown topic id v6", 20, 6, {"topics": [{"name": None, "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ"}],
                                            "timeout_ms": 30000}),
    ]
    return [Script("delete_topics.versions", sweep), Script("delete_topics.errors", errors)]


def create_partitions() -> list[Script]:
    steps = create_topic(TOPIC)
    for count, version in enumerate(versions(37), start=2):
        steps.append(step(f"to {count} v{version}", 37, version, {
            "topics": [{"name": TOPIC, "count": count, "assignments": None}], "timeout_ms": 30000,
            "validate_only": False}))
    top = len(versions(37)) + 1
    steps += [
        step("same count", 37, 3, {"topics": [{"name": TOPIC, "count": top, "assignments": None}],
                                   "timeout_ms": 30000, "validate_only": False}),
        step("fewer", 37, 3, {"topics": [{"name": TOPIC, "count": 1, "assignments": None}], "timeout_ms": 30000,
                              "validate_only": False}),
        step("validate only", 37, 3, {"topics": [{"name": TOPIC, "count": top + 3, "assignments": None}],
                                      "timeout_ms": 30000, "validate_only": True}),
        step("unknown topic", 37, 3, {"topics": [{"name": "conf-cp-missing-{run}", "count": 2, "assignments": None}],
                                      "timeout_ms": 30000, "validate_only": False}),
        step("with assignment", 37, 3, {"topics": [{"name": TOPIC, "count": top + 1,
                                                    "assignments": [{"broker_ids": [1]}]}],
                                        "timeout_ms": 30000, "validate_only": False}),
        step("assignment count wrong", 37, 3, {"topics": [{"name": TOPIC, "count": top + 3,
                                                           "assignments": [{"broker_ids": [1]}]}],
                                               "timeout_ms": 30000, "validate_only": False}),
        step("metadata after", 3, 12, {"topics": [{"name": TOPIC}], "allow_auto_topic_creation": False},
             key_by={"partitions": "partition_index"}, retry_unless=f"topics/0/partitions/{top}",
             why="new partitions reach the broker's metadata a moment after CreatePartitions returns"),
    ]
    return [Script("create_partitions.cases", steps)]


def _describe(resources: list[tuple[int, str, list[str] | None]], synonyms: bool = False,
              documentation: bool = False) -> dict[str, Any]:
    return {"resources": [{"resource_type": kind, "resource_name": name, "configuration_keys": keys}
                          for kind, name, keys in resources],
            "include_synonyms": synonyms, "include_documentation": documentation}


def configs() -> list[Script]:
    describe = create_topic(TOPIC, configs={"retention.ms": "7200000", "cleanup.policy": "compact"})
    for version in versions(32):
        describe.append(step(f"topic v{version}", 32, version,
                             _describe([(TOPIC_RESOURCE, TOPIC, TOPIC_CONFIGS)], synonyms=True),
                             key_by={"configs": "name"}))
        describe.append(step(f"broker v{version}", 32, version,
                             _describe([(BROKER_RESOURCE, "1", BROKER_CONFIGS)], synonyms=True),
                             key_by={"configs": "name"}))
    describe += [
        step("topic all", 32, 4, _describe([(TOPIC_RESOURCE, TOPIC, None)]), key_by={"configs": "name"}),
        step("topic documentation", 32, 4, _describe([(TOPIC_RESOURCE, TOPIC, ["retention.ms"])],
                                                     documentation=True), key_by={"configs": "name"}),
        step("unknown topic", 32, 4, _describe([(TOPIC_RESOURCE, "conf-dc-missing-{run}", None)])),
        step("unknown broker", 32, 4, _describe([(BROKER_RESOURCE, "7", BROKER_CONFIGS)])),
        step("bad broker id", 32, 4, _describe([(BROKER_RESOURCE, "one", BROKER_CONFIGS)])),
        step("unknown config names", 32, 4, _describe([(TOPIC_RESOURCE, TOPIC, ["no.such.config"])])),
        step("unknown resource type", 32, 4, _describe([(99, "x", None)])),
        step("bad topic name", 32, 4, _describe([(TOPIC_RESOURCE, "bad/name", None)])),
    ]

    def alter(name: str, entries: dict[str, str | None], validate: bool = False) -> dict[str, Any]:
        return {"resources": [{"resource_type": TOPIC_RESOURCE, "resource_name": name,
                               "configs": [{"name": k, "value": v} for k, v in entries.items()]}],
                "validate_only": validate}

    altering = create_topic(TOPIC)
    for version in versions(33):
        altering.append(step(f"set v{version}", 33, version, alter(TOPIC, {"retention.ms": str(1000 * (version + 7))})))
    altering += [
        *barrier("altered"),
        step("described after", 32, 4, _describe([(TOPIC_RESOURCE, TOPIC, ["retention.ms", "cleanup.policy"])]),
             key_by={"configs": "name"}),
        step("bad value", 33, 2, alter(TOPIC, {"retention.ms": "soon"})),
        step("unknown config", 33, 2, alter(TOPIC, {"no.such.config": "1"})),
        step("unknown topic", 33, 2, alter("conf-ac-missing-{run}", {"retention.ms": "1000"})),
        step("validate only", 33, 2, alter(TOPIC, {"retention.ms": "5"}, validate=True)),
        step("broker dynamic", 33, 2, {"resources": [{"resource_type": BROKER_RESOURCE, "resource_name": "1",
                                                      "configs": [{"name": "log.cleaner.threads", "value": "1"}]}],
                                       "validate_only": True}),
        step("broker read-only", 33, 2, {"resources": [{"resource_type": BROKER_RESOURCE, "resource_name": "1",
                                                        "configs": [{"name": "log.dirs", "value": "/x"}]}],
                                         "validate_only": True}),
    ]

    def incremental(entries: list[tuple[str, int, str | None]], name: str = TOPIC,
                    validate: bool = False) -> dict[str, Any]:
        return {"resources": [{"resource_type": TOPIC_RESOURCE, "resource_name": name,
                               "configs": [{"name": k, "config_operation": op, "value": v}
                                           for k, op, v in entries]}], "validate_only": validate}

    SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
    inc = create_topic(TOPIC)
    for version in versions(44):
        inc.append(step(f"set v{version}", 44, version, incremental([("retention.ms", SET, str(60000 + version))])))
    inc += [
        step("append", 44, 1, incremental([("cleanup.policy", APPEND, "compact")])),
        *barrier("appended"),
        step("described after append", 32, 4, _describe([(TOPIC_RESOURCE, TOPIC, ["cleanup.policy"])]),
             key_by={"configs": "name"}),
        step("subtract", 44, 1, incremental([("cleanup.policy", SUBTRACT, "delete")])),
        step("delete", 44, 1, incremental([("retention.ms", DELETE, None)])),
        *barrier("deleted"),
        step("described after delete", 32, 4, _describe([(TOPIC_RESOURCE, TOPIC, ["retention.ms", "cleanup.policy"])],
                                                        synonyms=True), key_by={"configs": "name"}),
        step("append to a non-list", 44, 1, incremental([("retention.ms", APPEND, "5")])),
        step("bad value", 44, 1, incremental([("retention.ms", SET, "soon")])),
        step("unknown operation", 44, 1, incremental([("retention.ms", 7, "5")])),
        step("unknown config", 44, 1, incremental([("no.such.config", SET, "5")])),
        step("same config twice", 44, 1, incremental([("retention.ms", SET, "5"), ("retention.ms", SET, "6")])),
        step("unknown topic", 44, 1, incremental([("retention.ms", SET, "5")], name="conf-iac-missing-{run}")),
        step("validate only", 44, 1, incremental([("retention.ms", SET, "5")], validate=True)),
    ]
    return [Script("describe_configs.cases", describe), Script("alter_configs.cases", altering),
            Script("incremental_alter_configs.cases", inc)]


def log_dirs_and_cluster() -> list[Script]:
    dirs = [*create_topic(TOPIC, partitions=2), produce(TOPIC, ["a", "b"])]
    why = "the log dir's path and its disk's sizes are the machine's, not the broker's behaviour"
    DISK = {"log_dir": "log_dir", "total_bytes": "any:disk_bytes", "usable_bytes": "any:disk_bytes"}
    for version in versions(35):
        dirs.append(step(f"v{version}", 35, version, {"topics": [{"topic": TOPIC, "partitions": [0, 1]}]},
                         varying=DISK,
                         why=why, key_by={"partitions": "partition_index"}))
    dirs.append(step("unknown topic", 35, 4, {"topics": [{"topic": "conf-ld-missing-{run}", "partitions": [0]}]},
                     varying=DISK,
                     why=why))
    elect = create_topic(TOPIC)
    for version in versions(43):
        elect.append(step(f"preferred v{version}", 43, version, {
            "election_type": 0, "topic_partitions": [{"topic": TOPIC, "partitions": [0]}], "timeout_ms": 30000}))
    elect += [
        step("unclean", 43, 2, {"election_type": 1, "topic_partitions": [{"topic": TOPIC, "partitions": [0]}],
                                "timeout_ms": 30000}),
        step("unknown topic", 43, 2, {"election_type": 0, "timeout_ms": 30000,
                                      "topic_partitions": [{"topic": "conf-el-missing-{run}", "partitions": [0]}]}),
        step("unknown partition", 43, 2, {"election_type": 0, "timeout_ms": 30000,
                                          "topic_partitions": [{"topic": TOPIC, "partitions": [5]}]}),
    ]
    reassign = create_topic(TOPIC)
    for version in versions(45):
        reassign.append(step(f"cancel none v{version}", 45, version, {
            "timeout_ms": 30000, "allow_replication_factor_change": True,
            "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "replicas": None}]}]}))
    reassign += [
        step("to the same replica", 45, 0, {"timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "replicas": [1]}]}]}),
        step("to a missing broker", 45, 0, {"timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "replicas": [7]}]}]}),
        step("unknown topic", 45, 0, {"timeout_ms": 30000, "topics": [
            {"name": "conf-ra-missing-{run}", "partitions": [{"partition_index": 0, "replicas": [1]}]}]}),
        # v1 (KIP-860): the replication factor may be kept; the replica list is checked before the factor.
        step("same factor v1", 45, 1, {"timeout_ms": 30000, "allow_replication_factor_change": False, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "replicas": [1]}]}]}),
        step("to a missing broker v1", 45, 1, {"timeout_ms": 30000, "allow_replication_factor_change": False,
                                               "topics": [{"name": TOPIC, "partitions": [
                                                   {"partition_index": 0, "replicas": [1, 7]}]}]}),
        step("unknown partition v1", 45, 1, {"timeout_ms": 30000, "allow_replication_factor_change": False,
                                             "topics": [{"name": TOPIC, "partitions": [
                                                 {"partition_index": 3, "replicas": [1]}]}]}),
        step("list for topic", 46, 0, {"timeout_ms": 30000, "topics": [{"name": TOPIC, "partition_indexes": [0]}]}),
        step("list unknown topic", 46, 0, {"timeout_ms": 30000,
                                           "topics": [{"name": "conf-ra-missing-{run}", "partition_indexes": [0]}]}),
    ]
    cluster = []
    for version in versions(60):
        cluster.append(step(f"v{version}", 60, version, {"include_cluster_authorized_operations": False,
                                                         "endpoint_type": 1, "include_fenced_brokers": False},
                            key_by={"brokers": "broker_id"}))
    cluster += [
        step("authorized operations", 60, 1, {"include_cluster_authorized_operations": True, "endpoint_type": 1}),
        step("controllers endpoint", 60, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 2}),
        step("bad endpoint type", 60, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 9}),
        step("v2 with fenced brokers", 60, 2, {"include_cluster_authorized_operations": True, "endpoint_type": 1,
                                               "include_fenced_brokers": True}, key_by={"brokers": "broker_id"}),
    ]
    return [Script("describe_log_dirs.cases", dirs), Script("elect_leaders.cases", elect),
            Script("reassignments.cases", reassign), Script("describe_cluster.versions", cluster)]


def update_features() -> list[Script]:
    """UpdateFeatures as kafka-features runs it: transaction.version down to 1 and up to 2 again at each
    version, every refusal of FeatureControlManager, validate-only and no-change updates, the finalized levels
    ApiVersions then reports. It leaves transaction.version at 2, as it found it (kraft.version, whose upgrade
    is for good, stays untouched)."""
    def update(name: str, version: int, *updates: tuple[str, int, int], validate_only: bool = False,
               allow_downgrade: bool = False) -> Step:
        return step(name, 57, version, {"timeout_ms": 30000, "validate_only": validate_only, "feature_updates": [
            {"feature": feature, "max_version_level": level, "allow_downgrade": allow_downgrade,
             "upgrade_type": kind} for feature, level, kind in updates]})

    def features(name: str, level: int | None) -> Step:
        # Named so: the known differences of kemu's ApiVersions are those of scenarios "*api*versions*". A
        # broker reports a feature level once the controller's record reaches its metadata cache: Kafka's
        # ApiVersions can answer the level from before the update just made, so the step waits for the new one.
        where = "finalized_features/name=transaction.version"
        wait = f"!{where}" if level is None else f"{where}/max_version_level=={level}"
        return step(f"api versions {name}", 18, 4, SOFTWARE, key_by=API_VERSIONS_KEYS, retry_unless=wait,
                    **EPOCH)

    tv, upgrade, safe, unsafe = "transaction.version", 1, 2, 3
    steps: list[Step] = []
    for version in versions(57):
        steps += [
            update(f"v{version} downgrade as an upgrade", version, (tv, 1, upgrade)),
            # v0 carries no upgrade type: Kafka reads it as an upgrade and refuses it, the level stays 2
            update(f"v{version} downgrade", version, (tv, 1, safe), allow_downgrade=True),
            features(f"after the v{version} downgrade", 1 if version else 2),
            update(f"v{version} upgrade", version, (tv, 2, upgrade)),
        ]
    steps += [
        update("validate only", 1, (tv, 1, safe), validate_only=True),
        features("after validating", 2),
        update("unsafe downgrade to 0", 2, (tv, 0, unsafe)),
        features("without transaction.version", None),
        update("safe downgrade to a newer level", 2, (tv, 1, safe)),
        update("upgrade from 0", 2, (tv, 2, upgrade)),
        update("beyond the supported", 2, (tv, 3, upgrade)),
        update("below 0", 2, (tv, -1, unsafe)),
        update("unknown feature", 2, ("conf.unknown.version", 1, upgrade)),
        update("unknown upgrade type", 2, (tv, 2, 7)),
        update("one bad update of two", 1, (tv, 1, safe), ("conf.unknown.version", 1, upgrade)),
        update("metadata.version as it is", 2, ("metadata.version", 30, upgrade)),
        update("metadata.version safe downgrade", 2, ("metadata.version", 29, safe)),
        update("metadata.version unsafe downgrade", 2, ("metadata.version", 29, unsafe)),
        update("kraft.version as it is", 2, ("kraft.version", 0, safe)),
        update("nothing", 2),
        features("at the end", 2),
    ]
    return [Script("update_features.cases", steps)]


def scripts() -> list[Script]:
    return [*create_topics(), *delete_topics(), *create_partitions(), *configs(), *log_dirs_and_cluster(),
            *update_features()]
