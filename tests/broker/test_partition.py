"""The one partition object: its log (with its transaction state) behind one surface, the last stable offset bounding
read_committed reads and ListOffsets, KIP-890's "would this batch open a transaction here", one leader epoch,
and its persisted fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from kemu.broker.partition import Partition
from kemu.clock import VirtualClock
from kemu.log import AppendOrigin, FetchIsolation, ListOffsetsTimestamp, LogConfig, PartitionLog
from kemu.wire.records import BatchHeader, NewRecord, build_batch, build_end_txn_marker, iter_batches


def batch(pid: int, epoch: int, seq: int, n: int = 1, txn: bool = False) -> bytes:
    return build_batch([NewRecord(value=b"v%d" % i, timestamp=1_000 + i) for i in range(n)], producer_id=pid,
                       producer_epoch=epoch, base_sequence=seq, transactional=txn)


def marker(pid: int, epoch: int, commit: bool) -> bytes:
    return build_end_txn_marker(commit=commit, producer_id=pid, producer_epoch=epoch, coordinator_epoch=0,
                                timestamp=2_000)


@pytest.fixture
def partition(tmp_path: Path) -> Partition:
    p = Partition(topic="t", index=0, replicas=[1], leader_epoch=3)
    p.attach(PartitionLog.open(tmp_path / "t-0", "t", 0, LogConfig(), VirtualClock(10_000)))
    return p


def offsets(records: bytes | memoryview) -> list[int]:
    return [b.header.base_offset for b in iter_batches(records)]


def test_read_committed_stops_at_the_last_stable_offset(partition: Partition) -> None:
    partition.append(batch(1, 0, 0, n=2))                # 0-1
    partition.append(batch(7, 0, 0, n=2, txn=True))      # 2-3: open
    partition.append(batch(1, 0, 2))                     # 4
    assert partition.last_stable_offset == 2 and partition.log.high_watermark == 5
    committed = partition.read(0, 1 << 20, isolation=FetchIsolation.TXN_COMMITTED)
    assert offsets(committed.records) == [0] and committed.last_stable_offset == 2
    uncommitted = partition.read(0, 1 << 20)
    assert offsets(uncommitted.records) == [0, 2, 4] and uncommitted.last_stable_offset == 2
    latest = partition.offset_for_timestamp(ListOffsetsTimestamp.LATEST, FetchIsolation.TXN_COMMITTED)
    assert latest is not None and (latest.offset, latest.leader_epoch) == (2, 3)
    partition.append(marker(7, 0, commit=True), origin=AppendOrigin.COORDINATOR)  # 5
    assert partition.last_stable_offset == partition.log.high_watermark == 6
    assert offsets(partition.read(0, 1 << 20, isolation=FetchIsolation.TXN_COMMITTED).records) == [0, 2, 4, 5]


def test_verification_is_needed_only_by_the_batch_that_opens_a_transaction(partition: Partition) -> None:
    def needs(data: bytes) -> bool:
        return partition.needs_verification(BatchHeader.parse(data))

    assert not needs(batch(1, 0, 0))                 # idempotent, not transactional
    opening = batch(7, 0, 0, txn=True)
    assert needs(opening)
    partition.append(opening)
    assert not needs(batch(7, 0, 1, txn=True))       # inside it
    assert not needs(opening)                        # a retried duplicate, inside it
    assert needs(batch(7, 1, 0, txn=True))           # another epoch: not this transaction
    partition.append(marker(7, 0, commit=True), origin=AppendOrigin.COORDINATOR)
    assert needs(batch(7, 0, 2, txn=True))           # the next transaction


def test_one_leader_epoch_stamped_into_appends(partition: Partition) -> None:
    assert not hasattr(partition.log, "leader_epoch")  # the partition's only; the log keeps its history
    assert partition.log.latest_epoch == 3
    partition.leader_epoch = 4
    result = partition.append(batch(1, 0, 0))
    assert result.batch.partition_leader_epoch == 4 and partition.log.latest_epoch == 4
    partition.elect(1)
    assert partition.leader_epoch == 5 and partition.end_offset_for_epoch(4) == (4, 1)
    assert partition.offset_for_timestamp(ListOffsetsTimestamp.LATEST, None) == (-1, 1, 5)
    partition.detach()
    assert partition.leader_epoch == 5 and not partition.is_open


def test_saved_fields_load_back(partition: Partition) -> None:
    partition.leader_epoch = 9
    loaded = Partition.from_saved("t", partition.saved(), node_ids=[5])
    assert (loaded.index, loaded.leader_epoch, loaded.replicas, loaded.isr, loaded.leader_id) == (0, 9, [5], [5], 5)


def test_saved_replicas_and_leader_load_back_when_their_nodes_exist() -> None:
    saved = Partition(topic="t", index=2, replicas=[2, 3, 1], leader_id=3, leader_epoch=4).saved()
    loaded = Partition.from_saved("t", saved, node_ids=[1, 2, 3])
    assert (loaded.replicas, loaded.isr, loaded.leader_id, loaded.leader_epoch) == ([2, 3, 1], [2, 3, 1], 3, 4)
    shrunk = Partition.from_saved("t", saved, node_ids=[1])
    assert (shrunk.replicas, shrunk.leader_id) == ([1], 1)
