"""ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.authorizer.acls import ResourceType, all_operations
from tests.handlers.group_wire import CG_DESCRIBE, CG_HEARTBEAT, DESCRIBE, LIST, find_coordinator, group_config
from tests.handlers.harness import Broker, Connection, MakeBroker

NOT_COORDINATOR, INVALID_REQUEST, GROUP_ID_NOT_FOUND = 16, 42, 69


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    # A target assignment at every epoch: the wire is the point here; tests/groups has the interval's tests.
    with make_broker(group_config(group_consumer_assignment_interval_ms=0)) as running:
        running.call(create_topics, running.broker, [NewTopic("t", 4, 1)])
        yield running


def topic_id(broker: Broker) -> uuid.UUID:
    topic = broker.broker.topics.get("t")
    assert topic is not None
    return topic.topic_id


def heartbeat(conn: Connection, member_id: str, epoch: int, owned: set[int] | None, version: int = 1,
              tid: uuid.UUID | None = None, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"group_id": "g", "member_id": member_id, "member_epoch": epoch,
                            "rebalance_timeout_ms": 30_000 if epoch == 0 else -1,
                            "subscribed_topic_names": ["t"] if epoch == 0 else None,
                            "topic_partitions": None if owned is None else
                            ([{"topic_id": tid, "partitions": sorted(owned)}] if owned else [])}
    body.update(fields)
    return conn.request(CG_HEARTBEAT, version, body)


def assigned(response: dict[str, Any]) -> set[int] | None:
    if response["assignment"] is None:
        return None
    return {p for entry in response["assignment"]["topic_partitions"] for p in entry["partitions"]}


def test_not_coordinator_before_the_offsets_topic_exists(conn: Connection) -> None:
    # Without a message, as Kafka's GroupCoordinatorService answers (recorded in the cluster conformance corpus)
    answer = heartbeat(conn, "m1", 0, set())
    assert (answer["error_code"], answer["error_message"]) == (NOT_COORDINATOR, None)
    [described] = conn.request(CG_DESCRIBE, 0, {"group_ids": ["g"]})["groups"]
    assert (described["error_code"], described["error_message"]) == (NOT_COORDINATOR, None)


@pytest.mark.real_socket
def test_v0_gets_its_member_id_from_the_broker(broker: Broker, conn: Connection) -> None:
    find_coordinator(conn, "g")
    first = heartbeat(conn, "", 0, set(), version=0)
    assert first["error_code"] == 0 and first["member_id"] and first["member_epoch"] == 2
    assert assigned(first) == {0, 1, 2, 3}
    assert first["heartbeat_interval_ms"] == 5000


def test_two_members_share_the_partitions_after_revocation(broker: Broker, conn: Connection) -> None:
    find_coordinator(conn, "g")
    tid = topic_id(broker)
    a = heartbeat(conn, "member-a", 0, set(), tid=tid)
    assert (a["error_code"], a["member_epoch"], assigned(a)) == (0, 2, {0, 1, 2, 3})
    b = heartbeat(conn, "member-b", 0, set(), tid=tid)
    assert (b["error_code"], b["member_epoch"]) == (0, 3)
    assert assigned(b) == set()  # its partitions are still owned by a

    a = heartbeat(conn, "member-a", 2, {0, 1, 2, 3}, tid=tid)
    kept = assigned(a)
    assert kept is not None and len(kept) == 2
    a = heartbeat(conn, "member-a", a["member_epoch"], kept, tid=tid)
    assert a["member_epoch"] == 3
    b = heartbeat(conn, "member-b", 3, set(), tid=tid)
    assert assigned(b) == {0, 1, 2, 3} - kept

    [described] = conn.request(CG_DESCRIBE, 0, {"group_ids": ["g"], "include_authorized_operations": True})["groups"]
    assert (described["error_code"], described["group_state"], described["group_epoch"]) == (0, "Stable", 3)
    assert described["assignor_name"] == "uniform"
    assert described["authorized_operations"] == all_operations(ResourceType.GROUP)
    members = {m["member_id"]: m for m in described["members"]}
    assert set(members) == {"member-a", "member-b"}
    assert members["member-a"]["subscribed_topic_names"] == ["t"]
    assert members["member-a"]["client_host"] == "/127.0.0.1"
    [entry] = members["member-b"]["target_assignment"]["topic_partitions"]
    assert (entry["topic_id"], entry["topic_name"], set(entry["partitions"])) == (tid, "t", {0, 1, 2, 3} - kept)
    assert {m["member_type"] for m in described["members"]} == {-1}  # v0 has no member type: the default
    [v1] = conn.request(CG_DESCRIBE, 1, {"group_ids": ["g"], "include_authorized_operations": True})["groups"]
    assert v1 == {**described, "members": [{**m, "member_type": 1} for m in described["members"]]}  # KIP-1099

    [listed] = conn.request(LIST, 5, {})["groups"]
    assert (listed["group_id"], listed["group_type"], listed["protocol_type"]) == ("g", "consumer", "consumer")

    left = heartbeat(conn, "member-b", -1, None, tid=tid)
    assert (left["error_code"], left["member_epoch"]) == (0, -1)
    a = heartbeat(conn, "member-a", 2, kept, tid=tid)
    assert assigned(a) == {0, 1, 2, 3}


def test_malformed_heartbeat_is_invalid_request_with_kafkas_message(conn: Connection) -> None:
    find_coordinator(conn, "g")
    answer = heartbeat(conn, "m", 0, set(), rebalance_timeout_ms=-1)
    assert answer["error_code"] == INVALID_REQUEST
    assert answer["error_message"] == "RebalanceTimeoutMs must be provided in first request."


def test_describe_of_classic_unknown_and_empty_ids(conn: Connection) -> None:
    find_coordinator(conn, "g")
    unknown, empty = conn.request(CG_DESCRIBE, 0, {"group_ids": ["nope", ""]})["groups"]
    assert (unknown["group_id"], unknown["error_code"]) == ("nope", GROUP_ID_NOT_FOUND)
    assert empty["error_code"] == 24  # INVALID_GROUP_ID


@pytest.mark.parametrize("version", [5, 6])
def test_describe_groups_of_a_consumer_group(broker: Broker, conn: Connection, version: int) -> None:
    # DescribeGroups describes classic groups only: a KIP-848 group is Dead, and from v6 GROUP_ID_NOT_FOUND.
    find_coordinator(conn, "g")
    assert heartbeat(conn, "member-a", 0, set())["error_code"] == 0
    [described] = conn.request(DESCRIBE, version, {"groups": ["g"]})["groups"]
    assert (described["group_state"], described["members"]) == ("Dead", [])
    assert (described["error_code"], described["error_message"]) == (
        (GROUP_ID_NOT_FOUND, "Group g is not a classic group.") if version >= 6 else (0, None))
