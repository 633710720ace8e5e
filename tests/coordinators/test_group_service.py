"""GroupService: the group coordinator's journal in __consumer_offsets, its replay at start-up, transaction
markers seen through the log, and its timers on the broker's housekeeping — a Broker with a virtual clock,
housekeeping run by hand."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.config import BrokerConfig
from kemu.broker.topic_names import GROUP_METADATA_TOPIC
from kemu.clock import VirtualClock
from kemu.groups import ClassicGroup, ClassicGroupState, GroupRequestContext
from kemu.groups.subscription_bytes import encode_subscription
from kemu.handlers._shared import client_host, merge_topics, split_hosted
from kemu.hashing import partition_for
from kemu.log import AppendOrigin
from kemu.wire import coordinator_records as schemas
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, RecordBatch, build_batch, build_end_txn_marker
from tests.coordinators.node import CoreNode

E = ErrorCode
START_MS = 1_700_000_000_000


def ctx(version: int) -> GroupRequestContext:
    return GroupRequestContext(api_version=version, client_id="client", client_host="/127.0.0.1")


def open_broker(data_dir: Path, clock: VirtualClock, **settings: Any) -> CoreNode:
    config = BrokerConfig(data_dir=str(data_dir), offsets_topic_num_partitions=10,
                          group_initial_rebalance_delay_ms=0, **settings)
    return CoreNode(config, clock)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(START_MS)


@pytest.fixture
def broker(tmp_path: Path, clock: VirtualClock) -> Iterator[CoreNode]:
    broker = open_broker(tmp_path, clock)
    create_topics(broker, [NewTopic("t", 4, 1), NewTopic("u", 2, 1)])
    yield broker
    broker.close()


def commit(broker: CoreNode, group: str, offsets: dict[tuple[str, int], int], version: int = 8,
           **fields: Any) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append({"partition_index": partition, "committed_offset": offset,
                                             "committed_leader_epoch": -1, "commit_timestamp": -1,
                                             "committed_metadata": "m"})
    request = {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
               "retention_time_ms": -1, "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
               **fields}
    return broker.groups.run(lambda c: c.offset_commit(request, ctx(version)))


def txn_commit(broker: CoreNode, group: str, producer_id: int, epoch: int,
               offsets: dict[tuple[str, int], int]) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append({"partition_index": partition, "committed_offset": offset,
                                             "committed_leader_epoch": -1, "committed_metadata": ""})
    request = {"transactional_id": "tx", "group_id": group, "producer_id": producer_id, "producer_epoch": epoch,
               "generation_id": -1, "member_id": "", "group_instance_id": None,
               "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}
    return broker.groups.txn_offset_commit(request, ctx(3))


def offsets_log(broker: CoreNode, group: str) -> list[RecordBatch]:
    topic = broker.topics.get(GROUP_METADATA_TOPIC)
    assert topic is not None
    plog = topic.partitions[partition_for(group, len(topic.partitions))].log
    assert plog is not None
    return plog.batches()


def write_marker(broker: CoreNode, group: str, producer_id: int, epoch: int, commit: bool) -> None:
    topic = broker.topics.get(GROUP_METADATA_TOPIC)
    assert topic is not None
    plog = topic.partitions[partition_for(group, len(topic.partitions))].log
    assert plog is not None
    plog.append(build_end_txn_marker(commit=commit, producer_id=producer_id, producer_epoch=epoch,
                                     coordinator_epoch=0, timestamp=START_MS), origin=AppendOrigin.COORDINATOR)


def committed(broker: CoreNode, group: str, topic: str, partition: int) -> int | None:
    found = broker.groups.coordinator.committed_offset(group, topic, partition)
    return None if found is None else found.offset


def codes(response: dict[str, Any]) -> dict[tuple[str, int], int]:
    return {(t["name"], p["partition_index"]): p["error_code"] for t in response["topics"] for p in t["partitions"]}


# ---- placement ------------------------------------------------------------------------------------------

def test_no_group_is_coordinated_before_the_offsets_topic_exists(broker: CoreNode) -> None:
    assert broker.groups.coordinator_error("g") == E.NOT_COORDINATOR
    assert broker.groups.ensure_offsets_topic()
    topic = broker.topics.get(GROUP_METADATA_TOPIC)
    assert topic is not None and len(topic.partitions) == 10
    assert topic.configs["cleanup.policy"] == "compact"
    assert broker.groups.coordinator_error("g") == E.NONE
    assert broker.groups.partition_of("g") == partition_for("g", 10)


def test_repeated_lookups_walk_the_offsets_topic_once_all_its_partitions_are_watched(
        broker: CoreNode, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = broker.groups.journal
    assert journal.ensure_topic()
    topic = broker.topics.get(GROUP_METADATA_TOPIC)
    assert topic is not None
    closed = topic.partitions[3]
    closed_log = closed.log
    closed.detach()
    walks: list[int] = []
    walk = journal.partitions

    def counted() -> Iterator[tuple[int, Any]]:
        walks.append(1)
        return walk()

    monkeypatch.setattr(journal, "partitions", counted)
    # FindCoordinator asks on every lookup; a partition without a log is not watched, so each looks again.
    assert broker.groups.ensure_offsets_topic() and broker.groups.ensure_offsets_topic()
    assert len(walks) == 2
    closed.attach(closed_log)
    for _ in range(3):  # once every partition is watched, the same topic has nothing new
        assert broker.groups.ensure_offsets_topic()
    assert len(walks) == 3


# ---- the journal ----------------------------------------------------------------------------------------

def test_offset_commit_is_one_batch_in_the_groups_partition_with_kafkas_record_schemas(broker: CoreNode) -> None:
    broker.groups.ensure_offsets_topic()
    response = commit(broker, "g", {("t", 0): 5, ("t", 1): 7})
    assert set(codes(response).values()) == {E.NONE}
    [batch] = offsets_log(broker, "g")
    assert batch.header.records_count == 2 and not batch.header.is_transactional
    assert batch.header.producer_id == -1
    first = batch.records()[0]
    assert first.key is not None and first.value is not None
    key = schemas.decode_key(first.key, schemas.CONSUMER_OFFSETS)
    assert (key.record_type, key.version, key.fields) == ("OffsetCommit", 1,
                                                          {"group": "g", "topic": "t", "partition": 0})
    value = schemas.decode_value("OffsetCommit", first.value)
    assert value.version == 4  # as Kafka 4.3 writes it, the topic id a tagged field (none given here)
    assert (value.fields["offset"], value.fields["metadata"], value.fields["commit_timestamp"]) == (5, "m", START_MS)
    assert value.fields["topic_id"] == uuid.UUID(int=0)


def test_explicit_retention_is_written_as_value_v1_and_deletion_as_a_tombstone(broker: CoreNode) -> None:
    broker.groups.ensure_offsets_topic()
    commit(broker, "g", {("t", 0): 5}, version=2, retention_time_ms=60_000)
    request = {"group_id": "g", "topics": [{"name": "t", "partitions": [{"partition_index": 0}]}]}
    response = broker.groups.run(lambda c: c.offset_delete(request, ctx(0)))
    assert response["error_code"] == E.NONE
    commit_batch, delete_batch = offsets_log(broker, "g")
    value = commit_batch.records()[0].value
    assert value is not None
    decoded = schemas.decode_value("OffsetCommit", value)
    assert decoded.version == 1 and decoded.fields["expire_timestamp"] == START_MS + 60_000
    [tombstone] = delete_batch.records()
    assert tombstone.value is None
    assert committed(broker, "g", "t", 0) is None


def test_state_survives_a_restart(tmp_path: Path, clock: VirtualClock) -> None:
    broker = open_broker(tmp_path, clock)
    create_topics(broker, [NewTopic("t", 4, 1)])
    broker.groups.ensure_offsets_topic()
    for group in ("a", "b", "c"):
        commit(broker, group, {("t", 0): 10, ("t", 3): 30})
    join = {"group_id": "classic", "session_timeout_ms": 10_000, "rebalance_timeout_ms": 10_000, "member_id": "",
            "group_instance_id": "static-1", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": encode_subscription(["t"])}], "reason": None}
    pending = broker.groups.run(lambda c: c.join_group(join, ctx(5)))
    broker.groups.tick()
    assert pending.done
    joined = pending.result()
    sync = {"group_id": "classic", "generation_id": joined["generation_id"], "member_id": joined["member_id"],
            "group_instance_id": "static-1", "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": joined["member_id"], "assignment": b"everything"}]}
    assert broker.groups.run(lambda c: c.sync_group(sync, ctx(5))).result()["error_code"] == E.NONE
    broker.close()

    again = open_broker(tmp_path, clock)
    try:
        assert {g: committed(again, g, "t", 3) for g in ("a", "b", "c")} == {"a": 30, "b": 30, "c": 30}
        classic = again.groups.coordinator.group("classic")
        assert isinstance(classic, ClassicGroup) and classic.is_in_state(ClassicGroupState.STABLE)
        assert classic.generation_id == joined["generation_id"]
        [member] = classic.members.values()
        assert (member.member_id, member.group_instance_id, member.assignment) == (
            joined["member_id"], "static-1", b"everything")
        # New writes continue the log after what was replayed.
        commit(again, "a", {("t", 0): 11})
        assert committed(again, "a", "t", 0) == 11
    finally:
        again.close()
    third = open_broker(tmp_path, clock)
    try:
        assert committed(third, "a", "t", 0) == 11
    finally:
        third.close()


def test_unknown_and_malformed_records_are_skipped_at_start_up(tmp_path: Path, clock: VirtualClock) -> None:
    broker = open_broker(tmp_path, clock)
    create_topics(broker, [NewTopic("t", 1, 1)])
    broker.groups.ensure_offsets_topic()
    topic = broker.topics.get(GROUP_METADATA_TOPIC)
    assert topic is not None
    plog = topic.partitions[partition_for("g", 10)].log
    assert plog is not None
    strange = build_batch([NewRecord(key=b"\x00\x63whatever", value=b"\x00\x00", timestamp=START_MS),
                           NewRecord(key=b"\x00", value=b"x", timestamp=START_MS)])
    plog.append(strange, origin=AppendOrigin.COORDINATOR)
    commit(broker, "g", {("t", 0): 3})
    broker.close()
    again = open_broker(tmp_path, clock)
    try:
        assert committed(again, "g", "t", 0) == 3
    finally:
        again.close()


# ---- transactional offsets ------------------------------------------------------------------------------

def test_transactional_offsets_are_a_transactional_batch_decided_by_the_marker(broker: CoreNode) -> None:
    broker.groups.ensure_offsets_topic()
    response = txn_commit(broker, "g", 42, 3, {("t", 0): 100, ("t", 1): 101})
    assert set(codes(response).values()) == {E.NONE}
    [batch] = offsets_log(broker, "g")
    assert batch.header.is_transactional
    assert (batch.header.producer_id, batch.header.producer_epoch) == (42, 3)
    assert committed(broker, "g", "t", 0) is None
    assert broker.groups.coordinator.has_pending_txn_offsets("g", "t", 0)

    write_marker(broker, "g", 42, 3, commit=True)
    assert committed(broker, "g", "t", 0) == 100 and committed(broker, "g", "t", 1) == 101
    assert not broker.groups.coordinator.has_pending_txn_offsets("g", "t", 0)

    txn_commit(broker, "g", 42, 3, {("t", 0): 200})
    write_marker(broker, "g", 42, 3, commit=False)
    assert committed(broker, "g", "t", 0) == 100


def test_a_marker_decides_only_the_groups_of_its_partition(broker: CoreNode) -> None:
    broker.groups.ensure_offsets_topic()
    first, second = "g0", next(f"g{i}" for i in range(1, 100) if partition_for(f"g{i}", 10) != partition_for("g0", 10))
    txn_commit(broker, first, 7, 0, {("t", 0): 1})
    txn_commit(broker, second, 7, 0, {("t", 0): 2})
    write_marker(broker, first, 7, 0, commit=True)
    assert committed(broker, first, "t", 0) == 1
    assert committed(broker, second, "t", 0) is None
    assert broker.groups.coordinator.has_pending_txn_offsets(second, "t", 0)
    write_marker(broker, second, 7, 0, commit=True)
    assert committed(broker, second, "t", 0) == 2


def test_transactional_offsets_are_replayed_with_their_markers(tmp_path: Path, clock: VirtualClock) -> None:
    broker = open_broker(tmp_path, clock)
    create_topics(broker, [NewTopic("t", 2, 1)])
    broker.groups.ensure_offsets_topic()
    txn_commit(broker, "g", 9, 0, {("t", 0): 10})
    write_marker(broker, "g", 9, 0, commit=True)
    txn_commit(broker, "g", 9, 0, {("t", 0): 20})
    write_marker(broker, "g", 9, 0, commit=False)
    txn_commit(broker, "g", 9, 0, {("t", 1): 30})  # still open when the broker stops
    broker.close()
    again = open_broker(tmp_path, clock)
    try:
        assert committed(again, "g", "t", 0) == 10
        assert committed(again, "g", "t", 1) is None
        assert again.groups.coordinator.has_pending_txn_offsets("g", "t", 1)
        write_marker(again, "g", 9, 0, commit=True)
        assert committed(again, "g", "t", 1) == 30
    finally:
        again.close()


def test_txn_offset_commit_from_a_fenced_epoch(broker: CoreNode) -> None:
    assert set(codes(txn_commit(broker, "g", 5, 1, {("t", 0): 1})).values()) == {E.NOT_COORDINATOR}
    broker.groups.ensure_offsets_topic()
    txn_commit(broker, "g", 5, 2, {("t", 0): 1})
    write_marker(broker, "g", 5, 2, commit=True)
    # Unknown topics and partitions are the handler's to answer (tests/handlers: TxnOffsetCommit).
    assert codes(txn_commit(broker, "g", 5, 1, {("t", 0): 9, ("t", 1): 1})) == {
        ("t", 0): E.INVALID_PRODUCER_EPOCH, ("t", 1): E.INVALID_PRODUCER_EPOCH}
    assert committed(broker, "g", "t", 0) == 1
    assert len(offsets_log(broker, "g")) == 2  # nothing written for the refused commit


# ---- timers ---------------------------------------------------------------------------------------------

def test_session_timeout_expires_a_member_through_housekeeping(tmp_path: Path, clock: VirtualClock) -> None:
    broker = open_broker(tmp_path, clock)
    woken: list[int] = []
    broker.housekeeping.set_waker(lambda: woken.append(clock.now_ms()))
    try:
        broker.groups.ensure_offsets_topic()
        broker.housekeeping.run_due()
        join = {"group_id": "g", "session_timeout_ms": 6_000, "rebalance_timeout_ms": 6_000, "member_id": "",
                "group_instance_id": None, "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": b""}], "reason": None}
        woken.clear()
        pending = broker.groups.run(lambda c: c.join_group(join, ctx(3)))
        assert woken, "a request that set an earlier deadline wakes the housekeeper"
        next_due = broker.housekeeping.run_due()
        assert pending.done and next_due is not None and next_due <= START_MS + 6_000
        member_id = pending.result()["member_id"]
        group = broker.groups.coordinator.group("g")
        assert isinstance(group, ClassicGroup) and group.has_member(member_id)

        clock.advance(5_999)
        broker.housekeeping.run_due()
        assert group.has_member(member_id)
        clock.advance(1)
        broker.housekeeping.run_due()
        assert not group.has_member(member_id)
        # The group went Empty: its new generation is in the log.
        last = offsets_log(broker, "g")[-1].records()[-1]
        assert last.value is not None
        assert schemas.decode_value("GroupMetadata", last.value).fields["members"] == []
    finally:
        broker.close()


def test_offsets_retention_runs_on_the_clock(tmp_path: Path, clock: VirtualClock) -> None:
    broker = open_broker(tmp_path, clock, offsets_retention_minutes=1, offsets_retention_check_interval_ms=1_000)
    try:
        create_topics(broker, [NewTopic("t", 1, 1)])
        broker.groups.ensure_offsets_topic()
        commit(broker, "g", {("t", 0): 1})
        clock.advance(59_000)
        broker.housekeeping.run_due()
        assert committed(broker, "g", "t", 0) == 1
        clock.advance(2_000)
        broker.housekeeping.run_due()
        assert committed(broker, "g", "t", 0) is None
        assert broker.groups.coordinator.group("g") is None
        assert offsets_log(broker, "g")[-1].records()[-1].value is None
    finally:
        broker.close()


# ---- helpers for the handlers ---------------------------------------------------------------------------

def test_client_host_is_rendered_as_java_does() -> None:
    assert client_host("127.0.0.1") == "/127.0.0.1"
    assert client_host("::1") == "/0:0:0:0:0:0:0:1"
    assert client_host("::ffff:10.0.0.1") == "/10.0.0.1"
    assert client_host("fe80::1%eth0") == "/fe80:0:0:0:0:0:0:1"


def test_split_and_merge_follow_kafkas_response_builders(broker: CoreNode) -> None:
    topics = [{"name": "t", "partitions": [{"partition_index": 0}, {"partition_index": 9}]},
              {"name": "nope", "partitions": [{"partition_index": 0}]}]
    known, unknown = split_hosted(broker, topics)
    t = broker.topics.get("t")
    assert t is not None
    zero = uuid.UUID(int=0)  # the request named no id: its answers carry none
    assert known == [{"name": "t", "topic_id": t.topic_id, "partitions": [{"partition_index": 0}]}]
    missing = E.UNKNOWN_TOPIC_OR_PARTITION
    assert unknown == [{"name": "t", "topic_id": zero, "partitions": [{"partition_index": 9, "error_code": missing}]},
                       {"name": "nope", "topic_id": zero,
                        "partitions": [{"partition_index": 0, "error_code": missing}]}]
    merged = merge_topics(unknown, [{"name": "t", "partitions": [{"partition_index": 0, "error_code": 0}]}])
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in merged] == [
        ("t", [9, 0]), ("nope", [0])]
    # OffsetCommit v10 names topics by id: one no topic has (name None) is UNKNOWN_TOPIC_ID, merged by id.
    unknown_id = uuid.uuid4()
    _, by_id = split_hosted(broker, [{"name": None, "topic_id": unknown_id, "partitions": [{"partition_index": 1}]}])
    assert by_id == [{"name": "", "topic_id": unknown_id,
                      "partitions": [{"partition_index": 1, "error_code": E.UNKNOWN_TOPIC_ID}]}]
    merged = merge_topics(by_id, [{"name": "", "topic_id": unknown_id, "partitions": [{"partition_index": 2}]}],
                          key="topic_id")
    assert [p["partition_index"] for p in merged[0]["partitions"]] == [1, 2]


def test_a_streams_group_survives_a_restart(tmp_path: Path, clock: VirtualClock) -> None:
    """The StreamsGroup* records in __consumer_offsets bring the group back: its topology, members, target
    assignment and each member's tasks with their epochs; the member goes on heartbeating at its epoch."""
    from kemu.groups import StreamsGroup
    from tests.groups.test_streams_groups import word_count

    broker = open_broker(tmp_path, clock, properties={"group.streams.initial.rebalance.delay.ms": "0",
                                                      "group.streams.assignment.interval.ms": "0"})
    create_topics(broker, [NewTopic("input", 2, 1)])
    broker.groups.ensure_offsets_topic()

    def heartbeat(node: CoreNode, epoch: int, owned: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        joining = epoch == 0
        body = {"group_id": "app", "member_id": "m", "member_epoch": epoch, "endpoint_information_epoch": 0,
                "rack_id": None, "instance_id": None, "rebalance_timeout_ms": 30000 if joining else -1,
                "topology": word_count() if joining else None, "active_tasks": [] if joining else owned,
                "standby_tasks": [] if joining or owned is not None else None,
                "warmup_tasks": [] if joining or owned is not None else None,
                "process_id": "p" if joining else None, "client_tags": [] if joining else None}
        result = node.groups.run(lambda c: c.streams_group_heartbeat(body, ctx(0)))
        created = [NewTopic(t.name, t.num_partitions, 1, configs=list(t.configs))
                   for t in result.topics_to_create.values()]
        if created:
            create_topics(node, created)
        response: dict[str, Any] = result.response
        return response

    join = heartbeat(broker, 0)
    assigned = heartbeat(broker, join["member_epoch"], [])
    assert assigned["active_tasks"] == [{"subtopology_id": "0", "partitions": [0, 1]},
                                        {"subtopology_id": "1", "partitions": [0, 1]}]
    before = broker.groups.coordinator.group("app")
    assert isinstance(before, StreamsGroup)
    snapshot = (before.group_epoch, before.assignment_epoch, before.topology, dict(before.members),
                dict(before.target_assignment))
    broker.close()

    again = open_broker(tmp_path, clock)
    try:
        after = again.groups.coordinator.group("app")
        assert isinstance(after, StreamsGroup)
        assert (after.group_epoch, after.assignment_epoch, after.topology, after.members,
                after.target_assignment) == snapshot
        owned = assigned["active_tasks"]
        next_beat = heartbeat(again, assigned["member_epoch"], owned)
        assert (next_beat["error_code"], next_beat["member_epoch"]) == (E.NONE, assigned["member_epoch"])
        assert after.state_name() == "Stable"
    finally:
        again.close()
