"""Group configs (resource type GROUP), Kafka against kemu: DescribeConfigs of a group with none set and after
changes (synonyms, documentation, a name filter), IncrementalAlterConfigs and AlterConfigs with every refusal
GroupConfig's validation makes (unknown names, types, validators, the broker's bounds, session above
heartbeat, APPEND, null values, duplicates, the unnamed resource), validate_only, ListConfigResources' GROUP
entries, and a KIP-848 member's heartbeat interval following its group's override."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from compat_tests.differential.admin_requests import RESOURCE_GROUP, describe_configs
from compat_tests.differential.compare import check
from compat_tests.differential.groups_wire import Change, incremental, ready_coordinator
from compat_tests.differential.targets import Pair, Target
from kemu.broker.group_configs import GROUP_CONFIGS

INCREMENTAL_ALTER_CONFIGS, ALTER_CONFIGS, LIST_CONFIG_RESOURCES, CONSUMER_GROUP_HEARTBEAT = 44, 33, 74, 68
SET, DELETE, APPEND = 0, 1, 2
GROUP_CONFIG_NAMES = sorted(GROUP_CONFIGS)


_NAMED: list[str] = []


def _name(prefix: str) -> str:
    name = f"gc-{prefix}-{uuid.uuid4().hex[:8]}"
    _NAMED.append(name)
    return name


@pytest.fixture(autouse=True)
def _configs_removed_after(pair: Pair) -> Iterator[None]:
    """The session's brokers are shared: other tests (the conformance corpus' ListConfigResources) must not
    see this module's groups, so each test deletes every config it set, on both."""
    yield
    for group in _NAMED:
        for target in (pair.kafka, pair.kemu):
            incremental(target, group, [(name, None, DELETE) for name in GROUP_CONFIG_NAMES])
    _NAMED.clear()


def described(target: Target, group: str, keys: list[str] | None = None, version: int = 4,
              synonyms: bool = True, documentation: bool = True) -> dict[str, Any]:
    [result] = describe_configs(target, [(RESOURCE_GROUP, group, keys)], version, synonyms=synonyms,
                                documentation=documentation)["results"]
    result.pop("resource_name")
    result["configs"] = {entry.pop("name"): entry for entry in result["configs"]}
    return dict(result)


@pytest.mark.parametrize("version", [1, 4])
def test_a_group_without_configs(pair: Pair, version: int) -> None:
    group = _name("plain")
    kafka, kemu = pair.both(lambda t: {
        "all": described(t, group, version=version, documentation=version >= 3),
        "plain": described(t, group, version=version, synonyms=False, documentation=False),
        "filtered": described(t, group, ["share.auto.offset.reset", "consumer.session.timeout.ms", "no.such"],
                              version=version, documentation=False),
        "unnamed": described(t, "", version=version)})
    check(f"group_configs.describe.v{version}", kafka, kemu)


STEPS: list[tuple[str, list[Change]]] = [
    ("set", [("consumer.session.timeout.ms", "50000", SET), ("share.auto.offset.reset", "earliest", SET),
             ("share.isolation.level", "read_committed", SET), ("share.delivery.count.limit", "3", SET)]),
    ("above max", [("consumer.session.timeout.ms", "70000", SET)]),
    ("below min", [("consumer.session.timeout.ms", "1000", SET)]),
    ("heartbeat above max", [("consumer.heartbeat.interval.ms", "50000", SET)]),
    ("share heartbeat at session", [("share.heartbeat.interval.ms", "15000", SET),
                                    ("share.session.timeout.ms", "15000", SET)]),
    ("bad choice", [("share.auto.offset.reset", "bogus", SET)]),
    ("case", [("share.auto.offset.reset", "EARLIEST", SET)]),
    ("by duration", [("share.auto.offset.reset", "by_duration:PT1H30M", SET)]),
    ("negative duration", [("share.auto.offset.reset", "by_duration:-PT1H", SET)]),
    ("bad isolation", [("share.isolation.level", "READ_COMMITTED", SET)]),
    ("not a number", [("share.record.lock.duration.ms", "abc", SET)]),
    ("below at-least", [("share.record.lock.duration.ms", "100", SET)]),
    ("below bound", [("share.record.lock.duration.ms", "2000", SET)]),
    ("count limit", [("share.delivery.count.limit", "1", SET)]),
    ("count above bound", [("share.delivery.count.limit", "11", SET)]),
    ("not boolean", [("share.renew.acknowledge.enable", "yes", SET)]),
    ("boolean", [("share.renew.acknowledge.enable", " FALSE ", SET)]),
    ("standby above max", [("streams.num.standby.replicas", "3", SET)]),
    ("assignment interval", [("consumer.assignment.interval.ms", "20000", SET)]),
    ("unknown", [("no.such", "1", SET)]),
    ("broker name", [("group.consumer.session.timeout.ms", "50000", SET)]),
    ("append", [("consumer.session.timeout.ms", "50000", APPEND)]),
    ("subtract unknown", [("no.such", "1", 3)]),
    ("null", [("consumer.session.timeout.ms", None, SET)]),
    ("duplicate", [("share.isolation.level", "read_committed", SET),
                   ("share.isolation.level", "read_committed", SET)]),
    ("delete", [("share.auto.offset.reset", None, DELETE), ("share.delivery.count.limit", None, DELETE)]),
    ("delete unset", [("streams.session.timeout.ms", None, DELETE)]),
]


def test_changes_step_by_step(pair: Pair) -> None:
    group = _name("changed")

    def run(target: Target) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for label, changes in STEPS:
            seen[label] = incremental(target, group, changes)
        seen["validate only"] = incremental(target, group, [("share.session.timeout.ms", "50000", SET)], True)
        seen["unnamed"] = incremental(target, "", [("consumer.session.timeout.ms", "50000", SET)])
        seen["after"] = described(target, group)
        return seen

    kafka, kemu = pair.both(run)
    check("group_configs.incremental", kafka, kemu)


def test_legacy_alter_replaces_every_override(pair: Pair) -> None:
    group = _name("legacy")

    def alter(target: Target, configs: dict[str, str]) -> list[Any]:
        body = target.request(ALTER_CONFIGS, 2, {"resources": [{
            "resource_type": RESOURCE_GROUP, "resource_name": group,
            "configs": [{"name": n, "value": v} for n, v in configs.items()]}], "validate_only": False})
        return [(r["error_code"], r["error_message"]) for r in body["responses"]]

    def run(target: Target) -> dict[str, Any]:
        return {
            "first": alter(target, {"consumer.session.timeout.ms": "50000", "share.isolation.level": "read_committed"}),
            "second": alter(target, {"share.delivery.count.limit": "4"}),
            "refused": alter(target, {"share.delivery.count.limit": "40"}),
            "after": {name: (entry["value"], entry["config_source"])
                      for name, entry in described(target, group)["configs"].items()},
            "listed": sorted(r["resource_name"] for r in target.request(LIST_CONFIG_RESOURCES, 1, {
                "resource_types": [RESOURCE_GROUP]})["config_resources"] if r["resource_name"] == group),
        }

    kafka, kemu = pair.both(run)
    check("group_configs.legacy", kafka, kemu)


def _join(target: Target, group: str, topic: str) -> Callable[[], dict[str, Any]]:
    def heartbeat() -> dict[str, Any]:
        return target.request(CONSUMER_GROUP_HEARTBEAT, 1, {
            "group_id": group, "member_id": uuid.uuid4().hex[:22], "member_epoch": 0, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": [topic],
            "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": []})
    return heartbeat


def test_a_consumer_group_runs_with_its_heartbeat_interval(pair: Pair) -> None:
    group = _name("applied")

    def run(target: Target) -> dict[str, Any]:
        ready_coordinator(target, group)
        before = _join(target, group, "gc-applied-topic")()
        changed = incremental(target, group, [("consumer.heartbeat.interval.ms", "7000", SET),
                                              ("consumer.session.timeout.ms", "50000", SET)])
        after = _join(target, group, "gc-applied-topic")()
        # Below the broker's group.consumer.min.heartbeat.interval.ms (5000) is refused; a broker whose bounds
        # moved after a group set its value would clamp it — not reachable here without restarting both.
        return {"before": (before["error_code"], before["heartbeat_interval_ms"]), "changed": changed,
                "after": (after["error_code"], after["heartbeat_interval_ms"])}

    kafka, kemu = pair.both(run)
    # The scenario only says something if both members joined.
    assert kafka["before"][0] == kafka["after"][0] == 0, kafka
    check("group_configs.applied", kafka, kemu)
