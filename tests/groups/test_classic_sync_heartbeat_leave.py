"""SyncGroup, Heartbeat, LeaveGroup and session expiry for classic groups."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.groups import ClassicGroupState
from kemu.wire.errors import ErrorCode
from tests.groups.helpers import Harness, ctx, leave_request


def encode(partitions: list[int]) -> bytes:
    """The client's own assignment format; the coordinator only carries the bytes."""
    return ",".join(map(str, partitions)).encode()


def decode(assignment: bytes) -> set[int]:
    return {int(p) for p in assignment.decode().split(",")} if assignment else set()


def joined_pair(h: Harness) -> tuple[dict[str, Any], dict[str, Any]]:
    pendings = [h.join_with_id(client_id=c)[1] for c in ("a", "b")]
    h.run_until(lambda: all(p.done for p in pendings))
    leader, follower = (p.result() for p in pendings)
    assert leader["leader"] == leader["member_id"]
    return leader, follower


def range_assign(members: list[str], partitions: int) -> dict[str, bytes]:
    """What a client leader running the range assignor would send."""
    per, extra = divmod(partitions, len(members))
    out, start = {}, 0
    for i, member in enumerate(sorted(members)):
        n = per + (1 if i < extra else 0)
        out[member] = encode(list(range(start, start + n)))
        start += n
    return out


def test_two_members_get_the_leaders_disjoint_assignment_covering_all_partitions() -> None:
    h = Harness()
    leader, follower = joined_pair(h)
    follower_sync = h.sync("g", follower["member_id"], 1)
    assert not follower_sync.done  # waits for the leader's assignment
    members = [m["member_id"] for m in leader["members"]]
    leader_sync = h.sync("g", leader["member_id"], 1, range_assign(members, 4))
    assert leader_sync.done and follower_sync.done
    mine, theirs = decode(leader_sync.result()["assignment"]), decode(follower_sync.result()["assignment"])
    assert mine and theirs and not mine & theirs and mine | theirs == {0, 1, 2, 3}
    assert leader_sync.result()["protocol_type"] == "consumer"
    assert leader_sync.result()["protocol_name"] == "range"
    assert h.coordinator.group("g").is_in_state(ClassicGroupState.STABLE)

    described = h.coordinator.describe_groups({"groups": ["g"], "include_authorized_operations": False},
                                              ctx(5))["groups"][0]
    assert described["group_state"] == "Stable" and described["protocol_data"] == "range"
    assert {m["member_id"]: decode(m["member_assignment"]) for m in described["members"]} == {
        leader["member_id"]: mine, follower["member_id"]: theirs}
    assert all(m["client_host"] == "/127.0.0.1" for m in described["members"])


def test_the_generation_is_journaled_when_the_leader_syncs() -> None:
    h = Harness()
    leader, follower = joined_pair(h)
    h.sync("g", leader["member_id"], 1, {leader["member_id"]: b"x"})
    record = h.journal[-1]
    assert record.value is not None and record.value["generation"] == 1
    assert record.value["leader"] == leader["member_id"] and record.value["protocol"] == "range"
    # A member the leader left out gets an empty assignment.
    assert {m["member_id"]: m["assignment"] for m in record.value["members"]} == {
        leader["member_id"]: b"x", follower["member_id"]: b""}


def test_sync_in_stable_returns_the_current_assignment() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2)
    again = h.sync("g", follower["member_id"], 1).result()
    assert again["error_code"] == ErrorCode.NONE
    assert again["assignment"] == f"assignment-{follower['member_id']}".encode()


def test_sync_errors() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2)
    assert h.sync("", "m", 1).result()["error_code"] == ErrorCode.INVALID_GROUP_ID
    assert h.sync("nope", "m", 1).result()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.sync("g", "ghost", 1).result()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.sync("g", leader["member_id"], 7).result()["error_code"] == ErrorCode.ILLEGAL_GENERATION
    assert h.sync("g", leader["member_id"], 1, protocol_type="connect").result()["error_code"] == \
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync("g", leader["member_id"], 1, protocol_name="roundrobin").result()["error_code"] == \
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync("g", leader["member_id"], 1, protocol_type="consumer", protocol_name="range").result()[
        "error_code"] == ErrorCode.NONE
    h.join("g", leader["member_id"])  # the leader starts a rebalance
    assert h.sync("g", follower["member_id"], 1).result()["error_code"] == ErrorCode.REBALANCE_IN_PROGRESS


def test_a_static_member_syncing_with_another_member_id_is_fenced() -> None:
    h = Harness()
    pending = h.join(instance_id="i1")
    h.run_until(lambda: pending.done)
    member_id = pending.result()["member_id"]
    response = h.sync("g", "someone-else", 1, instance_id="i1").result()
    assert response["error_code"] == ErrorCode.FENCED_INSTANCE_ID
    assert h.sync("g", member_id, 1, {member_id: b"a"}, instance_id="i1").result()["assignment"] == b"a"


def test_parked_syncs_are_answered_rebalance_in_progress_when_a_rebalance_starts() -> None:
    h = Harness()
    leader, follower = joined_pair(h)
    follower_sync = h.sync("g", follower["member_id"], 1)
    h.join("g", client_id="newcomer")  # MEMBER_ID_REQUIRED: no rebalance yet
    assert not follower_sync.done
    h.join("g", leader["member_id"], protocols=[("range", b"changed")])
    assert follower_sync.result()["error_code"] == ErrorCode.REBALANCE_IN_PROGRESS
    assert follower_sync.result()["assignment"] == b""


def test_heartbeat_errors_and_successes() -> None:
    h = Harness()
    leader, follower = joined_pair(h)
    member = leader["member_id"]
    assert h.heartbeat("", member, 1) == ErrorCode.INVALID_GROUP_ID
    assert h.heartbeat("nope", member, 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat("g", "ghost", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat("g", member, 0) == ErrorCode.ILLEGAL_GENERATION
    assert h.heartbeat("g", member, 1) == ErrorCode.NONE  # CompletingRebalance: fine
    h.sync("g", member, 1, {})
    assert h.heartbeat("g", member, 1) == ErrorCode.NONE  # Stable
    h.join("g", member)
    assert h.heartbeat("g", follower["member_id"], 1) == ErrorCode.REBALANCE_IN_PROGRESS


def test_heartbeat_of_a_static_member_with_a_stale_member_id_is_fenced() -> None:
    h = Harness()
    pending = h.join(instance_id="i1")
    h.run_until(lambda: pending.done)
    assert h.heartbeat("g", "stale", 1, instance_id="i1") == ErrorCode.FENCED_INSTANCE_ID
    assert h.heartbeat("g", "x", 1, instance_id="unknown") == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat("g", pending.result()["member_id"], 1, instance_id="i1") == ErrorCode.NONE


def test_heartbeats_keep_a_member_alive_and_silence_expires_it() -> None:
    h = Harness()
    (only,) = h.stable_group(members=1, session_timeout_ms=10_000)
    for _ in range(10):
        h.advance(9_999)
        assert h.heartbeat("g", only["member_id"], 1) == ErrorCode.NONE
    h.advance(9_999)
    assert h.coordinator.group("g").has_member(only["member_id"])
    h.advance(1)
    group = h.coordinator.group("g")
    assert not group.has_member(only["member_id"])
    assert group.is_in_state(ClassicGroupState.EMPTY) and group.generation_id == 2


def test_session_expiry_rebalances_and_the_survivor_takes_every_partition() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2, session_timeout_ms=10_000)
    h.advance(5_000)
    assert h.heartbeat("g", follower["member_id"], 1) == ErrorCode.NONE
    h.advance(9_000)  # the leader's session (last seen at sync time) has run out
    assert not h.coordinator.group("g").has_member(leader["member_id"])
    assert h.heartbeat("g", follower["member_id"], 1) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoin = h.join("g", follower["member_id"]).result()
    assert rejoin["generation_id"] == 2 and rejoin["leader"] == follower["member_id"]
    assert [m["member_id"] for m in rejoin["members"]] == [follower["member_id"]]
    sync = h.sync("g", follower["member_id"], 2, range_assign([follower["member_id"]], 4)).result()
    assert decode(sync["assignment"]) == {0, 1, 2, 3}


def test_leave_v3_answers_each_member() -> None:
    h = Harness()
    pendings = [h.join_with_id(client_id="a")[1], h.join(client_id="s", instance_id="static-1"),
                h.join(client_id="t", instance_id="static-2")]
    h.run_until(lambda: all(p.done for p in pendings))
    dynamic, static1, static2 = (p.result()["member_id"] for p in pendings)
    request = leave_request("g", (dynamic, None), ("ghost", None), ("", "static-1"), ("wrong", "static-2"),
                            ("", "unknown-instance"))
    response = h.coordinator.leave_group(request, ctx(4))
    assert response["error_code"] == ErrorCode.NONE
    assert [(m["member_id"], m["group_instance_id"], m["error_code"]) for m in response["members"]] == [
        (dynamic, None, ErrorCode.NONE),
        ("ghost", None, ErrorCode.UNKNOWN_MEMBER_ID),
        ("", "static-1", ErrorCode.NONE),
        ("wrong", "static-2", ErrorCode.FENCED_INSTANCE_ID),
        ("", "unknown-instance", ErrorCode.UNKNOWN_MEMBER_ID),
    ]
    group = h.coordinator.group("g")
    assert list(group.members) == [static2]
    assert group.is_in_state(ClassicGroupState.PREPARING_REBALANCE)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_leave_before_v3_reports_the_members_error_at_the_top(version: int) -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2)
    unknown = h.coordinator.leave_group({"group_id": "g", "member_id": "ghost", "members": []}, ctx(version))
    assert unknown == {"error_code": ErrorCode.UNKNOWN_MEMBER_ID, "members": []}
    ok = h.coordinator.leave_group({"group_id": "g", "member_id": follower["member_id"], "members": []},
                                   ctx(version))
    assert ok == {"error_code": ErrorCode.NONE, "members": []}


def test_leave_group_level_errors() -> None:
    h = Harness()
    assert h.coordinator.leave_group(leave_request(""), ctx(3))["error_code"] == ErrorCode.INVALID_GROUP_ID
    # A group that does not exist: each member is unknown (v3+), the one member's error is the answer's (v0-2).
    assert h.coordinator.leave_group(leave_request("nope", ("m", None), ("", "i")), ctx(3)) == {
        "error_code": ErrorCode.NONE, "members": [
            {"member_id": "m", "group_instance_id": None, "error_code": ErrorCode.UNKNOWN_MEMBER_ID},
            {"member_id": "", "group_instance_id": "i", "error_code": ErrorCode.UNKNOWN_MEMBER_ID}]}
    assert h.coordinator.leave_group({"group_id": "nope", "member_id": "m"}, ctx(2)) == {
        "error_code": ErrorCode.UNKNOWN_MEMBER_ID, "members": []}


def test_a_pending_member_may_leave() -> None:
    h = Harness()
    h.stable_group(members=1)
    pending_id = h.join(client_id="late").result()["member_id"]
    response = h.coordinator.leave_group(leave_request("g", (pending_id, None)), ctx(3))
    assert response["members"][0]["error_code"] == ErrorCode.NONE
    assert h.coordinator.group("g").pending_join_members == set()
    # Kafka rebalances after any successful leave, even of a member that never fully joined.
    assert h.coordinator.group("g").is_in_state(ClassicGroupState.PREPARING_REBALANCE)


def test_leaving_rebalances_and_the_other_member_takes_all() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2)
    h.coordinator.leave_group(leave_request("g", (leader["member_id"], None)), ctx(3))
    assert h.heartbeat("g", follower["member_id"], 1) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoin = h.join("g", follower["member_id"]).result()
    assert rejoin["leader"] == follower["member_id"] and rejoin["generation_id"] == 2
    sync = h.sync("g", follower["member_id"], 2, range_assign([follower["member_id"]], 4)).result()
    assert decode(sync["assignment"]) == {0, 1, 2, 3}


def test_leaving_while_parked_in_join_answers_the_join() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2)
    parked = h.join("g", leader["member_id"])
    h.coordinator.leave_group(leave_request("g", (leader["member_id"], None)), ctx(3))
    assert parked.result()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_members_that_never_sync_are_removed_after_the_rebalance_timeout() -> None:
    h = Harness()
    leader, follower = joined_pair(h)
    h.sync("g", leader["member_id"], 1, {})
    assert h.coordinator.group("g").is_in_state(ClassicGroupState.STABLE)
    # The follower heartbeats but never sends its SyncGroup.
    for _ in range(3):
        h.advance(9_000)
        h.heartbeat("g", follower["member_id"], 1)
        h.heartbeat("g", leader["member_id"], 1)
    h.advance(3_000)  # rebalance timeout (30 s) since the join phase completed
    group = h.coordinator.group("g")
    assert not group.has_member(follower["member_id"])
    assert group.is_in_state(ClassicGroupState.PREPARING_REBALANCE)
    assert h.heartbeat("g", leader["member_id"], 1) == ErrorCode.REBALANCE_IN_PROGRESS


def test_a_group_whose_last_member_leaves_becomes_empty_with_a_new_generation() -> None:
    h = Harness()
    (only,) = h.stable_group(members=1)
    h.coordinator.leave_group(leave_request("g", (only["member_id"], None)), ctx(3))
    group = h.coordinator.group("g")
    assert group.is_in_state(ClassicGroupState.EMPTY) and group.generation_id == 2
    assert h.journal[-1].value is not None and h.journal[-1].value["members"] == []
    assert h.journal[-1].value["generation"] == 2 and h.journal[-1].value["protocol"] is None
