"""OffsetCommit, OffsetFetch and OffsetDelete: every version and their error placement."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.groups.subscription_bytes import encode_subscription
from tests.handlers.group_wire import (
    OFFSET_COMMIT,
    OFFSET_DELETE,
    OFFSET_FETCH,
    SYNC,
    commit_body,
    find_coordinator,
    group_config,
    join,
    partition_codes,
    stable_single_member_group,
    sync_body,
)
from tests.handlers.harness import Broker, Connection, MakeBroker

UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE, NOT_COORDINATOR = 3, 12, 16
ILLEGAL_GENERATION, GROUP_ID_NOT_FOUND, GROUP_SUBSCRIBED_TO_TOPIC, NON_EMPTY_GROUP = 22, 69, 86, 68


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    with make_broker(group_config()) as running:
        [outcome] = running.call(create_topics, running.broker, [NewTopic("t", 3, 1)])
        assert outcome.error == 0
        yield running


def fetch_v7(conn: Connection, group: str, partitions: list[int] | None) -> dict[tuple[str, int], tuple[int, str]]:
    topics = None if partitions is None else [{"name": "t", "partition_indexes": partitions}]
    body = conn.request(OFFSET_FETCH, 7, {"group_id": group, "topics": topics})
    assert body["error_code"] == 0
    return {(t["name"], p["partition_index"]): (p["committed_offset"], p["metadata"])
            for t in body["topics"] for p in t["partitions"]}


def test_not_coordinator_before_find_coordinator(conn: Connection) -> None:
    answer = conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 0): 1, ("nope", 0): 1}))
    # Unknown topics are answered before the coordinator is asked.
    assert partition_codes(answer["topics"]) == {("nope", 0): UNKNOWN_TOPIC_OR_PARTITION, ("t", 0): NOT_COORDINATOR}
    assert [t["name"] for t in answer["topics"]] == ["nope", "t"]
    v1 = conn.request(OFFSET_FETCH, 1, {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0, 1]}]})
    assert [(p["partition_index"], p["committed_offset"], p["error_code"]) for p in v1["topics"][0]["partitions"]] \
        == [(0, -1, NOT_COORDINATOR), (1, -1, NOT_COORDINATOR)]
    v5 = conn.request(OFFSET_FETCH, 5, {"group_id": "g", "topics": None})
    assert (v5["error_code"], v5["topics"]) == (NOT_COORDINATOR, [])
    v8 = conn.request(OFFSET_FETCH, 8, {"groups": [{"group_id": "g", "topics": None}]})
    assert [(g["group_id"], g["error_code"]) for g in v8["groups"]] == [("g", NOT_COORDINATOR)]
    assert conn.request(OFFSET_DELETE, 0, {"group_id": "g", "topics": []})["error_code"] == NOT_COORDINATOR


@pytest.mark.parametrize("version", range(2, 10))
def test_commit_every_version_then_fetch(conn: Connection, version: int) -> None:
    find_coordinator(conn, "g")
    group = f"simple-{version}"
    body = commit_body(group, {("t", 0): 10 + version, ("t", 2): 20})
    if 2 <= version <= 4:
        body["retention_time_ms"] = -1
    answer = conn.request(OFFSET_COMMIT, version, body)
    assert partition_codes(answer["topics"]) == {("t", 0): 0, ("t", 2): 0}
    assert fetch_v7(conn, group, [0, 1, 2]) == {("t", 0): (10 + version, "meta"), ("t", 1): (-1, ""),
                                                ("t", 2): (20, "meta")}


@pytest.mark.parametrize("version", range(1, 10))
def test_fetch_every_version(conn: Connection, version: int) -> None:
    find_coordinator(conn, "g")
    conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 1): 5}))
    if version >= 8:
        body = conn.request(OFFSET_FETCH, version, {"groups": [
            {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [1, 2]}]},
            {"group_id": "other", "topics": None}]})
        [mine, other] = body["groups"]
        assert (mine["group_id"], mine["error_code"], other["group_id"], other["topics"]) == ("g", 0, "other", [])
        partitions = mine["topics"][0]["partitions"]
    else:
        body = conn.request(OFFSET_FETCH, version, {"group_id": "g",
                                                    "topics": [{"name": "t", "partition_indexes": [1, 2]}]})
        partitions = body["topics"][0]["partitions"]
    assert [(p["partition_index"], p["committed_offset"], p["error_code"]) for p in partitions] == [
        (1, 5, 0), (2, -1, 0)]
    if version >= 5:
        assert partitions[0]["committed_leader_epoch"] == -1


def test_fetch_all_offsets_of_a_group(conn: Connection) -> None:
    find_coordinator(conn, "g")
    conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 0): 1, ("t", 2): 3}))
    assert fetch_v7(conn, "g", None) == {("t", 0): (1, "meta"), ("t", 2): (3, "meta")}
    assert fetch_v7(conn, "nobody", None) == {}


def test_unknown_partitions_and_oversized_metadata(conn: Connection) -> None:
    find_coordinator(conn, "g")
    answer = conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 0): 1, ("t", 3): 1, ("nope", 1): 1}))
    assert partition_codes(answer["topics"]) == {
        ("t", 0): 0, ("t", 3): UNKNOWN_TOPIC_OR_PARTITION, ("nope", 1): UNKNOWN_TOPIC_OR_PARTITION}
    big = conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 1): 1}, metadata="x" * 4097))
    assert partition_codes(big["topics"]) == {("t", 1): OFFSET_METADATA_TOO_LARGE}
    only_unknown = conn.request(OFFSET_COMMIT, 8, commit_body("fresh", {("nope", 0): 1}))
    assert partition_codes(only_unknown["topics"]) == {("nope", 0): UNKNOWN_TOPIC_OR_PARTITION}
    # A request left with no known partition never reached the coordinator: no group was created.
    assert conn.request(OFFSET_DELETE, 0, {"group_id": "fresh", "topics": []})["error_code"] == GROUP_ID_NOT_FOUND


def test_commit_with_a_generation_checks_the_group(conn: Connection) -> None:
    find_coordinator(conn, "g")
    gone = conn.request(OFFSET_COMMIT, 8, commit_body("nobody", {("t", 0): 1}, generation=3, member_id="m"))
    assert partition_codes(gone["topics"]) == {("t", 0): ILLEGAL_GENERATION}
    gone_v9 = conn.request(OFFSET_COMMIT, 9, commit_body("nobody", {("t", 0): 1}, generation=3, member_id="m"))
    assert partition_codes(gone_v9["topics"]) == {("t", 0): GROUP_ID_NOT_FOUND}
    joined = stable_single_member_group(conn, "g")
    ok = conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 0): 4}, generation=1, member_id=joined["member_id"]))
    assert partition_codes(ok["topics"]) == {("t", 0): 0}
    stale = conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 0): 4}, generation=0, member_id=joined["member_id"]))
    assert partition_codes(stale["topics"]) == {("t", 0): ILLEGAL_GENERATION}


@pytest.mark.real_socket
def test_offset_delete(conn: Connection) -> None:
    find_coordinator(conn, "g")
    conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 0): 1, ("t", 1): 2}))
    answer = conn.request(OFFSET_DELETE, 0, {"group_id": "g", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0}, {"partition_index": 7}]},
        {"name": "nope", "partitions": [{"partition_index": 0}]}]})
    assert answer["error_code"] == 0
    assert partition_codes(answer["topics"]) == {
        ("t", 7): UNKNOWN_TOPIC_OR_PARTITION, ("nope", 0): UNKNOWN_TOPIC_OR_PARTITION, ("t", 0): 0}
    assert fetch_v7(conn, "g", None) == {("t", 1): (2, "meta")}
    assert conn.request(OFFSET_DELETE, 0, {"group_id": "unknown", "topics": []})["error_code"] == GROUP_ID_NOT_FOUND


def test_offset_delete_refuses_topics_a_consumer_group_is_subscribed_to(conn: Connection) -> None:
    find_coordinator(conn, "g")
    joined = join(conn, "g", protocols=[("range", encode_subscription(["t"]))])
    conn.request(SYNC, 5, sync_body("g", joined["member_id"], 1, {joined["member_id"]: b""}))
    conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 0): 1}, generation=1, member_id=joined["member_id"]))
    answer = conn.request(OFFSET_DELETE, 0, {"group_id": "g", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0}]}]})
    assert answer["error_code"] == 0
    assert partition_codes(answer["topics"]) == {("t", 0): GROUP_SUBSCRIBED_TO_TOPIC}
