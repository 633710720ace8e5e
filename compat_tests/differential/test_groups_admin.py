"""The administrative group APIs, Kafka against kemu: ListGroups (v4 states filter, v5 types filter),
DescribeGroups, DeleteGroups and OffsetDelete, over groups of every kind and state a test can hold still:
a Stable classic group, an Empty one its member left, a "simple" group that only commits offsets, and a
KIP-848 consumer group.

ListGroups lists every group of the broker; only this scenario's groups are kept, keyed by id.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.groups_wire import (
    DELETE_GROUPS,
    DESCRIBE_GROUPS,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_DELETE,
    OFFSET_FETCH,
    ClassicMember,
    await_state,
    commit_body,
    consumer_join,
    consumer_protocols,
    create_topics,
    ready_coordinator,
    unique,
)
from compat_tests.differential.targets import Pair, Target

Body = dict[str, Any]
ROLES = ("stable", "empty", "simple", "consumer")


class Landscape:
    """One group of each kind, with the same names on both brokers; `hold` keeps the stable member alive."""

    def __init__(self) -> None:
        self.topic = unique("admin-topic")
        self.groups = {role: unique(f"admin-{role}") for role in ROLES}

    def build(self, target: Target) -> ClassicMember:
        create_topics(target, {self.topic: 2})
        for group in self.groups.values():
            ready_coordinator(target, group)
        stable = ClassicMember(target, self.groups["stable"], "stable",
                               protocols=consumer_protocols([self.topic], "range"))
        stable.join_with_id()
        stable.sync({stable.member_id: b"stable-assignment"})
        with ClassicMember(target, self.groups["empty"], "empty",
                           protocols=consumer_protocols([self.topic], "range")) as leaving:
            leaving.lead()
            leaving.leave()
        await_state(target, self.groups["empty"], "Empty")
        committed = target.request(OFFSET_COMMIT, 9, commit_body(self.groups["simple"], {(self.topic, 0): 5}))
        assert committed["topics"][0]["partitions"][0]["error_code"] == 0, committed
        joined = consumer_join(target, self.groups["consumer"], [self.topic])
        assert joined["error_code"] == 0, joined
        return stable

    def ours(self, groups: list[Body], key: str = "group_id") -> dict[str, Body]:
        """This landscape's groups, by role."""
        roles = {group: role for role, group in self.groups.items()}
        mine = {roles[g[key]]: g for g in groups if g[key] in roles}
        return {role: mine[role] for role in ROLES if role in mine}


FILTERS: list[tuple[int, list[str], list[str]]] = [
    (0, [], []), (1, [], []), (2, [], []), (3, [], []),
    (4, [], []), (4, ["Stable"], []), (4, ["empty", "STABLE"], []), (4, ["Dead"], []), (4, ["NoSuchState"], []),
    (5, [], []), (5, [], ["classic"]), (5, [], ["Consumer"]), (5, [], ["share"]), (5, [], ["nonsense"]),
    (5, ["Empty"], ["classic"]), (5, ["Stable"], ["consumer"]),
]


def test_list_groups(pair: Pair) -> None:
    landscape = Landscape()

    def observe(target: Target) -> Body:
        with landscape.build(target):
            seen: Body = {}
            for version, states, types in FILTERS:
                answer = target.request(LIST_GROUPS, version, {"states_filter": states, "types_filter": types})
                answer["groups"] = landscape.ours(answer["groups"])
                seen[f"v{version} states={states} types={types}"] = answer
            return seen

    check("groups.admin.list_groups", *pair.both(observe))


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5, 6])
def test_describe_groups(pair: Pair, version: int) -> None:
    landscape, missing = Landscape(), unique("admin-missing")

    def observe(target: Target) -> Body:
        with landscape.build(target):
            names = [*landscape.groups.values(), missing, ""]
            answer = target.request(DESCRIBE_GROUPS, version, {"groups": names,
                                                               "include_authorized_operations": version >= 3})
            # By name: Kafka answers in the order its coordinator shards (one per __consumer_offsets
            # partition) complete, not the request's.
            by_name = {g["group_id"]: g for g in answer["groups"]}
            return {"throttle_time_ms": answer["throttle_time_ms"],
                    "groups": {role: by_name[group] for role, group in landscape.groups.items()},
                    "missing": by_name[missing], "empty_name": by_name[""]}

    check(f"groups.admin.describe_groups.v{version}", *pair.both(observe))


@pytest.mark.parametrize("version", [0, 1, 2])
def test_delete_groups(pair: Pair, version: int) -> None:
    landscape, missing = Landscape(), unique("admin-missing")

    def observe(target: Target) -> Body:
        with landscape.build(target):
            names = [*landscape.groups.values(), missing, ""]
            answer = target.request(DELETE_GROUPS, version, {"groups_names": names})
            seen: Body = {"delete": {"throttle_time_ms": answer["throttle_time_ms"],
                                     "results": landscape.ours(answer["results"])},
                          "missing": {r["group_id"]: r for r in answer["results"] if r["group_id"] in (missing, "")}}
            listed = target.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": []})
            seen["listed_after"] = landscape.ours(listed["groups"])
            fetched = target.request(OFFSET_FETCH, 8, {"groups": [
                {"group_id": landscape.groups["simple"], "member_id": None, "member_epoch": -1, "topics": None}],
                "require_stable": False})
            seen["simple_offsets_after"] = fetched["groups"]
            return seen

    check(f"groups.admin.delete_groups.v{version}", *pair.both(observe))


def test_offset_delete(pair: Pair) -> None:
    """OffsetDelete of a classic consumer group that subscribes to one topic (refused there with
    GROUP_SUBSCRIBED_TO_TOPIC) and not to another, of an empty group, a missing group and unknown topics."""
    subscribed, other = unique("offdel-sub"), unique("offdel-other")
    group, empty_group, missing = unique("offdel-group"), unique("offdel-empty"), unique("offdel-missing")
    unknown_topic = unique("offdel-nope")

    def delete(target: Target, group_id: str, topics: dict[str, list[int]]) -> Body:
        answer = target.request(OFFSET_DELETE, 0, {"group_id": group_id, "topics": [
            {"name": name, "partitions": [{"partition_index": p} for p in parts]} for name, parts in topics.items()]})
        answer["topics"] = {t["name"]: {p["partition_index"]: p["error_code"] for p in t["partitions"]}
                            for t in answer["topics"]}
        return answer

    def fetch(target: Target, group_id: str) -> Body:
        answer = target.request(OFFSET_FETCH, 8, {"groups": [
            {"group_id": group_id, "member_id": None, "member_epoch": -1, "topics": None}], "require_stable": False})
        return {t["name"]: {p["partition_index"]: p["committed_offset"] for p in t["partitions"]}
                for t in answer["groups"][0]["topics"]}

    def observe(target: Target) -> Body:
        create_topics(target, {subscribed: 2, other: 2})
        for g in (group, empty_group):
            ready_coordinator(target, g)
        offsets = {(subscribed, 0): 1, (subscribed, 1): 2, (other, 0): 3, (other, 1): 4}
        seen: Body = {}
        with ClassicMember(target, group, "offdel", protocols=consumer_protocols([subscribed], "range")) as member:
            member.lead()
            seen["commit"] = target.request(OFFSET_COMMIT, 9, commit_body(
                group, offsets, generation=member.generation, member_id=member.member_id))["throttle_time_ms"]
            target.request(OFFSET_COMMIT, 9, commit_body(empty_group, offsets))
            seen["in_use"] = delete(target, group, {subscribed: [0, 1], other: [0, 7], unknown_topic: [0]})
            seen["in_use_after"] = fetch(target, group)
            seen["empty"] = delete(target, empty_group, {subscribed: [0], other: [0, 1]})
            seen["empty_after"] = fetch(target, empty_group)
            seen["missing"] = delete(target, missing, {subscribed: [0]})
            seen["empty_group_id"] = delete(target, "", {subscribed: [0]})
            seen["no_topics"] = delete(target, group, {})
        return seen

    check("groups.admin.offset_delete", *pair.both(observe))
