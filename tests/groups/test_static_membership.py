"""KIP-345 static membership in classic groups: restarts without rebalances, fencing of stale ids."""

from __future__ import annotations

from typing import Any

from kemu.groups import ClassicGroupState, RecordType
from kemu.wire.errors import ErrorCode
from tests.groups.helpers import Harness

BOTH = [("range", b"r"), ("roundrobin", b"rr")]


def static_group(h: Harness, *instances: str, protocols: list[tuple[str, bytes]] | None = None) -> dict[str, Any]:
    """A Stable group of static members; returns each instance's join response."""
    pendings = {i: h.join(client_id=f"client-{i}", instance_id=i, protocols=protocols or BOTH) for i in instances}
    h.run_until(lambda: all(p.done for p in pendings.values()))
    joins = {i: p.result() for i, p in pendings.items()}
    leader = next(j for j in joins.values() if j["leader"] == j["member_id"])
    assignment = {j["member_id"]: f"assigned-to-{i}".encode() for i, j in joins.items()}
    for i, j in joins.items():
        sync = h.sync("g", j["member_id"], j["generation_id"], assignment if j is leader else None, instance_id=i)
        assert sync.result()["error_code"] == ErrorCode.NONE
    return joins


def test_a_restarted_static_follower_takes_its_place_without_a_rebalance() -> None:
    h = Harness()
    joins = static_group(h, "i1", "i2")
    old_id = joins["i2"]["member_id"]
    journaled = len(h.journal)

    restarted = h.join(client_id="client-i2", instance_id="i2", protocols=BOTH)
    assert restarted.done  # answered at once: no rebalance
    response = restarted.result()
    new_id = response["member_id"]
    assert new_id != old_id and new_id.startswith("i2-")
    assert response["generation_id"] == 1 and response["members"] == []
    assert response["leader"] == joins["i1"]["member_id"] and response["skip_assignment"] is False
    group = h.coordinator.group("g")
    assert group.is_in_state(ClassicGroupState.STABLE) and group.generation_id == 1

    # Its old assignment is waiting for it.
    sync = h.sync("g", new_id, 1, instance_id="i2").result()
    assert sync["assignment"] == b"assigned-to-i2"
    # The replacement was persisted.
    assert len(h.journal) == journaled + 1 and h.journal[-1].type == RecordType.GROUP_METADATA
    assert new_id in {m["member_id"] for m in h.journal[-1].value["members"]}

    # The old incarnation is fenced.
    assert h.heartbeat("g", old_id, 1, instance_id="i2") == ErrorCode.FENCED_INSTANCE_ID
    assert h.heartbeat("g", old_id, 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat("g", new_id, 1, instance_id="i2") == ErrorCode.NONE
    assert h.heartbeat("g", joins["i1"]["member_id"], 1, instance_id="i1") == ErrorCode.NONE


def test_a_restarted_static_leader_is_told_to_skip_the_assignment_from_v9() -> None:
    h = Harness()
    joins = static_group(h, "i1", "i2")
    assert joins["i1"]["leader"] == joins["i1"]["member_id"]
    response = h.join(client_id="client-i1", instance_id="i1", protocols=BOTH, version=9).result()
    assert response["leader"] == response["member_id"] != joins["i1"]["member_id"]
    assert response["skip_assignment"] is True
    assert {m["member_id"] for m in response["members"]} == {response["member_id"], joins["i2"]["member_id"]}
    assert h.coordinator.group("g").is_in_state(ClassicGroupState.STABLE)


def test_before_v9_a_restarted_static_leader_is_shown_the_old_leader_id() -> None:
    h = Harness()
    joins = static_group(h, "i1", "i2")
    response = h.join(client_id="client-i1", instance_id="i1", protocols=BOTH, version=8).result()
    assert response["member_id"] != joins["i1"]["member_id"]
    # So that it does not believe it must compute a new assignment.
    assert response["leader"] == joins["i1"]["member_id"] and response["members"] == []
    assert h.coordinator.group("g").leader_id == response["member_id"]


def test_a_static_rejoin_that_changes_the_group_protocol_rebalances() -> None:
    h = Harness()
    joins = static_group(h, "i1", "i2")
    rejoin = h.join(client_id="client-i2", instance_id="i2", protocols=[("roundrobin", b"rr2")])
    assert not rejoin.done
    assert h.coordinator.group("g").is_in_state(ClassicGroupState.PREPARING_REBALANCE)
    leader_rejoin = h.join("g", joins["i1"]["member_id"], instance_id="i1", protocols=BOTH)
    assert leader_rejoin.done and rejoin.done
    assert rejoin.result()["protocol_name"] == "roundrobin" and rejoin.result()["generation_id"] == 2


def test_a_parked_old_incarnation_is_fenced_when_the_instance_rejoins() -> None:
    h = Harness()
    joins = static_group(h, "i1", "i2")
    old_i2 = h.join("g", joins["i2"]["member_id"], instance_id="i2", protocols=[("range", b"changed")])
    assert not old_i2.done  # the group is rebalancing
    h.join(client_id="client-i2", instance_id="i2", protocols=BOTH)
    assert old_i2.result()["error_code"] == ErrorCode.FENCED_INSTANCE_ID


def test_static_members_that_do_not_rejoin_stay_through_the_rebalance() -> None:
    h = Harness()
    joins = static_group(h, "i1", "i2")
    rejoin = h.join("g", joins["i1"]["member_id"], instance_id="i1", protocols=BOTH)
    for _ in range(3):  # i2 stays alive (its session is 10 s) but does not rejoin within the 30 s
        h.advance(9_000)
        assert h.heartbeat("g", joins["i2"]["member_id"], 1, instance_id="i2") == ErrorCode.REBALANCE_IN_PROGRESS
    h.run_until(lambda: rejoin.done)
    # Unlike a dynamic member, the static member that missed the join phase is still in the generation.
    assert {m["member_id"] for m in rejoin.result()["members"]} == {joins["i1"]["member_id"],
                                                                     joins["i2"]["member_id"]}
    assert rejoin.result()["generation_id"] == 2


def test_join_with_a_known_instance_and_someone_elses_member_id_is_fenced() -> None:
    h = Harness()
    static_group(h, "i1")
    response = h.join("g", "impostor", instance_id="i1", protocols=BOTH).result()
    assert response["error_code"] == ErrorCode.FENCED_INSTANCE_ID
    assert h.join("g", "impostor", instance_id="unknown", protocols=BOTH).result()["error_code"] == \
        ErrorCode.UNKNOWN_MEMBER_ID
