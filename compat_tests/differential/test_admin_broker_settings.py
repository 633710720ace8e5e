"""Broker settings that shape topic administration, Kafka against kemu, on a pair started with them: no
auto-creation, three partitions by default, broker-level retention and message size that topics inherit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compat_tests.differential.admin_requests import (
    RESOURCE_BROKER,
    RESOURCE_TOPIC,
    create_topics,
    describe_configs,
    keyed,
    metadata,
    new_topic,
    topic_state,
    wait_for,
)
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target

SETTINGS = {"auto.create.topics.enable": "false", "num.partitions": "3", "log.retention.ms": "3600000",
            "message.max.bytes": "2000000"}


@pytest.fixture(scope="module")
def configured(pair_with: Callable[[dict[str, str]], Pair]) -> Pair:
    return pair_with(SETTINGS)


def test_no_auto_creation(configured: Pair) -> None:
    """A request allowing auto-creation gets UNKNOWN_TOPIC_OR_PARTITION, and nothing is made."""
    def run(target: Target) -> dict[str, Any]:
        first = metadata(target, 12, ["bs-not-made"], auto_create=True)
        again = metadata(target, 12, ["bs-not-made"], auto_create=False)
        return {"first": first, "again": again}
    kafka, kemu = configured.both(run)
    check("broker_settings.no_auto_creation", kafka, kemu)


def test_created_with_the_broker_defaults(configured: Pair) -> None:
    """A topic created without a layout or configs: what CreateTopics echoes, the topic's partitions, and its
    configs with the broker-level values they inherit and their synonyms."""
    def run(target: Target) -> dict[str, Any]:
        created = create_topics(target, [new_topic("bs-defaults")])
        created["topics"] = keyed(created["topics"], "name")
        for result in created["topics"].values():
            result["configs"] = keyed(result["configs"], "name")
        made = wait_for(lambda: topic_state(target, "bs-defaults"), lambda state: state is not None,
                        f"{target.name}: bs-defaults made")
        assert made is not None
        described = describe_configs(target, [(RESOURCE_TOPIC, "bs-defaults", None),
                                              (RESOURCE_BROKER, "1", sorted(SETTINGS))], synonyms=True)
        for result in described["results"]:
            result["configs"] = keyed(result["configs"], "name")
        return {"created": created, "partitions": len(made["partitions"]), "described": described}
    kafka, kemu = configured.both(run)
    check("broker_settings.created_with_defaults", kafka, kemu)
