"""DescribeGroups, ListGroups and DeleteGroups, every version."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.authorizer.acls import ResourceType, all_operations
from kemu.handlers._authorize import NOT_REQUESTED
from tests.handlers.group_wire import (
    DELETE,
    DESCRIBE,
    LIST,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    commit_body,
    find_coordinator,
    group_config,
    join,
    stable_single_member_group,
)
from tests.handlers.harness import Broker, Connection, MakeBroker

NOT_COORDINATOR, NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND = 16, 68, 69


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    with make_broker(group_config()) as running:
        running.call(create_topics, running.broker, [NewTopic("t", 2, 1)])
        yield running


def test_before_the_offsets_topic_exists(conn: Connection) -> None:
    [described] = conn.request(DESCRIBE, 5, {"groups": ["g"]})["groups"]
    assert (described["group_id"], described["error_code"]) == ("g", NOT_COORDINATOR)
    assert conn.request(LIST, 5, {})["groups"] == []
    assert conn.request(DELETE, 2, {"groups_names": ["g"]})["results"] == [{"group_id": "g",
                                                                             "error_code": NOT_COORDINATOR}]


@pytest.mark.parametrize("version", range(7))
def test_describe_every_version(conn: Connection, version: int) -> None:
    find_coordinator(conn, "g")
    joined = stable_single_member_group(conn, "g", assignment=b"assigned")
    body: dict[str, Any] = {"groups": ["g", "unknown", ""]}
    if version >= 3:
        body["include_authorized_operations"] = True
    stable, unknown, empty = conn.request(DESCRIBE, version, body)["groups"]
    assert (stable["error_code"], stable["group_state"], stable["protocol_type"], stable["protocol_data"]) == (
        0, "Stable", "consumer", "range")
    [member] = stable["members"]
    assert (member["member_id"], member["client_id"], member["client_host"]) == (
        joined["member_id"], "kemu-tests", "/127.0.0.1")
    assert (member["member_metadata"], member["member_assignment"]) == (b"meta", b"assigned")
    assert stable["authorized_operations"] == (all_operations(ResourceType.GROUP) if version >= 3 else NOT_REQUESTED)
    assert stable["error_message"] is None
    # Unknown: Dead, and from v6 GROUP_ID_NOT_FOUND with GroupIdNotFoundException's message (KIP-1043). "" is a
    # group id like any other to Kafka (INVALID_GROUP_ID is for a null id, which no version carries).
    not_found = GROUP_ID_NOT_FOUND if version >= 6 else 0
    assert (unknown["error_code"], unknown["group_state"], unknown["members"]) == (not_found, "Dead", [])
    assert (empty["error_code"], empty["group_state"]) == (not_found, "Dead")
    assert (unknown["error_message"], empty["error_message"]) == (
        ("Group unknown not found.", "Group  not found.") if version >= 6 else (None, None))
    # Only a group described without an error gets its authorized operations.
    assert unknown["authorized_operations"] == (all_operations(ResourceType.GROUP) if 3 <= version < 6
                                                else NOT_REQUESTED)


@pytest.mark.parametrize("version", range(6))
def test_list_every_version(conn: Connection, version: int) -> None:
    find_coordinator(conn, "g")
    stable_single_member_group(conn, "consumers")
    conn.request(OFFSET_COMMIT, 8, commit_body("simple", {("t", 0): 1}))
    listed = conn.request(LIST, version, {})
    assert listed["error_code"] == 0
    by_id = {g["group_id"]: g for g in listed["groups"]}
    assert {g: by_id[g]["protocol_type"] for g in by_id} == {"consumers": "consumer", "simple": ""}
    if version >= 4:
        assert (by_id["consumers"]["group_state"], by_id["simple"]["group_state"]) == ("Stable", "Empty")
        stable_only = conn.request(LIST, version, {"states_filter": ["stable"]})["groups"]
        assert [g["group_id"] for g in stable_only] == ["consumers"]
    if version >= 5:
        assert by_id["consumers"]["group_type"] == "classic"
        assert conn.request(LIST, version, {"types_filter": ["consumer"]})["groups"] == []


@pytest.mark.parametrize("version", range(3))
def test_delete_every_version(conn: Connection, version: int) -> None:
    find_coordinator(conn, "g")
    stable_single_member_group(conn, "busy")
    conn.request(OFFSET_COMMIT, 8, commit_body("idle", {("t", 0): 1}))
    results = conn.request(DELETE, version, {"groups_names": ["idle", "busy", "unknown", "", "idle"]})["results"]
    assert [(r["group_id"], r["error_code"]) for r in results] == [
        ("idle", 0), ("busy", NON_EMPTY_GROUP), ("unknown", GROUP_ID_NOT_FOUND), ("", GROUP_ID_NOT_FOUND)]
    fetched = conn.request(OFFSET_FETCH, 7, {"group_id": "idle", "topics": None})
    assert fetched["topics"] == []
    assert [g["group_id"] for g in conn.request(LIST, 4, {})["groups"]] == ["busy"]


@pytest.mark.real_socket
def test_a_group_mid_rebalance_is_described_without_assignments(conn: Connection) -> None:
    find_coordinator(conn, "g")
    joined = join(conn, "g")  # joined, not synced: CompletingRebalance
    [described] = conn.request(DESCRIBE, 5, {"groups": ["g"]})["groups"]
    assert described["group_state"] == "CompletingRebalance"
    assert [(m["member_id"], m["member_metadata"], m["member_assignment"]) for m in described["members"]] == [
        (joined["member_id"], b"", b"")]
