"""Kafka Streams 4.3 (src/StreamsApps.java) with group.protocol=streams (KIP-1071) against `kemu serve` and the
reference Kafka, the outcomes compared: a word count with a repartition topic and a state store, exactly-once
(exactly_once_v2), run by one instance and by two sharing the tasks. The broker creates the internal topics and
assigns the tasks through StreamsGroupHeartbeat; the output is checked record by record (the record cache is
off, so every occurrence of a word gives the next count, each exactly once), and the group as
Admin.describeStreamsGroups shows it: Stable with its two sub-topologies, every member holding active tasks,
Empty once the instances have closed. The classic protocol (JoinGroup/SyncGroup, Kafka Streams' own assignor)
runs the same word count."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.conftest import JavaKemu
from compat_tests.java.java_client import JavaClient
from compat_tests.test_transactions_support import create_topics, unique

STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE, TXN_OFFSET_COMMIT = 88, 89, 28
PARTITIONS = 3
LINES = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog", "The end"]
RUN_TIMEOUT_S = 170.0


def expected_counts() -> dict[str, list[int]]:
    totals = Counter(word for line in LINES for word in line.lower().split())
    return {word: list(range(1, total + 1)) for word, total in sorted(totals.items())}


def observed(result: dict[str, Any]) -> dict[str, Any]:
    """What must agree between Kafka and kemu: which member gets which tasks depends on their random ids, so
    the members' task counts, not their tasks."""
    group = dict(result["group"])
    group["active_tasks"] = sorted(len(tasks) for tasks in group["active_tasks"])
    return {"counts": result["counts"], "group": group, "closed": result["closed"]}


@pytest.mark.parametrize("instances", [1, 2], ids=["one-instance", "two-instances"])
def test_a_streams_word_count_exactly_once(java_pair: Pair, java_kemu: JavaKemu, java: JavaClient,
                                           instances: int) -> None:
    app = unique(f"java-streams-{instances}")
    source, sink = f"{app}-input", f"{app}-output"

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [source, sink], partitions=PARTITIONS)
        return java.run("StreamsApps", target.bootstrap, "wordcount", app, source, sink, str(instances), "streams",
                        "exactly_once_v2", *LINES, timeout=RUN_TIMEOUT_S)

    kemu = scenario(java_pair.kemu)
    kafka = scenario(java_pair.kafka)
    check(f"java.{java.line}.streams_word_count", observed(kafka), observed(kemu))

    assert kemu["counts"] == expected_counts()
    group = kemu["group"]
    assert (group["state"], group["members"], group["subtopologies"]) == ("Stable", instances, 2)
    # Every task of both sub-topologies (one per input partition) is active on exactly one member.
    held = [task for member in group["active_tasks"] for task in member]
    assert sorted(held) == group["all_active_tasks"] == [f"{s}_{p}" for s in (0, 1) for p in range(PARTITIONS)]
    assert all(group["active_tasks"])
    assert kemu["closed"] == {"state": "Empty", "members": 0, "subtopologies": 2, "active_tasks": [],
                              "all_active_tasks": []}
    # The broker made the internal topics, a partition per task, as Kafka did.
    internal = {f"{app}-words-repartition", f"{app}-counts-changelog"}
    assert internal_topics(java_pair.kemu, app) == internal_topics(java_pair.kafka, app) == {
        name: PARTITIONS for name in internal}
    heartbeats = [e for e in java_kemu.exchanges(STREAMS_GROUP_HEARTBEAT) if e["request"].get("group_id") == app]
    assert heartbeats and {(e["response"] or {}).get("error") for e in heartbeats} == {"NONE"}
    # Exactly once: the tasks commit their input offsets in their transactions.
    assert any(e["request"].get("group_id") == app for e in java_kemu.exchanges(TXN_OFFSET_COMMIT))


def internal_topics(target: Target, app: str) -> dict[str, int]:
    listed = AdminClient({"bootstrap.servers": target.bootstrap}).list_topics(timeout=15).topics
    return {name: len(topic.partitions) for name, topic in listed.items()
            if name.startswith(f"{app}-") and name not in (f"{app}-input", f"{app}-output")}


def test_the_classic_protocol_still_runs_the_word_count(java_pair: Pair, java: JavaClient) -> None:
    """group.protocol=classic: the same application over JoinGroup/SyncGroup and Kafka Streams' own assignor."""
    app = unique("java-streams-classic")
    source, sink = f"{app}-input", f"{app}-output"

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [source, sink], partitions=PARTITIONS)
        return java.run("StreamsApps", target.bootstrap, "wordcount", app, source, sink, "2", "classic",
                        "exactly_once_v2", *LINES, timeout=RUN_TIMEOUT_S)

    kemu = scenario(java_pair.kemu)
    kafka = scenario(java_pair.kafka)
    check(f"java.{java.line}.streams_word_count_classic", kafka, kemu)
    assert kemu == {"counts": expected_counts(), "group": None}
