"""DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets (KIP-932) over the wire: start
offsets and lag as a share group reads and acknowledges, -1 where there is no state, an altered start offset
that the next fetch starts at, deleted state, the group checks (empty, kind, coordinator) and authorization.
The answers asserted are the reference Kafka 4.3's (compat_tests/conformance/scripts/share_offsets.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.authorizer.acls import AclOperation, ResourceType
from kemu.wire.errors import ErrorCode
from tests.handlers.data_plane import batch, produce, topic_id
from tests.handlers.group_wire import find_coordinator, group_config
from tests.handlers.harness import Broker, Connection, MakeBroker
from tests.handlers.test_authorization import config as authorizer_config
from tests.handlers.test_authorization import deny
from tests.handlers.test_k76_k77_share_groups import heartbeat
from tests.handlers.test_k78_k79_share_fetch import acquired, only_partition, share_ack, share_fetch

DESCRIBE, ALTER, DELETE = 90, 91, 92
ACCEPT, REJECT = 1, 3
E = ErrorCode
ZERO = uuid.UUID(int=0)
UNKNOWN_PARTITION = (E.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
NOT_EMPTY = (E.NON_EMPTY_GROUP, "The group is not empty.")


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    with make_broker(group_config(properties={"group.share.assignment.interval.ms": "0"})) as running:
        running.call(create_topics, running.broker, [NewTopic("t", 2, 1)])
        running.call(running.broker.group_configs.replace, "g", {"share.auto.offset.reset": "earliest"})
        with running.connect() as conn:
            find_coordinator(conn, "g")
        yield running


def describe(conn: Connection, group: str = "g", topics: list[tuple[str, list[int]]] | None = None,
             version: int = 1) -> dict[str, Any]:
    body = None if topics is None else [{"topic_name": name, "partitions": parts} for name, parts in topics]
    [answer] = conn.request(DESCRIBE, version, {"groups": [{"group_id": group, "topics": body}]})["groups"]
    return dict(answer)


def offsets(answer: dict[str, Any]) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) → (start offset, lag) of a described group."""
    assert (answer["error_code"], answer["error_message"]) == (0, None), answer
    return {(t["topic_name"], p["partition_index"]): (p["start_offset"], p["lag"])
            for t in answer["topics"] for p in t["partitions"]}


def alter(conn: Connection, topics: dict[str, dict[int, int]], group: str = "g") -> dict[str, Any]:
    return conn.request(ALTER, 0, {"group_id": group, "topics": [
        {"topic_name": name, "partitions": [{"partition_index": i, "start_offset": o} for i, o in parts.items()]}
        for name, parts in topics.items()]})


def altered(answer: dict[str, Any]) -> dict[tuple[str, int], tuple[int, str | None]]:
    assert (answer["error_code"], answer["error_message"]) == (0, None), answer
    return {(t["topic_name"], p["partition_index"]): (p["error_code"], p["error_message"])
            for t in answer["responses"] for p in t["partitions"]}


def delete(conn: Connection, *topics: str, group: str = "g") -> dict[str, Any]:
    return conn.request(DELETE, 0, {"group_id": group, "topics": [{"topic_name": name} for name in topics]})


def join_and_assign(conn: Connection, member: str = "m1") -> int:
    """A member subscribed to t, heartbeating until it is assigned (so the partitions are initialised)."""
    answer = heartbeat(conn, member, 0, ["t"], group="g")
    if not answer["assignment"]["topic_partitions"]:  # initialised by this join, assigned at the next beat
        answer = heartbeat(conn, member, answer["member_epoch"], group="g")
    assert answer["assignment"]["topic_partitions"], answer
    epoch = answer["member_epoch"]
    assert isinstance(epoch, int)
    return epoch


def test_a_group_with_no_state_has_nothing_and_named_partitions_start_at_minus_one(
        broker: Broker, conn: Connection) -> None:
    assert describe(conn)["topics"] == []
    named = describe(conn, topics=[("t", [1, 0]), ("nope", [0])])
    assert offsets(named) == {("t", 0): (-1, -1), ("t", 1): (-1, -1), ("nope", 0): (-1, -1)}
    assert [(t["topic_name"], t["topic_id"]) for t in named["topics"]] == [("t", topic_id(broker, "t")),
                                                                            ("nope", ZERO)]
    assert describe(conn, topics=[])["topics"] == []


def test_assigned_partitions_have_no_start_offset_until_read_then_lag_counts_what_is_not_done(
        broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a", b"b", b"c", b"d", b"e"))
    join_and_assign(conn)
    assert offsets(describe(conn)) == {("t", 0): (-1, -1), ("t", 1): (-1, -1)}
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == [(0, 4, 1)]
    # Offsets 0-1 accepted, 3 rejected: the start moves past 0-1, and 3 is done with above it.
    share_ack(conn, tid, "m1", 1, [(0, 1, [ACCEPT]), (3, 3, [REJECT])])
    assert offsets(describe(conn)) == {("t", 0): (2, 2), ("t", 1): (-1, -1)}
    assert offsets(describe(conn, topics=[("t", [0])])) == {("t", 0): (2, 2)}
    v0 = describe(conn, topics=[("t", [0])], version=0)
    assert (v0["topics"][0]["partitions"][0]["start_offset"], v0["topics"][0]["partitions"][0]["lag"]) == (2, -1)
    produce(conn, "t", batch(b"f"))
    assert offsets(describe(conn))[("t", 0)] == (2, 3)


def test_alter_sets_the_start_of_an_empty_group_made_for_it_and_a_fetch_starts_there(
        broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a", b"b", b"c", b"d", b"e"))
    answer = alter(conn, {"nope": {0: 0}, "t": {0: 2, 5: 2}})
    assert altered(answer) == {("nope", 0): UNKNOWN_PARTITION, ("t", 0): (0, None), ("t", 5): UNKNOWN_PARTITION}
    assert [t["topic_name"] for t in answer["responses"]] == ["nope", "t"]  # refused before the coordinator first
    assert [t["topic_id"] for t in answer["responses"]] == [ZERO, tid]
    group = broker.call(lambda: broker.coordinators.groups.coordinator.group("g"))
    assert group is not None and group.state_name() == "Empty"
    assert offsets(describe(conn)) == {("t", 0): (2, 3)}
    assert offsets(describe(conn, topics=[("t", [0, 1])])) == {("t", 0): (2, 3), ("t", 1): (-1, -1)}
    # Kafka checks no offset: beyond the end the lag is negative.
    alter(conn, {"t": {1: 100}})
    assert offsets(describe(conn))[("t", 1)] == (100, -100)
    join_and_assign(conn)
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == [(2, 4, 1)]


def test_alter_to_minus_one_leaves_the_start_to_auto_offset_reset(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a", b"b", b"c"))
    alter(conn, {"t": {0: 2}})
    alter(conn, {"t": {0: -1}})
    assert offsets(describe(conn)) == {("t", 0): (-1, -1)}
    join_and_assign(conn)
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == [(0, 2, 1)]  # earliest


def test_alter_and_delete_only_while_the_group_is_empty(broker: Broker, conn: Connection) -> None:
    join_and_assign(conn)
    for answer in (alter(conn, {"t": {0: 1}}), alter(conn, {"nope": {0: 1}}), delete(conn, "t")):
        assert ((answer["error_code"], answer["error_message"]), answer["responses"]) == (NOT_EMPTY, [])
    heartbeat(conn, "m1", -1, group="g")
    assert altered(alter(conn, {"t": {0: 1}})) == {("t", 0): (0, None)}


def test_delete_drops_the_state_of_whole_topics(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a", b"b", b"c"))
    alter(conn, {"t": {0: 1, 1: 0}})
    answer = delete(conn, "t", "nope")
    assert (answer["error_code"], answer["error_message"]) == (0, None)
    assert [(t["topic_name"], t["topic_id"], t["error_code"], t["error_message"]) for t in answer["responses"]] == [
        ("t", tid, 0, None), ("nope", ZERO, *UNKNOWN_PARTITION)]
    assert describe(conn)["topics"] == []
    assert offsets(describe(conn, topics=[("t", [0])])) == {("t", 0): (-1, -1)}
    again = delete(conn, "t")
    assert [(t["topic_id"], t["error_code"], t["error_message"]) for t in again["responses"]] == [
        (ZERO, E.UNKNOWN_TOPIC_OR_PARTITION, "There is no offset information to delete.")]
    assert delete(conn)["responses"] == []
    # Assigned anew, the partition starts at share.auto.offset.reset (earliest), not where it was altered to.
    join_and_assign(conn)
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == [(0, 2, 1)]


def test_the_group_checks(broker: Broker, conn: Connection) -> None:
    for answer in (delete(conn, "t", group="missing"),):
        assert (answer["error_code"], answer["error_message"]) == (E.GROUP_ID_NOT_FOUND, "Group missing not found.")
    for answer in (alter(conn, {"t": {0: 1}}, group=""), delete(conn, "t", group="")):
        assert (answer["error_code"], answer["error_message"]) == (E.INVALID_GROUP_ID, "The group id is invalid.")
    conn.request(8, 9, {"group_id": "classic", "generation_id_or_member_epoch": -1, "member_id": "",
                        "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                            {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                             "committed_metadata": None}]}]})
    for answer in (alter(conn, {"t": {0: 1}}, group="classic"), delete(conn, "t", group="classic")):
        assert (answer["error_code"], answer["error_message"]) == (
            E.GROUP_ID_NOT_FOUND, "Group classic is not a share group.")
    assert describe(conn, group="classic")["topics"] == []
    empty = describe(conn, group="", topics=[("t", [0])])
    assert (empty["error_code"], empty["topics"]) == (E.UNKNOWN_SERVER_ERROR, [])
    assert offsets(describe(conn, group=""))  == {}


def test_not_coordinator_before_the_offsets_topic_exists(make_broker: MakeBroker) -> None:
    with make_broker() as running, running.connect() as conn:
        running.call(create_topics, running.broker, [NewTopic("t", 1, 1)])
        every = describe(conn)
        assert (every["error_code"], every["error_message"]) == (E.NOT_COORDINATOR,
                                                                 "This is not the correct coordinator.")
        assert offsets(describe(conn, topics=[("t", [0])])) == {("t", 0): (-1, -1)}  # the share coordinator's
        for answer in (alter(conn, {"t": {0: 1}}), delete(conn, "t")):
            assert (answer["error_code"], answer["responses"]) == (E.NOT_COORDINATOR, [])


def test_authorization(make_broker: MakeBroker) -> None:
    with make_broker(authorizer_config(True)) as running, running.connect() as conn:
        find_coordinator(conn, "g")
        running.call(lambda: create_topics(running.broker, [NewTopic("open", 1, 1), NewTopic("closed", 1, 1)]))
        closed = topic_id(running, "closed")
        alter(conn, {"open": {0: 0}, "closed": {0: 0}})
        deny(running, ResourceType.TOPIC, "closed", AclOperation.DESCRIBE, AclOperation.READ)
        assert [t["topic_name"] for t in describe(conn)["topics"]] == ["open"]
        named = describe(conn, topics=[("closed", [0]), ("open", [0])])
        assert [(t["topic_name"], t["topic_id"], [(p["error_code"], p["start_offset"]) for p in t["partitions"]])
                for t in named["topics"]] == [("open", topic_id(running, "open"), [(0, 0)]),
                                              ("closed", ZERO, [(E.TOPIC_AUTHORIZATION_FAILED, -1)])]
        assert altered(alter(conn, {"closed": {0: 1}})) == {
            ("closed", 0): (E.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")}
        assert alter(conn, {"closed": {0: 1}})["responses"][0]["topic_id"] == closed  # Kafka names the topic
        refused = delete(conn, "closed")["responses"]
        assert [(t["topic_id"], t["error_code"]) for t in refused] == [(ZERO, E.TOPIC_AUTHORIZATION_FAILED)]
        deny(running, ResourceType.GROUP, "g", AclOperation.DESCRIBE, AclOperation.READ, AclOperation.DELETE)
        denied = describe(conn)
        assert (denied["error_code"], denied["error_message"]) == (E.GROUP_AUTHORIZATION_FAILED, None)
        for answer in (alter(conn, {"open": {0: 1}}), delete(conn, "open")):
            assert (answer["error_code"], answer["error_message"], answer["responses"]) == (
                E.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.", [])
