"""ShareFetch and ShareAcknowledge (KIP-932) over the wire: share sessions and their epochs, acquisition with
delivery counts, acknowledgements (accept, release, reject), lock expiry on the broker's clock, the session's
close releasing what its member holds, and the errors of bad sessions and acknowledgements."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.clock import VirtualClock
from tests.handlers.data_plane import batch, produce, topic_id, values_of
from tests.handlers.harness import Broker, Connection, MakeBroker, advance

SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79
ACCEPT, RELEASE, REJECT = 1, 2, 3
INVALID_REQUEST, INVALID_RECORD_STATE, SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH = 42, 121, 122, 123


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    with make_broker(clock=VirtualClock()) as running:
        running.call(create_topics, running.broker, [NewTopic("t", 1, 1)])
        running.call(running.broker.group_configs.replace, "g", {"share.auto.offset.reset": "earliest",
                                                                 "share.delivery.count.limit": "3"})
        # What ShareGroupHeartbeat does when it assigns the partition to a member.
        running.call(lambda: running.coordinators.share.initialise("g", [(topic_id(running, "t"), 0)]))
        yield running


def test_a_partition_no_member_was_assigned_gives_nothing(make_broker: MakeBroker) -> None:
    with make_broker() as running:
        running.call(create_topics, running.broker, [NewTopic("t", 1, 1)])
        running.call(running.broker.group_configs.replace, "g", {"share.auto.offset.reset": "earliest"})
        with running.connect() as conn:
            produce(conn, "t", batch(b"a"))
            assert share_fetch(conn, topic_id(running, "t"), "m1", 0)["responses"] == []
            running.call(lambda: running.coordinators.share.initialise("g", [(topic_id(running, "t"), 0)]))
            assert acquired(only_partition(share_fetch(conn, topic_id(running, "t"), "m1", 1))) == [(0, 0, 1)]


def share_fetch(conn: Connection, tid: uuid.UUID, member: str, epoch: int,
                acks: list[tuple[int, int, list[int]]] | None = None, version: int = 2,
                max_records: int = 500, max_wait_ms: int = 0) -> dict[str, Any]:
    return conn.request(SHARE_FETCH, version, {
        "group_id": "g", "member_id": member, "share_session_epoch": epoch, "max_wait_ms": max_wait_ms,
        "min_bytes": 1, "max_bytes": 1 << 20, "max_records": max_records, "batch_size": 500,
        "topics": [{"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": f, "last_offset": last, "acknowledge_types": types}
            for f, last, types in acks or []]}]}],
        "forgotten_topics_data": []})


def share_ack(conn: Connection, tid: uuid.UUID, member: str, epoch: int,
              acks: list[tuple[int, int, list[int]]]) -> dict[str, Any]:
    return conn.request(SHARE_ACKNOWLEDGE, 2, {
        "group_id": "g", "member_id": member, "share_session_epoch": epoch,
        "topics": [{"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": f, "last_offset": last, "acknowledge_types": types} for f, last, types in acks]}]}]})


def only_partition(response: dict[str, Any]) -> dict[str, Any]:
    """The one partition's answer; Kafka leaves out a partition with nothing acquired, acknowledged or failed."""
    assert response["error_code"] == 0, response
    if not response["responses"]:
        return {"acquired_records": [], "records": b"", "acknowledge_error_code": None}
    [topic] = response["responses"]
    [partition] = topic["partitions"]
    return dict(partition)


def acquired(partition: dict[str, Any]) -> list[tuple[int, int, int]]:
    return [(r["first_offset"], r["last_offset"], r["delivery_count"]) for r in partition["acquired_records"]]


def test_records_are_acquired_once_accepted_and_never_again(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a", b"b", b"c"))
    first = only_partition(share_fetch(conn, tid, "m1", 0))
    assert acquired(first) == [(0, 2, 1)]
    assert values_of(first["records"]) == [b"a", b"b", b"c"]
    # Another member finds nothing while m1 holds them.
    assert acquired(only_partition(share_fetch(conn, tid, "m2", 0))) == []
    accepted = only_partition(share_fetch(conn, tid, "m1", 1, acks=[(0, 2, [ACCEPT])]))
    assert (accepted["acknowledge_error_code"], acquired(accepted)) == (0, [])
    produce(conn, "t", batch(b"d"))
    assert acquired(only_partition(share_fetch(conn, tid, "m2", 1))) == [(3, 3, 1)]


def test_a_released_record_comes_back_with_delivery_count_two_and_a_rejected_one_never(
        broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a", b"b"))
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == [(0, 1, 1)]
    answer = share_ack(conn, tid, "m1", 1, [(0, 0, [RELEASE]), (1, 1, [REJECT])])
    assert [(p["partition_index"], p["error_code"]) for t in answer["responses"] for p in t["partitions"]] == [(0, 0)]
    again = only_partition(share_fetch(conn, tid, "m2", 0))
    assert acquired(again) == [(0, 0, 2)]
    assert values_of(again["records"]) == [b"a", b"b"]  # the batch holding offset 0; the client keeps offset 0


def test_an_unacknowledged_record_is_redelivered_once_its_lock_expires(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a"))
    first = share_fetch(conn, tid, "m1", 0)
    assert first["acquisition_lock_timeout_ms"] == 30_000
    assert acquired(only_partition(first)) == [(0, 0, 1)]
    advance(broker, 29_999)
    assert acquired(only_partition(share_fetch(conn, tid, "m2", 0))) == []
    advance(broker, 1)
    assert acquired(only_partition(share_fetch(conn, tid, "m2", 1))) == [(0, 0, 2)]
    # m1's lock is gone: its late acknowledgement is refused.
    late = only_partition(share_fetch(conn, tid, "m1", 1, acks=[(0, 0, [ACCEPT])]))
    assert late["acknowledge_error_code"] == INVALID_RECORD_STATE


def test_the_delivery_count_limit_archives_a_poison_record(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"poison"))
    produce(conn, "t", batch(b"fine"))
    epoch = 0
    for delivery in (1, 2, 3):  # share.delivery.count.limit=3
        got = only_partition(share_fetch(conn, tid, "m1", epoch, max_records=1))
        epoch += 1
        assert acquired(got)[0][:1] == (0,) and acquired(got)[0][2] == delivery
        assert share_ack(conn, tid, "m1", epoch, [(0, 0, [RELEASE])])["error_code"] == 0
        epoch += 1
    assert acquired(only_partition(share_fetch(conn, tid, "m1", epoch))) == [(1, 1, 1)]


def test_closing_the_session_releases_what_the_member_holds(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a", b"b"))
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == [(0, 1, 1)]
    closed = share_ack(conn, tid, "m1", -1, [(0, 0, [ACCEPT])])
    assert closed["error_code"] == 0
    assert acquired(only_partition(share_fetch(conn, tid, "m2", 0))) == [(1, 1, 2)]
    # The session is gone: its next epoch finds none.
    assert share_fetch(conn, tid, "m1", 1)["error_code"] == SHARE_SESSION_NOT_FOUND


def test_session_epochs(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    assert share_fetch(conn, tid, "m1", 3)["error_code"] == SHARE_SESSION_NOT_FOUND
    assert share_fetch(conn, tid, "m1", 0)["error_code"] == 0
    assert share_fetch(conn, tid, "m1", 2)["error_code"] == INVALID_SHARE_SESSION_EPOCH
    assert share_fetch(conn, tid, "m1", 1)["error_code"] == 0
    assert share_fetch(conn, tid, "m1", 2)["error_code"] == 0
    # Acknowledgements cannot ride on a request that opens a session.
    assert share_fetch(conn, tid, "m1", 0, acks=[(0, 0, [ACCEPT])])["error_code"] == INVALID_REQUEST


def test_bad_acknowledgements(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a", b"b"))
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == [(0, 1, 1)]
    other = only_partition(share_fetch(conn, tid, "m2", 0))
    assert acquired(other) == []
    # m2 may not acknowledge what m1 holds; a type outside 0-4 is INVALID_REQUEST.
    assert only_partition(share_fetch(conn, tid, "m2", 1, acks=[(0, 1, [ACCEPT])]))[
        "acknowledge_error_code"] == INVALID_RECORD_STATE
    assert only_partition(share_fetch(conn, tid, "m1", 1, acks=[(0, 1, [9])]))[
        "acknowledge_error_code"] == INVALID_REQUEST


def test_a_new_session_of_the_same_member_keeps_the_old_one_s_locks(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a"))
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == [(0, 0, 1)]
    # The member starts over: Kafka drops the old session only; the record stays locked until its deadline.
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == []
    advance(broker, 30_000)
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 1))) == [(0, 0, 2)]


@pytest.mark.parametrize(("group", "member"), [(None, "m1"), ("g", ""), ("g", "m" * 37)])
def test_invalid_ids(broker: Broker, conn: Connection, group: str | None, member: str) -> None:
    body = {"group_id": group, "member_id": member, "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10, "topics": [], "forgotten_topics_data": []}
    answer = conn.request(SHARE_FETCH, 1, body)
    assert (answer["error_code"], answer["error_message"]) == (INVALID_REQUEST, None)


def test_a_member_leaving_the_group_releases_its_records(broker: Broker, conn: Connection) -> None:
    tid = topic_id(broker, "t")
    produce(conn, "t", batch(b"a"))
    assert acquired(only_partition(share_fetch(conn, tid, "m1", 0))) == [(0, 0, 1)]
    assert broker.call(lambda: broker.coordinators.share.member_left("g", "m1")) == 1
    assert acquired(only_partition(share_fetch(conn, tid, "m2", 0))) == [(0, 0, 2)]
    assert share_fetch(conn, tid, "m1", 1)["error_code"] == SHARE_SESSION_NOT_FOUND
