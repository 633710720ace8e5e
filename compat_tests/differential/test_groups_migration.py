"""One group id, both protocols, Kafka against kemu: a KIP-848 member joining where a classic group was (empty,
then live), and a classic member joining where a consumer group was (empty, then live). Kafka 4.3 converts
a live group from one protocol to the other (group.consumer.migration.policy=bidirectional); what the first
answers and the group's listing show is compared."""

from __future__ import annotations

import time
from typing import Any

import pytest

from compat_tests.differential import groups_kip848
from compat_tests.differential.compare import check
from compat_tests.differential.groups_kip848 import ConsumerMember, topics_setup
from compat_tests.differential.groups_wire import (
    LIST_GROUPS,
    ClassicMember,
    await_state,
    consumer_protocols,
    ready_coordinator,
    unique,
)
from compat_tests.differential.targets import Pair, Target

Body = dict[str, Any]
cpair = groups_kip848.cpair  # the fixture: the pair with groups_kip848.CONSUMER_GROUP_SETTINGS


def listed(target: Target, group: str) -> list[Body]:
    answer = target.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": []})
    return [g for g in answer["groups"] if g["group_id"] == group]


def listed_once_converted(target: Target, group: str, former_type: str) -> list[Body]:
    """The listing once the group no longer shows its former type, or as it stands after 10 s. Kafka answers the
    first JoinGroup or heartbeat before the records that replace the empty group are committed, and ListGroups
    reads the committed state, so a listing taken at once may still show the old group (seen in CI)."""
    deadline = time.monotonic() + 10
    while True:
        groups = listed(target, group)
        if all(g["group_type"] != former_type for g in groups) or time.monotonic() > deadline:
            return groups
        time.sleep(0.05)


@pytest.mark.parametrize("live", [False, True], ids=["empty", "live"])
def test_consumer_member_where_a_classic_group_is(cpair: Pair, live: bool) -> None:
    topic, group = unique("migrate-up"), unique("migrate-up-group")
    classic_id, consumer_id = unique("migrate-up-classic"), unique("migrate-up-member")

    def observe(target: Target) -> Body:
        names = topics_setup(target, {topic: 2})
        ready_coordinator(target, group)
        seen: Body = {}
        with ClassicMember(target, group, classic_id, protocols=consumer_protocols([topic], "range")) as classic:
            classic.lead()
            if not live:
                classic.leave()
                await_state(target, group, "Empty")
            seen["classic_listed"] = listed(target, group)
            member = ConsumerMember(target, group, consumer_id, names)
            seen["consumer_join"] = member.heartbeat(topics=[topic])
            seen["listed_after"] = listed(target, group) if live else listed_once_converted(target, group, "classic")
            if live:
                seen["classic_heartbeat"] = classic.heartbeat()
        return seen

    check(f"groups.migration.to_consumer.{'live' if live else 'empty'}", *cpair.both(observe))


@pytest.mark.parametrize("live", [False, True], ids=["empty", "live"])
def test_classic_member_where_a_consumer_group_is(cpair: Pair, live: bool) -> None:
    topic, group = unique("migrate-down"), unique("migrate-down-group")
    consumer_id = unique("migrate-down-member")

    def observe(target: Target) -> Body:
        names = topics_setup(target, {topic: 2})
        ready_coordinator(target, group)
        seen: Body = {}
        member = ConsumerMember(target, group, consumer_id, names)
        seen["consumer_join"] = member.heartbeat(topics=[topic])
        if not live:
            member.heartbeat(epoch=-1, owned=None)
        seen["consumer_listed"] = listed(target, group)
        with ClassicMember(target, group, "classic", protocols=consumer_protocols([topic], "range")) as classic:
            seen["classic_first_join"] = classic.join()
            seen["listed_after"] = listed(target, group)
        return seen

    check(f"groups.migration.to_classic.{'live' if live else 'empty'}", *cpair.both(observe))
