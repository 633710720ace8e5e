"""Committed offsets through raw requests, Kafka against kemu: OffsetCommit at every version both serve (a simple
commit with generation -1, from a classic member, an unknown member, a wrong generation, a fenced static
instance, unknown topics and partitions, metadata too large), from a KIP-848 group's member (its epoch, stale
and future ones), and OffsetFetch (one group v1-7, several groups v8+, all partitions with null topics, a
KIP-848 member's id and epoch). v10 names topics by id (each broker's own ids, turned back into names here;
a topic that does not exist is asked for by the zero id).

Topic and partition lists are keyed by name and index: Kafka answers them in the order of its maps.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.groups_kip848 import ConsumerMember, topics_setup
from compat_tests.differential.groups_wire import (
    METADATA,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    ClassicMember,
    admit,
    commit_body,
    consumer_protocols,
    create_topics,
    ready_coordinator,
    topic_ids,
    unique,
)
from compat_tests.differential.targets import Pair, Target

Body = dict[str, Any]
# offset.metadata.max.bytes, Kafka's default.
METADATA_MAX_BYTES = 4096
FIRST_TOPIC_ID_VERSION = 10
ZERO_ID = uuid.UUID(int=0)
NO_SUCH_TOPIC = "<no such topic>"  # the name an answer's zero or unknown topic id is compared by


def keyed_topics(topics: list[Body]) -> dict[str, dict[int, Body]]:
    return {t["name"]: {p["partition_index"]: {k: v for k, v in p.items() if k != "partition_index"}
                        for p in t["partitions"]} for t in topics}


def names_by_id(target: Target, ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    """What each topic id names on `target` (Metadata v12 by id); ids no topic has are left out."""
    known = [i for i in ids if i != ZERO_ID]
    if not known:
        return {}
    metadata = target.request(METADATA, 12, {"topics": [{"topic_id": i, "name": None} for i in known],
                                             "allow_auto_topic_creation": False,
                                             "include_topic_authorized_operations": False})
    return {t["topic_id"]: t["name"] for t in metadata["topics"] if t["error_code"] == 0}


def by_id(target: Target, version: int, topics: list[Body] | None) -> list[Body] | None:
    """A request's topics with the target's topic ids, from v10."""
    if topics is None or version < FIRST_TOPIC_ID_VERSION:
        return topics
    ids = topic_ids(target, [t["name"] for t in topics])
    return [{**t, "topic_id": ids[t["name"]]} for t in topics]


def named(target: Target, version: int, topics: list[Body]) -> list[Body]:
    """An answer's topics named again, from v10 (answered by id only)."""
    if version < FIRST_TOPIC_ID_VERSION:
        return topics
    names = names_by_id(target, {t["topic_id"] for t in topics})
    return [{**t, "name": names.get(t["topic_id"], NO_SUCH_TOPIC)} for t in topics]


def commit(target: Target, version: int, body: Body) -> Body:
    answer = target.request(OFFSET_COMMIT, version, {**body, "topics": by_id(target, version, body["topics"])})
    answer["topics"] = keyed_topics(named(target, version, answer["topics"]))
    return answer


def fetch_one(target: Target, version: int, group: str, topics: dict[str, list[int]] | None,
              require_stable: bool = False) -> Body:
    answer = target.request(OFFSET_FETCH, version, {
        "group_id": group, "require_stable": require_stable,
        "topics": None if topics is None else [{"name": n, "partition_indexes": p} for n, p in topics.items()]})
    return {"throttle_time_ms": answer["throttle_time_ms"], "error_code": answer["error_code"],
            "topics": keyed_topics(answer["topics"])}


def fetch_groups(target: Target, version: int, groups: dict[str, dict[str, list[int]] | None], *,
                 require_stable: bool = False, member: tuple[str | None, int] = (None, -1)) -> Body:
    answer = target.request(OFFSET_FETCH, version, {"require_stable": require_stable, "groups": [
        {"group_id": group, "member_id": member[0], "member_epoch": member[1],
         "topics": by_id(target, version, None if topics is None else [
             {"name": n, "partition_indexes": p} for n, p in topics.items()])}
        for group, topics in groups.items()]})
    return {"throttle_time_ms": answer["throttle_time_ms"], "groups": {
        g["group_id"]: {"error_code": g["error_code"], "topics": keyed_topics(named(target, version, g["topics"]))}
        for g in answer["groups"]}}


@pytest.mark.parametrize("version", [2, 3, 4, 5, 6, 7, 8, 9, 10])
def test_simple_commit(pair: Pair, version: int) -> None:
    """A group that only commits (generation -1, no member): known and unknown partitions and topics, the
    metadata bound, then what OffsetFetch returns of them."""
    topic, group, missing_topic = unique("commit-simple"), unique("commit-simple-group"), unique("commit-none")
    fetch_version = min(version, 7)

    def observe(target: Target) -> Body:
        create_topics(target, {topic: 2})
        ready_coordinator(target, group)
        seen: Body = {}
        seen["commit"] = commit(target, version, commit_body(
            group, {(topic, 0): 10, (topic, 1): 20, (topic, 5): 1, (missing_topic, 0): 3}, metadata="m0",
            retention_time_ms=-1))
        seen["metadata_at_bound"] = commit(target, version, commit_body(
            group, {(topic, 0): 11}, metadata="x" * METADATA_MAX_BYTES))
        seen["metadata_too_large"] = commit(target, version, commit_body(
            group, {(topic, 1): 21}, metadata="x" * (METADATA_MAX_BYTES + 1)))
        seen["null_metadata"] = commit(target, version, commit_body(group, {(topic, 1): 22}, metadata=None))
        seen["negative_offset"] = commit(target, version, commit_body(group, {(topic, 1): -5}))
        seen["empty_group_id"] = commit(target, version, commit_body("", {(topic, 0): 1}))
        seen["fetch"] = fetch_one(target, fetch_version, group, {topic: [0, 1, 2, 5], missing_topic: [0]})
        if fetch_version >= 2:
            seen["fetch_all"] = fetch_one(target, fetch_version, group, None)
        seen["fetch_missing_group"] = fetch_one(target, fetch_version, unique("nobody"), {topic: [0]})
        return seen

    check(f"offsets.commit.simple.v{version}", *pair.both(observe))


@pytest.mark.parametrize("version", [2, 5, 6, 7, 8, 9, 10])
def test_member_commit(pair: Pair, version: int) -> None:
    """Commits from a classic group's member: its generation, a wrong one, an unknown member, while a rebalance
    is under way, and (v7+) a static instance fenced by its successor."""
    topic, group = unique("commit-member"), unique("commit-member-group")

    def observe(target: Target) -> Body:
        create_topics(target, {topic: 1})
        ready_coordinator(target, group)
        seen: Body = {}
        protocols = consumer_protocols([topic], "range")

        def commit_as(member_id: str, generation: int, offset: int, instance_id: str | None = None) -> Body:
            return commit(target, version, commit_body(group, {(topic, 0): offset}, generation=generation,
                                                       member_id=member_id, instance_id=instance_id))

        with ClassicMember(target, group, "committer", instance_id="committer-instance", protocols=protocols) as a, \
                ClassicMember(target, group, "successor", instance_id="committer-instance",
                              protocols=protocols) as a2, \
                ClassicMember(target, group, "newcomer", protocols=protocols) as b:
            a.join()
            seen["completing"] = commit_as(a.member_id, a.generation, 1, a.instance_id)
            a.sync({a.member_id: b""})
            seen["stable"] = commit_as(a.member_id, a.generation, 2, a.instance_id)
            seen["wrong_generation"] = commit_as(a.member_id, a.generation + 1, 3, a.instance_id)
            seen["old_generation"] = commit_as(a.member_id, a.generation - 1, 3, a.instance_id)
            seen["unknown_member"] = commit_as("nobody", a.generation, 4)
            seen["no_member_with_generation"] = commit_as("", a.generation, 4)
            seen["simple_into_live_group"] = commit_as("", -1, 5)
            admit(a, b, while_rebalancing=lambda: seen.update(
                rebalancing=commit_as(a.member_id, a.generation, 6, a.instance_id)))
            a2.join()
            seen["successor_commit"] = commit_as(a2.member_id, a2.generation, 7, a2.instance_id)
            seen["fenced_instance"] = commit_as(a.member_id, a.generation, 8, a.instance_id)
            seen["generation"] = a2.generation
            seen["fetch"] = fetch_one(target, min(version, 7), group, {topic: [0]})
        return seen

    check(f"offsets.commit.member.v{version}", *pair.both(observe))


@pytest.mark.parametrize("version", [8, 9, 10])
def test_fetch_several_groups(pair: Pair, version: int) -> None:
    """OffsetFetch v8+: several groups at once, one with all its partitions (null topics), one with named
    partitions (one never committed), one missing, and "" ."""
    topics = [unique("fetch-a"), unique("fetch-b")]
    groups = [unique("fetch-group-1"), unique("fetch-group-2"), unique("fetch-group-missing")]

    def observe(target: Target) -> Body:
        create_topics(target, {topics[0]: 2, topics[1]: 3})
        for group in groups:
            ready_coordinator(target, group)
        commit(target, 9, commit_body(groups[0], {(topics[0], 0): 1, (topics[0], 1): 2, (topics[1], 2): 3}))
        commit(target, 9, commit_body(groups[1], {(topics[1], 0): 4}, metadata="second"))
        return {
            "several": fetch_groups(target, version, {groups[0]: None, groups[1]: {topics[1]: [0, 1]},
                                                      groups[2]: None, "": {topics[0]: [0]}}),
            "require_stable": fetch_groups(target, version, {groups[0]: {topics[0]: [0]}}, require_stable=True),
            "member_of_simple_group": fetch_groups(target, version, {groups[0]: {topics[0]: [0]}},
                                                   member=("someone", 3)),
        }

    check(f"offsets.fetch.groups.v{version}", *pair.both(observe))


@pytest.mark.parametrize("version", [6, 8, 9, 10])
def test_consumer_group_member_commit(pair: Pair, version: int) -> None:
    """Commits into a KIP-848 group: its member with its epoch (v9 names the member epoch; older versions
    commit as if from outside the group), a stale or future epoch, an unknown member; and OffsetFetch v9 with
    the member's id and epoch."""
    topic, group, member_id = unique("commit-cg"), unique("commit-cg-group"), unique("commit-cg-member")

    def observe(target: Target) -> Body:
        names = topics_setup(target, {topic: 2})
        ready_coordinator(target, group)
        member = ConsumerMember(target, group, member_id, names)
        member.heartbeat(topics=[topic])
        seen: Body = {"epoch": member.epoch}

        def commit_as(member: str, epoch: int, offset: int) -> Body:
            return commit(target, version, commit_body(group, {(topic, 0): offset}, generation=epoch, member_id=member))

        seen["member"] = commit_as(member_id, member.epoch, 1)
        seen["stale_epoch"] = commit_as(member_id, member.epoch - 1, 2)
        seen["future_epoch"] = commit_as(member_id, member.epoch + 1, 3)
        seen["unknown_member"] = commit_as("nobody", member.epoch, 4)
        seen["outside"] = commit_as("", -1, 5)
        seen["fetch"] = fetch_groups(target, 9, {group: None}, member=(member_id, member.epoch))
        seen["fetch_stale_epoch"] = fetch_groups(target, 9, {group: None}, member=(member_id, member.epoch - 1))
        seen["fetch_unknown_member"] = fetch_groups(target, 9, {group: None}, member=("nobody", member.epoch))
        seen["fetch_v8"] = fetch_groups(target, 8, {group: None})
        seen["fetch_v10"] = fetch_groups(target, 10, {group: {topic: [0, 1]}}, member=(member_id, member.epoch))
        member.heartbeat(epoch=-1, owned=None)
        return seen

    check(f"offsets.commit.consumer_group.v{version}", *pair.both(observe))
