"""Idempotent and transactional producer state of one partition (Kafka's ProducerStateManager).

Per producer id the partition remembers the epoch, the last five batches' sequence ranges (so a retried
batch is acknowledged with its original offsets), the coordinator epoch of the last marker, and the first
offset of its open transaction. The open transactions bound the last stable offset; completed aborted ones
feed the aborted-transaction index.

The partition log (kemu.log.partition_log) calls `check_batch` before it assigns offsets and `record_batch` /
`record_marker` after; nothing here touches files except the snapshot helpers at the bottom, which read and
write Kafka's `.snapshot` files beside the segments.
"""

from __future__ import annotations

import logging
import os
import struct
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from kemu.wire.checksum import crc32c
from kemu.wire.errors import ErrorCode

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
INT32_MAX = 0x7FFFFFFF
BATCHES_KEPT = 5  # Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN
TRANSACTIONS_V2 = 2  # the transaction.version from which markers carry a bumped epoch (KIP-890)


log = logging.getLogger(__name__)

SNAPSHOTS_KEPT = 2


class ProducerStateError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class BatchRange:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    max_timestamp: int


@dataclass(slots=True)
class ProducerEntry:
    producer_id: int
    epoch: int = NO_PRODUCER_EPOCH
    batches: deque[BatchRange] = field(default_factory=lambda: deque(maxlen=BATCHES_KEPT))
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    txn_first_offset: int | None = None
    # Kept after the batches are gone (snapshots only carry the last batch's end).
    last_seq: int = NO_SEQUENCE
    last_offset: int = -1

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchRange | None:
        if epoch != self.epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == first_seq and batch.last_seq == last_seq:
                return batch
        return None


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    aborted: bool
    # The partition's LSO once this transaction is done, as stored in the aborted-transaction index.
    last_stable_offset: int


class LastRecord(NamedTuple):
    """An active producer's last record (Kafka's LastRecord), which compaction keeps: the last offset of its
    last data batch, or None when its latest epoch wrote only markers, and that epoch."""

    last_data_offset: int | None
    producer_epoch: int


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


def sequence_end(first_seq: int, count: int) -> int:
    """The last sequence of a batch: sequences wrap at Int32.MAX_VALUE back to 0."""
    end = first_seq + count - 1
    return end - INT32_MAX - 1 if end > INT32_MAX else end


class ProducerStateManager:
    def __init__(self, partition: str) -> None:
        self.partition = partition
        self.producers: dict[int, ProducerEntry] = {}
        # producer id -> first offset of its open transaction, in offset order for the LSO.
        self.ongoing: dict[int, int] = {}

    # ---- before offsets are assigned -------------------------------------------------------------
    def check_batch(
        self, *, producer_id: int, epoch: int, first_seq: int, last_seq: int, transactional: bool,
        from_client: bool = True, transaction_version: int = 0,
    ) -> BatchRange | None:
        """Validate a data batch. Returns the cached range if it is a retried duplicate, else None.

        Raises ProducerStateError with Kafka's error for a stale epoch, a sequence gap, or a
        non-transactional write while the producer has a transaction open. `transaction_version` 2: the
        batch's partition was just added to its transaction by a TV2 Produce (Kafka's verification entry
        that supports the epoch bump), so a producer this partition knows no batches of must start at
        sequence 0.
        """
        entry = self.producers.get(producer_id)
        if (transaction_version >= 2 and from_client and first_seq != 0
                and (entry is None or not entry.batches)):
            raise ProducerStateError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Invalid sequence number for producer {producer_id} at offset in partition {self.partition}: "
                f"{first_seq} (incoming seq. number). Expected sequence 0 for transactions v2 idempotent "
                f"producer with no existing state.")
        if entry is None:
            return None
        if from_client:
            duplicate = entry.find_duplicate(epoch, first_seq, last_seq)
            if duplicate is not None:
                return duplicate
        self._check_epoch(entry, epoch)
        if from_client:
            self._check_sequence(entry, epoch, first_seq)
        if entry.txn_first_offset is not None and not transactional:
            raise ProducerStateError(
                ErrorCode.INVALID_TXN_STATE,
                f"Expected transactional write from producer {producer_id} at offset in partition "
                f"{self.partition}")
        return None

    def _check_epoch(self, entry: ProducerEntry, epoch: int) -> None:
        if epoch < entry.epoch:
            raise ProducerStateError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {entry.producer_id} at offset in {self.partition} is {epoch}, which is "
                f"smaller than the last seen epoch {entry.epoch}")

    def _check_sequence(self, entry: ProducerEntry, epoch: int, first_seq: int) -> None:
        if epoch != entry.epoch:
            if first_seq != 0 and entry.epoch != NO_PRODUCER_EPOCH:
                raise ProducerStateError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"Invalid sequence number for new epoch of producer {entry.producer_id} in partition "
                    f"{self.partition}: {epoch} (request epoch), {first_seq} (seq. number), "
                    f"{entry.epoch} (current producer epoch)")
            return
        # A producer whose batches were all removed (retention, DeleteRecords) keeps no epoch: any
        # sequence is accepted then, as KIP-360 lets the client resume.
        if entry.epoch == NO_PRODUCER_EPOCH:
            return
        if not in_sequence(entry.last_seq, first_seq):
            raise ProducerStateError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Out of order sequence number for producer {entry.producer_id} at offset in partition "
                f"{self.partition}: {first_seq} (incoming seq. number), {entry.last_seq} (current end "
                f"sequence number)")

    def check_marker(self, *, producer_id: int, epoch: int, coordinator_epoch: int,
                     transaction_version: int = 0) -> None:
        """A COMMIT/ABORT marker's epoch against the producer's, by its transaction's version: a TV2
        coordinator bumps the epoch before it writes the markers, so a TV2 marker must be above the
        producer's epoch here — one at it is a retry of a marker already written (KAFKA-19999: allowed while
        no transaction is open, or at Short.MaxValue), one below is late. A TV0/TV1 marker may carry the
        producer's own epoch."""
        entry = self.producers.get(producer_id)
        if entry is None:
            return
        if transaction_version >= 2 and epoch <= entry.epoch and not (
                epoch == entry.epoch and (entry.txn_first_offset is None or epoch == 0x7FFF)):
            raise ProducerStateError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {producer_id} at offset in {self.partition} is {epoch}, which is <= the "
                f"last seen epoch {entry.epoch} (TV{transaction_version})")
        self._check_epoch(entry, epoch)
        if coordinator_epoch < entry.coordinator_epoch:
            raise ProducerStateError(
                ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                f"Invalid coordinator epoch for producer {producer_id} at offset in partition "
                f"{self.partition}: {coordinator_epoch} (zombie), {entry.coordinator_epoch} (current)")

    # ---- after offsets are assigned --------------------------------------------------------------
    def record_batch(
        self, *, producer_id: int, epoch: int, first_seq: int, last_seq: int, first_offset: int,
        last_offset: int, max_timestamp: int, transactional: bool,
    ) -> None:
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerEntry(producer_id)
        if epoch != entry.epoch:
            entry.batches.clear()
            entry.epoch = epoch
        if first_seq != NO_SEQUENCE:
            entry.batches.append(BatchRange(first_seq, last_seq, first_offset, last_offset, max_timestamp))
            entry.last_seq = last_seq
        entry.last_offset = last_offset
        entry.last_timestamp = max_timestamp
        if transactional and entry.txn_first_offset is None:
            entry.txn_first_offset = first_offset
            self.ongoing[producer_id] = first_offset

    def record_marker(
        self, *, producer_id: int, epoch: int, coordinator_epoch: int, offset: int, timestamp: int,
        commit: bool,
    ) -> CompletedTxn | None:
        """The transaction the marker completes here, or None when the producer had none open on this
        partition (a partition added but never written to): as Kafka's ProducerAppendInfo, such a marker
        moves no stable offset and goes in no aborted-transaction index."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerEntry(producer_id)
        first = entry.txn_first_offset
        if epoch != entry.epoch:
            # A new epoch (a TV2 marker's, or a fencing abort's) starts without batches: the producer's next
            # batch at it begins at sequence 0.
            entry.batches.clear()
            entry.last_seq = NO_SEQUENCE
        entry.epoch = epoch
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp = timestamp
        entry.txn_first_offset = None
        self.ongoing.pop(producer_id, None)
        if first is None:
            return None
        return CompletedTxn(producer_id, first, offset, not commit, self.first_unstable_offset(offset + 1))

    # ---- queries ---------------------------------------------------------------------------------
    def has_ongoing_txn(self, producer_id: int, epoch: int) -> bool:
        """Whether this producer, at this epoch, has a transaction open on the partition (Kafka's
        hasOngoingTransaction, which decides whether a transactional batch needs verification)."""
        entry = self.producers.get(producer_id)
        return entry is not None and entry.epoch == epoch and entry.txn_first_offset is not None

    def first_unstable_offset(self, otherwise: int) -> int:
        """First offset of the earliest open transaction, else `otherwise` (the high watermark)."""
        return min(self.ongoing.values(), default=otherwise)

    def active_producers(self) -> list[ProducerEntry]:
        return list(self.producers.values())

    def last_records(self) -> dict[int, LastRecord]:
        """Per producer with state, the batch compaction must keep: its last data batch, or (when its latest
        epoch wrote only markers) a marker of that epoch — Kafka's lastRecordsOfActiveProducers."""
        return {entry.producer_id: LastRecord(entry.batches[-1].last_offset if entry.batches else None,
                                              entry.epoch)
                for entry in self.producers.values()}

    # ---- maintenance -----------------------------------------------------------------------------
    def expire(self, now_ms: int, expiration_ms: int) -> list[int]:
        """Drop producers idle for `producer.id.expiration.ms` that have no open transaction."""
        gone = [pid for pid, e in self.producers.items()
                if e.txn_first_offset is None and now_ms - e.last_timestamp >= expiration_ms]
        for pid in gone:
            del self.producers[pid]
        return gone

    def truncate_head(self, log_start_offset: int) -> None:
        """After segments are deleted, producers whose last write is gone are forgotten (Kafka does the same)."""
        for pid in [pid for pid, e in self.producers.items()
                    if e.last_offset < log_start_offset and e.txn_first_offset is None]:
            del self.producers[pid]

    def clear(self) -> None:
        self.producers.clear()
        self.ongoing.clear()


# ---- snapshots: Kafka's `<20-digit offset>.snapshot` files -------------------------------------------
# Layout: version int16, crc uint32 (CRC-32C of everything after it), then an int32 count of entries:
# producer_id int64, epoch int16, last_sequence int32, last_offset int64, offset_delta int32,
# timestamp int64, coordinator_epoch int32, current_txn_first_offset int64.
_SNAPSHOT_VERSION = 1
_HEAD = struct.Struct(">hI")
_ENTRY = struct.Struct(">qhiqiqiq")


def snapshot_path(directory: Path, offset: int) -> Path:
    return directory / f"{offset:020d}.snapshot"


def encode_snapshot(manager: ProducerStateManager) -> bytes:
    body = bytearray(struct.pack(">i", len(manager.producers)))
    for entry in manager.producers.values():
        last = entry.batches[-1] if entry.batches else None
        offset_delta = (last.last_offset - last.first_offset) if last else 0
        last_seq = entry.last_seq
        body += _ENTRY.pack(entry.producer_id, entry.epoch, last_seq, entry.last_offset, offset_delta,
                            entry.last_timestamp, entry.coordinator_epoch,
                            -1 if entry.txn_first_offset is None else entry.txn_first_offset)
    return _HEAD.pack(_SNAPSHOT_VERSION, crc32c(bytes(body))) + bytes(body)


def decode_snapshot(data: bytes, partition: str) -> ProducerStateManager:
    if len(data) < _HEAD.size + 4:
        raise ValueError("producer snapshot is truncated")
    version, crc = _HEAD.unpack_from(data)
    if version != _SNAPSHOT_VERSION:
        raise ValueError(f"unknown producer snapshot version {version}")
    body = data[_HEAD.size:]
    if crc32c(body) != crc:
        raise ValueError("producer snapshot CRC mismatch")
    (count,) = struct.unpack_from(">i", body)
    if len(body) != 4 + count * _ENTRY.size:
        raise ValueError("producer snapshot has the wrong length")
    manager = ProducerStateManager(partition)
    for i in range(count):
        pid, epoch, last_seq, last_offset, delta, ts, coord_epoch, txn_first = _ENTRY.unpack_from(
            body, 4 + i * _ENTRY.size)
        entry = ProducerEntry(pid, epoch, coordinator_epoch=coord_epoch, last_timestamp=ts,
                              last_seq=last_seq, last_offset=last_offset)
        if last_seq != NO_SEQUENCE:
            first_seq = last_seq - delta if last_seq - delta >= 0 else last_seq - delta + INT32_MAX + 1
            entry.batches.append(BatchRange(first_seq, last_seq, last_offset - delta, last_offset, ts))
        if txn_first >= 0:
            entry.txn_first_offset = txn_first
            manager.ongoing[pid] = txn_first
        manager.producers[pid] = entry
    return manager


def snapshot_offsets(directory: Path) -> list[int]:
    """The offsets of the snapshots in `directory`, oldest first."""
    found = []
    for path in directory.glob("*.snapshot"):
        try:
            found.append(int(path.stem))
        except ValueError:
            continue
    return sorted(found)


def take_snapshot(directory: Path, manager: ProducerStateManager, offset: int) -> None:
    """Write the state as of `offset` (the log end), keeping the newest SNAPSHOTS_KEPT."""
    if not directory.exists():
        return
    path = snapshot_path(directory, offset)
    tmp = path.with_suffix(".snapshot.tmp")
    tmp.write_bytes(encode_snapshot(manager))
    os.replace(tmp, path)
    for old in snapshot_offsets(directory)[:-SNAPSHOTS_KEPT]:
        snapshot_path(directory, old).unlink(missing_ok=True)


def delete_snapshots_below(directory: Path, offset: int) -> None:
    """Segments below `offset` are gone: so are their snapshots, the newest one excepted."""
    for snap in snapshot_offsets(directory)[:-1]:
        if snap < offset:
            snapshot_path(directory, snap).unlink(missing_ok=True)


def load_snapshot(directory: Path, end: int, partition: str) -> tuple[ProducerStateManager, int] | None:
    """The newest readable snapshot at or below the log end `end`, and its offset; snapshots past the end (a
    truncated tail's) are deleted, unreadable ones skipped."""
    offsets = snapshot_offsets(directory)
    for stale in [o for o in offsets if o > end]:
        snapshot_path(directory, stale).unlink(missing_ok=True)
    for offset in reversed([o for o in offsets if o <= end]):
        try:
            return decode_snapshot(snapshot_path(directory, offset).read_bytes(), partition), offset
        except (OSError, ValueError) as exc:
            log.warning("%s: ignoring unreadable producer snapshot %d: %s", partition, offset, exc)
    return None
