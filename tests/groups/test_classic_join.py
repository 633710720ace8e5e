"""JoinGroup: validation, the KIP-394 handshake, the initial rebalance delay, protocol choice, leadership."""

from __future__ import annotations

import re
import uuid

import pytest

from kemu.clock import VirtualClock
from kemu.groups import ClassicGroupState, GroupConfig, GroupCoordinator, RecordType
from kemu.wire.errors import ErrorCode
from tests.groups.helpers import START_MS, Harness, ctx, join_request


def test_empty_group_id_is_invalid() -> None:
    h = Harness()
    response = h.join("", "m-1").result()
    assert response["error_code"] == ErrorCode.INVALID_GROUP_ID
    assert response["member_id"] == "m-1"
    assert "" not in h.coordinator.groups


@pytest.mark.parametrize("timeout, error", [
    (5_999, ErrorCode.INVALID_SESSION_TIMEOUT),
    (6_000, ErrorCode.MEMBER_ID_REQUIRED),
    (1_800_000, ErrorCode.MEMBER_ID_REQUIRED),
    (1_800_001, ErrorCode.INVALID_SESSION_TIMEOUT),
])
def test_session_timeout_must_be_within_the_broker_bounds(timeout: int, error: ErrorCode) -> None:
    h = Harness()
    assert h.join(session_timeout_ms=timeout).result()["error_code"] == error


def test_v4_join_without_member_id_gets_one_and_must_come_back() -> None:
    coordinator = GroupCoordinator(VirtualClock(START_MS))
    response = coordinator.join_group(join_request("g"), ctx(4, "my-client")).result()
    assert response["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
    # Kafka's member ids are the client id, a dash and a random UUID.
    assert re.fullmatch(r"my-client-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                        response["member_id"])
    group = coordinator.group("g")
    assert group is not None and group.is_in_state(ClassicGroupState.EMPTY)
    assert group.pending_join_members == {response["member_id"]}

    pending = coordinator.join_group(join_request("g", response["member_id"]), ctx(4, "my-client"))
    assert not pending.done  # parked until the (initial) rebalance completes


def test_static_member_id_uses_the_instance_id_and_skips_the_handshake() -> None:
    h = Harness()
    pending = h.join(instance_id="instance-1")
    assert not pending.done
    h.run_until(lambda: pending.done)
    assert pending.result()["member_id"].startswith("instance-1-")


def test_v3_joins_at_once_without_the_handshake() -> None:
    h = Harness()
    pending = h.join(version=3)
    assert not pending.done
    h.advance(3000)
    response = pending.result()
    assert response["error_code"] == ErrorCode.NONE and response["generation_id"] == 1
    assert response["leader"] == response["member_id"]


def test_v0_uses_the_session_timeout_as_rebalance_timeout() -> None:
    h = Harness()
    h.join(version=0, session_timeout_ms=7000, rebalance_timeout_ms=99_999)
    member = next(iter(h.coordinator.group("g").members.values()))
    assert member.rebalance_timeout_ms == 7000


def test_a_new_group_is_journaled_empty_right_away() -> None:
    h = Harness()
    h.join()
    assert [r.type for r in h.journal] == [RecordType.GROUP_METADATA]
    value = h.journal[0].value
    assert value is not None
    assert value["generation"] == 0 and value["members"] == [] and value["leader"] is None
    assert value["current_state_timestamp"] == START_MS


def test_initial_rebalance_delay_is_extended_while_members_keep_arriving() -> None:
    h = Harness()  # group.initial.rebalance.delay.ms = 3000; rebalance timeout 30000
    _, first = h.join_with_id(client_id="a")
    h.advance(2000)
    _, second = h.join_with_id(client_id="b")
    h.advance(1000)  # t=3000: a member arrived during the delay, so it starts over
    assert not first.done
    h.advance(2999)
    assert not first.done
    h.advance(1)  # t=6000: nobody new during the second delay
    assert first.done and second.done
    assert first.result()["generation_id"] == 1 and len(first.result()["members"]) == 2


def test_initial_rebalance_delay_never_exceeds_the_rebalance_timeout() -> None:
    h = Harness()
    _, first = h.join_with_id(client_id="a", rebalance_timeout_ms=5000)  # remaining after the delay: 2000
    h.advance(1000)
    h.join_with_id(client_id="b", rebalance_timeout_ms=5000)
    h.advance(2000)  # t=3000: extended by min(3000, 2000)
    h.advance(1000)  # t=4000: another arrival, but no time remains
    _, third = h.join_with_id(client_id="c", rebalance_timeout_ms=5000)
    h.advance(999)
    assert not first.done
    h.advance(1)  # t=5000
    assert first.done and third.done
    assert len(first.result()["members"]) == 3


def test_the_leader_alone_gets_the_members_and_the_protocol_is_voted() -> None:
    h = Harness()
    _, a = h.join_with_id(client_id="a", protocols=[("sticky", b"a-sticky"), ("range", b"a-range")])
    _, b = h.join_with_id(client_id="b", protocols=[("sticky", b"b-sticky"), ("range", b"b-range")])
    _, c = h.join_with_id(client_id="c", protocols=[("range", b"c-range"), ("sticky", b"c-sticky")])
    h.run_until(lambda: a.done)
    leader, follower1, follower2 = a.result(), b.result(), c.result()
    # Two votes for sticky, one for range.
    assert {r["protocol_name"] for r in (leader, follower1, follower2)} == {"sticky"}
    assert leader["leader"] == leader["member_id"] == follower1["leader"]
    assert follower1["members"] == [] and follower2["members"] == []
    assert [(m["member_id"], m["metadata"]) for m in leader["members"]] == [
        (leader["member_id"], b"a-sticky"), (follower1["member_id"], b"b-sticky"),
        (follower2["member_id"], b"c-sticky")]
    assert leader["protocol_type"] == "consumer"


def test_only_protocols_every_member_supports_are_candidates() -> None:
    h = Harness()
    _, a = h.join_with_id(client_id="a", protocols=[("sticky", b"a1"), ("range", b"a2")])
    _, b = h.join_with_id(client_id="b", protocols=[("sticky", b"b1"), ("range", b"b2")])
    _, c = h.join_with_id(client_id="c", protocols=[("range", b"c2")])
    h.run_until(lambda: a.done)
    assert a.result()["protocol_name"] == "range"
    assert [m["metadata"] for m in a.result()["members"]] == [b"a2", b"b2", b"c2"]


@pytest.mark.parametrize("first, second", [("roundrobin", "range"), ("range", "roundrobin")])
def test_a_tied_vote_goes_by_the_protocol_names_hash_order_not_the_members(first: str, second: str) -> None:
    # Kafka counts votes in a java.util.HashMap and keeps the first most-voted in its iteration order, where
    # "range" comes before "roundrobin" whichever member voted for it.
    h = Harness()
    _, a = h.join_with_id(client_id="a", protocols=[(first, b""), (second, b"")])
    _, b = h.join_with_id(client_id="b", protocols=[(second, b""), (first, b"")])
    h.run_until(lambda: a.done)
    assert a.result()["protocol_name"] == b.result()["protocol_name"] == "range"


@pytest.mark.parametrize("protocol_type, protocols", [("", [("range", b"")]), ("consumer", [])])
def test_first_member_needs_a_protocol_type_and_protocols(protocol_type: str,
                                                          protocols: list[tuple[str, bytes]]) -> None:
    h = Harness()
    response = h.join(protocol_type=protocol_type, protocols=protocols).result()
    assert response["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert response["member_id"] == ""


def test_members_must_share_the_protocol_type_and_a_protocol() -> None:
    h = Harness()
    h.stable_group(members=1)
    other_type = h.join(protocol_type="connect").result()
    assert other_type["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    no_common = h.join(protocols=[("roundrobin", b"")]).result()
    assert no_common["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_group_max_size_refuses_new_members() -> None:
    h = Harness(GroupConfig(max_size=1))
    h.stable_group(members=1)
    response = h.join(client_id="extra").result()
    assert response["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert response["member_id"] == ""
    assert h.coordinator.group("g").num_members() == 1


def test_group_max_size_during_a_rebalance_counts_members_awaiting_join() -> None:
    h = Harness(GroupConfig(max_size=1))
    _, first = h.join_with_id(client_id="a")
    # The group is preparing its first generation with one member awaiting join.
    assert h.join(client_id="b").result()["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED
    h.run_until(lambda: first.done)
    assert first.result()["error_code"] == ErrorCode.NONE


def test_unknown_member_ids_are_refused() -> None:
    h = Harness()
    assert h.join("nope", "ghost").result()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    assert "nope" not in h.coordinator.groups
    h.stable_group(members=1)
    assert h.join("g", "ghost").result()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_protocol_name_is_null_only_from_v7() -> None:
    h = Harness()
    h.stable_group(members=1)
    old = h.join("g", "ghost", version=6).result()
    new = h.join("g", "ghost", version=7).result()
    assert old["protocol_name"] == "" and new["protocol_name"] is None


def test_a_follower_rejoining_unchanged_gets_the_current_generation_without_rebalance() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2)
    response = h.join("g", follower["member_id"]).result()
    assert response["error_code"] == ErrorCode.NONE
    assert response["generation_id"] == 1 and response["members"] == []
    assert h.coordinator.group("g").is_in_state(ClassicGroupState.STABLE)


def test_a_rejoining_leader_or_changed_metadata_triggers_a_rebalance() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2)
    rejoin = h.join("g", leader["member_id"])
    assert not rejoin.done
    assert h.coordinator.group("g").is_in_state(ClassicGroupState.PREPARING_REBALANCE)
    assert h.heartbeat("g", follower["member_id"], 1) == ErrorCode.REBALANCE_IN_PROGRESS
    follower_rejoin = h.join("g", follower["member_id"], protocols=[("range", b"changed")])
    # Everyone is back: the join phase completes at once (no delay outside the first rebalance).
    assert rejoin.done and follower_rejoin.done
    assert rejoin.result()["generation_id"] == 2
    assert dict((m["member_id"], m["metadata"]) for m in rejoin.result()["members"])[
        follower["member_id"]] == b"changed"


def test_join_during_completing_rebalance_repeats_the_lost_response() -> None:
    h = Harness()
    ids_and_pendings = [h.join_with_id(client_id=c) for c in ("a", "b")]
    h.run_until(lambda: all(p.done for _, p in ids_and_pendings))
    assert h.coordinator.group("g").is_in_state(ClassicGroupState.COMPLETING_REBALANCE)
    leader_id = ids_and_pendings[0][0]
    again = h.join("g", leader_id).result()
    assert again["generation_id"] == 1 and len(again["members"]) == 2
    assert h.coordinator.group("g").is_in_state(ClassicGroupState.COMPLETING_REBALANCE)


def test_members_that_do_not_rejoin_within_the_rebalance_timeout_are_removed() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2, rebalance_timeout_ms=20_000)
    rejoin = h.join("g", leader["member_id"], rebalance_timeout_ms=20_000)
    # The follower keeps heartbeating (a client stuck in processing) but never rejoins.
    for _ in range(3):
        h.advance(5000)
        assert h.heartbeat("g", follower["member_id"], 1) == ErrorCode.REBALANCE_IN_PROGRESS
    assert not rejoin.done
    h.advance(5000)  # 20 s after the rebalance started
    response = rejoin.result()
    assert response["generation_id"] == 2 and [m["member_id"] for m in response["members"]] == [leader["member_id"]]
    assert h.heartbeat("g", follower["member_id"], 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_pending_member_holds_up_the_rebalance_until_its_session_expires() -> None:
    h = Harness()
    (leader,) = h.stable_group(members=1)
    pending_id = h.join(client_id="late", session_timeout_ms=10_000).result()["member_id"]
    rejoin = h.join("g", leader["member_id"])
    assert not rejoin.done  # waiting for the member that got an id but has not joined yet
    h.advance(10_000)
    assert rejoin.done and len(rejoin.result()["members"]) == 1
    assert pending_id not in h.coordinator.group("g").pending_join_members


def test_a_new_member_parked_too_long_is_dropped_and_told_to_rejoin() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2, rebalance_timeout_ms=600_000, session_timeout_ms=60_000)
    h.join("g", leader["member_id"], rebalance_timeout_ms=600_000, session_timeout_ms=60_000)
    new_id, parked = h.join_with_id(client_id="new", rebalance_timeout_ms=600_000)
    for _ in range(9):  # the follower stays alive but does not rejoin
        h.advance(30_000)
        assert h.heartbeat("g", follower["member_id"], 1) == ErrorCode.REBALANCE_IN_PROGRESS
    assert not parked.done
    h.advance(30_000)  # Kafka's fixed new-member join timeout: 5 minutes
    assert parked.result()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    assert parked.result()["member_id"] == ""
    assert not h.coordinator.group("g").has_member(new_id)


def test_member_ids_use_the_injected_uuid_source() -> None:
    h = Harness()
    response = h.join(client_id="x").result()
    assert response["member_id"] == f"x-{uuid.UUID(int=1)}"
