"""Kafka Streams 4.3 (src/StreamsApps.java) with group.protocol=streams (KIP-1071) against `kemu serve` and the
reference Kafka, the outcomes compared: a word count with a repartition topic and a state store, exactly-once
(exactly_once_v2), run by one instance and by two sharing the tasks. The broker creates the internal topics and
assigns the tasks through StreamsGroupHeartbeat; the output is checked record by record (the record cache is
off, so every occurrence of a word gives the next count, each exactly once), and the group as
Admin.describeStreamsGroups shows it: Stable with its two sub-topologies, every member holding active tasks,
Empty once the instances have closed. The classic protocol (JoinGroup/SyncGroup, Kafka Streams' own assignor)
runs the same word count. With the group config streams.num.standby.replicas=1, two instances each hold a standby of
the stateful tasks the other runs; one instance is stopped, the other takes its tasks over, its active tasks starting
from the state its standbys had kept, and the counts go on from where they were, exactly once. Last, a broker of the
test's own (a `kemu serve`, and a single-node reference Kafka) is restarted (SIGTERM, and SIGKILL) under two
exactly_once_v2 instances in the middle of their input: the group and the transactions come back from the broker's
logs and the output is still exactly once, on both."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from compat_tests import jars
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.external_clients import tool_missing
from compat_tests.java.conftest import JavaKemu
from compat_tests.java.java_client import JavaClient
from compat_tests.polling import wait_for
from compat_tests.reference.kafka import KAFKA_JAR_SET, START_TIMEOUT_S, STOP_TIMEOUT_S, ReferenceKafka, find_java
from compat_tests.test_transactions_support import create_topics, unique

STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE, TXN_OFFSET_COMMIT, END_TXN = 88, 89, 28, 26
PARTITIONS = 3
LINES = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog", "The end"]
RUN_TIMEOUT_S = 170.0
# How long StreamsApps' `pause` waits for the broker's restart (its RESUME_TIMEOUT_MS); the bounds of a restart
# (of its stop and of its start) add up to less.
RESUME_TIMEOUT_S = 300.0


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


# Words that come back in the second half, so the counts after the takeover carry on from the state of before.
STANDBY_LINES = ["the cat sat on the mat", "a dog and a cat", "the dog sat", "on the mat a cat", "the end",
                 "a cat and the dog"]


def standby_observed(result: dict[str, Any]) -> dict[str, Any]:
    """What must agree between Kafka and kemu: the members' task counts (which member gets which tasks depends on
    their random ids, and so does which instance is stopped and how many tasks it hands over). Where the survivor's
    standbys had read to depends on timing, so it is checked on kemu only."""
    def shape(group: dict[str, Any]) -> dict[str, Any]:
        return {"state": group["state"], "members": sorted(
            (len(m["active"]), len(m["standby"]), len(m["warmup"]), m["reconciled"]) for m in group["members"])}
    return {"counts": result["counts"], "before": shape(result["before"]), "after": shape(result["after"]),
            "closed": result["closed"]}


def test_standbys_take_over_a_stopped_instance_exactly_once(java_pair: Pair, java_kemu: JavaKemu,
                                                           java: JavaClient) -> None:
    app = unique("java-streams-standby")
    source, sink = f"{app}-input", f"{app}-output"

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [source, sink], partitions=PARTITIONS)
        return java.run("StreamsApps", target.bootstrap, "standby", app, source, sink, "exactly_once_v2",
                        *STANDBY_LINES, timeout=2 * RUN_TIMEOUT_S + 120)

    kemu = scenario(java_pair.kemu)
    kafka = scenario(java_pair.kafka)
    check(f"java.{java.line}.streams_standby_takeover", standby_observed(kafka), standby_observed(kemu))

    # Record by record, each word's counts 1, 2, ... its total: nothing lost, nothing counted twice, and the
    # counts after the takeover carrying on from the state the standby had kept.
    totals = Counter(word for line in STANDBY_LINES for word in line.lower().split())
    assert kemu["counts"] == {word: list(range(1, total + 1)) for word, total in sorted(totals.items())}
    stateful = [f"1_{p}" for p in range(PARTITIONS)]
    every_task = [f"{s}_{p}" for s in (0, 1) for p in range(PARTITIONS)]
    # The group as kemu's StreamsGroupDescribe showed it, each member's current assignment its target; the app
    # waited for each instance's own tasks (metadataForLocalThreads) to be those of a member, so the standbys
    # reached the instances through kemu's heartbeat answers.
    before = kemu["before"]["members"]
    assert kemu["before"]["state"] == "Stable" and len(before) == 2
    assert sorted(t for m in before for t in m["active"]) == every_task
    # Each stateful task a standby on the member not running it; the stateless ones have none.
    assert sorted(t for m in before for t in m["standby"]) == stateful
    assert all(not set(m["active"]) & set(m["standby"]) for m in before)
    # The stopped instance's stateful tasks had been standbys on the survivor, updated from their changelogs; the
    # survivor's active tasks restored from where its standbys had read to (not from the beginning), so what it
    # counts next carries on from the standbys' state.
    assert kemu["moved"] and set(kemu["moved"]) <= set(stateful)
    survivor = kemu["survivor"]
    for task in kemu["moved"]:
        assert survivor["restore"][task]["from"] == survivor["standby"][task]["read_to"] + 1, (task, survivor)
    assert kemu["after"] == {"state": "Stable", "members": [
        {"active": every_task, "standby": [], "warmup": [], "reconciled": True}]}
    assert kemu["closed"]["state"] == "Empty"
    heartbeats = [e for e in java_kemu.exchanges(STREAMS_GROUP_HEARTBEAT) if e["request"].get("group_id") == app]
    assert heartbeats and {(e["response"] or {}).get("error") for e in heartbeats} == {"NONE"}


def paused_word_count(java: JavaClient, bootstrap: str, app: str, folder: Path,
                      restart: Callable[[], None]) -> dict[str, Any]:
    """StreamsApps' `pause` run of two exactly_once_v2 instances on STANDBY_LINES, `restart` called (the broker
    stopped and started again) while they process the second third; the app's result."""
    source, sink = f"{app}-input", f"{app}-output"
    paused, resume = folder / "paused", folder / "resume"
    create_topics(bootstrap, [source, sink], partitions=PARTITIONS)
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(java.run, "StreamsApps", bootstrap, "pause", app, source, sink, "2", "exactly_once_v2",
                          str(paused), str(resume), *STANDBY_LINES,
                          timeout=2 * RUN_TIMEOUT_S + RESUME_TIMEOUT_S + 120)
        wait_for(lambda: paused.exists() or run.done(), what="the first half counted", timeout=RUN_TIMEOUT_S)
        if run.done():
            run.result()  # the app failed before the pause: its error
        restart()
        resume.write_text("resume")
        result: dict[str, Any] = run.result()
    return result


def check_exactly_once_across_the_restart(result: dict[str, Any]) -> None:
    """What a restart of either broker must leave: each word's counts 1, 2, ... exactly once, record by record; the
    group Stable before and after it with both members and all the tasks of both sub-topologies active, one
    member each; Empty once the instances closed."""
    totals = Counter(word for line in STANDBY_LINES for word in line.lower().split())
    assert result["counts"] == {word: list(range(1, total + 1)) for word, total in sorted(totals.items())}
    for phase in ("before", "after"):
        group = result[phase]
        assert (group["state"], group["members"], group["subtopologies"]) == ("Stable", 2, 2), phase
        held = [task for member in group["active_tasks"] for task in member]
        assert sorted(held) == group["all_active_tasks"] == [f"{s}_{p}" for s in (0, 1) for p in range(PARTITIONS)]
    assert result["closed"]["state"] == "Empty"


@pytest.mark.parametrize("target", ["kemu", "kafka"])
@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_the_word_count_is_exactly_once_across_a_broker_restart(tmp_path: Path, java: JavaClient, target: str,
                                                                stop: str) -> None:
    """Two exactly_once_v2 instances count the first third of the input; the second is produced and the broker
    (a `kemu serve`, or a single-node reference Kafka, of this test's own) at once stopped (SIGTERM, or SIGKILL: a
    crash) while they process it, and started again on its data and port; the last third is produced after it.
    The streams group, its tasks and the transactions come back from the broker's logs, and the output is each
    word's counts 1, 2, ... exactly once, on kemu as on Kafka."""
    app = unique(f"java-streams-restart-{target}-{stop}")
    if target == "kafka":
        check_exactly_once_across_the_restart(kafka_restarted(tmp_path, java, app, kill=stop == "sigkill"))
    else:
        check_kemu_restarted(tmp_path, java, app, kill=stop == "sigkill")


def kafka_restarted(tmp_path: Path, java: JavaClient, app: str, kill: bool) -> dict[str, Any]:
    """The run against a reference Kafka of its own (the session's is shared), restarted in place."""
    java_command = find_java()
    if java_command is None:
        tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
    kafka = ReferenceKafka(classpath=jars.classpath(KAFKA_JAR_SET), java=java_command, work_dir=tmp_path / "kafka")
    # Generous (a JVM's controlled shutdown, its start and its log recovery, on a loaded machine), and together
    # within the app's wait for the restart.
    restart = partial(kafka.restart, kill=kill, timeout=2 * START_TIMEOUT_S, stop_timeout=2 * STOP_TIMEOUT_S)
    with kafka:
        return paused_word_count(java, kafka.bootstrap, app, tmp_path, restart)


def check_kemu_restarted(tmp_path: Path, java: JavaClient, app: str, kill: bool) -> None:
    """The run against a `kemu serve` of its own, the outcome checked, and kemu's transcript after the restart:
    the group's members and the application's transactions carried on."""
    server = JavaKemu(tmp_path / "data", tmp_path / "transcript.jsonl")
    before_restart = 0

    def restart() -> None:
        nonlocal before_restart
        if kill:
            server.kill()
        else:
            server.stop_cleanly()
        before_restart = len(server.transcript.read_text(encoding="utf-8").splitlines())
        server.start()

    server.start()
    try:
        result = paused_word_count(java, server.bootstrap, app, tmp_path, restart)
    finally:
        if server.is_running():
            server.stop_cleanly()

    check_exactly_once_across_the_restart(result)
    # After the restart kemu knew the group's members (their heartbeats, leaving ones too, answered NONE, not
    # UNKNOWN_MEMBER_ID) and the application's transactions went on committing.
    after = [json.loads(line) for line in server.transcript.read_text(encoding="utf-8").splitlines()[before_restart:]]
    heartbeats = [e for e in after if e["api_key"] == STREAMS_GROUP_HEARTBEAT and e["request"].get("group_id") == app]
    assert heartbeats and {(e["response"] or {}).get("error") for e in heartbeats} == {"NONE"}
    assert all(e["request"]["member_epoch"] != 0 for e in heartbeats)
    commits = [e for e in after if e["api_key"] == END_TXN and e["request"].get("committed")
               and str(e["request"].get("transactional_id")).startswith(app)]
    assert commits and {(e["response"] or {}).get("error") for e in commits} == {"NONE"}
