"""Streams groups (KIP-1071) through raw requests on the reference Kafka and on kemu, the answers compared: a
member joining with a word count's topology (a repartition topic and a store's changelog, both missing) is told
which internal topics are missing (in Kafka's order of them) and that the assignment waits for the initial
rebalance delay; the broker creates the topics with the partition counts it derived; once they exist and the
delay is over, the member's heartbeat gets every task; StreamsGroupDescribe shows the configured topology."""

from __future__ import annotations

import functools
import time
from typing import Any

from compat_tests.differential.compare import check
from compat_tests.differential.groups_wire import create_topics, incremental, ready_coordinator, unique, wait_for
from compat_tests.differential.targets import Pair, Target

STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE, METADATA = 88, 89, 3
SET, DELETE = 0, 1
MISSING_INTERNAL_TOPICS = 3  # StreamsGroupHeartbeatResponse.Status
# The group's streams.initial.rebalance.delay.ms, set on both before the join. Kafka's default of 3 s was too short
# on a loaded CI machine: Kafka made the internal topics after the delay had run out, so it assigned the
# not-yet-ready topology (no tasks) and the assignment interval then held back the next one.
INITIAL_REBALANCE_DELAY_S = 10.0
# A heartbeat must have seen the internal topics this long before the delay runs out for the scenario to be the
# one it means to compare; a run slower than that is started again under a new group.
MARGIN_S = 2.0
ATTEMPTS = 3
PARTITIONS = 3


class TooSlow(Exception):
    """A target made the internal topics too close to the end of the initial rebalance delay."""


def topology(app: str) -> dict[str, Any]:
    """What Kafka Streams 4.3 sends for a word count (compat_tests/java/src/StreamsApps.java)."""
    return {"epoch": 0, "subtopologies": [
        {"subtopology_id": "0", "source_topics": [f"{app}-input"], "source_topic_regex": [],
         "state_changelog_topics": [], "repartition_sink_topics": [f"{app}-words-repartition"],
         "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [],
         "state_changelog_topics": [{"name": f"{app}-counts-changelog", "partitions": 0, "replication_factor": 0,
                                     "topic_configs": [{"key": "cleanup.policy", "value": "compact"}]}],
         "repartition_sink_topics": [], "copartition_groups": [],
         "repartition_source_topics": [{"name": f"{app}-words-repartition", "partitions": 0, "replication_factor": 0,
                                        "topic_configs": [{"key": "cleanup.policy", "value": "delete"}]}]},
    ]}


def heartbeat(target: Target, app: str, epoch: int, joining: bool = False) -> dict[str, Any]:
    return target.request(STREAMS_GROUP_HEARTBEAT, 0, {
        "group_id": app, "member_id": f"{app}-member", "member_epoch": epoch, "endpoint_information_epoch": 0,
        "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000 if joining else -1,
        "topology": topology(app) if joining else None, "active_tasks": [], "standby_tasks": [], "warmup_tasks": [],
        "process_id": "11111111-2222-3333-4444-555555555555" if joining else None, "user_endpoint": None,
        "client_tags": [] if joining else None, "task_offsets": None, "task_end_offsets": None,
        "shutdown_application": False})


def partition_counts(target: Target, names: list[str]) -> dict[str, int] | None:
    answer = target.request(METADATA, 12, {"topics": [{"name": n} for n in names], "allow_auto_topic_creation": False})
    counts = {t["name"]: len(t["partitions"]) for t in answer["topics"] if t["error_code"] == 0}
    return counts if len(counts) == len(names) else None


def group_delay(target: Target, app: str, operation: int) -> None:
    value = str(int(INITIAL_REBALANCE_DELAY_S * 1000)) if operation == SET else None
    assert incremental(target, app, [("streams.initial.rebalance.delay.ms", value, operation)]) == [(0, None)]


def test_internal_topics_are_created_and_the_tasks_assigned(pair: Pair) -> None:
    for attempt in range(ATTEMPTS):
        app = unique("diff-streams")
        try:
            kafka, kemu = pair.both(functools.partial(word_count, app=app))
        except TooSlow:
            if attempt == ATTEMPTS - 1:
                raise
            continue
        break
    internal = [f"{app}-words-repartition", f"{app}-counts-changelog"]
    check("streams_groups.word_count", kafka, kemu)
    assert kemu["created"] == dict.fromkeys(internal, PARTITIONS)
    assert {s["status_code"] for s in kemu["join"]["status"]} == {3, 5}  # missing internal topics, delayed
    assert kemu["assigned"]["active_tasks"] == [{"subtopology_id": s, "partitions": list(range(PARTITIONS))}
                                               for s in ("0", "1")]


def word_count(target: Target, app: str) -> dict[str, Any]:
    internal = [f"{app}-words-repartition", f"{app}-counts-changelog"]
    create_topics(target, {f"{app}-input": PARTITIONS})
    ready_coordinator(target, app)
    group_delay(target, app, SET)
    try:
        joined_at = time.monotonic()
        join = heartbeat(target, app, 0, joining=True)
        epoch = [join["member_epoch"]]

        def configured() -> dict[str, int] | None:
            # The member heartbeats, as a Streams client does, until its group's topology is configured: the
            # answer no longer says MISSING_INTERNAL_TOPICS. Kafka creates the topics a moment after it
            # answers (kemu before), retries a creation that did not go through only on a later heartbeat, and
            # its coordinator sees them only once it has the metadata image that made them, which can be after
            # a Metadata request already shows them; the delayed assignment then works on the topology as
            # the group's last heartbeat configured it.
            answer = heartbeat(target, app, epoch[0])
            epoch[0] = answer["member_epoch"]
            if MISSING_INTERNAL_TOPICS in {status["status_code"] for status in answer["status"] or []}:
                time.sleep(0.25)
                return None
            return partition_counts(target, internal)

        created = wait_for(f"{target.name}: the internal topics", configured, timeout_s=60.0)
        if time.monotonic() > joined_at + INITIAL_REBALANCE_DELAY_S - MARGIN_S:
            raise TooSlow(target.name)
        time.sleep(max(0.0, joined_at + INITIAL_REBALANCE_DELAY_S + 0.5 - time.monotonic()))
        assigned = heartbeat(target, app, epoch[0])
        described = target.request(STREAMS_GROUP_DESCRIBE, 0, {"group_ids": [app],
                                                                "include_authorized_operations": False})
        leave = heartbeat(target, app, -1)
        return {"join": join, "created": created, "assigned": assigned, "described": described, "leave": leave}
    finally:
        group_delay(target, app, DELETE)
