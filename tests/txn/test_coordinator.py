from __future__ import annotations

from typing import Any

import pytest

from kemu.clock import VirtualClock
from kemu.txn.coordinator import TransactionCoordinator, TxnConfig
from kemu.txn.producer_ids import ProducerIdAllocator
from kemu.txn.state import TxnState
from kemu.wire.errors import ErrorCode
from tests.txn.support import Journal, complete

E = ErrorCode


@pytest.fixture
def coord(clock: VirtualClock, journal: Journal) -> TransactionCoordinator:
    return TransactionCoordinator(clock, ProducerIdAllocator(None), journal)


def test_idempotent_producers_get_fresh_ids_at_epoch_zero(coord: TransactionCoordinator) -> None:
    a = coord.init_producer_id(None, 60000)
    b = coord.init_producer_id(None, 60000)
    assert (a.error, a.producer_epoch, b.producer_epoch) == (E.NONE, 0, 0)
    assert a.producer_id != b.producer_id


def test_same_transactional_id_keeps_its_producer_id_and_bumps_the_epoch(coord: TransactionCoordinator) -> None:
    first = coord.init_producer_id("t", 60000)
    second = coord.init_producer_id("t", 60000)
    assert first.producer_id == second.producer_id
    assert (first.producer_epoch, second.producer_epoch) == (0, 1)
    # The older producer is fenced.
    assert coord.add_partitions("t", first.producer_id, 0, [("a", 0)]) == E.PRODUCER_FENCED


def test_timeout_is_checked_against_the_maximum(clock: VirtualClock, journal: Journal) -> None:
    coord = TransactionCoordinator(clock, ProducerIdAllocator(None), journal, TxnConfig(max_timeout_ms=1000))
    assert coord.init_producer_id("t", 1001).error == E.INVALID_TRANSACTION_TIMEOUT
    assert coord.init_producer_id("t", 0).error == E.INVALID_TRANSACTION_TIMEOUT


def test_commit_goes_through_prepare_with_concurrent_transactions_until_markers(
        coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    assert coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0), ("b", 1)]) == E.NONE
    assert coord.txns["t"].state == TxnState.ONGOING
    assert coord.end_txn("t", p.producer_id, p.producer_epoch, commit=True) == E.NONE
    assert coord.txns["t"].state == TxnState.PREPARE_COMMIT
    (job,) = coord.take_marker_jobs()
    assert job.commit and job.partitions == {("a", 0), ("b", 1)}
    assert coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)]) == E.CONCURRENT_TRANSACTIONS
    assert coord.init_producer_id("t", 60000).error == E.CONCURRENT_TRANSACTIONS
    assert coord.end_txn("t", p.producer_id, p.producer_epoch, commit=True) == E.CONCURRENT_TRANSACTIONS
    assert coord.end_txn("t", p.producer_id, p.producer_epoch, commit=False) == E.INVALID_TXN_STATE
    coord.markers_written(job)
    assert coord.txns["t"].state == TxnState.COMPLETE_COMMIT
    # A retried commit is fine; an abort now is out of order.
    assert coord.end_txn("t", p.producer_id, p.producer_epoch, commit=True) == E.NONE
    assert coord.end_txn("t", p.producer_id, p.producer_epoch, commit=False) == E.INVALID_TXN_STATE


def test_end_txn_without_a_transaction_is_invalid_txn_state(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    assert coord.end_txn("t", p.producer_id, p.producer_epoch, commit=True) == E.INVALID_TXN_STATE
    assert coord.end_txn("nope", p.producer_id, 0, commit=True) == E.INVALID_PRODUCER_ID_MAPPING
    assert coord.end_txn("t", p.producer_id + 99, 0, commit=True) == E.INVALID_PRODUCER_ID_MAPPING


def test_new_producer_aborts_the_ongoing_transaction_of_the_old_one(coord: TransactionCoordinator) -> None:
    old = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", old.producer_id, old.producer_epoch, [("a", 0)])
    assert coord.init_producer_id("t", 60000).error == E.CONCURRENT_TRANSACTIONS
    (job,) = coord.take_marker_jobs()
    assert not job.commit and job.producer_epoch == old.producer_epoch + 1
    coord.markers_written(job)
    new = coord.init_producer_id("t", 60000)
    assert (new.error, new.producer_epoch) == (E.NONE, old.producer_epoch + 2)
    assert coord.end_txn("t", old.producer_id, old.producer_epoch, commit=True) == E.PRODUCER_FENCED


def test_stalled_transaction_is_aborted_with_an_epoch_bump(coord: TransactionCoordinator,
                                                           clock: VirtualClock) -> None:
    p = coord.init_producer_id("t", 5000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])
    # Kafka aborts once start + timeout < now: the first millisecond past the timeout.
    assert coord.next_deadline() == clock.now_ms() + 5001
    clock.advance(5000)
    assert coord.tick() == []
    clock.advance(1)
    assert coord.tick() == ["t"]
    (job,) = coord.take_marker_jobs()
    assert not job.commit and job.producer_epoch == p.producer_epoch + 1
    complete(coord)
    assert coord.txns["t"].state == TxnState.COMPLETE_ABORT
    assert coord.end_txn("t", p.producer_id, p.producer_epoch, commit=True) == E.PRODUCER_FENCED


def test_kip360_retry_with_expected_epoch(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    bumped = coord.init_producer_id("t", 60000, p.producer_id, p.producer_epoch)
    assert (bumped.error, bumped.producer_epoch) == (E.NONE, p.producer_epoch + 1)
    # The same call retried (its response lost) gets the current epoch, not another bump.
    again = coord.init_producer_id("t", 60000, p.producer_id, p.producer_epoch)
    assert (again.error, again.producer_epoch) == (E.NONE, bumped.producer_epoch)
    assert coord.init_producer_id("t", 60000, p.producer_id + 5, 0).error == E.PRODUCER_FENCED


def test_replaying_the_journal_rebuilds_state_and_requeues_prepared_markers(
        coord: TransactionCoordinator, journal: Journal, clock: VirtualClock) -> None:
    p = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])
    coord.end_txn("t", p.producer_id, p.producer_epoch, commit=True)
    q = coord.init_producer_id("u", 60000)
    coord.add_partitions("u", q.producer_id, q.producer_epoch, [("b", 2)])
    fresh = TransactionCoordinator(clock, ProducerIdAllocator(None), Journal(), coordinator_epoch=1)
    for tid, value in journal:
        fresh.replay(tid, value)
    fresh.finish_loading()
    assert fresh.txns["t"].state == TxnState.PREPARE_COMMIT
    assert fresh.txns["u"].state == TxnState.ONGOING and fresh.txns["u"].partitions == {("b", 2)}
    (job,) = fresh.take_marker_jobs()
    assert job.commit and job.coordinator_epoch == 1 and job.partitions == {("a", 0)}


def test_idle_transactional_ids_expire(clock: VirtualClock, journal: Journal) -> None:
    coord = TransactionCoordinator(clock, ProducerIdAllocator(None), journal, TxnConfig(id_expiration_ms=1000))
    coord.init_producer_id("t", 500)
    clock.advance(1000)
    coord.tick()
    assert "t" not in coord.txns and journal[-1] == ("t", None)


def test_list_filters_by_state_and_producer(coord: TransactionCoordinator) -> None:
    a = coord.init_producer_id("a", 60000)
    coord.init_producer_id("b", 60000)
    coord.add_partitions("a", a.producer_id, a.producer_epoch, [("x", 0)])
    assert [t.transactional_id for t in coord.list(states=["Ongoing"])] == ["a"]
    assert [t.transactional_id for t in coord.list(producer_ids=[a.producer_id])] == ["a"]
    assert {t.transactional_id for t in coord.list()} == {"a", "b"}


def test_producer_ids_never_repeat_across_restarts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "producer-id-block"
    first = ProducerIdAllocator(path)
    used = {first.next_id() for _ in range(3)}
    again = ProducerIdAllocator(path)
    assert again.next_id() not in used


def test_fenced_producer_retrying_with_its_epoch_gets_the_fencing_epoch(coord: TransactionCoordinator) -> None:
    """Kafka 4.3 aborts a fenced transaction the transaction-version-2 way: the abort remembers the epoch
    it fenced as the last epoch, so the old producer's KIP-360 InitProducerId passes for a retry and gets the
    bumped epoch back, unbumped; the new producer's retry bumps again, and fences it for good."""
    old = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", old.producer_id, old.producer_epoch, [("a", 0)])
    assert coord.init_producer_id("t", 60000).error == E.CONCURRENT_TRANSACTIONS
    (job,) = coord.take_marker_jobs()
    assert (job.producer_epoch, job.commit) == (old.producer_epoch + 1, False)
    complete(coord)
    assert coord.txns["t"].last_producer_epoch == old.producer_epoch
    retry = coord.init_producer_id("t", 60000, old.producer_id, old.producer_epoch)
    assert (retry.error, retry.producer_epoch) == (E.NONE, old.producer_epoch + 1)
    new = coord.init_producer_id("t", 60000)
    assert (new.error, new.producer_epoch) == (E.NONE, old.producer_epoch + 2)
    assert coord.init_producer_id("t", 60000, old.producer_id, old.producer_epoch).error == E.PRODUCER_FENCED


def test_timed_out_transaction_fences_the_stalled_producer(coord: TransactionCoordinator,
                                                          clock: VirtualClock) -> None:
    p = coord.init_producer_id("t", 1000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])
    clock.advance(1001)
    coord.tick()
    complete(coord)
    assert coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)]) == E.PRODUCER_FENCED
    again = coord.init_producer_id("t", 1000, p.producer_id, p.producer_epoch)
    assert (again.error, again.producer_id, again.producer_epoch) == (E.NONE, p.producer_id, p.producer_epoch + 1)


def test_aborting_an_exhausted_epoch_moves_to_the_next_producer_id(coord: TransactionCoordinator,
                                                                  clock: VirtualClock) -> None:
    p = coord.init_producer_id("t", 1000)
    coord.txns["t"].producer_epoch = 0x7FFE
    coord.add_partitions("t", p.producer_id, 0x7FFE, [("a", 0)])
    clock.advance(1001)
    coord.tick()
    (job,) = coord.take_marker_jobs()
    assert (job.producer_id, job.producer_epoch) == (p.producer_id, 0x7FFF)
    complete(coord)
    txn = coord.txns["t"]
    assert txn.producer_id != p.producer_id and txn.producer_epoch == 0 and txn.last_producer_id == p.producer_id


def test_a_failed_fencing_abort_leaves_the_id_as_it_was(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])

    def broken(tid: str, value: dict[str, Any] | None) -> None:
        raise OSError("disk full")

    coord.journal = broken
    with pytest.raises(OSError):
        coord.init_producer_id("t", 60000)
    txn = coord.txns["t"]
    assert (txn.state, txn.producer_epoch, coord.take_marker_jobs()) == (TxnState.ONGOING, p.producer_epoch, [])


def test_exhausted_epoch_rotates_the_producer_id(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    coord.txns["t"].producer_epoch = 0x7FFE  # as if 32766 producers had come and gone
    rotated = coord.init_producer_id("t", 60000)
    assert rotated.error == E.NONE and rotated.producer_id != p.producer_id and rotated.producer_epoch == 0
    assert coord.txns["t"].last_producer_id == p.producer_id
    assert coord.txns["t"].last_producer_epoch == -1  # no expected epoch given: nothing to remember


def test_kip360_retry_after_rotation_gets_the_new_id(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    coord.txns["t"].producer_epoch = 0x7FFE
    rotated = coord.init_producer_id("t", 60000, p.producer_id, 0x7FFE)
    assert (rotated.error, rotated.producer_epoch) == (E.NONE, 0)
    # The same request retried: the old id with its exhausted epoch is recognised, no second rotation.
    again = coord.init_producer_id("t", 60000, p.producer_id, 0x7FFE)
    assert (again.error, again.producer_id, again.producer_epoch) == (E.NONE, rotated.producer_id, 0)


def test_verify_partitions_as_kafka(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    pid, epoch = p.producer_id, p.producer_epoch
    # No transaction yet: not in it.
    assert coord.verify_partitions("t", pid, epoch, [("a", 0)]) == {("a", 0): E.TRANSACTION_ABORTABLE}
    coord.add_partitions("t", pid, epoch, [("a", 0)])
    assert coord.verify_partitions("t", pid, epoch, [("a", 0), ("a", 1)]) == {
        ("a", 0): E.NONE, ("a", 1): E.TRANSACTION_ABORTABLE}
    assert coord.verify_partitions("t", pid, epoch + 1, [("a", 0)]) == {("a", 0): E.PRODUCER_FENCED}
    assert coord.verify_partitions("t", pid + 1, epoch, [("a", 0)]) == {("a", 0): E.INVALID_PRODUCER_ID_MAPPING}
    assert coord.verify_partitions("nope", pid, epoch, [("a", 0)]) == {("a", 0): E.INVALID_PRODUCER_ID_MAPPING}
    coord.end_txn("t", pid, epoch, commit=True)
    assert coord.verify_partitions("t", pid, epoch, [("a", 0)]) == {("a", 0): E.CONCURRENT_TRANSACTIONS}


def test_list_unknown_state_names_match_nothing(coord: TransactionCoordinator) -> None:
    coord.init_producer_id("a", 60000)
    assert coord.list(states=["Bogus"]) == []
    assert [t.transactional_id for t in coord.list(states=["Bogus", "Empty"])] == ["a"]


def test_list_duration_filter(coord: TransactionCoordinator, clock: VirtualClock) -> None:
    a = coord.init_producer_id("a", 60000)
    coord.add_partitions("a", a.producer_id, a.producer_epoch, [("x", 0)])
    b = coord.init_producer_id("b", 60000)
    clock.advance(1000)
    coord.add_partitions("b", b.producer_id, b.producer_epoch, [("x", 0)])
    clock.advance(10)
    assert [t.transactional_id for t in coord.list(duration_filter_ms=500)] == ["a"]
    # As in Kafka, an id that never started a transaction (start -1) passes any duration filter.
    coord.init_producer_id("c", 60000)
    assert {t.transactional_id for t in coord.list(duration_filter_ms=500)} == {"a", "c"}


def test_markers_written_keeps_the_job_if_the_journal_fails(clock: VirtualClock) -> None:
    failing = Journal()
    coord = TransactionCoordinator(clock, ProducerIdAllocator(None), failing)
    p = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])
    coord.end_txn("t", p.producer_id, p.producer_epoch, commit=False)
    (job,) = coord.take_marker_jobs()

    def broken(tid: str, value: dict[str, Any] | None) -> None:
        raise OSError("disk full")

    coord.journal = broken
    with pytest.raises(OSError):
        coord.markers_written(job)
    assert coord.take_marker_jobs() == [job] and coord.txns["t"].state == TxnState.PREPARE_ABORT
