"""Log compaction, as Kafka's LogCleaner does it (one cleaner "thread", run from the broker's housekeeping).

A round on one log (Kafka's Cleaner.doClean):

1. the dirty range runs from the cleaner checkpoint (the first offset not cleaned yet) to the first
   uncleanable offset: the smallest of the last stable offset (never at or past an open transaction), the
   active segment's base offset, and the base of the first segment with a record newer than
   `min.compaction.lag.ms` — rounded down to a segment boundary;
2. the offset map (key digest → latest offset) is built over the dirty range, skipping the batches of
   aborted transactions; if it fills up the round stops at the last offset it indexed;
3. every segment from the start of the log up to there is rewritten, in groups that fit one segment
   (`segment.bytes`, `segment.index.bytes`): a record stays when it is the latest for its key, a tombstone
   until its batch's delete horizon (KIP-534: set to now + `delete.retention.ms`, in the base timestamp
   with attribute bit 6, by the first round that keeps it), aborted transactional data goes, markers
   stay while their transaction still has data and then until their own delete horizon, and the last
   batch of every producer that still has state stays (emptied if need be) with its offsets and sequence;
4. each group's new segment is swapped in by renames Kafka's recovery understands (kemu.log.swap), and the
   caller records the round's end offset in `cleaner-offset-checkpoint` (kemu.log.log_cleaner).

Offsets, timestamps, headers, producer ids, epochs, sequences and batch boundaries stay as written; a batch
that lost records is rebuilt with the same codec and its original last offset.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from kemu.log.cleaned_txn import CleanedTransactionMetadata
from kemu.log.offset_map import OffsetMap
from kemu.log.partition_log import PartitionLog
from kemu.log.producer_state import LastRecord
from kemu.log.segment import LogSegment
from kemu.log.swap import CLEANED_SUFFIX, DELETED_SUFFIX, SWAP_SUFFIX
from kemu.log.txn_index import AbortedTxn, write_txn_index
from kemu.wire.records import (
    CRC_OFFSET,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V2,
    NO_TIMESTAMP,
    BatchHeader,
    DecodedRecord,
    NewRecord,
    RecordBatch,
    TimestampType,
    build_batch,
    crc_of,
    make_attributes,
)

_INT32_MAX = 2**31 - 1


@dataclass(slots=True)
class CleanerStats:
    messages_read: int = 0
    bytes_read: int = 0
    messages_written: int = 0
    bytes_written: int = 0
    map_messages_read: int = 0
    segments_before: int = 0
    segments_after: int = 0
    log_bytes_before: int = 0
    log_bytes_after: int = 0


@dataclass(frozen=True, slots=True)
class OffsetsToClean:
    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    force_update_checkpoint: bool


def segments_in(log: PartitionLog, start: int, end: int) -> list[LogSegment]:
    """Kafka's logSegments(from, to): the segments holding offsets in [start, end)."""
    segments = log.segments
    out = []
    for i, segment in enumerate(segments):
        following = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if segment.base_offset >= end:
            break
        if following is None or following > start:
            out.append(segment)
    return out


def cleanable_offsets(log: PartitionLog, last_clean_offset: int | None, now_ms: int) -> OffsetsToClean:
    """Kafka's LogCleanerManager.cleanableOffsets."""
    checkpointed = log.log_start_offset if last_clean_offset is None else last_clean_offset
    if checkpointed < log.log_start_offset or checkpointed > log.log_end_offset:
        first_dirty, force = log.log_start_offset, True
    else:
        first_dirty, force = checkpointed, False
    active_base = log.segments[-1].base_offset
    candidates = [log.last_stable_offset, active_base]
    lag = max(log.config.min_compaction_lag_ms, 0)
    if lag > 0:
        for segment in segments_in(log, first_dirty, active_base):
            if segment.largest_timestamp > now_ms - lag:
                candidates.append(segment.base_offset)
                break
    return OffsetsToClean(first_dirty, max(first_dirty, min(candidates)), force)


def max_compaction_delay(log: PartitionLog, first_dirty_offset: int, now_ms: int) -> int:
    """How far past `max.compaction.lag.ms` the oldest dirty record is (0: not past it)."""
    firsts = []
    for segment in segments_in(log, first_dirty_offset, log.segments[-1].base_offset):
        first = segment.rolling_based_timestamp()
        if first is not None and first > 0:
            firsts.append(first)
    earliest = min(firsts, default=None)
    clean_until = now_ms - max(log.config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest is not None and earliest < clean_until else 0


class LogToClean:
    """A compacted log with what a round on it would clean (Kafka's LogToClean)."""

    def __init__(self, log: PartitionLog, first_dirty_offset: int, uncleanable_offset: int,
                 need_compaction_now: bool = False) -> None:
        self.source = log
        self.first_dirty_offset = first_dirty_offset
        self.need_compaction_now = need_compaction_now
        non_active = segments_in(log, uncleanable_offset, log.segments[-1].base_offset)
        self.first_uncleanable_offset = (non_active[0] if non_active else log.segments[-1]).base_offset
        self.clean_bytes = sum(s.size for s in log.segments if s.base_offset < first_dirty_offset)
        lower = min(first_dirty_offset, self.first_uncleanable_offset)
        self.cleanable_bytes = sum(s.size for s in segments_in(log, lower, self.first_uncleanable_offset))
        self.total_bytes = self.clean_bytes + self.cleanable_bytes
        self.cleanable_ratio = self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


def group_segments_by_size(segments: Sequence[LogSegment], max_size: int, max_index_size: int,
                           first_uncleanable_offset: int) -> list[list[LogSegment]]:
    """Kafka's groupSegmentsBySize: consecutive segments whose sum fits one segment and one index, and
    whose offsets fit a segment's 32-bit relative offsets."""
    grouped: list[list[LogSegment]] = []
    rest = list(segments)
    while rest:
        group = [rest.pop(0)]
        log_size, index_size, time_size = group[0].size, _index_bytes(group[0]), _time_index_bytes(group[0])
        while rest:
            head = rest[0]
            last_offset = (rest[1].base_offset - 1) if len(rest) > 1 else max(head.base_offset,
                                                                              first_uncleanable_offset - 1)
            if (log_size + head.size > max_size or index_size + _index_bytes(head) > max_index_size
                    or time_size + _time_index_bytes(head) > max_index_size
                    or (head.size != 0 and last_offset - group[-1].base_offset > _INT32_MAX)):
                break
            group.append(rest.pop(0))
            log_size += head.size
            index_size += _index_bytes(head)
            time_size += _time_index_bytes(head)
        grouped.append(group)
    return grouped


def _index_bytes(segment: LogSegment) -> int:
    return len(segment.offset_index) * segment.offset_index.ENTRY_SIZE


def _time_index_bytes(segment: LogSegment) -> int:
    return len(segment.time_index) * segment.time_index.ENTRY_SIZE


class _Retention(Enum):
    DELETE = "delete"
    DELETE_EMPTY = "delete_empty"
    RETAIN_EMPTY = "retain_empty"


CleanerStep = Callable[[str], None]
"""Called with "cleaned" once a group's `.cleaned` files are written and with "swap" once they are `.swap`
files, before the old segments go: a crash test stops the round there."""


class Cleaner:
    def __init__(self, offset_map: OffsetMap, on_step: CleanerStep | None = None) -> None:
        self.offset_map = offset_map
        self.on_step = on_step

    # ---- a round ---------------------------------------------------------------------------------------
    def clean(self, cleanable: LogToClean, now_ms: int) -> tuple[int, CleanerStats]:
        """Clean one log; returns the first offset not cleaned (the new checkpoint) and the statistics."""
        log = cleanable.source
        stats = CleanerStats(segments_before=len(log.segments), log_bytes_before=log.size_in_bytes)
        upper = cleanable.first_uncleanable_offset
        self.build_offset_map(log, cleanable.first_dirty_offset, upper, stats)
        end_offset = self.offset_map.latest_offset + 1
        metadata = CleanedTransactionMetadata()
        groups = group_segments_by_size(segments_in(log, 0, end_offset), log.config.segment_bytes,
                                        log.config.segment_index_bytes, upper)
        for group in groups:
            self._clean_segments(log, group, now_ms, stats, metadata, upper)
        log.segments_replaced()
        stats.segments_after = len(log.segments)
        stats.log_bytes_after = log.size_in_bytes
        return end_offset, stats

    def build_offset_map(self, log: PartitionLog, start: int, end: int, stats: CleanerStats) -> None:
        offset_map = self.offset_map
        offset_map.clear()
        metadata = CleanedTransactionMetadata()
        metadata.add_aborted_transactions(log.aborted_transactions(start, end))
        for segment in segments_in(log, start, end):
            if self._map_segment(segment, start, end, metadata, stats):
                return

    def _map_segment(self, segment: LogSegment, start: int, end: int, metadata: CleanedTransactionMetadata,
                     stats: CleanerStats) -> bool:
        """Index one segment's keys; True when the map filled up."""
        offset_map = self.offset_map
        for position, header in segment.batches_from(segment.offset_index.lookup(start)[1]):
            if header.base_offset >= end:
                break
            batch = RecordBatch(segment.read_bytes(position, header.size))
            if header.is_control:
                metadata.on_control_batch_read(batch)
                stats.map_messages_read += 1
            elif metadata.on_batch_read(batch):
                stats.map_messages_read += header.records_count
            else:
                for record in batch.records():
                    if record.key is not None and record.offset >= start:
                        if offset_map.is_full:
                            return True
                        offset_map.put(record.key, record.offset)
                    stats.map_messages_read += 1
            if header.last_offset >= start:
                offset_map.update_latest_offset(header.last_offset)
        return False

    # ---- rewriting a group -----------------------------------------------------------------------------
    def _clean_segments(self, log: PartitionLog, group: list[LogSegment], now_ms: int, stats: CleanerStats,
                        metadata: CleanedTransactionMetadata, round_upper: int) -> None:
        cleaned = log.new_detached_segment(group[0].base_offset, CLEANED_SUFFIX)
        kept_aborted: list[AbortedTxn] = []
        metadata.cleaned_index = kept_aborted
        producers = log.last_records_of_active_producers()
        try:
            for i, segment in enumerate(group):
                upper = group[i + 1].base_offset if i + 1 < len(group) else segment.next_offset()
                metadata.add_aborted_transactions(log.aborted_transactions(segment.base_offset, upper))
                for position, header in segment.batches_from(0):
                    batch = RecordBatch(segment.read_bytes(position, header.size))
                    out = self._filter(batch, metadata, producers, now_ms, log.config.delete_retention_ms,
                                       round_upper, stats)
                    if out is not None:
                        cleaned.append(out, BatchHeader.parse(out), now_ms)
                        stats.bytes_written += len(out)
            if kept_aborted:
                write_txn_index(cleaned.txn_index_path, kept_aborted)
            cleaned.flush()
            cleaned.deactivate()
        except BaseException:
            cleaned.delete()  # an unfinished rewrite: the old segments are untouched and stay
            raise
        # As Kafka: the new segment keeps the old one's modification time, which time retention may read.
        cleaned.last_modified_ms = group[-1].last_modified_ms
        os.utime(cleaned.log_path, ns=(cleaned.last_modified_ms * 1_000_000,) * 2)
        self._step("cleaned")
        self._replace(log, cleaned, group)

    def _replace(self, log: PartitionLog, cleaned: LogSegment, old: list[LogSegment]) -> None:
        # Recovery lets a `.swap` segment replace the old segments whose base offsets lie in the range it
        # holds. Old segments past the last batch the cleaned one kept held nothing that stays, so they go
        # first: a crash after the swap rename then cannot leave them (and their discarded records) behind.
        covered = max(cleaned.next_offset(), cleaned.base_offset + 1)
        for segment in old:
            if segment.base_offset >= covered:
                self._delete(segment)
        cleaned.change_file_suffix(SWAP_SUFFIX)
        self._step("swap")
        for segment in old:
            if segment.base_offset < covered:
                self._delete(segment)
        cleaned.change_file_suffix("")
        log.swap_in(cleaned, old)

    @staticmethod
    def _delete(segment: LogSegment) -> None:
        segment.close()
        segment.change_file_suffix(DELETED_SUFFIX)
        segment.delete()

    def _step(self, name: str) -> None:
        if self.on_step is not None:
            self.on_step(name)

    # ---- one batch (Kafka's Cleaner.cleanInto filter and MemoryRecords.filterTo) -----------------------
    def _filter(self, batch: RecordBatch, metadata: CleanedTransactionMetadata,
                producers: dict[int, LastRecord], now_ms: int, delete_retention_ms: int,
                round_upper: int, stats: CleanerStats) -> bytes | None:
        header = batch.header
        stats.bytes_read += header.size
        if header.is_control:
            can_discard = metadata.on_control_batch_read(batch)
            discard_records = can_discard and header.has_delete_horizon and header.delete_horizon_ms <= now_ms
        else:
            can_discard = metadata.on_batch_read(batch)
            discard_records = can_discard
        last = producers.get(header.producer_id)
        last_of_producer = last is not None and (
            header.last_offset == last.last_data_offset if last.last_data_offset is not None
            else header.is_control and header.producer_epoch == last.producer_epoch)
        # Kafka keeps the last batch of the round even when emptied, so the round's end offset survives.
        if (header.has_producer_id and last_of_producer) or header.next_offset == round_upper:
            retention = _Retention.RETAIN_EMPTY
        elif discard_records:
            retention = _Retention.DELETE
        else:
            retention = _Retention.DELETE_EMPTY
        if retention is _Retention.DELETE:
            return None
        marker_for_empty_txn = can_discard and header.is_control
        retained: list[DecodedRecord] = []
        tombstones = False
        original = True
        for record in batch.records():
            stats.messages_read += 1
            if discard_records:
                keep = False
            elif header.is_control:
                keep = True
            else:
                keep = self._retain_record(header, record, now_ms)
            if keep:
                retained.append(record)
                tombstones = tombstones or record.value is None
            else:
                original = False
        if retained:
            stats.messages_written += len(retained)
            set_horizon = (tombstones or marker_for_empty_txn) and not header.has_delete_horizon
            if original and not set_horizon:
                return bytes(batch.data)
            horizon = now_ms + delete_retention_ms if set_horizon else (
                header.delete_horizon_ms if header.has_delete_horizon else None)
            return _rebuild(header, retained, horizon)
        if retention is _Retention.RETAIN_EMPTY:
            return _empty_batch(header)
        return None

    def _retain_record(self, header: BatchHeader, record: DecodedRecord, now_ms: int) -> bool:
        offset_map = self.offset_map
        if record.offset > offset_map.latest_offset:
            return True
        if record.key is None:
            return False
        latest_for_key = record.offset >= offset_map.get(record.key)
        keep_deletes = not header.has_delete_horizon or now_ms < header.delete_horizon_ms
        return latest_for_key and (record.value is not None or keep_deletes)


def _rebuild(header: BatchHeader, records: list[DecodedRecord], delete_horizon_ms: int | None) -> bytes:
    """The batch with only `records`, as Kafka's buildRetainedRecordsInto writes it."""
    log_append = header.timestamp_type is TimestampType.LOG_APPEND_TIME
    return build_batch(
        [NewRecord(value=r.value, key=r.key, headers=r.headers, timestamp=r.timestamp,
                   offset_delta=r.offset - header.base_offset) for r in records],
        base_offset=header.base_offset,
        compression=header.compression,
        timestamp_type=header.timestamp_type,
        log_append_time=header.max_timestamp if log_append else NO_TIMESTAMP,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        transactional=header.is_transactional,
        control=header.is_control,
        partition_leader_epoch=header.partition_leader_epoch,
        delete_horizon_ms=delete_horizon_ms,
        last_offset_delta=header.last_offset_delta,
    )


def _empty_batch(header: BatchHeader) -> bytes:
    """A batch with no records that keeps the producer's place (Kafka's DefaultRecordBatch.writeEmptyHeader):
    same offsets, producer id, epoch, sequence and max timestamp; no codec, base timestamp -1."""
    attributes = make_attributes(timestamp_type=header.timestamp_type, transactional=header.is_transactional,
                                 control=header.is_control)
    empty = BatchHeader(header.base_offset, HEADER_SIZE - LOG_OVERHEAD, header.partition_leader_epoch, MAGIC_V2,
                        0, attributes, header.last_offset_delta, NO_TIMESTAMP, header.max_timestamp,
                        header.producer_id, header.producer_epoch, header.base_sequence, 0)
    data = bytearray(empty.pack())
    struct.pack_into(">I", data, CRC_OFFSET, crc_of(data))
    return bytes(data)
