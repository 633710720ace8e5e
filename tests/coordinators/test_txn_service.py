"""TxnService: the coordinator's journal in __transaction_state, recovery, the marker writer, timers and
the KIP-890 produce check, driven through a Broker with a virtual clock (housekeeping run by hand)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.config import BrokerConfig
from kemu.broker.topic_names import TRANSACTION_STATE_TOPIC
from kemu.clock import VirtualClock
from kemu.coordinators.crash_points import CrashPoint
from kemu.coordinators.txn_service import COORDINATOR_EPOCH_FILE, HOLD_MARKERS_ENV
from kemu.hashing import partition_for
from kemu.log import FetchIsolation
from kemu.log.producer_state import ProducerStateError
from kemu.txn.state import TxnState
from kemu.wire.coordinator_records import decode_key, decode_value
from kemu.wire.errors import ErrorCode
from kemu.wire.records import (
    BatchHeader,
    ControlRecordType,
    NewRecord,
    build_batch,
    decode_control_key,
    decode_end_txn_marker_value,
)
from tests.coordinators.node import CoreNode

E = ErrorCode


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(1_700_000_000_000)


def open_broker(data_dir: Path, clock: VirtualClock) -> CoreNode:
    broker = CoreNode(BrokerConfig(data_dir=str(data_dir)), clock)
    create_topics(broker, [NewTopic("a", 2, 1)])
    return broker


@pytest.fixture
def broker(tmp_path: Path, clock: VirtualClock) -> Iterator[CoreNode]:
    b = open_broker(tmp_path, clock)
    yield b
    b.close()


def produce(broker: CoreNode, topic: str, partition: int, pid: int, epoch: int, seq: int, n: int = 1,
            transactional: bool = True) -> None:
    plog = broker.partition(topic, partition)
    assert plog is not None
    data = build_batch([NewRecord(value=b"v%d" % i, timestamp=broker.clock.now_ms()) for i in range(n)],
                       producer_id=pid, producer_epoch=epoch, base_sequence=seq, transactional=transactional)
    plog.append(data)


def markers(broker: CoreNode, topic: str, partition: int) -> list[tuple[bool, int, int, int]]:
    """(commit, producer id, producer epoch, coordinator epoch) of each marker in the partition."""
    plog = broker.partition(topic, partition)
    assert plog is not None
    found = []
    for batch in plog.log.batches():
        if batch.header.is_control:
            (record,) = batch.records()
            _, kind = decode_control_key(record.key)
            _, coordinator_epoch = decode_end_txn_marker_value(record.value)
            found.append((kind == ControlRecordType.COMMIT, batch.header.producer_id, batch.header.producer_epoch,
                          coordinator_epoch))
    return found


def begin(broker: CoreNode, tid: str, partitions: list[tuple[str, int]], timeout_ms: int = 60000) -> tuple[int, int]:
    coordinator = broker.txn.coordinator
    init = coordinator.init_producer_id(tid, timeout_ms)
    assert init.error == E.NONE
    assert coordinator.add_partitions(tid, init.producer_id, init.producer_epoch, partitions) == E.NONE
    for topic, partition in partitions:
        produce(broker, topic, partition, init.producer_id, init.producer_epoch, 0, n=2)
    return init.producer_id, init.producer_epoch


def test_journal_goes_to_the_ids_partition_of_a_created_transaction_state_topic(broker: CoreNode) -> None:
    assert TRANSACTION_STATE_TOPIC not in broker.topics
    broker.txn.coordinator.init_producer_id("my-txn", 60000)
    topic = broker.topics.get(TRANSACTION_STATE_TOPIC)
    assert topic is not None and len(topic.partitions) == 50
    assert topic.configs["cleanup.policy"] == "compact"
    index = partition_for("my-txn", 50)
    plog = broker.partition(TRANSACTION_STATE_TOPIC, index)
    assert plog is not None
    (batch,) = plog.log.batches()
    (record,) = batch.records()
    assert decode_key(record.key, TRANSACTION_STATE_TOPIC).fields == {"transactional_id": "my-txn"}
    value = decode_value("TransactionLog", record.value)
    assert value.version == 1  # transaction.version 2, as Kafka 4.x: flexible records, with the tagged fields
    assert (value.fields["producer_epoch"], value.fields["transaction_status"]) == (0, int(TxnState.EMPTY))


def test_commit_writes_markers_on_every_partition_through_housekeeping(broker: CoreNode) -> None:
    pid, epoch = begin(broker, "t", [("a", 0), ("a", 1)])
    a0 = broker.partition("a", 0)
    assert a0 is not None and a0.last_stable_offset == 0
    assert broker.txn.coordinator.end_txn("t", pid, epoch, commit=True) == E.NONE
    assert broker.txn.coordinator.txns["t"].state == TxnState.PREPARE_COMMIT
    broker.housekeeping.run_due()
    assert broker.txn.coordinator.txns["t"].state == TxnState.COMPLETE_COMMIT
    epoch_now = broker.txn.coordinator.coordinator_epoch
    assert markers(broker, "a", 0) == markers(broker, "a", 1) == [(True, pid, epoch, epoch_now)]
    assert a0.last_stable_offset == a0.log.high_watermark == 3
    committed = a0.read(0, 1 << 20, isolation=FetchIsolation.TXN_COMMITTED)
    assert committed.last_stable_offset == 3 and a0.aborted_transactions(0, 3) == []


def test_abort_is_indexed_for_read_committed(broker: CoreNode) -> None:
    pid, epoch = begin(broker, "t", [("a", 0)])
    broker.txn.coordinator.end_txn("t", pid, epoch, commit=False)
    broker.housekeeping.run_due()
    a0 = broker.partition("a", 0)
    assert a0 is not None
    (aborted,) = a0.aborted_transactions(0, a0.log.log_end_offset)
    assert (aborted.producer_id, aborted.first_offset, aborted.last_offset) == (pid, 0, 2)


def test_hold_markers_keeps_the_transaction_prepared_until_released(broker: CoreNode) -> None:
    pid, epoch = begin(broker, "t", [("a", 0)])
    broker.txn.hold_markers = True
    broker.txn.coordinator.end_txn("t", pid, epoch, commit=True)
    broker.housekeeping.run_due()
    coordinator = broker.txn.coordinator
    assert coordinator.txns["t"].state == TxnState.PREPARE_COMMIT and markers(broker, "a", 0) == []
    # The two-phase window, observable: the id answers CONCURRENT_TRANSACTIONS.
    assert coordinator.add_partitions("t", pid, epoch, [("a", 1)]) == E.CONCURRENT_TRANSACTIONS
    assert coordinator.init_producer_id("t", 60000).error == E.CONCURRENT_TRANSACTIONS
    broker.txn.hold_markers = False
    broker.housekeeping.run_due()
    assert coordinator.txns["t"].state == TxnState.COMPLETE_COMMIT and len(markers(broker, "a", 0)) == 1


def test_hold_markers_from_the_environment(tmp_path: Path, clock: VirtualClock,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOLD_MARKERS_ENV, "1")
    b = open_broker(tmp_path, clock)
    try:
        assert b.txn.hold_markers
    finally:
        b.close()
    monkeypatch.delenv(HOLD_MARKERS_ENV)
    b = open_broker(tmp_path, clock)
    try:
        assert not b.txn.hold_markers
    finally:
        b.close()


def test_restart_finishes_prepared_transactions_with_a_new_coordinator_epoch(tmp_path: Path,
                                                                            clock: VirtualClock) -> None:
    first = open_broker(tmp_path, clock)
    committed_pid, committed_epoch = begin(first, "committing", [("a", 0)])
    aborted_pid, aborted_epoch = begin(first, "aborting", [("a", 1)])
    ongoing_pid, _ = begin(first, "ongoing", [("a", 0)], timeout_ms=5000)
    done_pid, done_epoch = begin(first, "done", [("a", 1)])
    first.txn.coordinator.end_txn("done", done_pid, done_epoch, commit=True)
    first.housekeeping.run_due()
    first.txn.hold_markers = True
    first.txn.coordinator.end_txn("committing", committed_pid, committed_epoch, commit=True)
    first.txn.coordinator.end_txn("aborting", aborted_pid, aborted_epoch, commit=False)
    old_epoch = first.txn.coordinator.coordinator_epoch
    first.close()

    again = open_broker(tmp_path, clock)
    try:
        coordinator = again.txn.coordinator
        assert coordinator.coordinator_epoch == old_epoch + 1
        assert (tmp_path / COORDINATOR_EPOCH_FILE).read_text().strip() == str(old_epoch + 1)
        assert coordinator.txns["committing"].state == TxnState.PREPARE_COMMIT
        assert coordinator.txns["ongoing"].state == TxnState.ONGOING
        assert coordinator.txns["done"].state == TxnState.COMPLETE_COMMIT
        again.housekeeping.run_due()
        assert coordinator.txns["committing"].state == TxnState.COMPLETE_COMMIT
        assert coordinator.txns["aborting"].state == TxnState.COMPLETE_ABORT
        assert (True, committed_pid, committed_epoch, old_epoch + 1) in markers(again, "a", 0)
        assert (False, aborted_pid, aborted_epoch, old_epoch + 1) in markers(again, "a", 1)
        # The ongoing one is left to its timeout, as Kafka leaves it, and then aborted with a bumped epoch.
        a0 = again.partition("a", 0)
        assert a0 is not None and a0.last_stable_offset == 2
        clock.advance(5001)
        again.housekeeping.run_due()
        assert coordinator.txns["ongoing"].state == TxnState.COMPLETE_ABORT
        assert markers(again, "a", 0)[-1][:2] == (False, ongoing_pid)
        assert a0.last_stable_offset == a0.log.log_end_offset
    finally:
        again.close()


def test_producer_ids_continue_after_a_restart(tmp_path: Path, clock: VirtualClock) -> None:
    first = open_broker(tmp_path, clock)
    used = {first.txn.coordinator.init_producer_id(None, 0).producer_id for _ in range(3)}
    first.close()
    again = open_broker(tmp_path, clock)
    try:
        assert again.txn.coordinator.init_producer_id(None, 0).producer_id not in used
    finally:
        again.close()


def test_a_deleted_topic_is_skipped_by_the_marker_writer(broker: CoreNode) -> None:
    create_topics(broker, [NewTopic("gone", 1, 1)])
    pid, epoch = begin(broker, "t", [("a", 0), ("gone", 0)])
    topic = broker.topics.get("gone")
    assert topic is not None
    broker.delete_topic(topic.topic_id)
    broker.txn.coordinator.end_txn("t", pid, epoch, commit=True)
    broker.housekeeping.run_due()
    assert broker.txn.coordinator.txns["t"].state == TxnState.COMPLETE_COMMIT
    assert len(markers(broker, "a", 0)) == 1


def test_stalled_transaction_is_aborted_by_the_timeout_task(broker: CoreNode, clock: VirtualClock) -> None:
    pid, epoch = begin(broker, "t", [("a", 0)], timeout_ms=2000)
    broker.housekeeping.run_due()
    clock.advance(2000)
    broker.housekeeping.run_due()
    assert broker.txn.coordinator.txns["t"].state == TxnState.ONGOING
    clock.advance(1)
    broker.housekeeping.run_due()
    assert broker.txn.coordinator.txns["t"].state == TxnState.COMPLETE_ABORT
    assert markers(broker, "a", 0) == [(False, pid, epoch + 1, broker.txn.coordinator.coordinator_epoch)]
    # The stalled producer is fenced on the partition too.
    with pytest.raises(ProducerStateError) as fenced:
        produce(broker, "a", 0, pid, epoch, 2)
    assert fenced.value.code == E.INVALID_PRODUCER_EPOCH


def test_idle_producers_expire_from_partitions(broker: CoreNode, clock: VirtualClock) -> None:
    produce(broker, "a", 0, 42, 0, 0, transactional=False)
    a0 = broker.partition("a", 0)
    assert a0 is not None and 42 in a0.producers.producers
    clock.advance(86_400_000)
    broker.housekeeping.run_due()
    assert 42 not in a0.producers.producers


def test_verify_produce_refuses_a_partition_not_in_the_transaction(broker: CoreNode) -> None:
    coordinator = broker.txn.coordinator
    init = coordinator.init_producer_id("t", 60000)
    pid, epoch = init.producer_id, init.producer_epoch
    a0 = broker.partition("a", 0)
    assert a0 is not None
    header = BatchHeader.parse(build_batch([NewRecord(value=b"x", timestamp=1)], producer_id=pid,
                                           producer_epoch=epoch, base_sequence=0, transactional=True))
    assert a0.needs_verification(header)

    def verify(version: int, producer_epoch: int = epoch, partition: int = 0) -> tuple[E, str | None]:
        return broker.txn.verify_produce("t", version, "a", partition, pid, producer_epoch)

    assert verify(10) == (E.INVALID_TXN_STATE, "Partition was not added to the transaction")
    assert verify(11) == (E.TRANSACTION_ABORTABLE, None)
    assert verify(11, producer_epoch=epoch + 1) == (E.INVALID_PRODUCER_EPOCH, None)
    coordinator.add_partitions("t", pid, epoch, [("a", 0)])
    assert verify(10) == (E.NONE, None)
    a0.append(build_batch([NewRecord(value=b"x", timestamp=1)], producer_id=pid, producer_epoch=epoch,
                          base_sequence=0, transactional=True))
    assert a0.log.log_end_offset == 1
    # The transaction is open here now: the next batch needs no coordinator.
    assert not a0.needs_verification(header)
    broker.txn.hold_markers = True  # keep the transaction completing
    coordinator.end_txn("t", pid, epoch, commit=True)
    code, message = verify(9, partition=1)
    assert code == E.NOT_ENOUGH_REPLICAS
    assert message == ("Unable to verify the partition has been added to the transaction. "
                       "Underlying error: CONCURRENT_TRANSACTIONS")


def test_journal_records_read_as_kafka_writes_them(broker: CoreNode) -> None:
    """Empty has a null partition list; Ongoing lists its partitions by topic, with the start time."""
    coordinator = broker.txn.coordinator
    init = coordinator.init_producer_id("t", 60000)
    coordinator.add_partitions("t", init.producer_id, init.producer_epoch, [("a", 1), ("a", 0)])
    plog = broker.partition(TRANSACTION_STATE_TOPIC, partition_for("t", 50))
    assert plog is not None
    values = [decode_value("TransactionLog", r.value).fields for b in plog.log.batches() for r in b.records()
              if r.value is not None]
    assert values[0]["transaction_partitions"] is None and values[0]["transaction_status"] == 0
    assert values[1]["transaction_partitions"] == [{"topic": "a", "partition_ids": [0, 1]}]
    assert values[1]["transaction_start_timestamp_ms"] == broker.clock.now_ms()


def test_expired_transactional_id_stays_gone_after_a_restart(tmp_path: Path, clock: VirtualClock) -> None:
    first = open_broker(tmp_path, clock)
    first.txn.coordinator.init_producer_id("t", 60000)
    first.txn.coordinator.init_producer_id("kept", 60000)
    clock.advance(604_800_000 - 1)
    first.txn.coordinator.init_producer_id("kept", 60000)  # used again: its expiration starts over
    clock.advance(1)
    first.housekeeping.run_due()
    assert "t" not in first.txn.coordinator.txns and "kept" in first.txn.coordinator.txns
    first.close()
    again = open_broker(tmp_path, clock)
    try:
        assert set(again.txn.coordinator.txns) == {"kept"}  # the tombstone was replayed
    finally:
        again.close()


def journaled_states(broker: CoreNode, tid: str) -> list[TxnState]:
    plog = broker.partition(TRANSACTION_STATE_TOPIC, partition_for(tid, 50))
    assert plog is not None
    return [TxnState(decode_value("TransactionLog", r.value).fields["transaction_status"])
            for b in plog.log.batches() for r in b.records() if r.value is not None]


def test_a_request_that_finds_markers_queued_has_them_written_first(broker: CoreNode) -> None:
    pid, epoch = begin(broker, "t", [("a", 0)])
    coordinator = broker.txn.coordinator
    assert coordinator.end_txn("t", pid, epoch, commit=True) == E.NONE
    assert coordinator.txns["t"].state == TxnState.PREPARE_COMMIT and markers(broker, "a", 0) == []
    # The next transaction's AddPartitionsToTxn comes before the marker writer has run: the markers are
    # written and the transaction completed (journaled) first, and the request goes through.
    assert broker.txn.add_partitions("t", pid, epoch, [("a", 1)]) == E.NONE
    assert markers(broker, "a", 0) == [(True, pid, epoch, coordinator.coordinator_epoch)]
    assert journaled_states(broker, "t")[-3:] == [TxnState.PREPARE_COMMIT, TxnState.COMPLETE_COMMIT,
                                                   TxnState.ONGOING]
    broker.housekeeping.run_due()  # the writer finds nothing left to do
    assert len(markers(broker, "a", 0)) == 1 and coordinator.txns["t"].state == TxnState.ONGOING
    a0 = broker.partition("a", 0)
    assert a0 is not None and a0.last_stable_offset == a0.log.log_end_offset


def test_markers_are_not_written_early_while_a_crash_hook_decides_where_the_writer_stops(
        broker: CoreNode) -> None:
    pid, epoch = begin(broker, "t", [("a", 0)])
    points: list[CrashPoint] = []
    broker.txn.crash_hook = lambda point, tid: points.append(point)
    coordinator = broker.txn.coordinator
    coordinator.end_txn("t", pid, epoch, commit=False)
    assert broker.txn.add_partitions("t", pid, epoch, [("a", 1)]) == E.CONCURRENT_TRANSACTIONS
    assert broker.txn.end_transaction("t", pid, epoch, commit=False).error == E.CONCURRENT_TRANSACTIONS
    assert points == [] and markers(broker, "a", 0) == []
    broker.housekeeping.run_due()
    assert points == [CrashPoint.AFTER_PREPARE, CrashPoint.BEFORE_COMPLETE]
    assert coordinator.txns["t"].state == TxnState.COMPLETE_ABORT


def test_a_marker_that_cannot_be_written_keeps_the_transaction_completing(broker: CoreNode) -> None:
    pid, epoch = begin(broker, "t", [("a", 0)])
    a0 = broker.partition("a", 0)
    assert a0 is not None
    a0.storage_failure = "the disk went away"  # appends refused with KAFKA_STORAGE_ERROR
    coordinator = broker.txn.coordinator
    coordinator.end_txn("t", pid, epoch, commit=True)
    assert broker.txn.add_partitions("t", pid, epoch, [("a", 1)]) == E.CONCURRENT_TRANSACTIONS
    assert coordinator.txns["t"].state == TxnState.PREPARE_COMMIT
    a0.storage_failure = None
    assert broker.txn.add_partitions("t", pid, epoch, [("a", 1)]) == E.NONE
    assert markers(broker, "a", 0) == [(True, pid, epoch, coordinator.coordinator_epoch)]


class _StopDead(BaseException):
    pass


def test_a_writer_stopped_dead_at_a_crash_point_writes_nothing_more(broker: CoreNode) -> None:
    pid, epoch = begin(broker, "t", [("a", 0), ("a", 1)])
    reached: list[CrashPoint] = []

    def hook(point: CrashPoint, tid: str) -> None:
        reached.append(point)
        if len(reached) == 1:
            raise _StopDead  # the test handle's crash: once, then it would let everything through

    broker.txn.crash_hook = hook
    broker.txn.coordinator.end_txn("t", pid, epoch, commit=True)
    with pytest.raises(_StopDead):
        broker.housekeeping.run_due()
    # Whoever runs the writer next (the housekeeper, a connection after its answer) finds it stopped.
    broker.housekeeping.wake()
    broker.housekeeping.run_due()
    assert reached == [CrashPoint.AFTER_PREPARE]
    assert markers(broker, "a", 0) == [] and markers(broker, "a", 1) == []
    assert broker.txn.coordinator.txns["t"].state == TxnState.PREPARE_COMMIT
