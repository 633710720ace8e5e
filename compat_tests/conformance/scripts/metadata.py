"""Metadata and DescribeTopicPartitions: a topic that exists, one that does not, one auto-created, a bad name,
by topic id, with authorized operations asked for."""

from __future__ import annotations

from compat_tests.conformance.scripts import LEADER_SETTLING, create_topic, step, versions
from compat_tests.conformance.steps import Script

TOPIC = "conf-meta-{run}"


def _topics(version: int, *names: str) -> list[dict[str, object]]:
    return [{"name": name} for name in names]


def scripts() -> list[Script]:
    sweep = create_topic(TOPIC, partitions=3)
    for version in versions(3):
        sweep.append(step(f"v{version}", 3, version, {"topics": _topics(version, TOPIC),
                                                      "allow_auto_topic_creation": False},
                          key_by={"brokers": "node_id", "topics": "name", "partitions": "partition_index"}))
    errors = create_topic(TOPIC)
    for version in (0, 4, 9, 12, 13):
        errors.append(step(f"unknown topic v{version}", 3, version,
                           {"topics": _topics(version, f"conf-meta-missing-{version}-{{run}}"),
                            "allow_auto_topic_creation": False}))
    for version in (1, 10, 12):
        errors.append(step(f"bad name v{version}", 3, version,
                           {"topics": _topics(version, "bad/name{run}"), "allow_auto_topic_creation": False}))
    for version in (8, 10):
        errors.append(step(f"authorized operations v{version}", 3, version, {
            "topics": _topics(version, TOPIC), "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": True, "include_topic_authorized_operations": True}))
    errors += [
        step("by topic id v12", 3, 12, {"topics": [{"topic_id": "{$topic_id}", "name": None}],
                                        "allow_auto_topic_creation": False}),
        step("unknown topic id v12", 3, 12, {"topics": [{"topic_id": "AAAAAAAAAAAAAAAAAAAAAQ", "name": None}],
                                             "allow_auto_topic_creation": False}),
        step("no topics v12", 3, 12, {"topics": [], "allow_auto_topic_creation": False}),
        step("null name and zero id v12", 3, 12, {"topics": [{"topic_id": "AAAAAAAAAAAAAAAAAAAAAA", "name": None}],
                                                  "allow_auto_topic_creation": False,
                                                  "include_topic_authorized_operations": True}),
        step("by topic id v13", 3, 13, {"topics": [{"topic_id": "{$topic_id}", "name": None}],
                                        "allow_auto_topic_creation": False}),
        step("unknown topic id v13", 3, 13, {"topics": [{"topic_id": "AAAAAAAAAAAAAAAAAAAAAQ", "name": None}],
                                             "allow_auto_topic_creation": False}),
        step("auto-create v9", 3, 9, {"topics": [{"name": "conf-meta-auto-{run}"}], "allow_auto_topic_creation": True},
             retry_on=LEADER_SETTLING,
             why="Kafka answers LEADER_NOT_AVAILABLE until the auto-created topic's leader is known"),
    ]
    describe = create_topic(TOPIC, partitions=3)
    describe += [
        step("all partitions", 75, 0, {"topics": [{"name": TOPIC}], "response_partition_limit": 2000, "cursor": None}),
        step("limit 2", 75, 0, {"topics": [{"name": TOPIC}], "response_partition_limit": 2, "cursor": None}),
        step("from cursor", 75, 0, {"topics": [{"name": TOPIC}], "response_partition_limit": 2000,
                                    "cursor": {"topic_name": TOPIC, "partition_index": 1}}),
        step("unknown topic", 75, 0, {"topics": [{"name": "conf-dtp-missing-{run}"}], "response_partition_limit": 10,
                                      "cursor": None}),
        step("existing and unknown", 75, 0, {"topics": [{"name": TOPIC}, {"name": "conf-dtp-missing-{run}"}],
                                             "response_partition_limit": 10, "cursor": None}),
        step("bad name", 75, 0, {"topics": [{"name": "bad/name{run}"}], "response_partition_limit": 10,
                                 "cursor": None}),
    ]
    return [Script("metadata.versions", sweep), Script("metadata.errors", errors),
            Script("describe_topic_partitions.cases", describe)]
