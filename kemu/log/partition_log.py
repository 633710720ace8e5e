"""The log of one partition: its segments, offsets, producer state and aborted transactions (Kafka's UnifiedLog).

Offsets, from low to high: `log_start_offset` (the first offset a reader may ask for; DeleteRecords and
retention move it) <= `last_stable_offset` (read_committed readers stop here) <= `high_watermark`
(read_uncommitted readers stop here) <= `log_end_offset` (the next offset to assign). With a single
replica the high watermark follows the log end offset on every append, but it stays a separate notion.

As Kafka's UnifiedLog with its ProducerStateManager, an append checks a producer batch against the
producer state (kemu.log.producer_state) between validating it and assigning its offsets, and records it
after; a COMMIT/ABORT marker completes its producer's transaction here, an ABORT going into the aborted-
transaction index (kemu.log.txn_index). The last stable offset is computed here, from the open transactions.
Beside the segments: `<offset>.snapshot` files of the producer state (written when a segment rolls and on a
clean close) and `<segment base>.txnindex` files; opening the log loads the newest snapshot at or below the
log end and replays the batches after it, which is how producer state survives a crash.

The leader epoch is not the log's: the partition (kemu.broker.partition) keeps it and passes it to `append`,
which stamps it into the batch and the epoch cache, as Kafka's Partition passes it to appendAsLeader.
"""

from __future__ import annotations

import random
import shutil
from bisect import bisect_right
from collections.abc import Callable, Sequence
from enum import Enum, IntEnum
from pathlib import Path
from typing import NamedTuple

from kemu.clock import Clock
from kemu.log.cache_budget import CacheBudget
from kemu.log.config import LogConfig
from kemu.log.errors import LogClosedError, LogError, MarkerError, OffsetOutOfRangeError
from kemu.log.kinds import FetchIsolation as FetchIsolation
from kemu.log.leader_epoch import LeaderEpochCache
from kemu.log.producer_state import (
    CompletedTxn,
    LastRecord,
    ProducerStateManager,
    delete_snapshots_below,
    load_snapshot,
    take_snapshot,
)
from kemu.log.segment import (
    DEFAULT_CACHE_BYTES,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    LogSegment,
    TimestampAndOffset,
    parse_segment_file_name,
)
from kemu.log.swap import recover_interrupted_swaps
from kemu.log.txn_index import AbortedTxn, AbortedTxnIndex
from kemu.log.validator import AppendOrigin, ValidatedBatch, validate_append
from kemu.wire.compression import CompressionType
from kemu.wire.errors import ErrorCode
from kemu.wire.file_region import Records
from kemu.wire.records import (
    NO_TIMESTAMP,
    BatchHeader,
    ControlRecordType,
    DecodedRecord,
    RecordBatch,
    decode_control_key,
    decode_end_txn_marker_value,
    decode_records,
    offset_of_max_timestamp,
)

_KAFKA_LEFTOVER_SUFFIXES = (".deleted", ".cleaned", ".swap", ".tmp")


class ListOffsetsTimestamp(IntEnum):
    """The special timestamps of ListOffsets."""

    LATEST = -1
    EARLIEST = -2
    MAX_TIMESTAMP = -3
    EARLIEST_LOCAL = -4
    LATEST_TIERED = -5
    EARLIEST_PENDING_UPLOAD = -6


DELETE_RECORDS_HIGH_WATERMARK = -1
"""DeleteRecords' offset meaning "up to the high watermark"."""


class LogEvent(Enum):
    APPENDED = "appended"
    """New data; the high watermark (and maybe the last stable offset) moved."""
    LOG_START_OFFSET = "log_start_offset"
    ROLLED = "rolled"
    SEGMENTS_DELETED = "segments_deleted"
    TRUNCATED = "truncated"
    CLOSED = "closed"


LogListener = Callable[["PartitionLog", LogEvent], None]


class AppendResult(NamedTuple):
    """What a Produce response needs (base offset, log append time, log start offset) and more (a tuple:
    one is made per append)."""

    base_offset: int
    last_offset: int
    log_append_time: int
    """-1 unless the topic uses LogAppendTime."""
    log_start_offset: int
    max_timestamp: int
    record_count: int
    size: int
    batch: BatchHeader
    """The header as stored (offsets and epoch assigned); producer id, epoch and sequence as sent."""


class FetchData(NamedTuple):  # not a frozen dataclass: cheaper to define at start-up and one per read
    records: Records
    """Whole batches as stored — except that, as in Kafka, the last one may be cut short by `max_bytes`; a
    region of the segment file when they are read from it and big (LogSegment.read_for_sending)."""
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    log_end_offset: int


class PartitionLog:
    """Use `PartitionLog.open(...)`; it creates the directory or recovers what is in it."""

    def __init__(self, directory: Path, topic: str, partition: int, config: LogConfig, clock: Clock, *,
                 on_log_start_offset_change: Callable[[PartitionLog], None] | None = None) -> None:
        self.directory = directory
        self.topic = topic
        self.partition = partition
        self.topic_partition = f"{topic}-{partition}"
        self.config = config
        self.clock = clock
        self.verify_records = False
        """Decode and check every record of every append, as Kafka does, instead of only when needed."""
        self.on_log_start_offset_change = on_log_start_offset_change
        """LogDir's, to persist the log start offset before segments below it are deleted."""
        self.cache_bytes = DEFAULT_CACHE_BYTES
        self.cache_budget: CacheBudget | None = None
        """The log directory's bound on what all its active segments cache together."""
        self._segments: list[LogSegment] = []
        self._bases: list[int] = []
        self._log_start_offset = 0
        self._log_end_offset = 0
        self._high_watermark = 0
        self._unflushed_messages = 0
        self._last_flush_ms = clock.now_ms()
        # A tuple, replaced when it changes: an append iterates it as it is while a listener may remove
        # itself (or add another) when told, and the hot path need not copy it every time.
        self._listeners: tuple[LogListener, ...] = ()
        self.changes = 0
        """Events told to listeners so far: unchanged since a read, the log would read the same (a parked
        fetch that saw nothing need not read again before it waits)."""
        self._closed = False
        self.created = False
        """True when `open` made the directory: nothing on disk to recover, producer state included."""
        self.epoch_cache: LeaderEpochCache
        self.producers = ProducerStateManager(self.topic_partition)
        self._aborted = AbortedTxnIndex(directory)

    # --- opening -----------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        directory: Path,
        topic: str,
        partition: int,
        config: LogConfig,
        clock: Clock,
        *,
        log_start_offset: int | None = None,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        cache_budget: CacheBudget | None = None,
        on_log_start_offset_change: Callable[[PartitionLog], None] | None = None,
    ) -> PartitionLog:
        """Open (creating if needed) the log in `directory`, recovering it after a crash: leftover and
        orphaned files are removed, unreadable indexes rebuilt, and the last segment re-read batch by batch
        with any torn or corrupt tail cut off. `log_start_offset` is the checkpointed value, if any."""
        log = cls(directory, topic, partition, config, clock, on_log_start_offset_change=on_log_start_offset_change)
        log.cache_bytes = cache_bytes
        log.cache_budget = cache_budget
        try:
            directory.mkdir(parents=True)
        except FileExistsError:
            log.epoch_cache = LeaderEpochCache(directory)
            log._load(log_start_offset)
            log._recover_producer_state()
            return log
        # A new partition (CreateTopics of up to 10,000 at once): no directory scans, swap or segment
        # recovery, or checkpoint reads, which made up most of its cost.
        log.created = True
        log.epoch_cache = LeaderEpochCache(directory, empty=True)
        start = max(log_start_offset or 0, 0)
        log._add_segment(LogSegment.create(directory, start, **log._segment_options()))
        log._log_start_offset = log._log_end_offset = log._high_watermark = start
        return log

    def _segment_options(self) -> dict[str, object]:
        jitter = self.config.segment_jitter_ms
        roll_jitter = random.randrange(min(jitter, self.config.segment_ms)) if jitter > 0 else 0
        return {
            "clock": self.clock,
            "index_interval_bytes": self.config.index_interval_bytes,
            "max_index_size": self.config.segment_index_bytes,
            "roll_jitter_ms": roll_jitter,
            "cache_bytes": self.cache_bytes,
            "cache_budget": self.cache_budget,
        }

    def _load(self, checkpointed_start: int | None) -> None:
        recover_interrupted_swaps(self.directory)
        bases: set[int] = set()
        others: list[tuple[int, Path]] = []
        for path in self.directory.iterdir():
            if path.name.endswith(_KAFKA_LEFTOVER_SUFFIXES):
                path.unlink()
                continue
            parsed = parse_segment_file_name(path.name)
            if parsed is None:
                continue
            base, suffix = parsed
            if suffix == LOG_SUFFIX:
                bases.add(base)
            else:
                others.append((base, path))
        for base, path in others:
            if base not in bases and path.suffix in (INDEX_SUFFIX, ".timeindex", ".txnindex"):
                path.unlink()  # an index whose log is gone
        ordered = sorted(bases)
        assign_epoch = lambda header: self.epoch_cache.assign(header.partition_leader_epoch, header.base_offset)  # noqa: E731
        for i, base in enumerate(ordered):
            if i == len(ordered) - 1:
                # Only the last segment can have a torn tail: every earlier one was complete when rolled.
                segment = LogSegment(self.directory, base, **self._segment_options())  # type: ignore[arg-type]
                segment.recover(assign_epoch)
                self._add_segment(segment)
                break
            segment, indexes_ok = LogSegment.load(self.directory, base, ordered[i + 1], **self._segment_options())
            self._add_segment(segment)
            if indexes_ok:
                continue
            if segment.recover(assign_epoch):
                # Kafka: corruption inside an older segment invalidates everything after it.
                for later in ordered[i + 1 :]:
                    LogSegment(self.directory, later, **self._segment_options()).delete()  # type: ignore[arg-type]
                break
            segment.deactivate()
        if self._segments:
            self._segments[-1].activate()
        start = max(checkpointed_start or 0, 0)
        if not self._segments:
            self._add_segment(LogSegment.create(self.directory, start, **self._segment_options()))
        self._log_end_offset = self._segments[-1].next_offset()
        if start > self._log_end_offset:
            # Kafka: a checkpointed start beyond the recovered end means the tail was lost; start afresh there.
            for segment in self._segments:
                segment.delete()
            self._segments, self._bases = [], []
            self.epoch_cache.clear()
            self._add_segment(LogSegment.create(self.directory, start, **self._segment_options()))
            self._log_end_offset = start
        self._log_start_offset = max(start, self._segments[0].base_offset)
        self._high_watermark = self._log_end_offset
        self.epoch_cache.truncate_from_end(self._log_end_offset)
        self.epoch_cache.truncate_from_start(self._log_start_offset)

    def new_detached_segment(self, base_offset: int, file_suffix: str) -> LogSegment:
        """A fresh segment with this log's options whose files carry `file_suffix` (the cleaner's `.cleaned`
        output); it is not part of the log until `swap_in`."""
        return LogSegment.create(self.directory, base_offset, file_suffix=file_suffix, **self._segment_options())

    def swap_in(self, new: LogSegment, old: Sequence[LogSegment]) -> None:
        """Put `new` in place of the consecutive rolled segments `old`, whose files are already gone (Kafka's
        replaceSegments, after the cleaner renamed its files into place). Offsets do not move."""
        self._check_open()
        first = self._segments.index(old[0])
        if self._segments[first : first + len(old)] != list(old) or first + len(old) == len(self._segments):
            raise ValueError("only consecutive rolled segments can be replaced")
        for segment in old:
            segment.close()
        self._segments[first : first + len(old)] = [new]
        self._bases[first : first + len(old)] = [new.base_offset]

    def _add_segment(self, segment: LogSegment) -> None:
        self._segments.append(segment)
        self._bases.append(segment.base_offset)

    # --- state -------------------------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        return tuple(self._segments)

    @property
    def size_in_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    @property
    def latest_epoch(self) -> int | None:
        return self.epoch_cache.latest_epoch

    @property
    def is_closed(self) -> bool:
        return self._closed

    def add_listener(self, listener: LogListener) -> None:
        self._listeners = (*self._listeners, listener)

    def remove_listener(self, listener: LogListener) -> None:
        listeners = list(self._listeners)
        listeners.remove(listener)
        self._listeners = tuple(listeners)

    def _notify(self, event: LogEvent) -> None:
        self.changes += 1
        for listener in self._listeners:
            listener(self, event)

    def _check_open(self) -> None:
        if self._closed:
            raise LogClosedError(f"The log of {self.topic_partition} is closed")

    def update_config(self, config: LogConfig) -> None:
        """Topic configs can change at runtime (IncrementalAlterConfigs); new segments use the new ones."""
        self.config = config

    def set_high_watermark(self, offset: int) -> None:
        """Move the high watermark (clamped to [log start, log end]); appends do this themselves."""
        self._high_watermark = min(max(offset, self._log_start_offset), self._log_end_offset)

    # --- appending ---------------------------------------------------------------------------------------

    def append(
        self, data: bytes | bytearray | memoryview, *, leader_epoch: int = 0,
        origin: AppendOrigin = AppendOrigin.CLIENT, built: bool = False, whole: BatchHeader | None = None,
        transaction_version: int = 0,
    ) -> AppendResult:
        """Validate, check producer state, append (Kafka's UnifiedLog.appendAsLeader). Raises LogError (with
        Kafka's code, message and record errors) or ProducerStateError (with .code). `leader_epoch`: the
        partition's, stamped into the batch; `built`: the broker built the batch itself, a coordinator's
        record or marker; `whole`: `data`'s header, when the caller read it with `whole_batch_header` already
        (kemu.log.validator).

        KIP-890's partition verification happens before, at the partition's caller: the coordinator is
        asked once, and only then is the batch appended here. `transaction_version` is a marker's (the
        transaction's, as WriteTxnMarkers carries it, which decides how its epoch is checked), or 2 for a
        batch whose partition a TV2 Produce just added to its transaction."""
        prepared = self.prepare_append(data, leader_epoch=leader_epoch, origin=origin, built=built, whole=whole)
        source = prepared.source
        if source.is_control:
            return self._append_marker(prepared, source, transaction_version)
        if not source.has_producer_id:
            result = self._write(prepared)
            self._notify(LogEvent.APPENDED)
            return result
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
                log_start_offset=self._log_start_offset, max_timestamp=duplicate.max_timestamp,
                record_count=0, size=0, batch=source)
        result = self._write(prepared)
        self._record_batch(result.batch)
        self._notify(LogEvent.APPENDED)
        return result

    def prepare_append(
        self, data: bytes | bytearray | memoryview, *, leader_epoch: int = 0,
        origin: AppendOrigin = AppendOrigin.CLIENT, built: bool = False, whole: BatchHeader | None = None,
    ) -> ValidatedBatch:
        """Validate a produce's bytes (raises LogError) without changing the log: `append`'s first step."""
        self._check_open()
        return validate_append(
            data,
            config=self.config,
            origin=origin,
            now_ms=self.clock.now_ms(),
            partition_leader_epoch=leader_epoch,
            topic_partition=self.topic_partition,
            verify_records=self.verify_records,
            built=built,
            whole=whole,
        )

    def _write(self, batch: ValidatedBatch) -> AppendResult:
        """Assign offsets (from the log end offset), write through to the active segment, advance. The caller
        records the batch in producer state and then tells the listeners (LogEvent.APPENDED)."""
        self._check_open()
        base_offset = self._log_end_offset
        last_offset = base_offset + batch.last_offset_delta
        now_ms = self.clock.now_ms()  # one reading for the roll check and the segment's mtime
        segment = self._maybe_roll(batch.size, batch.max_timestamp, last_offset, now_ms)
        data, header = batch.with_base_offset(base_offset)
        self.epoch_cache.assign(header.partition_leader_epoch, base_offset)
        segment.append(data, header, now_ms)
        self._log_end_offset = last_offset + 1
        self._high_watermark = self._log_end_offset
        self._unflushed_messages += batch.record_count
        if self._unflushed_messages >= self.config.flush_messages:
            self.flush()
        # Positional, in AppendResult's field order (one is made per append; keywords cost more).
        return AppendResult(base_offset, last_offset, batch.log_append_time, self._log_start_offset,
                            batch.max_timestamp, batch.record_count, len(data), header)

    def _append_marker(self, prepared: ValidatedBatch, source: BatchHeader, transaction_version: int) -> AppendResult:
        # The records straight from the validated payload: no copy of the batch to wrap it first.
        records = (decode_records(source, bytes(prepared.payload)) if source.compression == CompressionType.NONE
                   else RecordBatch(bytes(prepared.header) + bytes(prepared.payload)).records())
        commit, coordinator_epoch = _marker_of(records)
        self.producers.check_marker(producer_id=source.producer_id, epoch=source.producer_epoch,
                                    coordinator_epoch=coordinator_epoch, transaction_version=transaction_version)
        result = self._write(prepared)
        self._record_marker(result.batch, commit, coordinator_epoch, persist=True)
        self._notify(LogEvent.APPENDED)
        return result

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
                               min(done.last_stable_offset, self._high_watermark))
            self._aborted.add(self._segment_base_for(done.last_offset), entry, persist=persist)
        return done

    def _segment_base_for(self, offset: int) -> int:
        return self._bases[max(bisect_right(self._bases, offset) - 1, 0)]

    def _maybe_roll(self, messages_size: int, max_timestamp: int, max_offset: int, now_ms: int) -> LogSegment:
        active = self._segments[-1]
        if active.should_roll(
            max_segment_ms=self.config.max_segment_ms,
            max_segment_bytes=self.config.segment_bytes,
            max_timestamp_in_messages=max_timestamp,
            max_offset_in_messages=max_offset,
            messages_size=messages_size,
            now_ms=now_ms,
        ):
            return self.roll(self._log_end_offset)
        return active

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment at the log end offset (or later)."""
        self._check_open()
        new_offset = max(expected_next_offset or 0, self._log_end_offset)
        active = self._segments[-1]
        if active.base_offset == new_offset and active.is_empty:
            return active
        active.deactivate()
        segment = LogSegment.create(self.directory, new_offset, **self._segment_options())
        self._add_segment(segment)
        self.take_snapshot()
        self._notify(LogEvent.ROLLED)
        return segment

    def flush(self) -> None:
        self._segments[-1].flush()
        self._unflushed_messages = 0
        self._last_flush_ms = self.clock.now_ms()

    def maybe_flush(self) -> None:
        """`flush.ms`: fsync if the oldest unflushed append is older than that."""
        if self._unflushed_messages and self.clock.now_ms() - self._last_flush_ms >= self.config.flush_ms:
            self.flush()

    # --- reading -----------------------------------------------------------------------------------------

    def read(
        self,
        offset: int,
        max_bytes: int,
        *,
        upper_bound: int | None = None,
        last_stable_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> FetchData:
        """Raw batches from the one holding `offset`, up to `max_bytes` (or one whole batch when
        `min_one_batch`), never at or past `upper_bound` (default: the high watermark, a read_uncommitted
        reader's; `bound(isolation)` gives the others). OffsetOutOfRangeError below the log start or above the
        log end; empty records at or past the bound. `last_stable_offset` is reported as given (default: the
        log's own)."""
        self._check_open()
        if max_bytes < 0:
            raise ValueError(f"max_bytes must not be negative ({max_bytes})")
        if offset < self._log_start_offset:
            raise OffsetOutOfRangeError(
                f"Received request for offset {offset} for partition {self.topic_partition}, but we only have log "
                f"segments starting from offset: {self._log_start_offset}."
            )
        if offset > self._log_end_offset:
            raise OffsetOutOfRangeError(
                f"Received request for offset {offset} for partition {self.topic_partition}, but we only have log "
                f"segments upto {self._log_end_offset}."
            )
        upper = self._high_watermark if upper_bound is None else upper_bound
        stable = self.last_stable_offset if last_stable_offset is None else last_stable_offset
        records: Records = b""
        if offset < upper:
            records = self._read_below(offset, upper, max_bytes, min_one_batch)
        return FetchData(records, self._high_watermark, stable, self._log_start_offset, self._log_end_offset)

    def fetch_upper_bound(self, offset: int, fetched_bytes: int) -> int:
        """The offset a read_committed fetch of `fetched_bytes` from `offset` lists aborted transactions below:
        as Kafka's LocalLog.addAbortedTransactions, the first offset-index entry at or past the end of the
        bytes read in the segment holding `offset`, else the next segment's base offset, else the log end.
        The index is sparse (an entry every index.interval.bytes), so this usually lies well past the
        batches returned, and the list holds every aborted transaction up to there."""
        i = max(bisect_right(self._bases, offset) - 1, 0)
        while i < len(self._segments):
            segment = self._segments[i]
            found = segment.translate_offset(offset)
            if found is not None:
                upper = segment.offset_index.first_at_or_after(found.position + fetched_bytes)
                if upper is not None:
                    return upper
                return self._bases[i + 1] if i + 1 < len(self._segments) else self._log_end_offset
            i += 1
        return self._log_end_offset

    def _read_below(self, offset: int, upper: int, max_bytes: int, min_one_batch: bool) -> Records:
        i = max(bisect_right(self._bases, offset) - 1, 0)
        while i < len(self._segments):
            segment = self._segments[i]
            next_base = self._bases[i + 1] if i + 1 < len(self._segments) else None
            if next_base is None or upper < next_base:
                bound = segment.translate_offset(upper)
                max_position = bound.position if bound is not None else segment.size
            else:
                max_position = segment.size
            found = segment.read(offset, max_bytes, max_position, min_one_batch)
            if found is not None:
                return found[1]
            i += 1
        return b""

    def batches(self, start_offset: int | None = None, end_offset: int | None = None) -> list[RecordBatch]:
        """Whole stored batches overlapping [start, end) (defaults: the whole log) — for coordinators
        replaying their topics, tests and tools; not the fetch path."""
        self._check_open()
        start = self._log_start_offset if start_offset is None else start_offset
        end = self._log_end_offset if end_offset is None else end_offset
        out: list[RecordBatch] = []
        i = max(bisect_right(self._bases, start) - 1, 0)
        for segment in self._segments[i:]:
            found = segment.translate_offset(start)
            if found is None:
                continue
            for position, header in segment.batches_from(found.position):
                if header.base_offset >= end:
                    return out
                out.append(RecordBatch(bytes(segment.read_bytes(position, header.size))))
        return out

    # --- offsets by timestamp ----------------------------------------------------------------------------

    def offset_for_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        """Kafka's UnifiedLog.fetchOffsetByTimestamp: the special timestamps of ListOffsetsTimestamp, or the
        first record with a timestamp >= `timestamp`; None when there is no such record."""
        self._check_open()
        if timestamp in (ListOffsetsTimestamp.EARLIEST, ListOffsetsTimestamp.EARLIEST_LOCAL):
            earliest = self.epoch_cache.earliest_entry
            epoch = earliest.epoch if earliest is not None and earliest.start_offset <= self._log_start_offset else None
            return TimestampAndOffset(NO_TIMESTAMP, self._log_start_offset, epoch)
        if timestamp == ListOffsetsTimestamp.LATEST:
            return TimestampAndOffset(NO_TIMESTAMP, self._log_end_offset, self.epoch_cache.latest_epoch)
        if timestamp in (ListOffsetsTimestamp.LATEST_TIERED, ListOffsetsTimestamp.EARLIEST_PENDING_UPLOAD):
            return TimestampAndOffset(NO_TIMESTAMP, -1, -1)
        if timestamp == ListOffsetsTimestamp.MAX_TIMESTAMP:
            return self._max_timestamp_offset()
        for segment in self._segments:
            if segment.largest_timestamp >= timestamp:
                return segment.find_offset_by_timestamp(timestamp, self._log_start_offset)
        return None

    def _max_timestamp_offset(self) -> TimestampAndOffset | None:
        best = self._segments[0]
        for segment in self._segments[1:]:
            if segment.max_timestamp_so_far > best.max_timestamp_so_far:
                best = segment
        target = best.max_timestamp_so_far
        # With no timestamps at all Kafka still answers: the first batch whose max timestamp is -1.
        position = best.offset_index.lookup(best.offset_of_max_timestamp_so_far)[1]
        for pos, header in best.batches_from(position):
            if header.max_timestamp == target:
                offset = offset_of_max_timestamp(RecordBatch(bytes(best.read_bytes(pos, header.size))))
                if offset is None:
                    return None
                epoch = header.partition_leader_epoch
                return TimestampAndOffset(header.max_timestamp, offset, epoch if epoch >= 0 else None)
        return None

    def fetch_offset_for_timestamp(self, timestamp: int, fetchable: int,
                                   leader_epoch: int) -> TimestampAndOffset | None:
        """ListOffsets as Kafka's Partition answers it for a reader bounded by `fetchable` (the high
        watermark for read_uncommitted, the last stable offset for read_committed, the log end for a
        replica): LATEST is that bound with the partition's current `leader_epoch`; timestamp lookups only
        find offsets below it."""
        self._check_open()
        if timestamp == ListOffsetsTimestamp.LATEST:
            return TimestampAndOffset(NO_TIMESTAMP, fetchable, leader_epoch)
        found = self.offset_for_timestamp(timestamp)
        if timestamp in (ListOffsetsTimestamp.EARLIEST, ListOffsetsTimestamp.EARLIEST_LOCAL):
            return found
        if found is not None and found.offset < fetchable:
            return found
        return None

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (epoch, end offset), (-1, -1) when unknown."""
        return self.epoch_cache.end_offset_for(leader_epoch, self._log_end_offset)

    # --- deleting ----------------------------------------------------------------------------------------

    def delete_records(self, offset: int) -> int:
        """DeleteRecords: move the log start offset up to `offset` (-1: the high watermark). Returns the
        new low watermark. OffsetOutOfRangeError if negative or beyond the high watermark. The segments
        wholly below it go at the next `delete_old_segments`, as in Kafka."""
        self._check_open()
        if offset == DELETE_RECORDS_HIGH_WATERMARK:
            offset = self._high_watermark
        if offset < 0:
            raise OffsetOutOfRangeError(f"The offset {offset} for partition {self.topic_partition} is not valid")
        self._increment_log_start_offset(offset)
        return self._log_start_offset

    def _increment_log_start_offset(self, offset: int) -> None:
        if offset > self._high_watermark:
            raise OffsetOutOfRangeError(
                f"Cannot increment the log start offset to {offset} of partition {self.topic_partition} since it is "
                f"larger than the high watermark {self._high_watermark}"
            )
        if offset <= self._log_start_offset:
            return
        self._log_start_offset = offset
        self.epoch_cache.truncate_from_start(offset)
        if self.on_log_start_offset_change is not None:
            self.on_log_start_offset_change(self)
        self._segments_gone()
        self._notify(LogEvent.LOG_START_OFFSET)

    def delete_old_segments(self) -> int:
        """Retention, called periodically (Kafka's log.retention.check.interval.ms): drop whole segments
        below the log start offset, beyond `retention.bytes`, or older than `retention.ms` (by their
        largest record timestamp). Returns how many segments were deleted."""
        self._check_open()
        deleted = self._delete_segments_where(self._below_log_start)
        if self.config.delete:
            deleted += self._delete_retention_size_breached()
            deleted += self._delete_retention_ms_breached()
        return deleted

    def _below_log_start(self, segment: LogSegment, following: LogSegment | None) -> bool:
        return following is not None and following.base_offset <= self._log_start_offset

    def _delete_retention_size_breached(self) -> int:
        retention = self.config.retention_bytes
        size = self.size_in_bytes
        if retention < 0 or size < retention:
            return 0
        excess = size - retention

        def over(segment: LogSegment, following: LogSegment | None) -> bool:
            nonlocal excess
            if excess - segment.size >= 0:
                excess -= segment.size
                return True
            return False

        return self._delete_segments_where(over)

    def _delete_retention_ms_breached(self) -> int:
        retention = self.config.retention_ms
        if retention < 0:
            return 0
        now = self.clock.now_ms()
        return self._delete_segments_where(lambda segment, following: now - segment.largest_timestamp > retention)

    def _delete_segments_where(self, predicate: Callable[[LogSegment, LogSegment | None], bool]) -> int:
        deletable: list[LogSegment] = []
        for i, segment in enumerate(self._segments):
            following = self._segments[i + 1] if i + 1 < len(self._segments) else None
            upper = following.base_offset if following is not None else self._log_end_offset
            last_and_empty = following is None and segment.is_empty
            if self._high_watermark >= upper and predicate(segment, following) and not last_and_empty:
                deletable.append(segment)
            else:
                break
        if not deletable:
            return 0
        count = len(deletable)
        if count == len(self._segments):
            fresh = self.roll()
            if deletable[-1] is fresh:
                deletable.pop()
        if deletable:
            following = self._segments[len(deletable)]
            self._increment_log_start_offset(following.base_offset)
            for segment in deletable:
                segment.delete()
            del self._segments[: len(deletable)]
            del self._bases[: len(deletable)]
            self._segments_gone()
            self._notify(LogEvent.SEGMENTS_DELETED)
        return count

    def truncate_to(self, offset: int) -> bool:
        """Remove everything at and above `offset` (the batch holding it goes whole). False if nothing to do."""
        self._check_open()
        if offset < 0:
            raise ValueError(f"cannot truncate to a negative offset ({offset})")
        if offset >= self._log_end_offset:
            return False
        if offset <= self._segments[0].base_offset:
            self.truncate_fully_and_start_at(offset, log_start_offset=min(self._log_start_offset, offset))
            return True
        keep = bisect_right(self._bases, offset)
        for segment in self._segments[keep:]:
            segment.delete()
        del self._segments[keep:]
        del self._bases[keep:]
        active = self._segments[-1]
        active.truncate_to(offset)
        if not active.is_active:
            active.recover()
            active.activate()
        self._log_end_offset = offset
        self._high_watermark = min(self._high_watermark, offset)
        self._log_start_offset = min(self._log_start_offset, offset)
        self.epoch_cache.truncate_from_end(offset)
        self._rebuild_producer_state(0)
        self._notify(LogEvent.TRUNCATED)
        return True

    def truncate_fully_and_start_at(self, offset: int, *, log_start_offset: int | None = None) -> None:
        self._check_open()
        for segment in self._segments:
            segment.delete()
        self._segments, self._bases = [], []
        self._add_segment(LogSegment.create(self.directory, offset, **self._segment_options()))
        self.epoch_cache.clear()
        self._log_end_offset = offset
        self._high_watermark = offset
        self._log_start_offset = offset if log_start_offset is None else log_start_offset
        if self.on_log_start_offset_change is not None:
            self.on_log_start_offset_change(self)
        self._rebuild_producer_state(0)
        self._notify(LogEvent.TRUNCATED)

    # --- closing -----------------------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        for segment in self._segments:
            segment.close()
        self._closed = True
        self.take_snapshot()
        self._notify(LogEvent.CLOSED)
        # Told, the listeners go: a listener holding this log (a coordinator's, a parked fetch's) makes a
        # cycle that would leave a deleted partition's objects to the full garbage collection, a walk of every
        # live object (the server freezes long-lived objects out of that walk, and a frozen cycle is never
        # collected at all).
        self._listeners = ()
        self.on_log_start_offset_change = None

    def delete(self) -> None:
        """Remove the partition's directory and everything in it (topic deletion). Removed before the log
        closes, so that closing writes no producer snapshot only for it to be deleted (two thirds of what
        deleting a partition cost); the open segment files close unlinked, which POSIX allows."""
        shutil.rmtree(self.directory, ignore_errors=True)
        self.close()

    # --- transactions: the last stable offset, aborted transactions, producer state ------------------------

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction, else the high watermark (never below the log
        start, never above the high watermark)."""
        unstable = min(self.producers.ongoing.values(), default=None)
        if unstable is not None and unstable < self._high_watermark:
            return max(unstable, self._log_start_offset)
        return self._high_watermark

    def bound(self, isolation: FetchIsolation) -> int:
        """The highest offset (exclusive) a reader with this isolation may see."""
        if isolation is FetchIsolation.TXN_COMMITTED:
            return self.last_stable_offset
        if isolation is FetchIsolation.HIGH_WATERMARK:
            return self._high_watermark
        return self._log_end_offset

    def aborted_transactions(self, fetch_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound_offset), for read_committed Fetch (see
        AbortedTxnIndex.collect)."""
        return self._aborted.collect(self._segment_base_for(fetch_offset), fetch_offset, upper_bound_offset)

    def last_records_of_active_producers(self) -> dict[int, LastRecord]:
        """What compaction must keep of each producer with state (Kafka's lastRecordsOfActiveProducers)."""
        return self.producers.last_records()

    def segments_replaced(self) -> None:
        """The cleaner swapped segments in: re-read their aborted-transaction indexes."""
        self._aborted.read_all(set(self._bases))

    def expire_producers(self, now_ms: int, expiration_ms: int) -> list[int]:
        return self.producers.expire(now_ms, expiration_ms)

    def take_snapshot(self) -> None:
        take_snapshot(self.directory, self.producers, self._log_end_offset)

    def _segments_gone(self) -> None:
        """Segments were deleted, or the log start moved past some: their producers and aborts go too."""
        self._aborted.keep_segments(set(self._bases))
        self.producers.truncate_head(self._log_start_offset)
        delete_snapshots_below(self.directory, self._segments[0].base_offset)

    def _recover_producer_state(self) -> None:
        self._aborted.read_all(set(self._bases))
        start = self._log_start_offset
        loaded = load_snapshot(self.directory, self._log_end_offset, self.topic_partition)
        if loaded is not None:
            self.producers, start = loaded
        self._rebuild_producer_state(start, keep_state=start != self._log_start_offset)

    def _rebuild_producer_state(self, start: int, keep_state: bool = False) -> None:
        """Replay batches from `start` to the log end into producer state and the aborted index."""
        if not keep_state:
            self.producers.clear()
            start = self._log_start_offset
        touched = self._aborted.truncate(start, self._log_end_offset)
        for batch in self.batches(start, None):
            header = batch.header
            if header.base_offset < start or not header.has_producer_id:
                continue
            if header.is_control:
                try:
                    commit, coordinator_epoch = _marker_of(batch.records())
                except (LogError, ValueError):
                    continue
                self._record_marker(header, commit, coordinator_epoch, persist=False)
                touched.add(self._segment_base_for(header.base_offset))
            else:
                self._record_batch(header)
        for base in touched:
            self._aborted.write(base)

    def __repr__(self) -> str:
        return (
            f"PartitionLog({self.topic_partition}, start={self._log_start_offset}, hw={self._high_watermark}, "
            f"end={self._log_end_offset}, segments={len(self._segments)})"
        )



def _marker_of(records: list[DecodedRecord]) -> tuple[bool, int]:
    """(commit, coordinator epoch) of a control batch's one COMMIT/ABORT record."""
    if len(records) != 1:
        raise MarkerError("a transaction marker batch must hold one record", ErrorCode.INVALID_RECORD)
    _, record_type = decode_control_key(records[0].key)
    if record_type not in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
        raise MarkerError(f"unexpected control record type {record_type}", ErrorCode.INVALID_RECORD)
    _, coordinator_epoch = decode_end_txn_marker_value(records[0].value)
    return record_type == ControlRecordType.COMMIT, coordinator_epoch
