"""DescribeConfigs, Kafka against kemu, entry by entry: a topic with Kafka's defaults and one with overrides,
the broker (its node id and the cluster-wide default ""), with and without synonyms and documentation, at
v1-v4, a config-name filter, and the errors (unknown topic, illegal name, another broker id, a name that is
not a number)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compat_tests.differential.admin_requests import RESOURCE_BROKER, RESOURCE_TOPIC, describe_configs, ensure_topic
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.reference.kafka import REFERENCE_SETTINGS

PLAIN = "dc-plain"
OVERRIDDEN = "dc-overridden"
OVERRIDES: dict[str, str | None] = {
    "cleanup.policy": "compact", "retention.ms": "86400000", "segment.bytes": "1048576",
    "max.message.bytes": "2000000", "min.insync.replicas": "1", "message.timestamp.type": "LogAppendTime",
    "compression.type": "zstd", "min.cleanable.dirty.ratio": "0.25", "delete.retention.ms": "1000",
    "leader.replication.throttled.replicas": "0:1,1:1"}
Resource = tuple[int, str, "list[str] | None"]


@pytest.fixture(scope="module")
def topics(pair: Pair) -> None:
    for target in (pair.kafka, pair.kemu):
        ensure_topic(target, PLAIN, 1)
        ensure_topic(target, OVERRIDDEN, 2, OVERRIDES)


def described(resources: list[Resource], version: int, synonyms: bool,
              documentation: bool) -> Callable[[Target], dict[str, Any]]:
    def run(target: Target) -> dict[str, Any]:
        body = describe_configs(target, resources, version, synonyms=synonyms, documentation=documentation)
        results = {}
        for result in body["results"]:
            result["configs"] = {entry.pop("name"): entry for entry in result["configs"]
                                 if not (result["resource_type"] == RESOURCE_BROKER
                                         and entry["name"] in REFERENCE_SETTINGS)}
            results[f"{result.pop('resource_type')}:{result.pop('resource_name')}"] = result
        body["results"] = results
        return body
    return run


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("synonyms", [False, True], ids=["plain", "synonyms"])
def test_topics(pair: Pair, topics: None, version: int, synonyms: bool) -> None:
    resources: list[Resource] = [(RESOURCE_TOPIC, PLAIN, None), (RESOURCE_TOPIC, OVERRIDDEN, None)]
    kafka, kemu = pair.both(described(resources, version, synonyms, documentation=version >= 3))
    check(f"describe_configs.topics.v{version}", kafka, kemu)


@pytest.mark.parametrize("version", [1, 4])
@pytest.mark.parametrize("synonyms", [False, True], ids=["plain", "synonyms"])
def test_broker(pair: Pair, version: int, synonyms: bool) -> None:
    """Every broker config; the reference's own thread counts (REFERENCE_SETTINGS, which only the reference is
    started with, to share the machine) are left out."""
    resources: list[Resource] = [(RESOURCE_BROKER, "1", None), (RESOURCE_BROKER, "", None)]
    kafka, kemu = pair.both(described(resources, version, synonyms, documentation=version >= 3))
    check(f"describe_configs.broker.v{version}", kafka, kemu)


def test_filtered(pair: Pair, topics: None) -> None:
    resources: list[Resource] = [
        (RESOURCE_TOPIC, OVERRIDDEN, ["retention.ms", "cleanup.policy", "no.such.config"]),
        (RESOURCE_TOPIC, PLAIN, []),  # empty: every config, as null
        (RESOURCE_BROKER, "1", ["log.retention.hours", "log.retention.ms", "num.partitions", "message.max.bytes"]),
    ]
    kafka, kemu = pair.both(described(resources, 4, synonyms=True, documentation=True))
    check("describe_configs.filtered", kafka, kemu)


def test_errors(pair: Pair) -> None:
    resources: list[Resource] = [
        (RESOURCE_TOPIC, "dc-unknown", None), (RESOURCE_TOPIC, "dc bad name", None), (RESOURCE_TOPIC, "", None),
        (RESOURCE_BROKER, "7", None), (RESOURCE_BROKER, "one", None), (8, "7", None), (8, "", None),
        (32, "", None), (16, "", None),  # GROUP and CLIENT_METRICS resources without a name, and named
        (32, "dc-group", None), (16, "dc-metrics", None),
    ]
    kafka, kemu = pair.both(described(resources, 4, synonyms=True, documentation=False))
    check("describe_configs.errors", kafka, kemu)
