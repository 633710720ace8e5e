"""OffsetCommit, OffsetFetch and OffsetDelete: every version and their error placement."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.groups.subscription_bytes import encode_subscription
from kemu.wire import coordinator_records as schemas
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
UNKNOWN_TOPIC_ID = 100


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


@pytest.mark.parametrize("version", range(2, 11))
def test_commit_every_version_then_fetch(broker: Broker, conn: Connection, version: int) -> None:
    find_coordinator(conn, "g")
    group = f"simple-{version}"
    body = commit_body(group, {("t", 0): 10 + version, ("t", 2): 20})
    if 2 <= version <= 4:
        body["retention_time_ms"] = -1
    if version >= 10:
        body["topics"] = [{**topic, "topic_id": topic_id(broker)} for topic in body["topics"]]
    answer = conn.request(OFFSET_COMMIT, version, body)
    if version >= 10:  # answered by id, the name absent
        assert [(t["name"], t["topic_id"]) for t in answer["topics"]] == [("", topic_id(broker))]
        answer["topics"][0]["name"] = "t"
    assert partition_codes(answer["topics"]) == {("t", 0): 0, ("t", 2): 0}
    assert fetch_v7(conn, group, [0, 1, 2]) == {("t", 0): (10 + version, "meta"), ("t", 1): (-1, ""),
                                                ("t", 2): (20, "meta")}


@pytest.mark.parametrize("version", range(1, 11))
def test_fetch_every_version(broker: Broker, conn: Connection, version: int) -> None:
    find_coordinator(conn, "g")
    conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 1): 5}))
    if version >= 8:
        body = conn.request(OFFSET_FETCH, version, {"groups": [
            {"group_id": "g", "topics": [{"name": "t", "topic_id": topic_id(broker), "partition_indexes": [1, 2]}]},
            {"group_id": "other", "topics": None}]})
        [mine, other] = body["groups"]
        assert (mine["group_id"], mine["error_code"], other["group_id"], other["topics"]) == ("g", 0, "other", [])
        partitions = mine["topics"][0]["partitions"]
        assert mine["topics"][0]["topic_id"] == (topic_id(broker) if version >= 10 else uuid.UUID(int=0))
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


# ---- v10: topics by id (KIP-848) ---------------------------------------------------------------------------

def topic_id(broker: Broker, name: str = "t") -> uuid.UUID:
    topic = broker.broker.topics.get(name)
    assert topic is not None
    return topic.topic_id


def by_id(topics: list[dict[str, Any]]) -> dict[tuple[uuid.UUID, int], int]:
    return {(t["topic_id"], p["partition_index"]): p["error_code"] for t in topics for p in t["partitions"]}


def test_v10_commits_and_fetches_by_topic_id(broker: Broker, conn: Connection) -> None:
    find_coordinator(conn, "g")
    t = topic_id(broker)
    unknown = uuid.uuid4()
    answer = conn.request(OFFSET_COMMIT, 10, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                                              "topics": [
        {"topic_id": unknown, "partitions": [{"partition_index": 0, "committed_offset": 1}]},
        {"topic_id": t, "partitions": [{"partition_index": 0, "committed_offset": 5, "committed_metadata": "m"},
                                       {"partition_index": 7, "committed_offset": 5}]}]})
    # An unknown id first, then the unknown partition, then what the coordinator took, merged by id as Kafka's
    # builder merges them.
    assert [(e["topic_id"], [p["partition_index"] for p in e["partitions"]]) for e in answer["topics"]] == [
        (unknown, [0]), (t, [7, 0])]
    assert by_id(answer["topics"]) == {(unknown, 0): UNKNOWN_TOPIC_ID, (t, 7): UNKNOWN_TOPIC_OR_PARTITION, (t, 0): 0}
    assert fetch_v7(conn, "g", [0]) == {("t", 0): (5, "m")}  # by name, whatever version committed it

    body = conn.request(OFFSET_FETCH, 10, {"groups": [{"group_id": "g", "topics": [
        {"topic_id": unknown, "partition_indexes": [0]}, {"topic_id": t, "partition_indexes": [0, 1]}]}]})
    [group] = body["groups"]
    # The coordinator's answer, then the topics not asked of it (an unknown id: UNKNOWN_TOPIC_ID).
    assert [(e["topic_id"], [(p["partition_index"], p["committed_offset"], p["metadata"], p["error_code"])
                             for p in e["partitions"]]) for e in group["topics"]] == [
        (t, [(0, 5, "m", 0), (1, -1, "", 0)]), (unknown, [(0, -1, "", UNKNOWN_TOPIC_ID)])]
    [whole] = conn.request(OFFSET_FETCH, 10, {"groups": [{"group_id": "g", "topics": None}]})["groups"]
    assert [(e["topic_id"], [p["committed_offset"] for p in e["partitions"]]) for e in whole["topics"]] == [
        (t, [5])]


def test_offsets_of_a_topic_made_again_are_not_the_new_topics(broker: Broker, conn: Connection) -> None:
    # The commit keeps the topic's id (every version): a topic deleted and made again under its name does not
    # answer v10 with the old one's offsets (isMismatchedTopicId). (Kafka also deletes a deleted topic's
    # offsets; kemu keeps them, so by name, before v10, they still answer.)
    find_coordinator(conn, "g")
    old = topic_id(broker)
    conn.request(OFFSET_COMMIT, 9, commit_body("g", {("t", 0): 5}))
    broker.call(lambda: broker.broker.delete_topic(old))
    [outcome] = broker.call(create_topics, broker.broker, [NewTopic("t", 3, 1)])
    assert outcome.error == 0
    new = topic_id(broker)
    [group] = conn.request(OFFSET_FETCH, 10, {"groups": [{"group_id": "g", "topics": [
        {"topic_id": new, "partition_indexes": [0]}]}]})["groups"]
    assert [(e["topic_id"], e["partitions"][0]["committed_offset"]) for e in group["topics"]] == [(new, -1)]
    assert fetch_v7(conn, "g", [0]) == {("t", 0): (5, "meta")}
    [whole] = conn.request(OFFSET_FETCH, 10, {"groups": [{"group_id": "g", "topics": None}]})["groups"]
    assert [e["topic_id"] for e in whole["topics"]] == [new]  # a whole group: the metadata's ids, unchecked


def test_v10_whole_group_leaves_out_topics_that_are_gone(broker: Broker, conn: Connection) -> None:
    find_coordinator(conn, "g")
    [outcome] = broker.call(create_topics, broker.broker, [NewTopic("u", 1, 1)])
    assert outcome.error == 0
    conn.request(OFFSET_COMMIT, 9, commit_body("g", {("t", 0): 1, ("u", 0): 2}))
    broker.call(lambda: broker.broker.delete_topic(topic_id(broker, "u")))
    [whole] = conn.request(OFFSET_FETCH, 10, {"groups": [{"group_id": "g", "topics": None}]})["groups"]
    assert [e["topic_id"] for e in whole["topics"]] == [topic_id(broker)]


def test_commits_keep_the_topic_id_in_the_log(broker: Broker, conn: Connection) -> None:
    # OffsetCommitValue v4's tagged topic id, as Kafka 4.3 writes it (and reads it back at start-up).
    find_coordinator(conn, "g")
    conn.request(OFFSET_COMMIT, 8, commit_body("g", {("t", 1): 3}))

    def values() -> list[tuple[int, dict[str, Any]]]:
        plog = broker.broker.partition("__consumer_offsets", broker.coordinators.groups.partition_of("g"))
        assert plog is not None
        decoded = [schemas.decode_value("OffsetCommit", record.value) for batch in plog.log.batches()
                   for record in batch.records() if record.value is not None and record.key is not None
                   and schemas.decode_key(record.key, schemas.CONSUMER_OFFSETS).record_type == "OffsetCommit"]
        return [(value.version, value.fields) for value in decoded]

    [(version, fields)] = broker.call(values)
    assert (version, fields["offset"], fields["topic_id"]) == (4, 3, topic_id(broker))
