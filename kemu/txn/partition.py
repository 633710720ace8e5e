"""A partition log together with its producer state and aborted-transaction index.

Kafka's UnifiedLog checks every producer batch against the partition's ProducerStateManager between
validating it and appending it, and keeps a `.txnindex` beside each segment listing the transactions that
were aborted. Here the transactions layer wraps `kemu.log.PartitionLog` to do the same, since the log
itself may not import this package.

On disk, beside the segments: `<offset>.snapshot` files in Kafka's producer-snapshot format (written when a
segment rolls and on clean close) and `<segment base>.txnindex` files in Kafka's format. Opening a
partition loads the newest snapshot at or below the log end and replays the batches after it, which is
how a broker recovers producer state after a crash.
"""

from __future__ import annotations

import logging
import os

from kemu.log import AppendOrigin, AppendResult, LogEvent, PartitionLog, ValidatedBatch
from kemu.log.compaction import LastRecord
from kemu.log.errors import LogError
from kemu.log.txn_index import AbortedTxn, decode_txn_index, write_txn_index
from kemu.txn.producer_state import (
    CompletedTxn,
    ProducerStateError,
    ProducerStateManager,
    decode_snapshot,
    encode_snapshot,
    snapshot_path,
)
from kemu.wire.compression import CompressionType
from kemu.wire.errors import ErrorCode
from kemu.wire.records import (
    BatchHeader,
    ControlRecordType,
    DecodedRecord,
    RecordBatch,
    decode_control_key,
    decode_end_txn_marker_value,
    decode_records,
)

log = logging.getLogger(__name__)

_SNAPSHOTS_KEPT = 2


class MarkerError(LogError):
    """A control batch that does not hold a well-formed COMMIT/ABORT marker."""


class TransactionalPartition:
    def __init__(self, log: PartitionLog) -> None:
        self.log = log
        self.producers = ProducerStateManager(log.topic_partition)
        # Aborted transactions by the base offset of the segment whose .txnindex holds them.
        self._aborted: dict[int, list[AbortedTxn]] = {}
        log.add_listener(self._on_event)
        if not log.created:  # a new log has no snapshots, indexes or batches to recover from
            self._recover()

    # ---- appending -------------------------------------------------------------------------------------
    def append(self, data: bytes | bytearray | memoryview, *, origin: AppendOrigin = AppendOrigin.CLIENT,
               built: bool = False, whole: BatchHeader | None = None,
               transaction_version: int = 0) -> AppendResult:
        """Validate, check producer state, append. Raises LogError or ProducerStateError (both with .code).
        `transaction_version`: a marker's, which decides how its epoch is checked (WriteTxnMarkers v2).

        KIP-890's partition verification happens before, at the partition's caller: the coordinator is
        asked once, and only then is the batch appended here. `transaction_version` is a marker's (the
        transaction's, as WriteTxnMarkers carries it), or 2 for a batch whose partition a TV2 Produce just
        added to its transaction."""
        prepared = self.log.prepare_append(data, origin=origin, built=built, whole=whole)
        source = prepared.source
        if source.is_control:
            return self._append_marker(prepared, source, transaction_version)
        if not source.has_producer_id:
            return self.log.commit_append(prepared)
        duplicate = self.producers.check_batch(
            producer_id=source.producer_id, epoch=source.producer_epoch, first_seq=source.base_sequence,
            last_seq=source.last_sequence, transactional=source.is_transactional,
            from_client=origin == AppendOrigin.CLIENT, transaction_version=transaction_version)
        if duplicate is not None:
            # A retry of a batch already in the log: acknowledged with where it went the first time (and,
            # as UnifiedLog does, with the batch's timestamp as its log append time).
            return AppendResult(
                base_offset=duplicate.first_offset, last_offset=duplicate.last_offset,
                log_append_time=duplicate.max_timestamp,
                log_start_offset=self.log.log_start_offset, max_timestamp=duplicate.max_timestamp,
                record_count=0, size=0, batch=source)
        result = self.log.commit_append(prepared)
        self._record_batch(result.batch)
        return result

    def _append_marker(self, prepared: ValidatedBatch, source: BatchHeader, transaction_version: int) -> AppendResult:
        # The records straight from the validated payload: no copy of the batch to wrap it first.
        records = (decode_records(source, bytes(prepared.payload)) if source.compression == CompressionType.NONE
                   else RecordBatch(bytes(prepared.header) + bytes(prepared.payload)).records())
        commit, coordinator_epoch = self._marker_of(records)
        self.producers.check_marker(producer_id=source.producer_id, epoch=source.producer_epoch,
                                    coordinator_epoch=coordinator_epoch, transaction_version=transaction_version)
        result = self.log.commit_append(prepared)
        self._record_marker(result.batch, commit, coordinator_epoch, persist=True)
        return result

    @staticmethod
    def _marker_of(records: list[DecodedRecord]) -> tuple[bool, int]:
        if len(records) != 1:
            raise MarkerError("a transaction marker batch must hold one record", ErrorCode.INVALID_RECORD)
        _, record_type = decode_control_key(records[0].key)
        if record_type not in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            raise MarkerError(f"unexpected control record type {record_type}", ErrorCode.INVALID_RECORD)
        _, coordinator_epoch = decode_end_txn_marker_value(records[0].value)
        return record_type == ControlRecordType.COMMIT, coordinator_epoch

    def _record_batch(self, header: BatchHeader) -> None:
        self.producers.record_batch(
            producer_id=header.producer_id, epoch=header.producer_epoch, first_seq=header.base_sequence,
            last_seq=header.last_sequence, first_offset=header.base_offset, last_offset=header.last_offset,
            max_timestamp=header.max_timestamp, transactional=header.is_transactional)

    def _record_marker(self, header: BatchHeader, commit: bool, coordinator_epoch: int, *,
                       persist: bool) -> CompletedTxn | None:
        done = self.producers.record_marker(
            producer_id=header.producer_id, epoch=header.producer_epoch, coordinator_epoch=coordinator_epoch,
            offset=header.base_offset, timestamp=header.max_timestamp, commit=commit)
        if done is not None and done.aborted:
            entry = AbortedTxn(done.producer_id, done.first_offset, done.last_offset,
                               min(done.last_stable_offset, self.log.high_watermark))
            segment_base = self._segment_base_for(done.last_offset)
            self._aborted.setdefault(segment_base, []).append(entry)
            if persist:
                self._write_txn_index(segment_base)
        return done

    def _segment_base_for(self, offset: int) -> int:
        base = self.log.segments[0].base_offset
        for segment in self.log.segments:
            if segment.base_offset <= offset:
                base = segment.base_offset
        return base

    # ---- reading ---------------------------------------------------------------------------------------
    @property
    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction, else the high watermark (never below the log
        start, never above the high watermark)."""
        log = self.log
        unstable = min(self.producers.ongoing.values(), default=None)
        if unstable is not None and unstable < log.high_watermark:
            return max(unstable, log.log_start_offset)
        return log.high_watermark

    def aborted_transactions(self, fetch_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound_offset), for read_committed Fetch.

        As Kafka's LocalLog collects them: from the segment holding `fetch_offset` on, each segment's index
        in the order the aborts were written (not by first offset: a transaction aborted later may have
        started earlier), stopping after the first entry whose last stable offset reaches the bound."""
        start = self._segment_base_for(fetch_offset)
        out = []
        for base in sorted(b for b in self._aborted if b >= start):
            for entry in self._aborted[base]:
                if entry.last_offset >= fetch_offset and entry.first_offset < upper_bound_offset:
                    out.append(entry)
                if entry.last_stable_offset >= upper_bound_offset:
                    return out
        return out

    # ---- what the cleaner asks (kemu.log.compaction.CleanerSource) ----------------------------------------
    def last_records_of_active_producers(self) -> dict[int, LastRecord]:
        """Per producer with state, the batch compaction must keep: its last data batch, or (when its
        latest epoch wrote only markers) a marker of that epoch — Kafka's lastRecordsOfActiveProducers."""
        return {entry.producer_id: LastRecord(entry.batches[-1].last_offset if entry.batches else None,
                                              entry.epoch)
                for entry in self.producers.active_producers()}

    def segments_replaced(self) -> None:
        self._read_txn_indexes()

    # ---- events from the log ---------------------------------------------------------------------------
    def _on_event(self, log: PartitionLog, event: LogEvent) -> None:
        if event is LogEvent.ROLLED:
            self.take_snapshot()
        elif event in (LogEvent.SEGMENTS_DELETED, LogEvent.LOG_START_OFFSET):
            live = {s.base_offset for s in log.segments}
            for base in [b for b in self._aborted if b not in live]:
                del self._aborted[base]
            self.producers.truncate_head(log.log_start_offset)
            self._delete_snapshots_below(log.segments[0].base_offset)
        elif event is LogEvent.TRUNCATED:
            self._rebuild_from(0)
        elif event is LogEvent.CLOSED:
            self.take_snapshot()

    # ---- persistence -----------------------------------------------------------------------------------
    def take_snapshot(self) -> None:
        directory = self.log.directory
        if not directory.exists():
            return
        path = snapshot_path(directory, self.log.log_end_offset)
        tmp = path.with_suffix(".snapshot.tmp")
        tmp.write_bytes(encode_snapshot(self.producers))
        os.replace(tmp, path)
        snapshots = self._snapshot_offsets()
        for offset in snapshots[:-_SNAPSHOTS_KEPT]:
            snapshot_path(directory, offset).unlink(missing_ok=True)

    def _snapshot_offsets(self) -> list[int]:
        found = []
        for path in self.log.directory.glob("*.snapshot"):
            try:
                found.append(int(path.stem))
            except ValueError:
                continue
        return sorted(found)

    def _delete_snapshots_below(self, offset: int) -> None:
        snapshots = self._snapshot_offsets()
        for snap in snapshots[:-1]:
            if snap < offset:
                snapshot_path(self.log.directory, snap).unlink(missing_ok=True)

    def _write_txn_index(self, segment_base: int) -> None:
        write_txn_index(self.log.directory / f"{segment_base:020d}.txnindex", self._aborted.get(segment_base, []))

    def _read_txn_indexes(self) -> None:
        self._aborted.clear()
        live = {s.base_offset for s in self.log.segments}
        for path in self.log.directory.glob("*.txnindex"):
            try:
                base = int(path.stem)
            except ValueError:
                continue
            if base not in live:
                path.unlink(missing_ok=True)
                continue
            self._aborted[base] = decode_txn_index(path.read_bytes())

    def _recover(self) -> None:
        self._read_txn_indexes()
        end = self.log.log_end_offset
        usable = [o for o in self._snapshot_offsets() if o <= end]
        for stale in [o for o in self._snapshot_offsets() if o > end]:
            snapshot_path(self.log.directory, stale).unlink(missing_ok=True)
        start = self.log.log_start_offset
        for offset in reversed(usable):
            try:
                self.producers = decode_snapshot(snapshot_path(self.log.directory, offset).read_bytes(),
                                                 self.log.topic_partition)
                start = offset
                break
            except (OSError, ValueError) as exc:
                log.warning("%s: ignoring unreadable producer snapshot %d: %s", self.log.topic_partition,
                            offset, exc)
        self._rebuild_from(start, keep_state=start != self.log.log_start_offset)

    def _rebuild_from(self, start: int, keep_state: bool = False) -> None:
        """Replay batches from `start` to the log end into producer state and the aborted index."""
        if not keep_state:
            self.producers.clear()
            start = self.log.log_start_offset
        touched = set()
        for base, entries in self._aborted.items():
            kept = [e for e in entries if e.last_offset < start and e.last_offset < self.log.log_end_offset]
            if len(kept) != len(entries):
                self._aborted[base] = kept
                touched.add(base)
        for batch in self.log.batches(start, None):
            header = batch.header
            if header.base_offset < start or not header.has_producer_id:
                continue
            if header.is_control:
                try:
                    commit, coordinator_epoch = self._marker_of(batch.records())
                except (LogError, ValueError):
                    continue
                self._record_marker(header, commit, coordinator_epoch, persist=False)
                touched.add(self._segment_base_for(header.base_offset))
            else:
                self._record_batch(header)
        for base in touched:
            self._write_txn_index(base)

    # ---- maintenance -----------------------------------------------------------------------------------
    def expire_producers(self, now_ms: int, expiration_ms: int) -> list[int]:
        return self.producers.expire(now_ms, expiration_ms)


__all__ = ["AbortedTxn", "ProducerStateError", "TransactionalPartition"]
