"""Classic groups through raw requests, Kafka against kemu, one connection per member: JoinGroup's member-id
handshake and generations, the protocol the members agree on, SyncGroup's assignments and errors, Heartbeat,
LeaveGroup and static members.

Every scenario runs its members in an order the broker cannot reorder: a member's join that must wait for
others is sent, then the others act, then its answer is read. Generation ids are compared: in these orders
they are deterministic. Member lists are keyed by the member's role in the scenario (Kafka lists them in
HashMap order of their random ids); member ids themselves are numbered placeholders (normalise.py), and
`member_id_shape` keeps what is not random in them.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.groups_wire import (
    JOIN_GROUP,
    LEAVE_GROUP,
    SYNC_GROUP,
    ClassicMember,
    admit,
    consumer_protocols,
    describe_group,
    join_body,
    member_id_shape,
    ready_coordinator,
    unique,
)
from compat_tests.differential.targets import Pair, Target

Body = dict[str, Any]


def keyed_members(members: list[Body], roles: dict[str, str]) -> dict[str, Body]:
    """Members by role, in the order of the roles: the placeholders of their ids are numbered in that order."""
    keyed = {roles.get(member["member_id"], member["member_id"]): member for member in members}
    return {role: keyed[role] for role in sorted(keyed)}


def roles_of(*members: tuple[str, ClassicMember]) -> dict[str, str]:
    return {member.member_id: role for role, member in members}


def leader_view(answer: Body, roles: dict[str, str]) -> Body:
    answer = dict(answer)
    answer["members"] = keyed_members(answer["members"], roles)
    answer["leader_role"] = roles.get(answer["leader"], answer["leader"])
    return answer


def described(target: Target, group: str, roles: dict[str, str], version: int = 5) -> Body:
    answer = describe_group(target, group, version)
    answer["members"] = keyed_members(answer["members"], roles)
    return answer


@pytest.mark.parametrize("version", [0, 3, 4, 5, 7, 9])
def test_join_alone(pair: Pair, version: int) -> None:
    """One member: v4+ hands out the member id (MEMBER_ID_REQUIRED) and the member joins again with it; before
    v4 the first join makes the member. Then the leader's SyncGroup, a heartbeat, and its leave."""
    group = unique("classic-alone")
    sync_version = {0: 0, 3: 2, 4: 3, 5: 3, 7: 4, 9: 5}[version]

    def observe(target: Target) -> Body:
        ready_coordinator(target, group)
        seen: Body = {}
        with ClassicMember(target, group, "alone", protocols=consumer_protocols(["t1"], "range")) as a:
            seen["join"] = a.join(version)
            seen["member_id_shape"] = member_id_shape(a.member_id)
            if version >= 4:
                seen["rejoin"] = a.join(version)
            roles = roles_of(("a", a))
            seen["join" if version < 4 else "rejoin"] = leader_view(seen["join" if version < 4 else "rejoin"], roles)
            seen["sync"] = a.sync({a.member_id: b"assignment-a"}, sync_version)
            seen["heartbeat"] = a.heartbeat()
            seen["described"] = described(target, group, roles)
            seen["leave"] = a.leave(version=3)
            seen["described_after_leave"] = described(target, group, roles)
        return seen

    check(f"groups.classic.join_alone.v{version}", *pair.both(observe))


def test_second_member_rebalances(pair: Pair) -> None:
    """A second member's join parks until the first rejoins; the leader's SyncGroup hands each member its
    assignment, a follower that synced first included; the second generation is described Stable."""
    group = unique("classic-two")

    def observe(target: Target) -> Body:
        ready_coordinator(target, group)
        seen: Body = {}
        protocols = consumer_protocols(["t1", "t2"], "range", "roundrobin")
        with ClassicMember(target, group, "first", protocols=protocols) as a, \
                ClassicMember(target, group, "second", protocols=protocols) as b:
            a.join_with_id()
            a.sync({a.member_id: b"gen1-a"})
            seen["b_first_join"] = b.join()
            b.send_join()
            seen["a_heartbeat"] = a.await_rebalance()
            seen["described_preparing"] = described(target, group, roles_of(("a", a), ("b", b)))
            seen["a_sync_while_preparing"] = a.sync({a.member_id: b"x"})
            a.send_join()
            roles = roles_of(("a", a), ("b", b))
            seen["a_join"] = leader_view(a.receive_join(), roles)
            seen["b_join"] = leader_view(b.receive_join(), roles)
            seen["described_completing"] = described(target, group, roles)
            seen["b_heartbeat_before_sync"] = b.heartbeat()
            b.send_sync()
            seen["a_sync"] = a.sync({a.member_id: b"gen2-a", b.member_id: b"gen2-b"})
            seen["b_sync"] = b.receive_sync()
            seen["a_heartbeat_stable"] = a.heartbeat()
            seen["b_heartbeat_stable"] = b.heartbeat()
            seen["b_sync_again"] = b.sync()
            seen["described_stable"] = described(target, group, roles)
            seen["b_leave"] = b.leave()
            seen["a_heartbeat_after_leave"] = a.heartbeat()
            seen["a_join_alone"] = leader_view(a.join(), roles)
            seen["described_alone"] = described(target, group, roles)
        return seen

    check("groups.classic.second_member", *pair.both(observe))


@pytest.mark.parametrize("preferences", [
    (("range", "roundrobin"), ("roundrobin", "range")),
    (("roundrobin", "range"), ("range", "roundrobin")),
    (("cooperative-sticky", "range"), ("range", "cooperative-sticky")),
    (("range", "roundrobin", "sticky"), ("roundrobin", "range"), ("sticky", "roundrobin")),
    (("sticky", "range"), ("roundrobin", "range"), ("range", "roundrobin")),
], ids=lambda p: "-".join("+".join(member) for member in p))
def test_protocol_selection(pair: Pair, preferences: tuple[tuple[str, ...], ...]) -> None:
    """Each member votes for its most preferred protocol among those all support; the most votes win, and a tie
    goes as Kafka breaks it."""
    group = unique("classic-vote")

    def observe(target: Target) -> Body:
        ready_coordinator(target, group)
        members = [ClassicMember(target, group, f"voter{i}", protocols=consumer_protocols(["t"], *names))
                   for i, names in enumerate(preferences)]
        try:
            first, others = members[0], members[1:]
            first.lead()
            for count, other in enumerate(others):
                admit(first, other, others[:count])
            roles = {m.member_id: f"voter{i}" for i, m in enumerate(members)}
            return {"protocol": described(target, group, roles)["protocol_data"],
                    "generation": first.generation}
        finally:
            for member in members:
                member.close()

    check("groups.classic.protocol_selection." + "-".join("+".join(m) for m in preferences), *pair.both(observe))


def test_inconsistent_protocols(pair: Pair) -> None:
    """A member whose protocols share none with the group's, or of another protocol type, is refused."""
    group = unique("classic-inconsistent")

    def observe(target: Target) -> Body:
        ready_coordinator(target, group)
        seen: Body = {}
        with ClassicMember(target, group, "first", protocols=consumer_protocols(["t"], "range")) as a, \
                target.connect(client_id="stranger") as stranger:
            seen["empty_group_other_type"] = stranger.request(JOIN_GROUP, 9, join_body(
                group, protocols=[], protocol_type="consumer"))
            a.lead()
            seen["no_common_protocol"] = stranger.request(JOIN_GROUP, 9, join_body(
                group, protocols=consumer_protocols(["t"], "roundrobin")))
            seen["other_protocol_type"] = stranger.request(JOIN_GROUP, 9, join_body(
                group, protocols=consumer_protocols(["t"], "range"), protocol_type="connect"))
            seen["known_member_other_protocols"] = a.join(protocols=consumer_protocols(["t"], "roundrobin"))
            seen["sync_other_protocol_name"] = a.sync({}, protocol_name="roundrobin")
            seen["sync_other_protocol_type"] = a.sync({}, protocol_type="connect")
            seen["heartbeat"] = a.heartbeat()
        return seen

    check("groups.classic.inconsistent_protocols", *pair.both(observe))


def test_join_errors(pair: Pair) -> None:
    group = unique("classic-join-errors")

    def observe(target: Target) -> Body:
        ready_coordinator(target, group)
        protocols = consumer_protocols(["t"], "range")
        seen: Body = {}
        with target.connect(client_id="errors") as connection:
            def join(**fields: Any) -> Body:
                fields.setdefault("protocols", protocols)
                return connection.request(JOIN_GROUP, 9, join_body(fields.pop("group_id", group), **fields))

            seen["empty_group_id"] = join(group_id="")
            seen["session_timeout_too_small"] = join(session_timeout_ms=1)
            seen["session_timeout_too_large"] = join(session_timeout_ms=3_600_000)
            seen["unknown_member_of_missing_group"] = join(group_id=unique("missing"), member_id="nobody")
            with ClassicMember(target, group, "member", protocols=protocols) as a:
                a.lead()
                seen["unknown_member_of_group"] = join(member_id="nobody")
                seen["static_id_for_dynamic_member"] = join(member_id=a.member_id, instance_id="not-mine")
                seen["leader_rejoins_stable"] = leader_view(a.join(), roles_of(("a", a)))
                seen["rejoin_completing"] = leader_view(a.join(), roles_of(("a", a)))
                a.sync({a.member_id: b""})
                seen["follower_like_rejoin_stable_v3"] = a.join(3)
        return seen

    check("groups.classic.join_errors", *pair.both(observe))


def test_sync_and_heartbeat_errors(pair: Pair) -> None:
    group = unique("classic-sync-errors")

    def observe(target: Target) -> Body:
        ready_coordinator(target, group)
        seen: Body = {}
        with ClassicMember(target, group, "member", protocols=consumer_protocols(["t"], "range")) as a:
            seen["sync_missing_group"] = target.request(SYNC_GROUP, 5, {
                "group_id": unique("missing"), "generation_id": 1, "member_id": "nobody",
                "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
                "assignments": []})
            a.join_with_id()
            seen["sync_wrong_generation"] = a.sync({a.member_id: b""}, generation=a.generation + 1)
            seen["sync_unknown_member"] = target.request(SYNC_GROUP, 5, {
                "group_id": group, "generation_id": a.generation, "member_id": "nobody",
                "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
                "assignments": []})
            seen["sync_empty_group_id"] = target.request(SYNC_GROUP, 5, {
                "group_id": "", "generation_id": a.generation, "member_id": a.member_id,
                "group_instance_id": None, "protocol_type": None, "protocol_name": None, "assignments": []})
            seen["sync"] = a.sync({a.member_id: b"mine"})
            seen["sync_v0_again"] = a.sync(version=0)
            seen["heartbeat_wrong_generation"] = a.heartbeat(generation=a.generation + 1)
            seen["heartbeat_old_generation"] = a.heartbeat(generation=a.generation - 1)
            seen["heartbeat_unknown_member"] = a.heartbeat(member_id="nobody")
            seen["heartbeat_v0"] = a.heartbeat(version=0)
            seen["heartbeat_missing_group"] = a.connection.request(12, 4, {
                "group_id": unique("missing"), "generation_id": 1, "member_id": "nobody",
                "group_instance_id": None})
            seen["heartbeat_empty_group_id"] = a.connection.request(12, 4, {
                "group_id": "", "generation_id": 1, "member_id": a.member_id, "group_instance_id": None})
            a.leave()
            seen["heartbeat_after_leave"] = a.heartbeat()
            seen["sync_after_leave"] = a.sync()
        return seen

    check("groups.classic.sync_heartbeat_errors", *pair.both(observe))


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
def test_leave(pair: Pair, version: int) -> None:
    """LeaveGroup v0-2 for one member; v3+ a batch: two members, an unknown one, and a static member named by
    its instance id alone."""
    group = unique("classic-leave")

    def observe(target: Target) -> Body:
        ready_coordinator(target, group)
        seen: Body = {}
        protocols = consumer_protocols(["t"], "range")
        with ClassicMember(target, group, "one", protocols=protocols) as a, \
                ClassicMember(target, group, "two", protocols=protocols) as b, \
                ClassicMember(target, group, "three", instance_id="static-three", protocols=protocols) as c:
            a.lead()
            admit(a, b)
            admit(a, c, [b])
            roles = roles_of(("a", a), ("b", b), ("c", c))
            if version < 3:
                seen["leave_unknown"] = a.connection.request(LEAVE_GROUP, version, {
                    "group_id": group, "member_id": "nobody"})
                seen["leave_b"] = b.connection.request(LEAVE_GROUP, version, {
                    "group_id": group, "member_id": b.member_id})
            else:
                answer = a.connection.request(LEAVE_GROUP, version, {"group_id": group, "members": [
                    {"member_id": a.member_id, "group_instance_id": None, "reason": "done"},
                    {"member_id": b.member_id, "group_instance_id": None, "reason": None},
                    {"member_id": "nobody", "group_instance_id": None, "reason": None},
                    {"member_id": "", "group_instance_id": "static-three", "reason": None},
                    {"member_id": "", "group_instance_id": "static-nobody", "reason": None},
                ]})
                answer["members"] = keyed_members(answer["members"], roles)
                seen["leave_batch"] = answer
            seen["described"] = described(target, group, roles)
            seen["leave_missing_group"] = a.connection.request(LEAVE_GROUP, version, {
                "group_id": unique("missing"), "member_id": "nobody",
                "members": [{"member_id": "nobody", "group_instance_id": None, "reason": None}]})
        return seen

    check(f"groups.classic.leave.v{version}", *pair.both(observe))


def test_static_member_replaced(pair: Pair) -> None:
    """A static member (group_instance_id) joins without the member-id handshake; a new instance with the same
    id takes its place in the same generation, and the old member id is fenced."""
    group = unique("classic-static")

    def observe(target: Target) -> Body:
        ready_coordinator(target, group)
        seen: Body = {}
        protocols = consumer_protocols(["t"], "range")
        with ClassicMember(target, group, "static-a", instance_id="instance-a", protocols=protocols) as a, \
                ClassicMember(target, group, "static-a2", instance_id="instance-a", protocols=protocols) as a2, \
                ClassicMember(target, group, "static-a3", instance_id="instance-a", protocols=protocols) as a3:
            seen["join"] = a.join()
            seen["member_id_shape"] = member_id_shape(a.member_id)
            seen["sync"] = a.sync({a.member_id: b"assigned-a"})
            seen["replacement_join"] = a2.join()
            roles = roles_of(("a", a), ("a2", a2))
            seen["replacement_join"] = leader_view(seen["replacement_join"], roles)
            seen["replacement_sync"] = a2.sync()
            seen["old_heartbeat"] = a.heartbeat()
            seen["old_sync"] = a.sync()
            seen["old_join"] = a.join()
            seen["new_heartbeat"] = a2.heartbeat()
            seen["described"] = described(target, group, roles)
            seen["replacement_other_protocols"] = a3.join(protocols=consumer_protocols(["t"], "range", "x"))
            roles = roles_of(("a", a), ("a2", a2), ("a3", a3))
            seen["replacement_other_protocols"] = leader_view(seen["replacement_other_protocols"], roles)
            seen["described_after_second_replacement"] = described(target, group, roles)
            seen["leave_static"] = a3.leave()
            seen["described_after_leave"] = described(target, group, roles)
        return seen

    check("groups.classic.static_member", *pair.both(observe))


def test_silent_member_expires(pair: Pair) -> None:
    """A member that stops heartbeating is dropped once its session times out (the broker's minimum, 6 s):
    the leader, still heartbeating, is told to rejoin and makes the next generation alone."""
    group = unique("classic-expiry")

    def observe(target: Target) -> Body:
        ready_coordinator(target, group)
        seen: Body = {}
        protocols = consumer_protocols(["t"], "range")
        with ClassicMember(target, group, "keeps", protocols=protocols) as a, \
                ClassicMember(target, group, "falls-silent", protocols=protocols) as b:
            a.lead()
            admit(a, b)
            roles = roles_of(("a", a), ("b", b))
            seen["heartbeat_expiry"] = a.await_rebalance()  # heartbeats until b's session has run out
            seen["rejoin_alone"] = leader_view(a.join(), roles)
            seen["sync"] = a.sync({a.member_id: b"alone"})
            seen["described"] = described(target, group, roles)
            seen["b_heartbeat"] = b.heartbeat()
        return seen

    check("groups.classic.session_expiry", *pair.both(observe))
