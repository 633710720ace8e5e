"""CreateTopics, Kafka against kemu: every way a request can be wrong (error code and message), validate_only,
and what a created topic's answer echoes at v2, v5 and v7 (partitions, replication factor, every config with
its source from v5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compat_tests.differential.admin_requests import create_topics, ensure_topic, keyed, new_topic
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target

VERSIONS = (2, 5, 7)
EXISTING = "ct-existing"
DOTTED = "ct.collide"  # a name with a '.' that a later name with '_' in its place collides with


@pytest.fixture(scope="module")
def existing(pair: Pair) -> None:
    for target in (pair.kafka, pair.kemu):
        ensure_topic(target, EXISTING, 2)
        ensure_topic(target, DOTTED, 1)


def bad_requests(version: int) -> dict[str, list[dict[str, Any]]]:
    """Requests Kafka refuses, by case; a name that could be made is per version, so that a broker creating
    it by mistake does not turn the next version's case into an existing topic."""
    def name(case: str) -> str:
        return f"ct-bad-{case}-v{version}"

    return {
        "empty_name": [new_topic("", 1, 1)],
        "dot": [new_topic(".", 1, 1)],
        "dot_dot": [new_topic("..", 1, 1)],
        "too_long": [new_topic("t" * 250, 1, 1)],
        "illegal_characters": [new_topic("ct bad/name!", 1, 1)],
        "illegal_unicode": [new_topic("ct-caf\u00e9", 1, 1)],
        "colliding": [new_topic(DOTTED.replace(".", "_"), 1, 1)],
        "existing": [new_topic(EXISTING, 1, 1)],
        "cluster_metadata": [new_topic("__cluster_metadata", 1, 1)],
        "partitions_zero": [new_topic(name("p0"), 0, 1)],
        "partitions_minus_two": [new_topic(name("pm2"), -2, 1)],
        "replication_zero": [new_topic(name("r0"), 1, 0)],
        "replication_minus_two": [new_topic(name("rm2"), 1, -2)],
        "replication_above_brokers": [new_topic(name("r3"), 1, 3)],
        "assignment_with_partitions": [new_topic(name("ap"), 2, -1, [(0, [1]), (1, [1])])],
        "assignment_with_replication": [new_topic(name("ar"), -1, 1, [(0, [1])])],
        "assignment_duplicate_replica": [new_topic(name("adup"), assignments=[(0, [1, 1])])],
        "assignment_unknown_broker": [new_topic(name("aunk"), assignments=[(0, [7])])],
        "assignment_empty_list": [new_topic(name("aempty"), assignments=[(0, [])])],
        "assignment_uneven": [new_topic(name("auneven"), assignments=[(0, [1]), (1, [1, 1])])],
        "assignment_gap": [new_topic(name("agap"), assignments=[(0, [1]), (2, [1])])],
        "assignment_not_from_zero": [new_topic(name("a1"), assignments=[(1, [1])])],
        "assignment_partition_twice": [new_topic(name("atwice"), assignments=[(0, [1]), (0, [1])])],
        "config_unknown": [new_topic(name("cunk"), 1, 1, configs={"no.such.config": "1"})],
        "config_null_value": [new_topic(name("cnull"), 1, 1, configs={"retention.ms": None})],
        "cleanup_policy": [new_topic(name("ccp"), 1, 1, configs={"cleanup.policy": "shred"})],
        "min_insync_zero": [new_topic(name("cisr"), 1, 1, configs={"min.insync.replicas": "0"})],
        "segment_bytes_small": [new_topic(name("cseg"), 1, 1, configs={"segment.bytes": "100"})],
        "retention_not_a_number": [new_topic(name("cret"), 1, 1, configs={"retention.ms": "soon"})],
        "timestamp_type": [new_topic(name("cts"), 1, 1, configs={"message.timestamp.type": "WallClock"})],
        "compression_type": [new_topic(name("ccomp"), 1, 1, configs={"compression.type": "zip"})],
        "max_message_bytes": [new_topic(name("cmax"), 1, 1, configs={"max.message.bytes": "-5"})],
        "boolean_config": [new_topic(name("cbool"), 1, 1, configs={"unclean.leader.election.enable": "yes"})],
        "same_topic_twice": [new_topic(name("twice"), 1, 1), new_topic(name("twice"), 1, 1)],
        "config_twice": [{**new_topic(name("ctwice"), 1, 1), "configs": [
            {"name": "retention.ms", "value": "1000"}, {"name": "retention.ms", "value": "2000"}]}],
        "compaction_lags": [new_topic(name("clag"), 1, 1, configs={
            "min.compaction.lag.ms": "5000", "max.compaction.lag.ms": "1000"})],
        "too_many_partitions": [new_topic(name("huge"), 10_001, 1)],
        "negative_broker": [new_topic(name("aneg"), assignments=[(0, [-1])])],
        "one_bad_one_not_validated": [new_topic(name("mixed"), 0, 1), new_topic("..", 1, 1)],
    }


def answer(target: Target, topics: list[dict[str, Any]], version: int, validate_only: bool) -> dict[str, Any]:
    body = create_topics(target, topics, version, validate_only)
    body["topics"] = keyed(body["topics"], "name")
    for result in body["topics"].values():
        if "configs" in result:
            result["configs"] = keyed(result["configs"], "name")
    return body


def answering(topics: list[dict[str, Any]], version: int, validate_only: bool) -> Callable[[Target], dict[str, Any]]:
    return lambda target: answer(target, topics, version, validate_only)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("validate_only", [False, True], ids=["create", "validate_only"])
def test_bad_requests(pair: Pair, existing: None, version: int, validate_only: bool) -> None:
    failures = []
    for case, topics in bad_requests(version).items():
        if validate_only:
            topics = [{**topic, "name": topic["name"].replace("ct-bad-", "ct-bad-vo-")} for topic in topics]
        kafka, kemu = pair.both(answering(topics, version, validate_only))
        try:
            check(f"create_topics.bad.{case}.v{version}", kafka, kemu)
        except AssertionError as failure:
            failures.append(str(failure))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("validate_only", [False, True], ids=["create", "validate_only"])
def test_created(pair: Pair, version: int, validate_only: bool) -> None:
    """A topic with broker defaults, one with its own layout and overrides, one by manual assignment: what
    the answer echoes, then (when created) the topic as Metadata lists it."""
    suffix = f"v{version}{'-vo' if validate_only else ''}"
    topics = [
        new_topic(f"ct-defaults-{suffix}"),
        new_topic(f"ct-overrides-{suffix}", 3, 1, configs={
            "cleanup.policy": "compact,delete", "retention.ms": "3600000", "segment.bytes": "1048576",
            "min.insync.replicas": "1", "message.timestamp.type": "LogAppendTime", "compression.type": "lz4",
            "max.message.bytes": " 2000 "}),
        new_topic(f"ct-assigned-{suffix}", assignments=[(0, [1]), (1, [1])]),
        new_topic(f"ct-{'x' * 240}-{suffix}"[:249], 1, 1),
    ]
    kafka, kemu = pair.both(answering(topics, version, validate_only))
    check(f"create_topics.created.v{version}", kafka, kemu)
