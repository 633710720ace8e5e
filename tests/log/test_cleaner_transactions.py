"""The cleaner and transactions: the last stable offset bounds it, aborted data goes, markers stay while
they are needed, and every producer with state keeps its last batch (emptied if need be)."""

from __future__ import annotations

from pathlib import Path

from kemu.clock import VirtualClock
from kemu.log.producer_state import ProducerStateError
from kemu.wire.records import DELETE_HORIZON_MASK

from .cleaner_support import COMPACT, CompactedPartition


def test_open_transaction_in_the_dirty_range_bounds_the_round(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    part.put("a", "1")
    part.put("a", "2")
    part.roll()
    opened = part.put_many([("a", "txn")], producer_id=9, transactional=True)
    part.put("a", "3")
    part.roll()
    part.put("a", "4")
    part.roll()
    [result] = part.clean()
    # The segment holding the open transaction and everything after it stay as written.
    assert result.end_offset == opened
    assert [o for o, _, _ in part.read_uncommitted()] == [1, 2, 3, 4]
    assert part.read_committed() == [(1, "a", "2")]
    part.end_txn(9, commit=False)
    part.roll()
    part.clean()
    assert part.read_committed() == [(4, "a", "4")]
    assert part.latest(part.read_uncommitted()) == {"a": "4"}


def test_aborted_and_committed_interleaved_with_plain_writes(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    part.put("plain", "p1")
    part.put_many([("x", "aborted-1"), ("y", "aborted-1")], producer_id=1, transactional=True)
    part.put_many([("x", "committed-2")], producer_id=2, transactional=True)
    part.put("plain", "p2")
    part.put_many([("z", "aborted-1")], producer_id=1, transactional=True)
    part.end_txn(2, commit=True)
    abort = part.end_txn(1, commit=False)
    part.put("y", "plain-y")
    part.roll()
    committed_before = part.read_committed()
    part.clean()
    committed_after = part.read_committed()
    assert part.latest(committed_after) == part.latest(committed_before) == {
        "plain": "p2", "x": "committed-2", "y": "plain-y"}
    # read_uncommitted readers lose the aborted values too: the cleaner dropped them.
    assert "aborted-1" not in {v for _, _, v in part.read_uncommitted()}
    # Both markers stay in this round: each transaction still had data when it was walked.
    markers = [b.header.base_offset for b in part.log.batches() if b.header.is_control]
    assert abort in markers and len(markers) == 2
    assert [a.producer_id for a in part.log.aborted_transactions(0, part.log.log_end_offset)] == [1]


def test_markers_go_after_their_data_and_delete_retention(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    part.put_many([("k", "aborted")], producer_id=1, transactional=True)
    part.end_txn(1, commit=False)
    part.put_many([("k", "committed")], producer_id=2, transactional=True)
    part.end_txn(2, commit=True)
    part.put("k", "plain")  # supersedes the committed value
    part.roll()
    part.clean()
    # While the producers have state their last data batches stay (emptied), and with them the markers.
    assert [(b.header.records_count, b.header.is_control) for b in part.log.batches()] == [
        (0, False), (1, True), (0, False), (1, True), (1, False)]
    clock.advance(1)
    assert sorted(part.log.expire_producers(clock.now_ms(), 1)) == [1, 2]

    def next_round() -> list[tuple[int, int, bool, bool]]:
        part.put("other", str(clock.now_ms()))
        part.roll()
        part.clean()
        return [(b.header.base_offset, b.header.records_count, b.header.is_control,
                 bool(b.header.attributes & DELETE_HORIZON_MASK)) for b in part.log.batches()
                if b.header.base_offset < 5]

    # Round 2 still walks the emptied batches, so each marker's transaction had data: both stay as they are.
    assert next_round() == [(1, 1, True, False), (3, 1, True, False), (4, 1, False, False)]
    # Round 3: their transactions are empty; the markers get a delete horizon.
    assert next_round() == [(1, 1, True, True), (3, 1, True, True), (4, 1, False, False)]
    horizon = clock.now_ms() + COMPACT.delete_retention_ms
    assert {b.header.base_timestamp for b in part.log.batches() if b.header.is_control} == {horizon}
    clock.advance(COMPACT.delete_retention_ms)
    # Past the horizon they go.
    assert next_round() == [(4, 1, False, False)]
    assert part.log.aborted_transactions(0, part.log.log_end_offset) == []
    assert part.read_committed() == part.read_uncommitted()


def test_producer_whose_only_batch_is_compacted_away_keeps_an_empty_batch(log_dir: Path,
                                                                       clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    first = part.put_many([("k", "a"), ("k", "b"), ("k", "c")], producer_id=7)
    part.put("k", "d")
    part.roll()
    part.clean()
    [kept, _] = part.log.batches()
    header = kept.header
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (first, 2, 0)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (7, 0, 0)
    assert header.base_timestamp == -1 and kept.is_valid()
    # The producer's sequence survives a restart that must rebuild producer state from the log alone.
    for snapshot in log_dir.glob("*.snapshot"):
        snapshot.unlink()
    part.reopen()
    retry = part.log.producers.check_batch(producer_id=7, epoch=0, first_seq=0, last_seq=2, transactional=False,
                                           from_client=True)
    assert retry is not None and retry.first_offset == first  # a retry is still a duplicate
    part.put_many([("k", "e")], producer_id=7)  # and the next sequence (3) is accepted


def test_the_marker_of_a_bumped_epoch_stays_so_the_old_epoch_stays_fenced(log_dir: Path,
                                                                           clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    part.put_many([("k", "zombie")], producer_id=3, transactional=True, epoch=0)
    part.end_txn(3, commit=False, epoch=1)  # the coordinator bumped the epoch when it aborted
    part.put("k", "v")
    part.roll()
    for _ in range(4):
        part.put("x", "1")
        part.roll()
        clock.advance(COMPACT.delete_retention_ms)
        part.clean()
    # The aborted data is gone; the epoch-1 marker is the producer's last record, so past its delete horizon
    # it is emptied but kept (Kafka's RETAIN_EMPTY), and the epoch it carries still fences epoch 0.
    assert "zombie" not in {v for _, _, v in part.read_uncommitted()}
    [marker] = [b.header for b in part.log.batches() if b.header.is_control]
    assert (marker.producer_id, marker.producer_epoch, marker.records_count) == (3, 1, 0)
    part.reopen()
    try:
        part.put_many([("k", "late")], producer_id=3, transactional=True, epoch=0)
    except ProducerStateError as exc:
        assert exc.code.name == "INVALID_PRODUCER_EPOCH"
    else:
        raise AssertionError("an old epoch was accepted after compaction")
