"""KIP-848 consumer groups: server-side assignment, reconciliation, epochs, static members, timeouts."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kemu.groups import ConsumerGroupState, GroupConfig, RecordType
from kemu.groups.consumer_group import regex_error
from kemu.wire.errors import ErrorCode
from tests.groups.helpers import Harness, cg_heartbeat, ctx, owned, partitions_of

REBALANCE_TIMEOUT = 30_000


class Member:
    """A KIP-848 consumer as the client side would track it: id, epoch, what it owns."""

    def __init__(self, h: Harness, group: str = "cg", *, topics: list[str] | None = None, regex: str | None = None,
                 instance_id: str | None = None, assignor: str | None = None, member_id: str = "",
                 version: int = 0, rebalance_timeout_ms: int = REBALANCE_TIMEOUT) -> None:
        self.h, self.group, self.version = h, group, version
        self.instance_id = instance_id
        self.owned: dict[uuid.UUID, set[int]] = {}
        response = h.cg(cg_heartbeat(group, member_id, 0, topics=topics, regex=regex, owned=[],
                                     instance_id=instance_id, rebalance_timeout_ms=rebalance_timeout_ms,
                                     assignor=assignor), version=version)
        assert response["error_code"] == ErrorCode.NONE, response
        self.member_id: str = response["member_id"]
        self.epoch: int = response["member_epoch"]
        self.last = response
        self._take(response)

    def _take(self, response: dict[str, Any]) -> None:
        if response["assignment"] is not None:
            self.owned = {e["topic_id"]: set(e["partitions"]) for e in response["assignment"]["topic_partitions"]}

    def owned_field(self) -> list[dict[str, Any]]:
        return [e for topic_id, parts in self.owned.items() for e in owned(topic_id, parts)]

    def heartbeat(self, **kwargs: Any) -> dict[str, Any]:
        request = cg_heartbeat(self.group, self.member_id, self.epoch, owned=self.owned_field(),
                               instance_id=self.instance_id, **kwargs)
        response = self.h.cg(request, version=self.version)
        self.last = response
        if response["error_code"] == ErrorCode.NONE:
            self.epoch = response["member_epoch"]
            self._take(response)
        return response

    def partitions(self, topic_id: uuid.UUID) -> set[int]:
        return self.owned.get(topic_id, set())


# Kafka computes a new target assignment at most every group.consumer.assignment.interval.ms.
ASSIGNMENT_INTERVAL_MS = GroupConfig().consumer_assignment_interval_ms


def settle(*members: Member, rounds: int = 5) -> None:
    for _ in range(rounds):
        for member in members:
            assert member.heartbeat()["error_code"] == ErrorCode.NONE


def state(h: Harness, group: str = "cg") -> ConsumerGroupState:
    return h.coordinator.group(group).state


def test_two_members_split_four_partitions_after_revocation() -> None:
    h = Harness()
    t = h.topics.create("t", 4)
    a = Member(h, topics=["t"])
    # A group starts at epoch 1 (as Kafka 4.3's): the first join makes it 2.
    assert a.epoch == 2 and a.partitions(t) == {0, 1, 2, 3}
    assert a.last["heartbeat_interval_ms"] == 5000

    b = Member(h, topics=["t"])
    assert b.epoch == 3 and b.partitions(t) == set()  # a still holds everything
    assert state(h) is ConsumerGroupState.RECONCILING

    a.heartbeat()  # told to give up two partitions, still in epoch 2
    assert a.epoch == 2 and len(a.partitions(t)) == 2
    assert b.heartbeat()["assignment"] is None and b.partitions(t) == set()  # not released yet

    a.heartbeat()  # reports it no longer owns them: moves to epoch 3
    assert a.epoch == 3
    b.heartbeat()  # now free: handed to b
    assert b.partitions(t) and not (a.partitions(t) & b.partitions(t))
    assert a.partitions(t) | b.partitions(t) == {0, 1, 2, 3}
    assert len(a.partitions(t)) == len(b.partitions(t)) == 2
    assert state(h) is ConsumerGroupState.STABLE


def test_a_plain_heartbeat_without_changes_carries_no_assignment() -> None:
    h = Harness()
    h.topics.create("t", 2)
    a = Member(h, topics=["t"])
    response = a.heartbeat()
    assert response["assignment"] is None and response["member_epoch"] == 2
    full = a.heartbeat(topics=["t"], rebalance_timeout_ms=REBALANCE_TIMEOUT)  # a full request
    assert full["assignment"] is not None


def test_a_new_target_waits_for_the_assignment_interval() -> None:
    # Kafka 4.3's group.consumer.assignment.interval.ms: a group epoch within the interval of the last target
    # assignment keeps that target (the group is Assigning) until a heartbeat comes after the interval.
    h = Harness(GroupConfig())
    t = h.topics.create("t", 4)
    a = Member(h, topics=["t"])
    assert a.partitions(t) == {0, 1, 2, 3}
    h.advance(ASSIGNMENT_INTERVAL_MS - 1)
    b = Member(h, topics=["t"])
    group = h.coordinator.group("cg")
    assert (b.epoch, b.partitions(t), group.target_assignment_epoch) == (2, set(), 2)
    assert state(h) is ConsumerGroupState.ASSIGNING
    h.advance(1)
    b.heartbeat()
    assert (b.epoch, group.target_assignment_epoch) == (3, 3)
    assert state(h) is ConsumerGroupState.RECONCILING  # a still owns what b is to get
    assert group.assignment_timestamp_ms == h.clock.now_ms()


def test_no_assignment_interval_assigns_at_every_epoch() -> None:
    h = Harness(GroupConfig(consumer_assignment_interval_ms=0))
    t = h.topics.create("t", 4)
    Member(h, topics=["t"])
    b = Member(h, topics=["t"])
    assert b.epoch == 3 and h.coordinator.group("cg").target_assignment_epoch == 3
    assert state(h) is ConsumerGroupState.RECONCILING and b.partitions(t) == set()


def test_a_leaving_member_gives_the_other_all_partitions() -> None:
    h = Harness()
    t = h.topics.create("t", 4)
    a, b = Member(h, topics=["t"]), Member(h, topics=["t"])
    settle(a, b)
    epoch = h.coordinator.group("cg").group_epoch
    response = h.cg(cg_heartbeat("cg", a.member_id, -1))
    assert response["error_code"] == ErrorCode.NONE and response["member_epoch"] == -1
    assert response["member_id"] == a.member_id
    assert h.coordinator.group("cg").group_epoch == epoch + 1
    assert not h.coordinator.group("cg").has_member(a.member_id)
    b.heartbeat()
    assert b.partitions(t) == {0, 1, 2, 3} and b.epoch == epoch + 1


def test_uniform_is_the_default_and_range_can_be_asked_for() -> None:
    h = Harness()
    t = h.topics.create("t", 6)
    a = Member(h, topics=["t"], assignor="range", member_id="member-a", version=1)
    b = Member(h, topics=["t"], assignor="range", member_id="member-b", version=1)
    settle(a, b)
    assert a.partitions(t) == {0, 1, 2} and b.partitions(t) == {3, 4, 5}
    describe = h.coordinator.consumer_group_describe({"group_ids": ["cg"]}, ctx(0))["groups"][0]
    assert describe["assignor_name"] == "range"

    h2 = Harness()
    h2.topics.create("t", 6)
    Member(h2, group="u", topics=["t"])
    assert h2.coordinator.consumer_group_describe({"group_ids": ["u"]}, ctx(0))["groups"][0][
        "assignor_name"] == "uniform"


def test_uniform_assignment_balances_three_members_over_two_topics() -> None:
    h = Harness()
    t1, t2 = h.topics.create("t1", 5), h.topics.create("t2", 2)
    members = [Member(h, topics=["t1", "t2"]) for _ in range(3)]
    settle(*members)
    loads = [len(m.partitions(t1)) + len(m.partitions(t2)) for m in members]
    assert sorted(loads) == [2, 2, 3]
    for topic_id, count in ((t1, 5), (t2, 2)):
        owners = [p for m in members for p in m.partitions(topic_id)]
        assert sorted(owners) == list(range(count))


def test_members_subscribing_to_different_topics_only_get_their_topics() -> None:
    h = Harness()
    t1, t2 = h.topics.create("t1", 3), h.topics.create("t2", 3)
    a, b = Member(h, topics=["t1"]), Member(h, topics=["t1", "t2"])
    settle(a, b)
    assert a.partitions(t2) == set() and b.partitions(t2) == {0, 1, 2}
    assert a.partitions(t1) | b.partitions(t1) == {0, 1, 2}


def test_regex_subscriptions_match_whole_names_and_pick_up_new_topics() -> None:
    h = Harness()
    a_id = h.topics.create("orders-a", 1)
    h.topics.create("orders-b-archive", 1)
    h.topics.create("payments", 1)
    h.topics.create("__consumer_offsets", 50, internal=True)
    m = Member(h, regex="orders-[a-z]", member_id="m1", version=1)
    assert m.partitions(a_id) == {0} and len(m.owned) == 1
    c_id = h.topics.create("orders-c", 2)
    m.heartbeat()
    assert m.partitions(c_id) == {0, 1}
    assert h.coordinator.group("cg").subscription_metadata.keys() == {"orders-a", "orders-c"}


def test_an_invalid_regex_is_refused() -> None:
    h = Harness()
    response = h.cg(cg_heartbeat("cg", "m1", 0, regex="orders-(", owned=[], rebalance_timeout_ms=1000), version=1)
    assert response["error_code"] == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert response["error_message"] == "SubscribedTopicRegex `orders-(` is not a valid regular expression: " \
        "missing closing )."
    assert "cg" not in h.coordinator.groups


# RE2/J's descriptions, as Kafka 4.3 quoted them (compat_tests/differential/test_groups_consumer.py compares
# these regexes against a running Kafka).
@pytest.mark.parametrize("regex, description", [
    ("[unclosed", "missing closing ]"), ("close)", "regexp/syntax: internal error"),
    ("*star", "missing argument to repetition operator"), ("a**", "invalid nested repetition operator"),
    ("trailing\\", "trailing backslash at end of expression"), ("\\q", "invalid escape sequence"),
    ("[b-a]", "invalid character class range"), ("(?=look)", "invalid or unsupported Perl syntax"),
    ("(x)\\1", "invalid escape sequence"), ("a{2,1}", "invalid repeat count"), ("orders-.*", None),
])
def test_regex_errors_are_described_as_re2_does(regex: str, description: str | None) -> None:
    assert regex_error(regex) == description


def test_more_partitions_mean_a_new_assignment() -> None:
    h = Harness()
    t = h.topics.create("t", 2)
    a = Member(h, topics=["t"])
    h.topics.grow("t", 4)
    a.heartbeat()
    assert a.partitions(t) == {0, 1, 2, 3} and a.epoch == 3


@pytest.mark.parametrize("epoch, owned_partitions", [
    (5, [0, 1]),        # ahead of the coordinator
    (2, [0, 1]),        # behind, and not the previous epoch
    (3, [0, 1, 2, 7]),  # the previous epoch, but claiming more than it was given
])
def test_member_epochs_are_fenced(epoch: int, owned_partitions: list[int]) -> None:
    h = Harness()
    t = h.topics.create("t", 2)
    a = Member(h, topics=["t"])
    for partitions in (3, 4):
        h.topics.grow("t", partitions)
        a.heartbeat()
    member = h.coordinator.group("cg").members[a.member_id]
    assert (member.member_epoch, member.previous_member_epoch) == (4, 3)
    response = h.cg(cg_heartbeat("cg", a.member_id, epoch, owned=owned(t, owned_partitions)))
    assert response["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    assert response["error_message"] and response["member_id"] is None


def test_the_previous_epoch_is_accepted_when_the_bump_was_lost() -> None:
    h = Harness()
    t = h.topics.create("t", 2)
    a = Member(h, topics=["t"])
    h.topics.grow("t", 3)
    response = h.cg(cg_heartbeat("cg", a.member_id, 2, owned=owned(t, [0, 1])))  # moves a to epoch 3
    assert response["member_epoch"] == 3
    # That response was lost: a retries with epoch 2 and a subset of what it now has.
    retry = h.cg(cg_heartbeat("cg", a.member_id, 2, owned=owned(t, [0, 1])))
    assert retry["error_code"] == ErrorCode.NONE and retry["member_epoch"] == 3
    superset = h.cg(cg_heartbeat("cg", a.member_id, 2, owned=owned(t, [0, 1, 2, 5])))
    assert superset["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH


def test_a_known_member_rejoining_with_epoch_zero_gets_its_current_state() -> None:
    h = Harness()
    t = h.topics.create("t", 2)
    a = Member(h, topics=["t"], member_id="stable-id", version=1)
    again = h.cg(cg_heartbeat("cg", "stable-id", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), version=1)
    assert again["member_epoch"] == a.epoch and partitions_of(again, t) == {0, 1}


def test_unknown_members_and_groups() -> None:
    h = Harness()
    h.topics.create("t", 1)
    Member(h, topics=["t"])
    unknown = h.cg(cg_heartbeat("cg", "ghost", 1, owned=[]))
    assert unknown["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    missing = h.cg(cg_heartbeat("nope", "ghost", 1, owned=[]))
    assert missing["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    leave_missing = h.cg(cg_heartbeat("cg", "ghost", -1))
    assert leave_missing["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("changes, message", [
    ({"group_id": ""}, "GroupId can't be empty."),
    ({"instance_id": ""}, "InstanceId can't be empty."),
    ({"rack_id": ""}, "RackId can't be empty."),
    ({"rebalance_timeout_ms": -1}, "RebalanceTimeoutMs must be provided in first request."),
    ({"topic_partitions": None}, "TopicPartitions must be empty when (re-)joining."),
    ({"topic_partitions": [{"topic_id": uuid.UUID(int=5), "partitions": [0]}]},
     "TopicPartitions must be empty when (re-)joining."),
    ({"subscribed_topic_names": None},
     "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."),
    ({"member_epoch": 3, "member_id": ""}, "MemberId can't be empty."),
    ({"member_epoch": -2, "member_id": "m"}, "InstanceId can't be null."),
    ({"member_epoch": -3}, "MemberEpoch is invalid."),
])
def test_malformed_heartbeats_are_invalid_requests(changes: dict[str, Any], message: str) -> None:
    h = Harness()
    request = cg_heartbeat("cg", "", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000)
    request.update(changes)
    response = h.cg(request)
    assert response["error_code"] == ErrorCode.INVALID_REQUEST and response["error_message"] == message


def test_v1_requires_a_client_generated_member_id() -> None:
    h = Harness()
    response = h.cg(cg_heartbeat("cg", "", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), version=1)
    assert response["error_code"] == ErrorCode.INVALID_REQUEST
    v0 = h.cg(cg_heartbeat("cg", "", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), version=0)
    assert v0["error_code"] == ErrorCode.NONE and len(v0["member_id"]) == 22  # a Kafka Uuid, base64


def test_unknown_assignors_are_refused() -> None:
    h = Harness()
    response = h.cg(cg_heartbeat("cg", "", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000, assignor="sticky"))
    assert response["error_code"] == ErrorCode.UNSUPPORTED_ASSIGNOR
    assert response["error_message"] == "ServerAssignor sticky is not supported. Supported assignors: uniform, range."


def test_group_max_size() -> None:
    h = Harness(GroupConfig(consumer_max_size=1))
    h.topics.create("t", 1)
    a = Member(h, topics=["t"])
    response = h.cg(cg_heartbeat("cg", "", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000))
    assert response["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert a.heartbeat()["error_code"] == ErrorCode.NONE


def test_a_silent_member_is_fenced_after_the_session_timeout() -> None:
    h = Harness()
    t = h.topics.create("t", 4)
    a, b = Member(h, topics=["t"]), Member(h, topics=["t"])
    settle(a, b)
    for _ in range(10):  # b keeps heartbeating, a has gone quiet
        h.advance(5_000)
        b.heartbeat()
    assert not h.coordinator.group("cg").has_member(a.member_id)  # 45 s session
    assert b.partitions(t) == {0, 1, 2, 3}
    assert a.heartbeat()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_that_never_revokes_is_fenced_after_its_rebalance_timeout() -> None:
    h = Harness()
    t = h.topics.create("t", 4)
    a = Member(h, topics=["t"], rebalance_timeout_ms=10_000)
    b = Member(h, topics=["t"])
    everything = owned(t, [0, 1, 2, 3])
    # a keeps heartbeating but keeps claiming all four partitions.
    h.cg(cg_heartbeat("cg", a.member_id, a.epoch, owned=everything))
    for _ in range(2):
        h.advance(4_000)
        assert h.cg(cg_heartbeat("cg", a.member_id, a.epoch, owned=everything))["member_epoch"] == 2
        b.heartbeat()
    assert b.partitions(t) == set()
    h.advance(2_000)
    assert not h.coordinator.group("cg").has_member(a.member_id)
    b.heartbeat()
    assert b.partitions(t) == {0, 1, 2, 3}


def test_a_static_member_restarts_into_its_old_assignment_without_a_new_epoch() -> None:
    h = Harness()
    t = h.topics.create("t", 4)
    s = Member(h, topics=["t"], instance_id="i1")
    d = Member(h, topics=["t"])
    settle(s, d)
    mine, group_epoch = set(s.partitions(t)), h.coordinator.group("cg").group_epoch

    left = h.cg(cg_heartbeat("cg", s.member_id, -2, instance_id="i1"))
    assert left["error_code"] == ErrorCode.NONE and left["member_epoch"] == -2
    assert h.coordinator.group("cg").group_epoch == group_epoch  # a temporary leave changes nothing

    again = Member(h, topics=["t"], instance_id="i1")
    assert again.member_id != s.member_id
    assert again.partitions(t) == mine and again.epoch == group_epoch
    assert h.coordinator.group("cg").group_epoch == group_epoch
    assert not h.coordinator.group("cg").has_member(s.member_id)
    d.heartbeat()
    assert d.partitions(t) == {0, 1, 2, 3} - mine


def test_a_static_instance_id_in_use_cannot_be_taken() -> None:
    h = Harness()
    h.topics.create("t", 2)
    s = Member(h, topics=["t"], instance_id="i1")
    response = h.cg(cg_heartbeat("cg", "", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000, instance_id="i1"))
    assert response["error_code"] == ErrorCode.UNRELEASED_INSTANCE_ID
    stale = h.cg(cg_heartbeat("cg", "someone", 1, owned=[], instance_id="i1"))
    assert stale["error_code"] == ErrorCode.FENCED_INSTANCE_ID
    assert h.cg(cg_heartbeat("cg", "x", 1, owned=[], instance_id="unknown"))["error_code"] == \
        ErrorCode.UNKNOWN_MEMBER_ID
    assert s.heartbeat()["error_code"] == ErrorCode.NONE


def test_a_static_member_that_does_not_return_is_fenced_after_its_session() -> None:
    h = Harness()
    t = h.topics.create("t", 4)
    s = Member(h, topics=["t"], instance_id="i1")
    d = Member(h, topics=["t"])
    settle(s, d)
    h.cg(cg_heartbeat("cg", s.member_id, -2, instance_id="i1"))
    for _ in range(9):
        h.advance(5_000)
        d.heartbeat()
    assert not h.coordinator.group("cg").has_member(s.member_id)
    assert d.partitions(t) == {0, 1, 2, 3}


def test_consumer_group_describe() -> None:
    h = Harness()
    t = h.topics.create("t", 2)
    a = Member(h, topics=["t"], member_id="a", version=1)
    response = h.coordinator.consumer_group_describe({"group_ids": ["cg", "nope", ""]}, ctx(0))
    described, missing, invalid = response["groups"]
    assert described["error_code"] == ErrorCode.NONE and described["group_state"] == "Stable"
    assert described["group_epoch"] == 2 and described["assignment_epoch"] == 2
    (member,) = described["members"]
    assert member["member_id"] == a.member_id == "a" and member["member_epoch"] == 2
    assert member["client_host"] == "/127.0.0.1"
    assert member["subscribed_topic_names"] == ["t"]
    assert member["assignment"] == {"topic_partitions": [{"topic_id": t, "topic_name": "t", "partitions": [0, 1]}]}
    assert member["target_assignment"] == member["assignment"]
    assert missing["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND and missing["error_message"]
    assert invalid["error_code"] == ErrorCode.INVALID_GROUP_ID
    h.coordinator.offset_commit({"group_id": "classic", "generation_id_or_member_epoch": -1, "member_id": "",
                                 "group_instance_id": None, "topics": []}, ctx(8))
    classic = h.coordinator.consumer_group_describe({"group_ids": ["classic"]}, ctx(0))["groups"][0]
    assert classic["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    assert classic["error_message"] == "Group classic is not a consumer group."


def test_consumer_groups_in_list_and_describe_groups() -> None:
    h = Harness()
    h.topics.create("t", 1)
    Member(h, topics=["t"])
    listed = h.coordinator.list_groups({"states_filter": [], "types_filter": ["consumer"]}, ctx(5))["groups"]
    assert listed == [{"group_id": "cg", "protocol_type": "consumer", "group_state": "Stable",
                       "group_type": "consumer"}]
    described = h.coordinator.describe_groups({"groups": ["cg"]}, ctx(5))["groups"][0]
    assert described["group_state"] == "Dead" and described["error_code"] == ErrorCode.NONE


def test_live_classic_and_consumer_groups_do_not_mix() -> None:
    h = Harness()
    h.topics.create("t", 1)
    h.stable_group("classic", members=1)
    refused = h.cg(cg_heartbeat("classic", "", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000))
    assert refused["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    Member(h, topics=["t"])
    assert h.join("cg").result()["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND


def test_empty_groups_of_one_kind_give_way_to_the_other() -> None:
    h = Harness()
    h.topics.create("t", 1)
    h.join("g")  # an empty classic group (MEMBER_ID_REQUIRED)
    assert h.coordinator.group("g").group_type == "classic"
    Member(h, group="g", topics=["t"])
    assert h.coordinator.group("g").group_type == "consumer"
    assert any(r.type == RecordType.GROUP_METADATA and r.value is None for r in h.journal)

    m = h.coordinator.group("g").members
    member_id = next(iter(m))
    h.cg(cg_heartbeat("g", member_id, -1))
    assert h.coordinator.group("g").is_empty()
    h.join("g")
    assert h.coordinator.group("g").group_type == "classic"
