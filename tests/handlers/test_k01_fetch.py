"""Fetch: every version, size limits, long polling, read_committed, leader epochs (in-process; the refused
versions and a long poll pipelined with a produce on one connection through a real socket)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from trio.testing import MockClock

from kemu.broker.partition import Partition
from kemu.log import AppendOrigin
from kemu.wire import codec
from kemu.wire.records import build_end_txn_marker
from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import (
    FETCH,
    PRODUCE,
    batch,
    batches_of,
    fetch_body,
    fetch_partitions,
    listener_count,
    produce,
    produce_body,
    topic_id,
    values_of,
    wait_until,
)
from tests.handlers.harness import Broker, Connection, MakeBroker

ZERO = uuid.UUID(int=0)


def topic_key(broker: Broker, name: str, version: int) -> Any:
    return topic_id(broker, name) if version >= 13 else name


@pytest.mark.parametrize("version", range(4, 19))
def test_every_version_serves_the_stored_batches(broker: Broker, conn: Connection, version: int) -> None:
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a", b"b"))
    produce(conn, "t", batch(b"c"))
    key = topic_key(broker, "t", version)
    body = conn.request(FETCH, version, fetch_body([(key, 0, 1)], version=version))
    assert (body["error_code"], body["session_id"]) == (0, 0)
    [(topic, partition)] = fetch_partitions(body, version)
    assert topic == key
    assert partition["error_code"] == 0 and partition["high_watermark"] == 3
    assert partition["last_stable_offset"] == 3
    assert partition["log_start_offset"] == (0 if version >= 5 else -1)
    assert partition["aborted_transactions"] is None
    assert partition["preferred_read_replica"] == -1
    # The batch holding offset 1 comes whole (from its base offset 0), as Kafka serves it; raw log bytes.
    stored = broker.broker.partition("t", 0).log.read(0, 1 << 20).records  # type: ignore[union-attr]
    assert partition["records"] == bytes(stored)
    assert [b.header.base_offset for b in batches_of(partition["records"])] == [0, 2]


def test_v18_high_watermark_of_the_fetcher_changes_nothing_for_a_consumer(broker: Broker, conn: Connection) -> None:
    # KIP-1166's per-partition high_watermark is what a fetching replica knows; a consumer's is ignored.
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a", b"b"))
    key = topic_id(broker, "t")
    answers = [fetch_partitions(conn.request(FETCH, 18, fetch_body([(key, 0, 0)], version=18, **fields)), 18)
               for fields in ({}, {"high_watermark": 1}, {"high_watermark": -1})]
    assert answers[0] == answers[1] == answers[2]
    assert values_of(answers[0][0][1]["records"]) == [b"a", b"b"]


@pytest.mark.real_socket
def test_versions_kafka_4_removed_are_refused(broker: Broker, conn: Connection) -> None:
    conn.send(FETCH, 3, fetch_body([("t", 0, 0)], version=3))
    assert conn.closed_by_peer()


@pytest.mark.parametrize("version", [12, 13])
def test_unknown_topics_come_last(broker: Broker, conn: Connection, version: int) -> None:
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a"))
    unknown: Any = uuid.uuid4() if version >= 13 else "nope"
    key = topic_key(broker, "t", version)
    body = conn.request(FETCH, version, fetch_body([(unknown, 0, 0), (key, 7, 0), (key, 0, 0)], version=version))
    got = [(topic, p["partition_index"], p["error_code"]) for topic, p in fetch_partitions(body, version)]
    assert got == [(key, 0, 0), (unknown, 0, 100 if version >= 13 else 3), (key, 7, 3)]
    error = fetch_partitions(body, version)[1][1]
    assert (error["high_watermark"], error["log_start_offset"], error["records"]) == (-1, -1, b"")


@pytest.mark.parametrize("version", [12, 13])
def test_an_unknown_isolation_level_fails_the_whole_request(broker: Broker, conn: Connection, version: int) -> None:
    """As Kafka's IsolationLevel.forId throwing in KafkaApis (recorded: conformance fetch.versions): the top-level
    UNKNOWN_SERVER_ERROR, and before v13 each partition with it, -1 offsets and an empty aborted list."""
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a"))
    key = topic_key(broker, "t", version)
    body = conn.request(FETCH, version, fetch_body([(key, 0, 0)], version=version, isolation_level=5))
    assert body["error_code"] == -1
    if version >= 13:
        assert body["responses"] == []
        return
    [(_, partition)] = fetch_partitions(body, version)
    assert (partition["error_code"], partition["high_watermark"], partition["aborted_transactions"],
            partition["records"]) == (-1, -1, [], b"")
    # With nothing left to read (an unknown topic only), the level is never looked at.
    unknown = conn.request(FETCH, version, fetch_body([("nope", 0, 0)], version=version, isolation_level=5))
    assert unknown["error_code"] == 0


def test_offset_out_of_range_answers_at_once(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a"))
    started = time.monotonic()
    body = conn.request(FETCH, 12, fetch_body([("t", 0, 5)], max_wait_ms=10_000))
    assert time.monotonic() - started < 5
    [(_, partition)] = fetch_partitions(body)
    assert (partition["error_code"], partition["high_watermark"], partition["records"]) == (1, -1, b"")


def test_at_the_end_waits_max_wait_then_answers_empty(make_broker: MakeBroker) -> None:
    """max_wait_ms runs on Trio's clock: here a mock one, moved by hand, so the wait is seen to last exactly
    that long without taking it."""
    trio_clock = MockClock()
    with make_broker(trio_clock=trio_clock) as broker, broker.connect() as conn:
        create_topic(conn, "t")
        produce(conn, "t", batch(b"a"))
        idle = listener_count(broker, "t")
        conn.send(FETCH, 12, fetch_body([("t", 0, 1)], max_wait_ms=300))
        wait_until(lambda: listener_count(broker, "t") > idle, "the fetch to park")
        broker.call(trio_clock.jump, 0.299)
        assert listener_count(broker, "t") > idle  # still waiting
        broker.call(trio_clock.jump, 0.001)
        _, body = conn.receive(FETCH, 12)
        [(_, partition)] = fetch_partitions(body)
        assert (partition["error_code"], partition["high_watermark"], partition["records"]) == (0, 1, b"")


def test_long_poll_is_woken_by_a_produce(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    idle = listener_count(broker, "t")
    started = time.monotonic()
    conn.send(FETCH, 12, fetch_body([("t", 0, 0)], max_wait_ms=20_000))
    wait_until(lambda: listener_count(broker, "t") > idle, "the fetch to park")
    with broker.connect() as producer:
        produce(producer, "t", batch(b"wake"))
    _, body = conn.receive(FETCH, 12)
    assert time.monotonic() - started < 10
    [(_, partition)] = fetch_partitions(body)
    assert values_of(partition["records"]) == [b"wake"]
    wait_until(lambda: listener_count(broker, "t") == idle, "the fetch's listener to go")


def test_a_parked_fetch_reads_again_only_once_its_log_changed(broker: Broker, conn: Connection,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The handler's read found nothing and nothing was appended since: the wait starts without reading the
    same log again. A produce between the two is read (test_a_waiting_fetch_does_not_hold_up_the_connection)."""
    create_topic(conn, "t")
    reads: list[int] = []
    read = Partition.read

    def counted(self: Partition, *args: Any, **kwargs: Any) -> Any:
        reads.append(args[0])
        return read(self, *args, **kwargs)

    monkeypatch.setattr(Partition, "read", counted)
    idle = listener_count(broker, "t")
    conn.send(FETCH, 12, fetch_body([("t", 0, 0)], max_wait_ms=20_000))
    wait_until(lambda: listener_count(broker, "t") > idle, "the fetch to park")
    assert reads == [0]
    with broker.connect() as producer:
        produce(producer, "t", batch(b"wake"))
    _, body = conn.receive(FETCH, 12)
    assert values_of(fetch_partitions(body)[0][1]["records"]) == [b"wake"]
    assert reads == [0, 0]


@pytest.mark.real_socket
def test_a_waiting_fetch_does_not_hold_up_the_connection(broker: Broker, conn: Connection) -> None:
    """A produce behind a long-polling fetch on the same connection runs, wakes it, and both answers come
    back in request order."""
    create_topic(conn, "t")
    started = time.monotonic()
    conn.send(FETCH, 12, fetch_body([("t", 0, 0)], max_wait_ms=20_000), correlation_id=1)
    conn.send(PRODUCE, 11, produce_body({("t", 0): batch(b"same connection")}), correlation_id=2)
    fetch_id, fetched = codec.decode_response(FETCH, 12, conn.receive_frame())
    produce_id, produced = codec.decode_response(PRODUCE, 11, conn.receive_frame())
    assert (fetch_id, produce_id) == (1, 2)
    assert time.monotonic() - started < 10
    assert values_of(fetch_partitions(fetched)[0][1]["records"]) == [b"same connection"]
    assert produced["responses"][0]["partition_responses"][0]["base_offset"] == 0


def test_min_bytes_waits_for_enough(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    small = batch(b"x")
    idle = listener_count(broker, "t")
    conn.send(FETCH, 12, fetch_body([("t", 0, 0)], max_wait_ms=20_000, min_bytes=len(small) * 3))
    wait_until(lambda: listener_count(broker, "t") > idle, "the fetch to park")
    with broker.connect() as producer:
        produce(producer, "t", small)
        produce(producer, "t", small)
        assert listener_count(broker, "t") > idle  # two batches are not enough yet
        produce(producer, "t", small)
    _, body = conn.receive(FETCH, 12)
    assert len(values_of(fetch_partitions(body)[0][1]["records"])) == 3


def test_first_partition_with_data_returns_a_whole_batch(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", partitions=3)
    big = batch(b"x" * 5000)
    for index in range(3):
        produce(conn, "t", big, partition=index)
    body = conn.request(FETCH, 12, fetch_body([("t", 0, 1), ("t", 1, 0), ("t", 2, 0)], max_bytes=1000,
                                              partition_max_bytes=100))
    partitions = [p for _, p in fetch_partitions(body)]
    # Partition 0 has nothing at offset 1 yet: the rule applies to the first partition *with data*.
    assert [len(p["records"]) for p in partitions] == [0, len(big), 0]
    assert [p["high_watermark"] for p in partitions] == [1, 1, 1]


def test_limits_cut_batches_short_after_the_first(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", partitions=2)
    produce(conn, "t", batch(b"a" * 100), partition=0)
    produce(conn, "t", batch(b"b" * 1000), partition=1)
    body = conn.request(FETCH, 12, fetch_body([("t", 0, 0), ("t", 1, 0)], max_bytes=400))
    first, second = (p for _, p in fetch_partitions(body))
    assert values_of(first["records"]) == [b"a" * 100]
    # The second partition's first batch does not fit: Kafka's ReplicaManager sends no records rather than a
    # partial first batch (firstEntryIncomplete), and no aborted list with them.
    assert second["records"] == b"" and second["aborted_transactions"] is None
    assert second["high_watermark"] == 1


def test_a_batch_after_the_first_is_sent_cut_short(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a" * 100))
    produce(conn, "t", batch(b"b" * 1000))
    body = conn.request(FETCH, 12, fetch_body([("t", 0, 0)], max_bytes=400, partition_max_bytes=400))
    [(_, only)] = fetch_partitions(body)
    assert len(only["records"]) == 400  # the first batch whole, then as much of the second as fits
    assert values_of(only["records"]) == [b"a" * 100]


def test_leader_epoch_checks(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")

    def bump() -> None:
        broker.broker.topics.get("t").partitions[0].leader_epoch = 3  # type: ignore[union-attr]

    broker.call(bump)
    codes = {}
    for epoch in (2, 3, 4, -1):
        body = conn.request(FETCH, 12, fetch_body([("t", 0, 0)], current_leader_epoch=epoch))
        partition = fetch_partitions(body)[0][1]
        leader = partition.get("current_leader", {"leader_id": -1, "leader_epoch": -1})
        codes[epoch] = (partition["error_code"], leader["leader_id"], leader["leader_epoch"])
    # Only a fenced epoch is told the current leader (KIP-951); a newer one than the broker's is not.
    assert codes == {2: (74, 1, 3), 3: (0, -1, -1), 4: (75, -1, -1), -1: (0, -1, -1)}


def test_diverging_epoch(broker: Broker, conn: Connection) -> None:
    """Partition.readRecords with a last fetched epoch (KIP-595's truncation detection)."""
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a", b"b"))  # epoch 0: offsets 0-1

    def new_leader_epoch() -> None:
        partition = broker.broker.topics.get("t").partitions[0]  # type: ignore[union-attr]
        partition.leader_epoch = 2  # type: ignore[union-attr]

    broker.call(new_leader_epoch)
    produce(conn, "t", batch(b"c"))  # epoch 2: offset 2

    def diverging(offset: int, last_fetched_epoch: int) -> tuple[int, dict[str, int]]:
        body = conn.request(FETCH, 12, fetch_body([("t", 0, offset)], last_fetched_epoch=last_fetched_epoch))
        partition = fetch_partitions(body)[0][1]
        return partition["error_code"], partition["diverging_epoch"]

    none = {"epoch": -1, "end_offset": -1}
    assert diverging(2, 0) == (0, none)
    assert diverging(3, 0) == (0, {"epoch": 0, "end_offset": 2})  # past the end of epoch 0
    assert diverging(2, 1) == (0, {"epoch": 0, "end_offset": 2})  # epoch 1 never existed here
    assert diverging(3, 2) == (0, none)
    assert diverging(3, 7) == (1, none)  # an epoch newer than any: OFFSET_OUT_OF_RANGE


def _append_transactional(broker: Broker, name: str, *, producer_id: int, values: list[bytes],
                          commit: bool | None) -> None:
    """Transactional records, and (unless commit is None) the coordinator's marker after them."""
    def append() -> None:
        log = broker.broker.partition(name, 0)
        assert log is not None
        log.append(batch(*values, producer_id=producer_id, producer_epoch=0, base_sequence=0, transactional=True))
        if commit is not None:
            log.append(build_end_txn_marker(commit=commit, producer_id=producer_id, producer_epoch=0,
                                            coordinator_epoch=0, timestamp=1_700_000_000_000),
                       origin=AppendOrigin.COORDINATOR)

    broker.call(append)


def test_read_committed(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    _append_transactional(broker, "t", producer_id=11, values=[b"aborted"], commit=False)  # offsets 0-1
    _append_transactional(broker, "t", producer_id=12, values=[b"committed"], commit=True)  # 2-3
    _append_transactional(broker, "t", producer_id=13, values=[b"open"], commit=None)  # 4
    committed = conn.request(FETCH, 12, fetch_body([("t", 0, 0)], isolation_level=1))
    [(_, partition)] = fetch_partitions(committed)
    assert (partition["high_watermark"], partition["last_stable_offset"]) == (5, 4)
    assert partition["aborted_transactions"] == [{"producer_id": 11, "first_offset": 0}]
    assert [b.header.base_offset for b in batches_of(partition["records"])] == [0, 1, 2, 3]
    uncommitted = conn.request(FETCH, 12, fetch_body([("t", 0, 0)], isolation_level=0))
    [(_, raw)] = fetch_partitions(uncommitted)
    assert raw["aborted_transactions"] is None
    assert [b.header.base_offset for b in batches_of(raw["records"])] == [0, 1, 2, 3, 4]
    at_lso = conn.request(FETCH, 12, fetch_body([("t", 0, 4)], isolation_level=1))
    [(_, waiting)] = fetch_partitions(at_lso)
    assert (waiting["records"], waiting["aborted_transactions"]) == (b"", [])


def test_read_committed_lists_aborts_up_to_the_offset_index_bound(broker: Broker, conn: Connection) -> None:
    """One batch returned, but the aborted list runs to the first offset-index entry past it: here (no entry
    yet, the index being sparse) the log end, as Kafka's LocalLog.addAbortedTransactions bounds it."""
    create_topic(conn, "t")
    _append_transactional(broker, "t", producer_id=11, values=[b"first"], commit=False)  # offsets 0-1
    _append_transactional(broker, "t", producer_id=12, values=[b"second"], commit=False)  # 2-3
    body = conn.request(FETCH, 12, fetch_body([("t", 0, 0)], isolation_level=1, partition_max_bytes=1))
    [(_, partition)] = fetch_partitions(body)
    assert [b.header.base_offset for b in batches_of(partition["records"])] == [0]
    assert partition["aborted_transactions"] == [{"producer_id": 11, "first_offset": 0},
                                                 {"producer_id": 12, "first_offset": 2}]


def test_read_committed_is_woken_when_the_lso_moves(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    _append_transactional(broker, "t", producer_id=21, values=[b"pending"], commit=None)
    idle = listener_count(broker, "t")
    conn.send(FETCH, 12, fetch_body([("t", 0, 0)], isolation_level=1, max_wait_ms=20_000))
    wait_until(lambda: listener_count(broker, "t") > idle, "the fetch to park")

    def commit() -> None:
        log = broker.broker.partition("t", 0)
        assert log is not None
        log.append(build_end_txn_marker(commit=True, producer_id=21, producer_epoch=0, coordinator_epoch=0,
                                        timestamp=1_700_000_000_000), origin=AppendOrigin.COORDINATOR)

    broker.call(commit)
    _, body = conn.receive(FETCH, 12)
    [(_, partition)] = fetch_partitions(body)
    assert partition["last_stable_offset"] == 2
    assert values_of(partition["records"])[0] == b"pending"


@pytest.mark.parametrize("version", [4, 9, 10])
def test_a_zstd_topic_is_read_at_every_version(broker: Broker, conn: Connection, version: int) -> None:
    """Kafka 4 converts nothing down: before v10 too, a zstd topic's batches are returned as they are."""
    create_topic(conn, "t", configs={"compression.type": "zstd"})
    produce(conn, "t", batch(b"a"))
    body = conn.request(FETCH, version, fetch_body([("t", 0, 0)], version=version))
    partition = fetch_partitions(body, version)[0][1]
    assert (partition["error_code"], values_of(partition["records"])) == (0, [b"a"])


def test_past_the_bound_on_owed_answers_a_fetch_gets_one_batch(broker: Broker, conn: Connection) -> None:
    # kemu.broker.owed_answers: slow clients' unsent answers past the bound; every consumer still moves on.
    create_topic(conn, "t", partitions=2)
    for index in (0, 1):
        produce(conn, "t", batch(b"a", b"b"), partition=index)
        produce(conn, "t", batch(b"c"), partition=index)
    owed = broker.broker.owed_answers
    request = fetch_body([("t", 0, 0), ("t", 1, 0)])
    broker.call(lambda: setattr(owed, "used", owed.limit))
    try:
        tight = fetch_partitions(conn.request(FETCH, 12, request), 12)
    finally:
        broker.call(lambda: setattr(owed, "used", 0))
    assert [values_of(p["records"]) for _, p in tight] == [[b"a", b"b"], []]
    free = fetch_partitions(conn.request(FETCH, 12, request), 12)
    assert [values_of(p["records"]) for _, p in free] == [[b"a", b"b", b"c"], [b"a", b"b", b"c"]]


def test_past_the_bound_on_owed_answers_records_from_segment_files_are_not_held_back(broker: Broker,
                                                                                  conn: Connection) -> None:
    # Records a Fetch names in segment files (regions, sent with sendfile) hold no memory: the bound on owed
    # answers does not cut them, as it cuts cached ones (above).
    create_topic(conn, "t", partitions=2, configs={"segment.bytes": str(1 << 20)})
    values = [bytes([65 + n]) * 100_000 for n in range(12)]
    for index in (0, 1):
        for value in values:
            produce(conn, "t", batch(value), partition=index)  # past 1 MiB: the first segment rolls
    owed = broker.broker.owed_answers
    request = fetch_body([("t", 0, 0), ("t", 1, 0)], partition_max_bytes=4 << 20)
    broker.call(lambda: setattr(owed, "used", owed.limit))
    try:
        tight = fetch_partitions(conn.request(FETCH, 12, request), 12)
    finally:
        broker.call(lambda: setattr(owed, "used", 0))
    first_segment = [values[:10], values[:10]]  # a read stops at the end of its segment
    assert [values_of(p["records"]) for _, p in tight] == first_segment


def test_past_the_bound_on_owed_answers_a_fetch_cut_short_answers_without_waiting_for_min_bytes(
        broker: Broker, conn: Connection) -> None:
    # Waiting would not free the bound: the one batch left goes out at once, as when the whole answer was
    # clamped to the bound's rest.
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a", b"b"))
    produce(conn, "t", batch(b"c"))
    owed = broker.broker.owed_answers
    request = fetch_body([("t", 0, 0)], min_bytes=1 << 20, max_wait_ms=60_000)
    broker.call(lambda: setattr(owed, "used", owed.limit))
    try:
        tight = fetch_partitions(conn.request(FETCH, 12, request), 12)  # a wait would time the request out
    finally:
        broker.call(lambda: setattr(owed, "used", 0))
    assert [values_of(p["records"]) for _, p in tight] == [[b"a", b"b"]]
