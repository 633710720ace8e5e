from __future__ import annotations

from pathlib import Path

import pytest

from kemu.clock import VirtualClock
from kemu.log import AppendOrigin, LogConfig, PartitionLog
from kemu.log.producer_state import ProducerStateError
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch, build_end_txn_marker, iter_batches


def batch(pid: int, epoch: int, seq: int, n: int = 1, txn: bool = False, ts: int = 1_000) -> bytes:
    return build_batch([NewRecord(value=b"v%d" % i, timestamp=ts) for i in range(n)], producer_id=pid,
                       producer_epoch=epoch, base_sequence=seq, transactional=txn)


def marker(pid: int, epoch: int, commit: bool, coordinator_epoch: int = 0) -> bytes:
    return build_end_txn_marker(commit=commit, producer_id=pid, producer_epoch=epoch,
                                coordinator_epoch=coordinator_epoch, timestamp=2_000)


def open_partition(path: Path, clock: VirtualClock, **config: int) -> PartitionLog:
    return PartitionLog.open(path, "t", 0, LogConfig(**config), clock)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(10_000)


def test_retried_batch_gets_its_original_offset_and_is_not_written_twice(tmp_path: Path, clock: VirtualClock) -> None:
    p = open_partition(tmp_path / "t-0", clock)
    first = p.append(batch(7, 0, 0, n=3))
    p.append(batch(7, 0, 3, n=1))
    again = p.append(batch(7, 0, 0, n=3))
    assert (again.base_offset, again.last_offset) == (first.base_offset, first.last_offset)
    assert p.log_end_offset == 4
    with pytest.raises(ProducerStateError) as gap:
        p.append(batch(7, 0, 9))
    assert gap.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert p.log_end_offset == 4


def test_open_transaction_bounds_read_committed_and_abort_is_indexed(tmp_path: Path, clock: VirtualClock) -> None:
    p = open_partition(tmp_path / "t-0", clock)
    p.append(batch(1, 0, 0, n=2))                 # offsets 0-1, plain idempotent
    p.append(batch(7, 0, 0, n=2, txn=True))       # offsets 2-3, open transaction
    p.append(batch(1, 0, 2, n=1))                 # offset 4
    assert p.last_stable_offset == 2
    committed = p.read(0, 1 << 20, upper_bound=p.last_stable_offset)
    assert [b.header.base_offset for b in iter_batches(committed.records)] == [0]
    p.append(marker(7, 0, commit=False), origin=AppendOrigin.COORDINATOR)  # offset 5
    assert p.last_stable_offset == 6
    (aborted,) = p.aborted_transactions(0, 6)
    assert (aborted.producer_id, aborted.first_offset, aborted.last_offset) == (7, 2, 5)
    assert p.aborted_transactions(6, 10) == []
    assert (tmp_path / "t-0" / f"{0:020d}.txnindex").stat().st_size == 34


def test_zombie_marker_and_stale_epoch_are_refused(tmp_path: Path, clock: VirtualClock) -> None:
    p = open_partition(tmp_path / "t-0", clock)
    p.append(batch(7, 3, 0, txn=True))
    p.append(marker(7, 3, commit=True, coordinator_epoch=2), origin=AppendOrigin.COORDINATOR)
    with pytest.raises(ProducerStateError) as fenced:
        p.append(marker(7, 3, commit=True, coordinator_epoch=1), origin=AppendOrigin.COORDINATOR)
    assert fenced.value.code == ErrorCode.TRANSACTION_COORDINATOR_FENCED
    with pytest.raises(ProducerStateError) as stale:
        p.append(batch(7, 2, 1))
    assert stale.value.code == ErrorCode.INVALID_PRODUCER_EPOCH


def test_state_is_rebuilt_after_a_crash_from_snapshot_and_replay(tmp_path: Path, clock: VirtualClock) -> None:
    p = open_partition(tmp_path / "t-0", clock, segment_bytes=200)
    p.append(batch(7, 0, 0, n=2, txn=True))
    p.append(marker(7, 0, commit=False), origin=AppendOrigin.COORDINATOR)
    for seq in range(0, 8):
        p.append(batch(9, 1, seq))  # rolls segments (and takes snapshots) along the way
    p.append(batch(5, 0, 0, txn=True))
    assert list((tmp_path / "t-0").glob("*.snapshot"))
    lso, end = p.last_stable_offset, p.log_end_offset
    # No close: as after kill -9.
    again = open_partition(tmp_path / "t-0", clock, segment_bytes=200)
    assert again.log_end_offset == end
    assert again.last_stable_offset == lso
    assert [(a.producer_id, a.first_offset) for a in again.aborted_transactions(0, end)] == [(7, 0)]
    dup = again.append(batch(9, 1, 7))
    assert dup.record_count == 0  # recognised as the duplicate of the last batch
    with pytest.raises(ProducerStateError):
        again.append(batch(9, 1, 20))


def test_non_transactional_write_inside_a_transaction_is_invalid_txn_state(tmp_path: Path, clock: VirtualClock) -> None:
    p = open_partition(tmp_path / "t-0", clock)
    p.append(batch(7, 0, 0, txn=True))
    with pytest.raises(ProducerStateError) as err:
        p.append(batch(7, 0, 1, txn=False))
    assert err.value.code == ErrorCode.INVALID_TXN_STATE


def test_aborted_transactions_come_in_the_order_they_were_aborted(tmp_path: Path, clock: VirtualClock) -> None:
    """Kafka's transaction index is read in append order: a transaction that began first but was aborted
    last comes last (read_committed consumers do not mind; the Fetch response shows it)."""
    p = open_partition(tmp_path / "t-0", clock)
    p.append(batch(7, 0, 0, txn=True))                                      # offset 0: 7 begins
    p.append(batch(8, 0, 0, txn=True))                                      # offset 1: 8 begins
    p.append(marker(8, 0, commit=False), origin=AppendOrigin.COORDINATOR)   # offset 2: 8 aborted
    p.append(marker(7, 0, commit=False), origin=AppendOrigin.COORDINATOR)   # offset 3: 7 aborted
    assert [(a.producer_id, a.first_offset) for a in p.aborted_transactions(0, 4)] == [(8, 1), (7, 0)]



def test_abort_marker_on_a_partition_never_written_is_not_indexed(tmp_path: Path, clock: VirtualClock) -> None:
    p = open_partition(tmp_path / "t-0", clock)
    p.append(marker(7, 1, commit=False), origin=AppendOrigin.COORDINATOR)
    assert p.aborted_transactions(0, 1) == [] and p.last_stable_offset == 1
