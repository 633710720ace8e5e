"""KIP-848 consumer groups through raw requests, Kafka against kemu: ConsumerGroupHeartbeat (joining with epoch
0, the server assignors' assignments over several topics and members, epochs, revocation before a partition
moves, the heartbeat interval, leaving with -1, a static member leaving with -2 and coming back, fenced
members, refused subscriptions and assignors) and ConsumerGroupDescribe.

The members choose their ids (v1, KIP-1082), the same on both brokers, so that an assignor that orders
members by id assigns the same way on both; each member acts only after the one before it has its answer,
so epochs and assignments are deterministic. Assignments are shown by topic name (topic ids differ).

Two things make Kafka 4.3's answers depend on time, and the scenarios hold them still. Its coordinator learns
of a new topic from the metadata image a moment after Metadata shows it (a member that joins meanwhile gets
an empty assignment, and a later epoch when the topic arrives): `ready_for_groups` waits until a probe member
is assigned the topics. And Kafka 4.3 computes a new target assignment at most every
group.consumer.assignment.interval.ms (1000 by default; a heartbeat within the interval keeps the old
target): these scenarios' pair sets it to 0 on both (groups_kip848.CONSUMER_GROUP_SETTINGS), so that a
target follows every epoch, but `test_assignment_interval`, which compares the interval itself on the pair
with the shipped settings.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from compat_tests.differential import groups_kip848
from compat_tests.differential.compare import check
from compat_tests.differential.groups_kip848 import (
    ConsumerMember,
    describe,
    scrubbed,
    settle,
    topics_setup,
)
from compat_tests.differential.groups_wire import (
    CONSUMER_GROUP_HEARTBEAT,
    REBALANCE_TIMEOUT_MS,
    consumer_heartbeat_body,
    member_id_shape,
    ready_coordinator,
    unique,
    wait_for,
)
from compat_tests.differential.targets import Pair, Target

Body = dict[str, Any]
cpair = groups_kip848.cpair  # the fixture: the pair with groups_kip848.CONSUMER_GROUP_SETTINGS


@pytest.mark.parametrize("assignor, counts", [
    ("uniform", (7,)), (None, (5,)), ("range", (3, 4)), ("uniform", (3, 4)), (None, (3, 4))])
def test_assignment_over_members(cpair: Pair, assignor: str | None, counts: tuple[int, ...]) -> None:
    """Three members join one by one over one topic or two: each join bumps the group epoch; partitions move
    to a newcomer only once their owner has given them up; then a member leaves (-1). Over two topics the
    uniform assignor's choice follows the order of the topic ids, which differ between the brokers."""
    group = unique("cg-assign")
    topics = {unique(f"cg-assign-{n}"): count for n, count in enumerate(counts)}
    # Fixed ids, in the order an assignor sorting them would give: the group is new to each run.
    ids = ["member-a", "member-b", "member-c"]

    def observe(target: Target) -> Body:
        names = topics_setup(target, topics)
        ready_coordinator(target, group)
        subscription = sorted(topics)
        members = [ConsumerMember(target, group, member_id, names) for member_id in ids]
        roles = {m.member_id: "abc"[i] for i, m in enumerate(members)}
        seen: Body = {}
        for i, member in enumerate(members):
            seen[f"join_{'abc'[i]}"] = member.heartbeat(topics=subscription, assignor=assignor)
            seen[f"settle_{'abc'[i]}"] = [{roles[k]: v for k, v in answers.items()}
                                          for answers in settle(members[:i + 1])]
            seen[f"owned_{'abc'[i]}"] = {roles[m.member_id]: m.owned_by_name() for m in members[:i + 1]}
        seen["described"] = describe(target, [group], names, roles)
        seen["leave_b"] = members[1].heartbeat(epoch=-1)
        seen["settle_after_leave"] = [{roles[k]: v for k, v in answers.items()}
                                      for answers in settle([members[0], members[2]])]
        seen["described_after_leave"] = describe(target, [group], names, roles)
        for member in (members[0], members[2]):
            member.heartbeat(epoch=-1)
        seen["described_empty"] = describe(target, [group], names, roles)
        return seen

    check(f"groups.consumer.assignment.{assignor}.{len(counts)}_topics", *cpair.both(observe))


@pytest.mark.parametrize("version", [0, 1])
def test_join_and_leave(cpair: Pair, version: int) -> None:
    """One member: v0 gets its id from the broker, v1 brings its own; the heartbeat interval; a heartbeat that
    only says "still here" (nulls); leaving with -1."""
    group, topic = unique("cg-join"), unique("cg-join-topic")
    member_id = "" if version == 0 else unique("cg-member")
    # v0: the broker names the member; its id, wherever it stands, becomes "the member".

    def observe(target: Target) -> Body:
        names = topics_setup(target, {topic: 2})
        ready_coordinator(target, group)
        member = ConsumerMember(target, group, member_id, names, version=version)
        seen: Body = {"join": member.heartbeat(topics=[topic])}
        seen["member_id_shape"] = member_id_shape(member.member_id)
        roles = {member.member_id: "the member"}
        seen["still_here"] = member.heartbeat(owned=None)
        seen["ack"] = member.heartbeat()
        seen["described"] = describe(target, [group], names, roles)
        seen["leave"] = member.heartbeat(epoch=-1, owned=None)
        seen["after_leave"] = scrubbed(member.heartbeat(epoch=1), roles)
        seen["described_after"] = describe(target, [group], names, roles)
        return seen

    check(f"groups.consumer.join_leave.v{version}", *cpair.both(observe))


def test_static_member_leaves_and_returns(cpair: Pair) -> None:
    """A static member (instance id) leaving with -2 keeps its assignment for its successor, which joins with a
    new member id; the old id is then unknown."""
    group, topic = unique("cg-static"), unique("cg-static-topic")
    first_id, second_id, other_id = unique("cg-static-1"), unique("cg-static-2"), unique("cg-static-other")
    third_id = unique("cg-static-3")

    def observe(target: Target) -> Body:
        names = topics_setup(target, {topic: 4})
        ready_coordinator(target, group)
        first = ConsumerMember(target, group, first_id, names, instance_id="instance-1")
        other = ConsumerMember(target, group, other_id, names)
        roles = {first_id: "first", second_id: "second", other_id: "other"}
        seen: Body = {"join": first.heartbeat(topics=[topic])}
        other.heartbeat(topics=[topic])
        settle([first, other])
        seen["owned"] = {"first": first.owned_by_name(), "other": other.owned_by_name()}
        seen["temporary_leave"] = first.heartbeat(epoch=-2, owned=None)
        seen["described_away"] = describe(target, [group], names, roles)
        second = ConsumerMember(target, group, second_id, names, instance_id="instance-1")
        seen["successor_join"] = second.heartbeat(topics=[topic])
        seen["old_id"] = first.heartbeat(epoch=first.epoch)
        seen["same_instance_other_member_while_present"] = ConsumerMember(
            target, group, third_id, names, instance_id="instance-1").heartbeat(topics=[topic])
        seen["described_back"] = describe(target, [group], names, roles)
        seen["static_leave"] = second.heartbeat(epoch=-1, owned=None)
        seen["described_left"] = describe(target, [group], names, roles)
        return seen

    check("groups.consumer.static_member", *cpair.both(observe))


# Each a different mistake to RE2/J, which Kafka's message describes.
INVALID_REGEXES = ["[unclosed", "(open", "close)", "*star", "a**", "trailing\\", "\\q", "[b-a]", "(?=look)",
                   "(x)\\1", "a{2,1}"]


def test_heartbeat_errors(cpair: Pair) -> None:
    """Fenced members, refused subscriptions and assignors, and requests missing what a join needs."""
    group, topic, other, missing_topic = (unique("cg-errors"), unique("cg-errors-topic"), unique("cg-errors-group"),
                                          unique("cg-errors-none"))
    member_id = unique("cg-errors-member")
    stranger_ids, missing_group = [unique("cg-stranger") for _ in range(20)], unique("cg-errors-missing")

    def observe(target: Target) -> Body:
        names = topics_setup(target, {topic: 2})
        ready_coordinator(target, group)
        member = ConsumerMember(target, group, member_id, names)
        seen: Body = {"join": member.heartbeat(topics=[topic])}
        # The same stranger ids on both brokers, one per attempt, in the same order.
        ids = iter(list(stranger_ids))

        def attempt(group_id: str = group, member: str | None = None, epoch: int = 0,
                    version: int = 1, **fields: Any) -> Body:
            member = next(ids) if member is None else member
            fields.setdefault("rebalance_timeout_ms", REBALANCE_TIMEOUT_MS)
            fields.setdefault("owned", [])
            return target.request(CONSUMER_GROUP_HEARTBEAT, version, consumer_heartbeat_body(
                group_id, member, epoch, **fields))

        seen["unknown_member"] = attempt(member="nobody", epoch=5)
        seen["unknown_member_missing_group"] = attempt(group_id=other, member="nobody", epoch=5)
        seen["epoch_ahead"] = member.heartbeat(epoch=member.epoch + 1)
        seen["epoch_behind"] = member.heartbeat(epoch=member.epoch - 1)
        seen["unsupported_assignor"] = attempt(topics=[topic], assignor="nope")
        for regex in INVALID_REGEXES:
            seen[f"invalid_regex {regex}"] = attempt(regex=regex)
        seen["no_subscription"] = attempt()
        seen["no_rebalance_timeout"] = attempt(topics=[topic], rebalance_timeout_ms=-1)
        seen["no_owned_partitions"] = attempt(topics=[topic], owned=None)
        seen["owned_on_join"] = attempt(topics=[topic], owned=member.owned)
        seen["empty_member_id_v1"] = attempt(member="", topics=[topic])
        seen["empty_group_id"] = attempt(group_id="", topics=[topic])
        seen["bad_epoch"] = attempt(epoch=-3, topics=[topic])
        seen["instance_id_leave_unknown"] = attempt(epoch=-2, instance_id="never-here")
        seen["missing_topic_subscription"] = attempt(group_id=other, topics=[missing_topic])
        seen["described"] = describe(target, [group, other, missing_group, ""], names)
        return seen

    check("groups.consumer.heartbeat_errors", *cpair.both(observe))


def test_regex_subscription(cpair: Pair) -> None:
    """A member subscribing by regular expression (v1): assigned the matching topics once the broker has
    resolved the expression (asynchronously in Kafka: heartbeats until the assignment arrives)."""
    group, member_id = unique("cg-regex"), unique("cg-regex-member")
    prefix = unique("cg-regex-topic")
    topics = {f"{prefix}-one": 2, f"{prefix}-two": 1}

    def observe(target: Target) -> Body:
        names = topics_setup(target, topics)
        ready_coordinator(target, group)
        member = ConsumerMember(target, group, member_id, names)
        seen: Body = {"join_error": member.heartbeat(regex=f"{prefix}-.*")["error_code"]}

        def assigned() -> bool | None:
            member.heartbeat()
            return True if sum(len(t["partitions"]) for t in member.owned) == sum(topics.values()) else None

        wait_for(f"{target.name}: the regex subscription is assigned", assigned)
        seen["owned"] = member.owned_by_name()
        seen["described"] = describe(target, [group], names)
        return seen

    # Kafka resolves a regex on a background thread and bumps the group epoch when it has: how many epochs
    # the member saw before its assignment depends on when that ran. kemu resolves it on the heartbeat.
    check("groups.consumer.regex", *cpair.both(observe), varying={
        "member_epoch": "epoch", "group_epoch": "epoch", "assignment_epoch": "epoch"})


def test_join_with_the_shipped_settings(pair: Pair) -> None:
    """The first member of a group on brokers with the shipped settings: Kafka's defaults for the heartbeat
    interval and the assignor, and a first target assignment computed at once (the assignment interval only
    holds back the ones after it)."""
    group, topic, member_id = unique("cg-shipped"), unique("cg-shipped-topic"), unique("cg-shipped-member")

    def observe(target: Target) -> Body:
        names = topics_setup(target, {topic: 3})
        ready_coordinator(target, group)
        member = ConsumerMember(target, group, member_id, names)
        seen: Body = {"join": member.heartbeat(topics=[topic])}
        seen["described"] = describe(target, [group], names, {member_id: "member"})
        seen["leave"] = member.heartbeat(epoch=-1, owned=None)
        return seen

    check("groups.consumer.shipped_settings", *pair.both(observe))


ASSIGNMENT_INTERVAL_S = 1.0  # group.consumer.assignment.interval.ms, Kafka 4.3's default


def test_assignment_interval(pair: Pair) -> None:
    """With the shipped settings, a member joining within a second of the last target assignment gets no new
    one (the group is Assigning, the newcomer at the old epoch with nothing); its first heartbeat after the
    interval brings the new target, and the revocation it asks of the first member."""
    topic, ids = unique("cg-interval-topic"), [unique("cg-interval-a"), unique("cg-interval-b")]

    def attempt(target: Target, names: dict[uuid.UUID, str], group: str) -> Body | None:
        first = ConsumerMember(target, group, ids[0], names)
        second = ConsumerMember(target, group, ids[1], names)
        roles = {ids[0]: "first", ids[1]: "second"}
        started = time.monotonic()
        seen: Body = {"first_join": first.heartbeat(topics=[topic])}
        seen["second_join"] = second.heartbeat(topics=[topic])
        [seen["described_within"]] = describe(target, [group], names, roles)["groups"].values()
        if time.monotonic() - started > ASSIGNMENT_INTERVAL_S * 0.8:
            return None  # too slow to be within the interval: the scenario says nothing
        time.sleep(ASSIGNMENT_INTERVAL_S)
        seen["second_after"] = second.heartbeat()
        seen["first_after"] = first.heartbeat()
        [seen["described_after"]] = describe(target, [group], names, roles)["groups"].values()
        return seen

    def observe(target: Target) -> Body:
        names = topics_setup(target, {topic: 4})
        for _ in range(3):
            group = unique("cg-interval")
            ready_coordinator(target, group)
            seen = attempt(target, names, group)
            if seen is not None:
                seen["described_within"].pop("group_id")
                seen["described_after"].pop("group_id")
                return seen
        raise AssertionError(f"{target.name}: three attempts each took longer than the assignment interval")

    check("groups.consumer.assignment_interval", *pair.both(observe))
