"""Transactions version 2 (KIP-890 part 2) in the coordinator core, as Kafka 4.3's TransactionCoordinator and
TransactionMetadata run them: an epoch bump at every EndTxn v5, the next producer id when it would be
exhausted, aborts with nothing begun, retries of a lost answer, partitions added by the broker, the
coordinator's own aborts by the cluster's transaction.version, and the journal replayed."""

from __future__ import annotations

import pytest

from kemu.clock import VirtualClock
from kemu.txn.coordinator import EndTxnResult, TransactionCoordinator, TxnConfig
from kemu.txn.producer_ids import ProducerIdAllocator
from kemu.txn.state import MAX_EPOCH, TV_0, TV_1, TV_2, TxnState
from kemu.wire.errors import ErrorCode
from tests.txn.support import Journal, complete

E = ErrorCode


def coordinator(clock: VirtualClock, journal: Journal, transaction_version: int = TV_2) -> TransactionCoordinator:
    return TransactionCoordinator(clock, ProducerIdAllocator(None), journal,
                                  TxnConfig(transaction_version=transaction_version))


@pytest.fixture
def coord(clock: VirtualClock, journal: Journal) -> TransactionCoordinator:
    return coordinator(clock, journal)


def end(coord: TransactionCoordinator, pid: int, epoch: int, commit: bool, tid: str = "t") -> EndTxnResult:
    return coord.end_transaction(tid, pid, epoch, commit, client_version=TV_2)


def test_every_end_txn_bumps_the_epoch_and_answers_it(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    pid, epoch = p.producer_id, p.producer_epoch
    for round_ in range(3):
        assert coord.add_partitions("t", pid, epoch, [("a", 0)], client_version=TV_2) == E.NONE
        assert coord.txns["t"].client_version == TV_2
        result = end(coord, pid, epoch, commit=round_ != 1)
        assert result == EndTxnResult(E.NONE, pid, epoch + 1)
        (job,) = coord.take_marker_jobs()
        # The markers carry the bumped epoch and the transaction's version.
        assert (job.producer_epoch, job.commit, job.transaction_version) == (epoch + 1, round_ != 1, TV_2)
        txn = coord.txns["t"]
        assert (txn.producer_epoch, txn.last_producer_epoch) == (epoch + 1, epoch)
        complete(coord)
        epoch += 1
    assert coord.txns["t"].state == TxnState.COMPLETE_COMMIT


def test_a_retry_of_a_lost_answer_is_answered_as_it_was(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    pid, epoch = p.producer_id, p.producer_epoch
    coord.add_partitions("t", pid, epoch, [("a", 0)], client_version=TV_2)
    assert end(coord, pid, epoch, commit=True) == EndTxnResult(E.NONE, pid, epoch + 1)
    # Completing: the same request again (the epoch before the bump) waits; the other outcome is refused.
    assert end(coord, pid, epoch, commit=True).error == E.CONCURRENT_TRANSACTIONS
    assert end(coord, pid, epoch, commit=False).error == E.INVALID_TXN_STATE
    assert end(coord, pid, epoch + 1, commit=True).error == E.PRODUCER_FENCED
    complete(coord)
    # Complete: the retry gets the answer it lost; the other outcome with the old epoch is refused.
    assert end(coord, pid, epoch, commit=True) == EndTxnResult(E.NONE, pid, epoch + 1)
    assert end(coord, pid, epoch, commit=False) == EndTxnResult(E.INVALID_TXN_STATE)
    assert end(coord, pid, epoch - 1, commit=True) == EndTxnResult(E.PRODUCER_FENCED)


BUMP, AS_IT_IS = "bump", "as it is"
# Kafka's table (TransactionCoordinator.endTransaction) for the states a TV2 EndTxn may find between
# transactions: (state, commit, retry with the epoch before the last bump) -> the answer.
TV2_TABLE = {
    (TxnState.EMPTY, False, True): E.PRODUCER_FENCED, (TxnState.EMPTY, False, False): BUMP,
    (TxnState.EMPTY, True, True): E.PRODUCER_FENCED, (TxnState.EMPTY, True, False): E.INVALID_TXN_STATE,
    (TxnState.COMPLETE_ABORT, False, True): AS_IT_IS, (TxnState.COMPLETE_ABORT, False, False): BUMP,
    (TxnState.COMPLETE_ABORT, True, True): E.INVALID_TXN_STATE,
    (TxnState.COMPLETE_ABORT, True, False): E.INVALID_TXN_STATE,
    (TxnState.COMPLETE_COMMIT, False, True): E.INVALID_TXN_STATE, (TxnState.COMPLETE_COMMIT, False, False): BUMP,
    (TxnState.COMPLETE_COMMIT, True, True): AS_IT_IS, (TxnState.COMPLETE_COMMIT, True, False): E.INVALID_TXN_STATE,
}


def in_state(coord: TransactionCoordinator, state: TxnState) -> tuple[int, int]:
    """The id "t" brought to `state` the TV2 way, its epoch bumped at least once; its producer id and epoch."""
    pid = coord.init_producer_id("t", 60000).producer_id
    epoch = coord.init_producer_id("t", 60000).producer_epoch
    if state != TxnState.EMPTY:
        commit = state == TxnState.COMPLETE_COMMIT
        if commit:
            coord.add_partitions("t", pid, epoch, [("a", 0)], client_version=TV_2)
        epoch = end(coord, pid, epoch, commit).producer_epoch
        complete(coord)
    assert coord.txns["t"].state == state
    return pid, epoch


@pytest.mark.parametrize(("state", "commit", "retry"), list(TV2_TABLE), ids=lambda value: str(value))
def test_the_table_of_empty_and_complete_states(coord: TransactionCoordinator, state: TxnState, commit: bool,
                                                retry: bool) -> None:
    pid, epoch = in_state(coord, state)
    answer = end(coord, pid, epoch - 1 if retry else epoch, commit)
    expected = TV2_TABLE[(state, commit, retry)]
    if expected == BUMP:
        # Aborted afresh, with no partitions to mark and a start of now.
        assert answer == EndTxnResult(E.NONE, pid, epoch + 1)
        (job,) = coord.take_marker_jobs()
        assert job.partitions == frozenset() and not job.commit
        assert coord.txns["t"].start_ms == coord.clock.now_ms()
    elif expected == AS_IT_IS:
        assert answer == EndTxnResult(E.NONE, pid, epoch)
        assert coord.take_marker_jobs() == []
    else:
        assert answer == EndTxnResult(expected)


def test_an_older_epoch_or_another_producer_is_refused(coord: TransactionCoordinator) -> None:
    pid, epoch = in_state(coord, TxnState.COMPLETE_COMMIT)
    assert end(coord, pid, epoch - 2, commit=False) == EndTxnResult(E.PRODUCER_FENCED)
    assert end(coord, pid + 1, epoch, commit=False) == EndTxnResult(E.INVALID_PRODUCER_ID_MAPPING)
    assert end(coord, pid, epoch, commit=False, tid="unknown") == EndTxnResult(E.INVALID_PRODUCER_ID_MAPPING)


def test_empty_retry_is_fenced(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    coord.init_producer_id("t", 60000)  # epoch 1, Empty
    assert end(coord, p.producer_id, 0, commit=False) == EndTxnResult(E.PRODUCER_FENCED)
    assert end(coord, p.producer_id, 0, commit=True) == EndTxnResult(E.PRODUCER_FENCED)


def test_an_exhausted_epoch_moves_to_the_next_producer_id(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    pid = p.producer_id
    coord.txns["t"].producer_epoch = MAX_EPOCH - 1
    coord.add_partitions("t", pid, MAX_EPOCH - 1, [("a", 0)], client_version=TV_2)
    result = end(coord, pid, MAX_EPOCH - 1, commit=True)
    assert result.error == E.NONE and result.producer_id != pid and result.producer_epoch == 0
    (job,) = coord.take_marker_jobs()
    # The markers go out under the old id at Short.MaxValue; completing takes the next id at epoch 0.
    assert (job.producer_id, job.producer_epoch) == (pid, MAX_EPOCH)
    assert coord.txns["t"].next_producer_id == result.producer_id
    complete(coord)
    txn = coord.txns["t"]
    assert (txn.producer_id, txn.producer_epoch, txn.last_producer_id, txn.next_producer_id) == (
        result.producer_id, 0, pid, -1)
    # A retry of that EndTxn (the old id, its last epoch) is recognised and answered with the new id.
    assert end(coord, pid, MAX_EPOCH - 1, commit=True) == EndTxnResult(E.NONE, result.producer_id, 0)
    # The new id goes on.
    assert coord.add_partitions("t", result.producer_id, 0, [("a", 0)], client_version=TV_2) == E.NONE


def test_a_tv1_client_ends_without_a_bump(coord: TransactionCoordinator) -> None:
    p = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])
    assert coord.txns["t"].client_version == TV_0
    assert coord.end_transaction("t", p.producer_id, p.producer_epoch, True) == EndTxnResult(E.NONE)
    (job,) = coord.take_marker_jobs()
    assert (job.producer_epoch, job.transaction_version) == (p.producer_epoch, TV_0)


def test_a_transaction_begun_by_the_broker_for_a_tv2_client_ends_as_tv1_when_asked(
        coord: TransactionCoordinator) -> None:
    """The version is the request's: a TV1 EndTxn finishes a transaction TV2 adds began, unbumped."""
    p = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)], client_version=TV_2)
    assert coord.end_txn("t", p.producer_id, p.producer_epoch, commit=True) == E.NONE
    (job,) = coord.take_marker_jobs()
    assert (job.producer_epoch, job.transaction_version) == (p.producer_epoch, TV_0)


def test_timeout_abort_under_tv2_lets_the_producer_retry_its_abort(coord: TransactionCoordinator,
                                                                   clock: VirtualClock) -> None:
    """The coordinator's own abort bumps the epoch: the stalled producer's produce and commit are refused,
    and its abort is taken for a retry of that abort, answered with the epoch it goes on with."""
    p = coord.init_producer_id("t", 1000)
    pid, epoch = p.producer_id, p.producer_epoch
    coord.add_partitions("t", pid, epoch, [("a", 0)], client_version=TV_2)
    clock.advance(1001)
    assert coord.tick() == ["t"]
    (job,) = coord.take_marker_jobs()
    assert (job.producer_epoch, job.commit, job.transaction_version) == (epoch + 1, False, TV_2)
    complete(coord)
    assert coord.add_partitions("t", pid, epoch, [("a", 0)], client_version=TV_2) == E.PRODUCER_FENCED
    assert end(coord, pid, epoch, commit=True) == EndTxnResult(E.INVALID_TXN_STATE)
    assert end(coord, pid, epoch, commit=False) == EndTxnResult(E.NONE, pid, epoch + 1)
    assert coord.add_partitions("t", pid, epoch + 1, [("a", 0)], client_version=TV_2) == E.NONE


def test_timeout_abort_under_tv1_fences_without_remembering(clock: VirtualClock, journal: Journal) -> None:
    coord = coordinator(clock, journal, transaction_version=TV_1)
    p = coord.init_producer_id("t", 1000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])
    clock.advance(1001)
    coord.tick()
    (job,) = coord.take_marker_jobs()
    assert (job.producer_epoch, job.transaction_version) == (p.producer_epoch + 1, TV_0)
    complete(coord)
    txn = coord.txns["t"]
    assert (txn.producer_epoch, txn.last_producer_epoch) == (p.producer_epoch + 1, -1)
    # The fenced producer's KIP-360 re-init is no retry of anything it knows: fenced.
    again = coord.init_producer_id("t", 1000, p.producer_id, p.producer_epoch)
    assert again.error == E.PRODUCER_FENCED


def test_fencing_init_under_tv1_bumps_once_per_init(clock: VirtualClock, journal: Journal) -> None:
    coord = coordinator(clock, journal, transaction_version=TV_0)
    old = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", old.producer_id, old.producer_epoch, [("a", 0)])
    assert coord.init_producer_id("t", 60000).error == E.CONCURRENT_TRANSACTIONS
    complete(coord)
    new = coord.init_producer_id("t", 60000)
    assert (new.error, new.producer_epoch) == (E.NONE, old.producer_epoch + 2)


def test_the_journal_carries_the_client_version_and_replays_it(coord: TransactionCoordinator,
                                                              journal: Journal, clock: VirtualClock) -> None:
    p = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)], client_version=TV_2)
    end(coord, p.producer_id, p.producer_epoch, commit=True)
    _, prepared = journal[-1]
    assert prepared is not None
    assert (prepared["transaction_status"], prepared["client_transaction_version"],
            prepared["producer_epoch"], prepared["previous_producer_id"]) == (
        int(TxnState.PREPARE_COMMIT), TV_2, p.producer_epoch + 1, p.producer_id)
    restarted = coordinator(clock, Journal())
    for tid, value in journal:
        restarted.replay(tid, value)
    restarted.finish_loading()
    (job,) = restarted.take_marker_jobs()
    assert (job.producer_epoch, job.transaction_version, job.commit) == (p.producer_epoch + 1, TV_2, True)
    complete(restarted)
    # Completed as before the restart; the retry of the lost answer is still recognised (the last epoch is
    # not journaled, the bump is told by the epochs alone).
    assert end(restarted, p.producer_id, p.producer_epoch, commit=True) == EndTxnResult(
        E.NONE, p.producer_id, p.producer_epoch + 1)


def test_replayed_rotation_in_progress_completes_under_the_next_id(coord: TransactionCoordinator,
                                                                  journal: Journal, clock: VirtualClock) -> None:
    p = coord.init_producer_id("t", 60000)
    coord.txns["t"].producer_epoch = MAX_EPOCH - 1
    coord.add_partitions("t", p.producer_id, MAX_EPOCH - 1, [("a", 0)], client_version=TV_2)
    result = end(coord, p.producer_id, MAX_EPOCH - 1, commit=False)
    restarted = coordinator(clock, Journal())
    for tid, value in journal:
        restarted.replay(tid, value)
    restarted.finish_loading()
    complete(restarted)
    txn = restarted.txns["t"]
    assert (txn.producer_id, txn.producer_epoch, txn.state) == (result.producer_id, 0, TxnState.COMPLETE_ABORT)
