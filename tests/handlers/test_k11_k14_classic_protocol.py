"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup: every version, the waits, the errors. The brokers run on a
virtual clock, which the tests move past rebalance delays and timeouts (harness.advance); two members
pipelining their joins on one connection, and a second connection, through real sockets."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from compat_tests.polling import wait_for
from kemu.clock import VirtualClock
from tests.handlers.group_wire import (
    DESCRIBE,
    HEARTBEAT,
    JOIN,
    LEAVE,
    SYNC,
    find_coordinator,
    group_config,
    heartbeat_body,
    join,
    join_body,
    send_join,
    stable_single_member_group,
    sync_body,
)
from tests.handlers.harness import Broker, Connection, MakeBroker, advance

NOT_COORDINATOR, ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL = 16, 22, 23
UNKNOWN_MEMBER_ID, INVALID_SESSION_TIMEOUT, REBALANCE_IN_PROGRESS = 25, 26, 27
MEMBER_ID_REQUIRED, FENCED_INSTANCE_ID = 79, 82


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    with make_broker(group_config(), clock=VirtualClock()) as running:
        yield running


@pytest.fixture
def conn(broker: Broker) -> Iterator[Connection]:
    with broker.connect() as connection:
        assert find_coordinator(connection, "g")["error_code"] == 0
        yield connection


def test_not_coordinator_before_the_offsets_topic_exists(broker: Broker) -> None:
    with broker.connect() as conn:
        assert conn.request(JOIN, 9, join_body("g"))["error_code"] == NOT_COORDINATOR
        assert conn.request(HEARTBEAT, 4, heartbeat_body("g", "m", 1))["error_code"] == NOT_COORDINATOR
        assert conn.request(SYNC, 5, sync_body("g", "m", 1))["error_code"] == NOT_COORDINATOR
        assert conn.request(LEAVE, 5, {"group_id": "g", "members": []})["error_code"] == NOT_COORDINATOR


@pytest.mark.parametrize("version", range(10))
def test_single_member_join_and_sync_every_version(conn: Connection, version: int) -> None:
    group = f"g{version}"
    first = conn.request(JOIN, version, join_body(group))
    if version >= 4:
        # KIP-394: a new member first gets its id, and must come back with it.
        assert first["error_code"] == MEMBER_ID_REQUIRED
        assert first["member_id"].startswith("kemu-tests-")
        joined = conn.request(JOIN, version, join_body(group, first["member_id"]))
    else:
        joined = first
    assert joined["error_code"] == 0
    assert joined["generation_id"] == 1
    assert joined["leader"] == joined["member_id"]
    assert joined["protocol_name"] == "range"
    assert joined["protocol_type"] == ("consumer" if version >= 7 else None)
    assert [(m["member_id"], m["metadata"]) for m in joined["members"]] == [(joined["member_id"], b"meta")]

    sync_version = min(version, 5)
    synced = conn.request(SYNC, sync_version, sync_body(group, joined["member_id"], 1, {joined["member_id"]: b"asg"}))
    assert (synced["error_code"], synced["assignment"]) == (0, b"asg")
    if sync_version >= 5:
        assert (synced["protocol_type"], synced["protocol_name"]) == ("consumer", "range")


def test_invalid_session_timeout(conn: Connection) -> None:
    answer = conn.request(JOIN, 9, join_body("g", session_timeout_ms=10))
    assert answer["error_code"] == INVALID_SESSION_TIMEOUT


@pytest.mark.real_socket
def test_two_members_on_one_connection_join_the_same_generation(make_broker: MakeBroker) -> None:
    """The first JoinGroup waits detached, so the connection's next request (the second member's join)
    reaches the coordinator; without that the second join would wait for the first."""
    config = group_config(group_initial_rebalance_delay_ms=300)
    with make_broker(config, clock=VirtualClock()) as slow, slow.connect() as conn, slow.connect() as watcher:
        find_coordinator(conn, "g")
        conn.send(JOIN, 3, join_body("g"))
        conn.send(JOIN, 3, join_body("g"))
        wait_for_group(watcher, "g", "had both members", lambda group: len(group["members"]) == 2)
        # group.initial.rebalance.delay.ms, extended once by the second arrival.
        advance(slow, 300)
        assert describe(watcher, "g")["group_state"] == "PreparingRebalance"
        advance(slow, 300)
        _, first = conn.receive(JOIN, 3)
        _, second = conn.receive(JOIN, 3)
        assert first["error_code"] == second["error_code"] == 0
        assert first["generation_id"] == second["generation_id"] == 1
        leader = first if first["member_id"] == first["leader"] else second
        follower = second if leader is first else first
        assert len(leader["members"]) == 2 and follower["members"] == []

        # The follower's SyncGroup waits for the leader's, which brings the assignment.
        conn.send(SYNC, 3, sync_body("g", follower["member_id"], 1))
        conn.send(SYNC, 3, sync_body("g", leader["member_id"], 1,
                                     {leader["member_id"]: b"L", follower["member_id"]: b"F"}))
        _, follower_sync = conn.receive(SYNC, 3)
        _, leader_sync = conn.receive(SYNC, 3)
        assert (follower_sync["error_code"], follower_sync["assignment"]) == (0, b"F")
        assert (leader_sync["error_code"], leader_sync["assignment"]) == (0, b"L")


@pytest.mark.real_socket
def test_heartbeat_errors(broker: Broker, conn: Connection) -> None:
    joined = stable_single_member_group(conn, "g")
    member = joined["member_id"]
    for version in range(5):
        assert conn.request(HEARTBEAT, version, heartbeat_body("g", member, 1))["error_code"] == 0
        assert conn.request(HEARTBEAT, version, heartbeat_body("g", member, 7))["error_code"] == ILLEGAL_GENERATION
        assert conn.request(HEARTBEAT, version, heartbeat_body("g", "ghost", 1))["error_code"] == UNKNOWN_MEMBER_ID
    # Another member arrives: the group rebalances and the first member learns it from its heartbeat.
    with broker.connect() as other:
        other.send(JOIN, 3, join_body("g"))
        wait_for_state(conn, "g", "PreparingRebalance")
        assert conn.request(HEARTBEAT, 4, heartbeat_body("g", member, 1))["error_code"] == REBALANCE_IN_PROGRESS
        rejoined = conn.request(JOIN, 9, join_body("g", member))
        _, newcomer = other.receive(JOIN, 3)
        assert rejoined["generation_id"] == newcomer["generation_id"] == 2


def describe(conn: Connection, group: str) -> dict[str, Any]:
    [described] = conn.request(DESCRIBE, 5, {"groups": [group]})["groups"]
    return dict(described)


def wait_for_group(conn: Connection, group: str, what: str, check: Callable[[dict[str, Any]], bool]) -> None:
    wait_for(lambda: check(describe(conn, group)), what=f"{group} to have {what}", timeout=10.0)


def wait_for_state(conn: Connection, group: str, state: str) -> None:
    wait_for_group(conn, group, f"reached {state}", lambda described: described["group_state"] == state)


def test_sync_group_v5_needs_protocol_type_and_name(conn: Connection) -> None:
    joined = join(conn, "g")
    answer = conn.request(SYNC, 5, sync_body("g", joined["member_id"], 1, protocol_name=None))
    assert answer["error_code"] == INCONSISTENT_GROUP_PROTOCOL
    answer = conn.request(SYNC, 4, sync_body("g", joined["member_id"], 1, {joined["member_id"]: b"x"},
                                             protocol_name=None))
    assert answer["error_code"] == 0


@pytest.mark.parametrize("version", range(3))
def test_leave_group_single_member_versions(conn: Connection, version: int) -> None:
    joined = stable_single_member_group(conn, "g")
    answer = conn.request(LEAVE, version, {"group_id": "g", "member_id": joined["member_id"]})
    assert answer["error_code"] == 0
    assert conn.request(LEAVE, version, {"group_id": "g", "member_id": joined["member_id"]})["error_code"] == \
        UNKNOWN_MEMBER_ID
    [described] = conn.request(DESCRIBE, 5, {"groups": ["g"]})["groups"]
    assert (described["group_state"], described["members"]) == ("Empty", [])


@pytest.mark.parametrize("version", range(3, 6))
def test_leave_group_batched_members(broker: Broker, conn: Connection, version: int) -> None:
    # The second join rebalances; the static member does not rejoin, and stays (static members leave only
    # by their session timeout or a LeaveGroup), so a short rebalance timeout ends the wait.
    static = join(conn, "g", instance_id="instance-1", session_timeout_ms=30_000, rebalance_timeout_ms=300)
    send_join(conn, "g", session_timeout_ms=30_000, rebalance_timeout_ms=300)
    advance(broker, 300)
    _, dynamic = conn.receive(JOIN, 9)
    assert dynamic["error_code"] == 0
    answer = conn.request(LEAVE, version, {"group_id": "g", "members": [
        {"member_id": dynamic["member_id"], "group_instance_id": None, "reason": "bye"},
        {"member_id": "", "group_instance_id": "instance-1", "reason": None},
        {"member_id": "ghost", "group_instance_id": None, "reason": None},
    ]})
    assert answer["error_code"] == 0
    assert [(m["member_id"], m["group_instance_id"], m["error_code"]) for m in answer["members"]] == [
        (dynamic["member_id"], None, 0), ("", "instance-1", 0), ("ghost", None, UNKNOWN_MEMBER_ID)]
    assert static["member_id"].startswith("instance-1-")


def test_static_member_rejoins_without_a_rebalance_and_fences_the_old_id(conn: Connection) -> None:
    first = join(conn, "g", instance_id="i1")
    conn.request(SYNC, 5, sync_body("g", first["member_id"], 1, {first["member_id"]: b"mine"}, instance_id="i1"))
    again = conn.request(JOIN, 9, join_body("g", instance_id="i1"))
    assert again["error_code"] == 0
    assert again["generation_id"] == 1 and again["member_id"] != first["member_id"]
    synced = conn.request(SYNC, 5, sync_body("g", again["member_id"], 1, instance_id="i1"))
    assert (synced["error_code"], synced["assignment"]) == (0, b"mine")
    stale = conn.request(HEARTBEAT, 4, heartbeat_body("g", first["member_id"], 1, "i1"))
    assert stale["error_code"] == FENCED_INSTANCE_ID


def test_session_timeout_removes_a_silent_member_on_the_brokers_clock(make_broker: MakeBroker) -> None:
    config = group_config(group_min_session_timeout_ms=100)
    with make_broker(config, clock=VirtualClock()) as broker, broker.connect() as conn:
        find_coordinator(conn, "g")
        joined = join(conn, "g", session_timeout_ms=300)
        conn.request(SYNC, 5, sync_body("g", joined["member_id"], 1, {joined["member_id"]: b"x"}))
        advance(broker, 250)
        assert len(describe(conn, "g")["members"]) == 1
        advance(broker, 100)
        described = describe(conn, "g")
        assert (described["group_state"], described["members"]) == ("Empty", [])
        answer = conn.request(HEARTBEAT, 4, heartbeat_body("g", joined["member_id"], 1))
        assert answer["error_code"] == UNKNOWN_MEMBER_ID
