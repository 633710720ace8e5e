"""DeleteTopics, CreatePartitions, AlterConfigs and IncrementalAlterConfigs, Kafka against kemu: what each
refuses (error codes and messages) and what it does when it succeeds."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from compat_tests.differential.admin_requests import (
    ALTER_CONFIGS,
    CREATE_PARTITIONS,
    DELETE_TOPICS,
    INCREMENTAL_ALTER_CONFIGS,
    RESOURCE_BROKER,
    RESOURCE_TOPIC,
    ZERO_UUID,
    by_partition,
    describe_configs,
    ensure_topic,
    keyed,
    topic_state,
    wait_for,
)
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from kemu.kafka_defaults import KAFKA_BROKER_KEYS

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
TWO = "ad-two"  # two partitions; never changed by a request that succeeds
GROWN = "ad-grown"
ALTERED = "ad-altered"
UNKNOWN_ID = uuid.UUID("5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f")


@pytest.fixture(scope="module")
def topics(pair: Pair) -> None:
    for target in (pair.kafka, pair.kemu):
        for name in (TWO, GROWN, ALTERED):
            ensure_topic(target, name, 2)


# --- DeleteTopics ---------------------------------------------------------------------------------------

def deleted(version: int, names: list[str], ids: list[tuple[str | None, uuid.UUID]]
            ) -> Callable[[Target], dict[str, Any]]:
    def run(target: Target) -> dict[str, Any]:
        body: dict[str, Any] = {"timeout_ms": 30_000}
        if version >= 6:
            body["topics"] = [{"name": name, "topic_id": ZERO_UUID} for name in names] + [
                {"name": name, "topic_id": topic_id} for name, topic_id in ids]
        else:
            body["topic_names"] = names
        answer = target.request(DELETE_TOPICS, version, body)
        # Sorted: the order of the answers means nothing (Kafka's is a hash map's, kemu shuffles).
        answer["responses"] = keyed(sorted(({**entry, "name": entry["name"] or "<null>"}
                                            for entry in answer["responses"]), key=lambda entry: entry["name"]),
                                    "name")
        return answer
    return run


@pytest.mark.parametrize(("case", "version", "names", "ids"), [
    ("unknown_name", 6, ["ad-unknown"], []),
    ("unknown_name", 5, ["ad-unknown"], []),
    ("unknown_name", 1, ["ad-unknown"], []),
    ("illegal_name", 6, ["ad bad name"], []),
    ("unknown_id", 6, [], [(None, UNKNOWN_ID)]),
    ("neither_name_nor_id", 6, [], [(None, ZERO_UUID)]),
    ("name_and_id", 6, [], [(TWO, UNKNOWN_ID)]),
    ("duplicate_name", 6, ["ad-unknown", "ad-unknown"], []),
    ("duplicate_id", 6, [], [(None, UNKNOWN_ID), (None, UNKNOWN_ID)]),
])
def test_delete_topics_refused(pair: Pair, topics: None, case: str, version: int, names: list[str],
                               ids: list[tuple[str | None, uuid.UUID]]) -> None:
    kafka, kemu = pair.both(deleted(version, names, ids))
    check(f"delete_topics.{case}.v{version}", kafka, kemu)


@pytest.mark.parametrize("version", [1, 5, 6])
def test_delete_topics(pair: Pair, version: int) -> None:
    """An existing topic by name (and at v6 another by id), then Metadata no longer lists them."""
    def run(target: Target) -> dict[str, Any]:
        victim, by_id = f"ad-victim-v{version}", f"ad-victim-by-id-v{version}"
        ensure_topic(target, victim)
        topic_id = ensure_topic(target, by_id)["topic_id"]
        answer = deleted(version, [victim], [(None, topic_id)] if version >= 6 else [])(target)
        for name in (victim, by_id) if version >= 6 else (victim,):
            gone(target, name)
        return answer
    kafka, kemu = pair.both(run)
    check(f"delete_topics.deleted.v{version}", kafka, kemu)


def gone(target: Target, name: str) -> None:
    wait_for(lambda: topic_state(target, name), lambda state: state is None, f"{target.name}: {name} deleted")


# --- CreatePartitions ------------------------------------------------------------------------------------

def grown(topics: list[dict[str, Any]], validate_only: bool = False, version: int = 3
          ) -> Callable[[Target], dict[str, Any]]:
    def run(target: Target) -> dict[str, Any]:
        answer = target.request(CREATE_PARTITIONS, version, {"topics": topics, "timeout_ms": 30_000,
                                                             "validate_only": validate_only})
        answer["results"] = keyed(answer["results"], "name")
        return answer
    return run


def growth(name: str, count: int, assignments: list[list[int]] | None = None) -> dict[str, Any]:
    return {"name": name, "count": count,
            "assignments": None if assignments is None else [{"broker_ids": ids} for ids in assignments]}


@pytest.mark.parametrize("validate_only", [False, True], ids=["create", "validate_only"])
@pytest.mark.parametrize(("case", "wanted"), [
    ("fewer", [growth(TWO, 1)]),
    ("same", [growth(TWO, 2)]),
    ("zero", [growth(TWO, 0)]),
    ("unknown_topic", [growth("ad-unknown", 3)]),
    ("illegal_name", [growth("ad bad name", 3)]),
    ("too_many_assignments", [growth(TWO, 3, [[1], [1]])]),
    ("too_few_assignments", [growth(TWO, 4, [[1]])]),
    ("unknown_broker", [growth(TWO, 3, [[7]])]),
    ("duplicate_replica", [growth(TWO, 3, [[1, 1]])]),
    ("empty_assignment", [growth(TWO, 3, [[]])]),
    ("uneven_assignment", [growth(TWO, 4, [[1], [1, 1]])]),
    ("same_topic_twice", [growth(TWO, 3), growth(TWO, 4)]),
    ("internal_topic", [growth("__cluster_metadata", 3)]),
])
def test_create_partitions_refused(pair: Pair, topics: None, case: str, wanted: list[dict[str, Any]],
                                   validate_only: bool) -> None:
    kafka, kemu = pair.both(grown(wanted, validate_only))
    check(f"create_partitions.{case}", kafka, kemu)


def test_create_partitions(pair: Pair, topics: None) -> None:
    """Validated, then made: 2 to 3 by the broker's placement, then to 4 by an assignment; the topic after."""
    def run(target: Target) -> dict[str, Any]:
        checked = grown([growth(GROWN, 3)], validate_only=True)(target)
        made = grown([growth(GROWN, 3)])(target)
        assigned = grown([growth(GROWN, 4, [[1]])])(target)
        after = wait_for(lambda: topic_state(target, GROWN), lambda state: state is not None
                         and len(state["partitions"]) == 4, f"{target.name}: {GROWN} grown")
        assert after is not None
        return {"validated": checked, "made": made, "assigned": assigned, "after": by_partition(after)}
    kafka, kemu = pair.both(run)
    check("create_partitions.grown", kafka, kemu)


# --- AlterConfigs and IncrementalAlterConfigs -----------------------------------------------------------

def altered(resources: list[tuple[int, str, list[tuple[str, int, str | None]]]], incremental: bool,
            validate_only: bool = False) -> Callable[[Target], dict[str, Any]]:
    def run(target: Target) -> dict[str, Any]:
        if incremental:
            body = [{"resource_type": kind, "resource_name": name, "configs": [
                {"name": key, "config_operation": op, "value": value} for key, op, value in configs]}
                for kind, name, configs in resources]
            answer = target.request(INCREMENTAL_ALTER_CONFIGS, 1, {"resources": body, "validate_only": validate_only})
        else:
            body = [{"resource_type": kind, "resource_name": name, "configs": [
                {"name": key, "value": value} for key, _, value in configs]} for kind, name, configs in resources]
            answer = target.request(ALTER_CONFIGS, 2, {"resources": body, "validate_only": validate_only})
        answer["responses"] = keyed(({**entry, "resource_name": f"{entry['resource_type']}:{entry['resource_name']}"}
                                     for entry in answer["responses"]), "resource_name")
        return answer
    return run


ALTER_REFUSED: dict[str, list[tuple[int, str, list[tuple[str, int, str | None]]]]] = {
    "unknown_topic": [(RESOURCE_TOPIC, "ad-unknown", [("retention.ms", SET, "1000")])],
    "illegal_topic_name": [(RESOURCE_TOPIC, "ad bad name", [("retention.ms", SET, "1000")])],
    "empty_topic_name": [(RESOURCE_TOPIC, "", [("retention.ms", SET, "1000")])],
    "unknown_topic_config": [(RESOURCE_TOPIC, TWO, [("no.such.config", SET, "1")])],
    "invalid_value": [(RESOURCE_TOPIC, TWO, [("retention.ms", SET, "soon")])],
    "invalid_value_unknown_topic": [(RESOURCE_TOPIC, "ad-unknown", [("cleanup.policy", SET, "shred")])],
    "below_minimum": [(RESOURCE_TOPIC, TWO, [("segment.bytes", SET, "100")])],
    "append_to_non_list": [(RESOURCE_TOPIC, TWO, [("retention.ms", APPEND, "1")])],
    "subtract_from_non_list": [(RESOURCE_TOPIC, TWO, [("retention.ms", SUBTRACT, "1")])],
    "unknown_operation": [(RESOURCE_TOPIC, TWO, [("retention.ms", 9, "1")])],
    "duplicate_key": [(RESOURCE_TOPIC, TWO, [("retention.ms", SET, "1"), ("retention.ms", SET, "2")])],
    "null_value": [(RESOURCE_TOPIC, TWO, [("retention.ms", SET, None)])],
    "duplicate_resource": [(RESOURCE_TOPIC, TWO, [("retention.ms", SET, "1")]),
                           (RESOURCE_TOPIC, TWO, [("retention.ms", SET, "2")])],
    "other_broker": [(RESOURCE_BROKER, "7", [("log.retention.ms", SET, "1")])],
    "broker_not_a_number": [(RESOURCE_BROKER, "one", [("log.retention.ms", SET, "1")])],
    "broker_read_only": [(RESOURCE_BROKER, "1", [("num.partitions", SET, "3")])],
    "broker_invalid_value": [(RESOURCE_BROKER, "", [("log.retention.ms", SET, "soon")])],
    "broker_min_insync_replicas": [(RESOURCE_BROKER, "1", [("min.insync.replicas", SET, "1")])],
    "cluster_min_insync_replicas_removed": [(RESOURCE_BROKER, "", [("min.insync.replicas", DELETE, None)])],
    "unknown_resource_type": [(3, "x", [("a", SET, "1")])],
}


def _legacy_applies(case: str) -> bool:
    # The legacy AlterConfigs has no operations: only the cases that set values are asked of it. Nor is one
    # naming a resource twice: Kafka 4.3 never answers that request (it times out), where kemu answers
    # INVALID_REQUEST for both, as the incremental one does.
    return case != "duplicate_resource" and all(
        op == SET for _, _, configs in ALTER_REFUSED[case] for _, op, _ in configs)


@pytest.mark.parametrize("case, incremental", [
    pytest.param(case, incremental, id=f"{case}-{'incremental' if incremental else 'legacy'}")
    for case in ALTER_REFUSED for incremental in (True, False) if incremental or _legacy_applies(case)])
def test_alter_configs_refused(pair: Pair, topics: None, case: str, incremental: bool) -> None:
    kind = "incremental" if incremental else "legacy"
    kafka, kemu = pair.both(altered(ALTER_REFUSED[case], incremental, validate_only=True))
    check(f"alter_configs.{kind}.{case}", kafka, kemu)


def test_alter_configs(pair: Pair, topics: None) -> None:
    """Validated only, then set, appended to, deleted; a legacy alter replacing them all; the topic's
    overrides as DescribeConfigs shows them after each step."""
    steps: list[tuple[str, bool, bool, list[tuple[str, int, str | None]]]] = [
        ("validated", True, True, [("retention.ms", SET, "1000")]),
        ("set", True, False, [("retention.ms", SET, "5000"), ("cleanup.policy", SET, "compact")]),
        ("appended", True, False, [("cleanup.policy", APPEND, "delete"), ("segment.ms", SET, "60000")]),
        ("deleted", True, False, [("segment.ms", DELETE, None), ("max.message.bytes", DELETE, None)]),
        ("replaced", False, False, [("retention.bytes", SET, "1048576")]),
    ]

    def run(target: Target) -> dict[str, Any]:
        seen = {}
        for step, incremental, validate_only, configs in steps:
            answer = altered([(RESOURCE_TOPIC, ALTERED, configs)], incremental, validate_only)(target)
            seen[step] = {"answer": answer, "overrides": settled_overrides(target)}
        return seen
    kafka, kemu = pair.both(run)
    check("alter_configs.topic_steps", kafka, kemu)


def settled_overrides(target: Target) -> dict[str, Any]:
    """The topic's overrides once two reads a moment apart agree: Kafka's broker applies a change a moment
    after its controller answered for it."""
    def overrides() -> dict[str, Any]:
        [result] = describe_configs(target, [(RESOURCE_TOPIC, ALTERED, None)])["results"]
        return {entry["name"]: entry["value"] for entry in result["configs"] if entry["config_source"] == 1}

    last: list[dict[str, Any]] = [overrides()]

    def again() -> dict[str, Any]:
        time.sleep(0.2)
        last.append(overrides())
        return last[-1]
    return wait_for(again, lambda now: now == last[-2], f"{target.name}: {ALTERED}'s overrides settled")


def dynamic_broker_configs() -> list[tuple[str, str]]:
    """Every config Kafka can change at runtime, with its type (kemu's table holds Kafka's list)."""
    return [(name, kind) for name, kind, _, dynamic, _ in KAFKA_BROKER_KEYS if dynamic]


# A value each type's configs should refuse: below every numeric minimum, and a word no choice matches.
OUT_OF_RANGE = {"INT": "-5", "LONG": "-5", "SHORT": "-5", "DOUBLE": "-5.5", "BOOLEAN": "maybe"}


@pytest.mark.parametrize("resource", ["1", ""], ids=["broker", "cluster_default"])
def test_dynamic_broker_config_values(pair: Pair, resource: str) -> None:
    """Each of Kafka's dynamic broker configs set (validate_only) to a value its validator should refuse."""
    failures = []
    for name, kind in dynamic_broker_configs():
        value = OUT_OF_RANGE.get(kind, "kemu-bogus-value")
        kafka, kemu = pair.both(altered([(RESOURCE_BROKER, resource, [(name, SET, value)])], True, True))
        try:
            check(f"alter_configs.dynamic_value.{'broker' if resource else 'cluster'}.{name}", kafka, kemu)
        except AssertionError as failure:
            failures.append(str(failure))
    assert not failures, "\n".join(failures)
