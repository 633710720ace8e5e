"""KIP-932 share groups in the coordinator core: joining, the SimpleAssignor, leaving, fencing, session expiry,
the listener, describe, the other APIs' answers for a share group, and replay."""

from __future__ import annotations

import uuid
from typing import Any

from kemu.clock import VirtualClock
from kemu.groups import GroupConfig, GroupCoordinator, RecordType, ShareGroup, share_assignor
from kemu.groups.log_records import decode, encode
from kemu.groups.records import CoordinatorRecord
from kemu.wire.errors import ErrorCode
from tests.groups.helpers import START_MS, Topics, cg_heartbeat, ctx, join_request, uuid_counter

CONFIG = GroupConfig(share_assignment_interval_ms=0)


class Share:
    def __init__(self, config: GroupConfig = CONFIG) -> None:
        self.clock = VirtualClock(START_MS)
        self.journal: list[CoordinatorRecord] = []
        self.topics = Topics()
        self.left: list[tuple[str, str]] = []
        self.config = config
        self.coordinator = GroupCoordinator(self.clock, config=config, journal=self.journal.append,
                                            topics=self.topics, new_uuid=uuid_counter(),
                                            on_share_member_left=lambda g, m: self.left.append((g, m)))

    def hb(self, member: str, epoch: int, topics: list[str] | None = None, group: str = "sg",
           rack: str | None = None) -> dict[str, Any]:
        return self.coordinator.share_group_heartbeat(
            {"group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": rack,
             "subscribed_topic_names": topics}, ctx(1, "share-client"))

    def describe(self, *groups: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.coordinator.share_group_describe(
            {"group_ids": list(groups), "include_authorized_operations": False}, ctx(1))["groups"]
        return result

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)
        self.coordinator.tick()


def assigned(response: dict[str, Any]) -> dict[uuid.UUID, list[int]]:
    assert response["assignment"] is not None, response
    return {e["topic_id"]: e["partitions"] for e in response["assignment"]["topic_partitions"]}


def test_join_gets_its_partitions_once_their_state_is_initialized() -> None:
    s = Share()
    topic = s.topics.create("t", 3)
    join = s.hb("member-a", 0, ["t"])
    # As Kafka: the partitions' share state is initialized after the join, so the join's assignment is empty.
    assert (join["error_code"], join["member_epoch"], join["heartbeat_interval_ms"]) == (0, 2, 5000)
    assert assigned(join) == {}
    second = s.hb("member-a", 2)
    assert second["member_epoch"] == 3
    assert assigned(second) == {topic: [0, 1, 2]}
    quiet = s.hb("member-a", 3)
    assert (quiet["member_epoch"], quiet["assignment"]) == (3, None)
    [group] = s.describe("sg")
    assert (group["group_state"], group["group_epoch"], group["assignment_epoch"], group["assignor_name"]) == \
        ("Stable", 3, 3, "simple")
    [member] = group["members"]
    assert member["client_host"] == "/127.0.0.1" and member["client_id"] == "share-client"
    assert member["assignment"]["topic_partitions"] == [{"topic_id": topic, "topic_name": "t", "partitions": [0, 1, 2]}]


def test_more_members_than_partitions_share_them() -> None:
    s = Share()
    topic = s.topics.create("t", 1)
    s.hb("a", 0, ["t"])
    s.hb("a", 2)
    b = s.hb("b", 0, ["t"])
    assert b["member_epoch"] == 4  # the new subscriber bumps the group epoch; b reaches the new target at once
    answers = {m: s.hb(m, epoch) for m, epoch in (("a", 3), ("b", 4))}
    assert answers["a"]["member_epoch"] == 4
    assert all(a["error_code"] == 0 for a in answers.values()), answers
    [group] = s.describe("sg")
    owned = {m["member_id"]: m["assignment"]["topic_partitions"] for m in group["members"]}
    # One partition, two members: ceil(2 / 1) = 2 members share it.
    assert owned == {m: [{"topic_id": topic, "topic_name": "t", "partitions": [0]}] for m in ("a", "b")}


def test_simple_assignor_counts() -> None:
    topic = uuid.UUID(int=7)
    members = {f"m{i}": frozenset({topic}) for i in range(3)}
    result = share_assignor.assign(members, {}, {topic: list(range(4))})
    counts = sorted(len(a.get(topic, ())) for a in result.values())
    assert counts == [1, 1, 2]
    assert set().union(*(a[topic] for a in result.values())) == {0, 1, 2, 3}
    # Five members over two partitions: each partition shared by three, each member one or two.
    five = {f"m{i}": frozenset({topic}) for i in range(5)}
    shared = share_assignor.assign(five, {}, {topic: [0, 1]})
    holders = [sum(1 for a in shared.values() if p in a.get(topic, ())) for p in (0, 1)]
    assert holders == [3, 3]


def test_leave_fence_and_errors() -> None:
    s = Share()
    s.topics.create("t", 2)
    s.hb("a", 0, ["t"])
    a = s.hb("a", 2)
    assert s.coordinator.share_member("sg", "a")
    greater = s.hb("a", a["member_epoch"] + 5)
    assert greater["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    assert greater["error_message"].startswith("The share group member has a greater member epoch (8)")
    previous = s.hb("a", 2)  # the previous epoch is accepted
    assert previous["error_code"] == 0
    smaller = s.hb("a", 1)
    assert smaller["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    assert "does not match the previous member epoch (2)" in smaller["error_message"]
    leave = s.hb("a", -1)
    assert (leave["error_code"], leave["member_id"], leave["member_epoch"], leave["heartbeat_interval_ms"]) == \
        (0, "a", -1, 0)
    assert s.left == [("sg", "a")] and not s.coordinator.share_member("sg", "a")
    again = s.hb("a", -1)
    assert (again["error_code"], again["error_message"]) == (ErrorCode.UNKNOWN_MEMBER_ID,
                                                             "Member a is not a member of group sg.")
    [group] = s.describe("sg")
    assert (group["group_state"], group["group_epoch"]) == ("Empty", 4)


def test_invalid_requests() -> None:
    s = Share()
    assert s.hb("", 0, ["t"])["error_message"] == "MemberId can't be empty."
    assert s.hb("a", 0, ["t"], group="")["error_message"] == "GroupId can't be empty."
    assert s.hb("a", 0, ["t"], rack="")["error_message"] == "RackId can't be empty."
    assert s.hb("a", 0, None)["error_message"] == "SubscribedTopicNames must be set in first request."
    assert s.hb("a", 0, [])["error_message"] == "SubscribedTopicNames must be set in first request."
    bad = s.hb("a", -2)
    assert (bad["error_code"], bad["error_message"]) == (ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.")
    unknown = s.hb("a", 3, group="nope")
    assert (unknown["error_code"], unknown["error_message"]) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                                 "Share group nope not found.")


def test_session_expiry_and_group_config_override() -> None:
    overrides = {"sg": {"share.session.timeout.ms": 20_000, "share.heartbeat.interval.ms": 700}}
    s = Share(GroupConfig(share_assignment_interval_ms=0, overrides=lambda g: overrides.get(g, {})))
    s.topics.create("t", 1)
    assert s.hb("a", 0, ["t"])["heartbeat_interval_ms"] == 700
    s.advance(19_999)
    assert s.coordinator.share_member("sg", "a") and s.left == []
    s.advance(1)
    assert not s.coordinator.share_member("sg", "a")
    assert s.left == [("sg", "a")]


def test_max_size() -> None:
    s = Share(GroupConfig(share_max_size=2, share_assignment_interval_ms=0))
    s.topics.create("t", 1)
    assert s.hb("a", 0, ["t"])["error_code"] == 0
    assert s.hb("b", 0, ["t"])["error_code"] == 0
    full = s.hb("c", 0, ["t"])
    assert (full["error_code"], full["error_message"]) == (
        ErrorCode.GROUP_MAX_SIZE_REACHED, "The share group has reached its maximum capacity of 2 members.")
    assert s.hb("a", 0, ["t"])["error_code"] == 0  # a member rejoining is no newcomer


def test_other_protocols_and_admin_apis() -> None:
    s = Share()
    s.topics.create("t", 1)
    s.hb("a", 0, ["t"])
    consumer = s.coordinator.consumer_group_heartbeat(
        cg_heartbeat("sg", "m", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), ctx(1))
    assert (consumer["error_code"], consumer["error_message"]) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                                   "Group sg is not a consumer group.")
    join = s.coordinator.join_group(join_request("sg"), ctx(9)).result()
    assert (join["error_code"], join["member_id"]) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")
    s.coordinator.consumer_group_heartbeat(
        cg_heartbeat("cg", "m", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), ctx(1))
    other = s.hb("a", 0, ["t"], group="cg")
    assert (other["error_code"], other["error_message"]) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                             "Group cg is not a share group.")
    listed = s.coordinator.list_groups({"states_filter": [], "types_filter": ["share"]}, ctx(5))["groups"]
    assert listed == [{"group_id": "sg", "protocol_type": "share", "group_state": "Stable", "group_type": "share"}]
    described = s.coordinator.describe_groups({"groups": ["sg"]}, ctx(6))["groups"][0]
    assert (described["error_code"], described["error_message"], described["group_state"]) == (
        ErrorCode.GROUP_ID_NOT_FOUND, "Group sg is not a classic group.", "Dead")
    assert s.coordinator.delete_groups({"groups_names": ["sg"]}, ctx(2))["results"] == [
        {"group_id": "sg", "error_code": ErrorCode.NON_EMPTY_GROUP}]
    [cg_described] = s.describe("cg")
    assert cg_described["error_message"] == "Group cg is not a share group."
    s.hb("a", -1)
    assert s.coordinator.list_groups({"states_filter": ["empty"], "types_filter": []}, ctx(5))["groups"][0][
        "group_state"] == "Empty"
    assert s.coordinator.expire_offsets() == 0 and "sg" in s.coordinator.groups  # share groups never expire
    assert s.coordinator.delete_groups({"groups_names": ["sg"]}, ctx(2))["results"] == [
        {"group_id": "sg", "error_code": ErrorCode.NONE}]
    [gone] = s.describe("sg")
    assert (gone["error_code"], gone["error_message"]) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group sg not found.")


def test_records_round_trip_and_replay() -> None:
    s = Share()
    topic = s.topics.create("t", 2)
    s.hb("a", 0, ["t"])
    s.hb("a", 2)
    s.hb("b", 0, ["t"], rack="r1")
    types = {r.type for r in s.journal}
    assert {RecordType.SHARE_GROUP_METADATA, RecordType.SHARE_GROUP_MEMBER_METADATA,
            RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, RecordType.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT,
            RecordType.SHARE_GROUP_STATE_PARTITION_METADATA} <= types
    # Through the bytes of __consumer_offsets and back, as a restart reads them.
    fresh = GroupCoordinator(s.clock, config=CONFIG, topics=s.topics, new_uuid=uuid_counter())
    for record in s.journal:
        key, value = encode(record)
        fresh.replay(decode(key, value))
    fresh.loaded()
    group = fresh.group("sg")
    assert isinstance(group, ShareGroup)
    before = s.coordinator.group("sg")
    assert isinstance(before, ShareGroup)
    assert (group.group_epoch, group.target_assignment_epoch, group.metadata_hash) == (
        before.group_epoch, before.target_assignment_epoch, before.metadata_hash)
    assert group.members == before.members and group.target_assignment == before.target_assignment
    assert group.initialized[topic].partitions == frozenset({0, 1})
    assert fresh.share_member("sg", "b")
    s.clock.advance(45_000)
    fresh.tick()
    assert not fresh.share_member("sg", "a")
