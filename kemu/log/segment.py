"""One log segment: `<base offset, 20 digits>.log` with its `.index` and `.timeindex` (Kafka's LogSegment).

The `.log` file is raw v2 batches back to back and is written through on every append, so the file is the
truth the moment `append` returns (a `kill -9` loses nothing the OS has accepted). The active segment also
keeps its recent batches in memory (up to `cache_bytes`) together with the position and last offset of
every batch, so fetches near the end of the log are served without touching the file and offset lookups
are a binary search. Rolled segments drop all of that and are read with `pread`, located through the
sparse on-disk-format indexes plus a short header scan, as Kafka does.

`.txnindex` (aborted transactions) is named here and deleted with the segment; the partition log writes
it (kemu.log.txn_index).
"""

from __future__ import annotations

import os
import weakref
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from kemu.clock import Clock
from kemu.log import read_buffers
from kemu.log.cache_budget import CacheBudget
from kemu.log.index import CorruptIndexError, OffsetIndex, TimeIndex
from kemu.wire.file_region import FileRegion, SharedFile
from kemu.wire.records import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    BatchHeader,
    RecordBatch,
    RecordsError,
    batch_slices,
)

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SEGMENT_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
# Per active segment. A test broker hosts many partitions (the internal topics alone have 100), and the
# page cache already keeps recent file data warm, so only the newest MiB is held as Python bytes.
DEFAULT_CACHE_BYTES = 1024 * 1024
_SCAN_WINDOW = 1024 * 1024
# A Fetch's read of file bytes at least this long is answered as a region of the file, sent with sendfile;
# a shorter one is read. Measured on a loopback socket (/tmp micro-benchmark, one sender thread's CPU): the
# region's own sendfile, and the writes of the answer's pieces around it it splits, cost about what pread
# and the copy save at 16 KiB (13 vs 11 us); at 4 KiB they cost twice as much (7 vs 14 us), at 64 KiB half.
REGION_MIN_BYTES = 16 * 1024
_INT32_MAX = 2**31 - 1


def segment_file_name(base_offset: int, suffix: str) -> str:
    return f"{base_offset:020d}{suffix}"


def parse_segment_file_name(name: str) -> tuple[int, str] | None:
    """(base offset, suffix) of a segment file name, or None for any other file."""
    stem, dot, suffix = name.partition(".")
    if not dot or len(stem) != 20 or not stem.isdigit():
        return None
    return int(stem), "." + suffix


class SegmentBatch(NamedTuple):
    position: int
    header: BatchHeader


class TimestampAndOffset(NamedTuple):
    timestamp: int
    offset: int
    leader_epoch: int | None


class LogSegment:
    def __init__(
        self,
        directory: Path,
        base_offset: int,
        *,
        clock: Clock,
        index_interval_bytes: int,
        max_index_size: int,
        roll_jitter_ms: int = 0,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        cache_budget: CacheBudget | None = None,
        fsync_indexes: bool = False,
        file_suffix: str = "",
    ) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.file_suffix = file_suffix
        """Appended to every file name, as Kafka's `.cleaned` and `.swap` segments are named."""
        self.log_path = directory / (segment_file_name(base_offset, LOG_SUFFIX) + file_suffix)
        self.txn_index_path = directory / (segment_file_name(base_offset, TXN_INDEX_SUFFIX) + file_suffix)
        self.offset_index = OffsetIndex(
            directory / (segment_file_name(base_offset, INDEX_SUFFIX) + file_suffix),
            base_offset,
            max_index_size,
            fsync=fsync_indexes,
        )
        self.time_index = TimeIndex(
            directory / (segment_file_name(base_offset, TIME_INDEX_SUFFIX) + file_suffix),
            base_offset,
            max_index_size,
            fsync=fsync_indexes,
        )
        self.index_interval_bytes = index_interval_bytes
        self.roll_jitter_ms = roll_jitter_ms
        self._clock = clock
        self._cache_limit = cache_bytes
        self._budget = cache_budget
        self._ref = weakref.ref(self) if cache_budget is not None else None  # how the budget names it
        self.stale = 0  # CachingSegment.stale
        self.size = 0
        self.created_ms = clock.now_ms()
        self.last_modified_ms = self.created_ms
        self.max_timestamp_so_far = NO_TIMESTAMP
        self.offset_of_max_timestamp_so_far = -1
        self._rolling_based_timestamp: int | None = None
        self._bytes_since_last_index_entry = 0
        # Active-segment state: an append/read descriptor (`_fd`, held as `_file`, which regions of the file
        # share), every batch's position and last offset, and the bytes of the most recent batches (older
        # entries of `_chunks` are None once evicted).
        self._fd: int | None = None
        self._file: SharedFile | None = None
        # A rolled segment's read descriptor while regions of it live: opened by the first, closed with the last.
        self._reader: weakref.ref[SharedFile] | None = None
        self._positions = array("q")
        self._last_offsets = array("q")
        self._chunks: list[bytes | None] = []
        self._cached_bytes = 0
        self._first_cached = 0

    # --- lifecycle ---------------------------------------------------------------------------------------

    @classmethod
    def create(cls, directory: Path, base_offset: int, **kwargs: object) -> LogSegment:
        """A new, empty, active segment; its three files exist on disk from the start."""
        segment = cls(directory, base_offset, **kwargs)  # type: ignore[arg-type]
        for path in (segment.offset_index.path, segment.time_index.path):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))  # not Path.touch: no utime needed
        segment._open_fd()  # creates the .log
        return segment

    @classmethod
    def load(cls, directory: Path, base_offset: int, upper_offset: int, **kwargs: object) -> tuple[LogSegment, bool]:
        """Open an existing rolled segment. Returns (segment, indexes_ok); if not ok the caller recovers it."""
        segment = cls(directory, base_offset, **kwargs)  # type: ignore[arg-type]
        stat = segment.log_path.stat()
        segment.size = stat.st_size
        segment.last_modified_ms = stat.st_mtime_ns // 1_000_000
        try:
            segment.offset_index.load(segment.size)
            segment.time_index.load(upper_offset)
        except (FileNotFoundError, CorruptIndexError):
            return segment, False
        segment.max_timestamp_so_far, segment.offset_of_max_timestamp_so_far = segment.time_index.last_entry
        if segment.max_timestamp_so_far == NO_TIMESTAMP:
            segment.offset_of_max_timestamp_so_far = -1
        return segment, True

    def _open_fd(self) -> None:
        if self._fd is None:
            self._fd = os.open(self.log_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            self._file = SharedFile(self._fd)
            self._reader = None

    @property
    def is_active(self) -> bool:
        return self._fd is not None

    def activate(self) -> None:
        """Make a loaded segment the active one (after recovery, which has already indexed every batch)."""
        self._open_fd()

    def deactivate(self) -> None:
        """The segment was rolled: write the final time index entry and let go of memory and descriptors."""
        if self.max_timestamp_so_far != NO_TIMESTAMP:
            self.time_index.maybe_append(
                self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far, skip_full_check=True
            )
        self.close()

    def close(self) -> None:
        self.write_indexes()
        self._release()

    def _release(self) -> None:
        # The descriptor closes when the last region of the file lets go of it too (kemu.wire.file_region):
        # an answer built before the segment was closed, deleted or swapped still sends the bytes it named.
        self._fd, self._file, self._reader = None, None, None
        self._positions, self._last_offsets = array("q"), array("q")
        self._drop_cache()

    def write_indexes(self) -> None:
        """Bring both index files up to the entries made so far (kemu.log.index keeps the newest in memory)."""
        try:
            self.offset_index.write_pending()
            self.time_index.write_pending()
        except FileNotFoundError:
            # The directory is gone (the log was deleted, PartitionLog.delete removing it before it closes): an
            # index file is created if missing, so only then does this fail, and there is nothing to keep.
            if self.log_path.parent.exists():
                raise

    def _drop_cache(self) -> None:
        if self._budget is not None and self._cached_bytes:
            self._budget.dropped(self, self._cached_bytes, len(self._chunks) - self._first_cached)
        self._chunks, self._cached_bytes, self._first_cached = [], 0, 0

    def delete(self) -> None:
        self._release()
        for path in self.file_paths():
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def file_paths(self) -> tuple[Path, Path, Path, Path]:
        return self.log_path, self.offset_index.path, self.time_index.path, self.txn_index_path

    def change_file_suffix(self, new_suffix: str) -> None:
        """Rename the segment's files from its current suffix to `new_suffix` (Kafka's changeFileSuffixes);
        files that do not exist (an empty `.txnindex`) are skipped."""
        renamed = []
        for path in self.file_paths():
            target = path.with_name(path.name.removesuffix(self.file_suffix) + new_suffix) if self.file_suffix \
                else path.with_name(path.name + new_suffix)
            if path.exists():
                os.replace(path, target)
            renamed.append(target)
        self.log_path, self.offset_index.path, self.time_index.path, self.txn_index_path = renamed
        self.file_suffix = new_suffix

    def flush(self) -> None:
        self.write_indexes()
        if self._fd is not None:
            os.fsync(self._fd)

    # --- facts -------------------------------------------------------------------------------------------

    @property
    def is_empty(self) -> bool:
        return self.size == 0

    @property
    def largest_timestamp(self) -> int:
        """What time retention compares against: the max record timestamp, else the last modification."""
        return self.max_timestamp_so_far if self.max_timestamp_so_far >= 0 else self.last_modified_ms

    def next_offset(self) -> int:
        """Offset after the last batch (the base offset when empty)."""
        if self._fd is not None:
            return self._last_offsets[-1] + 1 if self._last_offsets else self.base_offset
        last = None
        start = self.offset_index.lookup(2**63 - 1)[1]
        for entry in self.batches_from(start):
            last = entry
        return last.header.next_offset if last is not None else self.base_offset

    def rolling_based_timestamp(self) -> int | None:
        if self._rolling_based_timestamp is None and self.size:
            first = next(self.batches_from(0), None)
            if first is not None:
                self._rolling_based_timestamp = first.header.max_timestamp
        return self._rolling_based_timestamp

    def should_roll(
        self,
        *,
        max_segment_ms: int,
        max_segment_bytes: int,
        max_timestamp_in_messages: int,
        max_offset_in_messages: int,
        messages_size: int,
        now_ms: int,
    ) -> bool:
        rolling = self._rolling_based_timestamp
        if rolling is None:
            rolling = self.rolling_based_timestamp()
        waited = (
            max_timestamp_in_messages - rolling if rolling is not None and rolling >= 0 else now_ms - self.created_ms
        )
        reached_roll_ms = waited > max_segment_ms - self.roll_jitter_ms
        return (
            self.size > max_segment_bytes - messages_size
            or (self.size > 0 and reached_roll_ms)
            or self.offset_index.is_full
            or self.time_index.is_full
            or max_offset_in_messages - self.base_offset > _INT32_MAX
        )

    # --- writing -----------------------------------------------------------------------------------------

    def append(self, batch: bytes, header: BatchHeader, now_ms: int) -> int:
        """Write one batch (offsets already assigned) at the end, at `now_ms` on the log's clock; returns its
        position in the segment."""
        if self._fd is None:
            raise RuntimeError(f"segment {self.log_path.name} is not active")
        position = self.size
        size = len(batch)
        written = os.write(self._fd, batch)
        if written < size:  # a short write (a signal, a full disk's last bytes): write the rest
            view = memoryview(batch)
            while written < size:
                written += os.write(self._fd, view[written:])
        last_offset = header.base_offset + header.last_offset_delta
        if header.max_timestamp > self.max_timestamp_so_far:
            self.max_timestamp_so_far = header.max_timestamp
            self.offset_of_max_timestamp_so_far = last_offset
        if self._rolling_based_timestamp is None:
            self._rolling_based_timestamp = header.max_timestamp
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(last_offset, position)
            self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far)
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += size
        self.size += size
        self.last_modified_ms = now_ms
        self._remember(position, last_offset, bytes(batch) if not isinstance(batch, bytes) else batch)
        return position

    def _remember(self, position: int, last_offset: int, data: bytes | None) -> None:
        self._positions.append(position)
        self._last_offsets.append(last_offset)
        chunks = self._chunks
        chunks.append(data)
        if data is None:
            self._evict_before(len(chunks))
            return
        self._cached_bytes += len(data)
        if self._cached_bytes > self._cache_limit:
            self._evict_before(len(chunks) - 1, self._cached_bytes - self._cache_limit)
        if self._budget is not None and self._ref is not None:
            self._budget.added(self._ref, len(data))

    def _evict_before(self, end: int, enough: int | None = None) -> None:
        """Drop cached chunks from the oldest on, below index `end`, or until `enough` bytes are dropped."""
        chunks = self._chunks
        dropped_bytes = dropped = 0
        while self._first_cached < end and (enough is None or dropped_bytes < enough):
            evicted = chunks[self._first_cached]
            chunks[self._first_cached] = None
            if evicted is not None:
                dropped_bytes += len(evicted)
                dropped += 1
            self._first_cached += 1
        self._cached_bytes -= dropped_bytes
        if self._budget is not None and dropped:
            self._budget.dropped(self, dropped_bytes, dropped)

    def evict_oldest(self) -> int:
        """The budget's turn (CachingSegment.evict_oldest): drop the oldest cached chunk, give its size."""
        # What is cached is always a suffix of `_chunks` with no gap: the oldest cached chunk is at `_first_cached`.
        evicted = self._chunks[self._first_cached]
        assert evicted is not None
        self._chunks[self._first_cached] = None
        self._first_cached += 1
        self._cached_bytes -= len(evicted)
        return len(evicted)

    # --- reading -----------------------------------------------------------------------------------------

    def read_bytes(self, position: int, size: int) -> bytes | memoryview:
        """`size` bytes of the segment from `position` (a view of cached data when possible)."""
        if size <= 0:
            return b""
        cached = self._cached_index(position)
        if cached is not None:
            return self._from_cache(cached, position, size)
        fd = self._fd if self._fd is not None else os.open(self.log_path, os.O_RDONLY)
        try:
            data = read_buffers.pread(fd, size, position)
        finally:
            if fd != self._fd:
                os.close(fd)
        return data

    def read_for_sending(self, position: int, size: int) -> bytes | memoryview | FileRegion:
        """As `read_bytes`, but bytes that would be read from the file, `REGION_MIN_BYTES` or more, come back
        as a region of it, to be sent from the page cache rather than copied (a Fetch's records)."""
        if size < REGION_MIN_BYTES or self._cached_index(position) is not None:
            return self.read_bytes(position, size)
        return FileRegion(self._shared_file(), position, size)

    def _cached_index(self, position: int) -> int | None:
        """The index of the cached chunk holding `position`, or None when it is only in the file."""
        if self._fd is not None and self._chunks:
            i = bisect_right(self._positions, position) - 1
            if i >= self._first_cached:
                return i
        return None

    def _shared_file(self) -> SharedFile:
        if self._file is not None:
            return self._file
        shared = self._reader() if self._reader is not None else None
        if shared is None:
            shared = SharedFile.open(self.log_path)
            self._reader = weakref.ref(shared)
        return shared

    def _from_cache(self, index: int, position: int, size: int) -> bytes | memoryview:
        offset_in_chunk = position - self._positions[index]
        chunk = self._chunks[index]
        assert chunk is not None
        if offset_in_chunk + size <= len(chunk):
            return memoryview(chunk)[offset_in_chunk : offset_in_chunk + size]
        parts = [memoryview(chunk)[offset_in_chunk:]]
        remaining = size - (len(chunk) - offset_in_chunk)
        index += 1
        while remaining > 0 and index < len(self._chunks):
            chunk = self._chunks[index]
            assert chunk is not None
            parts.append(memoryview(chunk)[:remaining])
            remaining -= len(parts[-1])
            index += 1
        return read_buffers.joined(parts)

    def batches_from(self, position: int) -> Iterator[SegmentBatch]:
        """Headers of the batches starting at `position` (which must be a batch boundary), in order."""
        if self._fd is not None:
            i = bisect_left(self._positions, position)
            while i < len(self._positions):
                pos = self._positions[i]
                chunk = self._chunks[i]
                if chunk is not None:
                    yield SegmentBatch(pos, BatchHeader.parse(chunk))
                else:
                    yield SegmentBatch(pos, BatchHeader.parse(self.read_bytes(pos, HEADER_SIZE)))
                i += 1
            return
        yield from self._scan_file(position, self.size)

    def _scan_file(self, position: int, end: int) -> Iterator[SegmentBatch]:
        fd = os.open(self.log_path, os.O_RDONLY)
        try:
            window = b""
            window_start = position
            pos = position
            while end - pos >= HEADER_SIZE:
                if pos + HEADER_SIZE > window_start + len(window) or pos < window_start:
                    window = os.pread(fd, max(_SCAN_WINDOW, HEADER_SIZE), pos)
                    window_start = pos
                    if len(window) < HEADER_SIZE:
                        return
                header = BatchHeader.parse(window, pos - window_start)
                if header.batch_length < HEADER_SIZE - LOG_OVERHEAD or pos + header.size > end:
                    return
                yield SegmentBatch(pos, header)
                pos += header.size
        finally:
            os.close(fd)

    def translate_offset(self, offset: int, start_position: int = 0) -> SegmentBatch | None:
        """The first batch at or after `start_position` whose last offset is >= `offset` (None: beyond the end)."""
        if self._fd is not None:
            i = bisect_left(self._last_offsets, offset)
            while i < len(self._positions) and self._positions[i] < start_position:
                i += 1
            if i == len(self._positions):
                return None
            pos = self._positions[i]
            chunk = self._chunks[i]
            header = BatchHeader.parse(chunk if chunk is not None else self.read_bytes(pos, HEADER_SIZE))
            return SegmentBatch(pos, header)
        start = max(self.offset_index.lookup(offset)[1], start_position)
        for entry in self.batches_from(start):
            if entry.header.last_offset >= offset:
                return entry
        return None

    def read(
        self, start_offset: int, max_size: int, max_position: int, min_one_message: bool
    ) -> tuple[int, bytes | memoryview | FileRegion] | None:
        """Kafka's LogSegment.read: (position, bytes or a region of the file, as `read_for_sending`) from the
        batch holding `start_offset`, at most `max_size` bytes (or the whole first batch when
        `min_one_message`) and never past `max_position`.
        The bytes may end in a partial batch, exactly as a Kafka fetch does — but never in a partial first
        batch: that reads as nothing (ReplicaManager's checkFetchDataInfo: the consumer moves on to another
        partition instead of failing on a batch it cannot decode). None: offset beyond this segment."""
        found = self.translate_offset(start_offset)
        if found is None:
            return None
        position, header = found
        adjusted = max(max_size, header.size) if min_one_message else max_size
        if adjusted == 0 or position > max_position or adjusted < header.size:
            return position, b""
        return position, self.read_for_sending(position, min(max_position - position, adjusted))

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int) -> TimestampAndOffset | None:
        """The first record at or after `starting_offset` whose timestamp is >= `timestamp`."""
        _, indexed_offset = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(indexed_offset, starting_offset))[1]
        for pos, header in self.batches_from(position):
            if header.max_timestamp < timestamp:
                continue
            for record in RecordBatch(self.read_bytes(pos, header.size)).records():
                if record.timestamp >= timestamp and record.offset >= starting_offset:
                    epoch = header.partition_leader_epoch
                    return TimestampAndOffset(
                        record.timestamp, record.offset, None if epoch == NO_PARTITION_LEADER_EPOCH else epoch
                    )
        return None

    # --- recovery and truncation -------------------------------------------------------------------------

    def recover(self, on_batch: Callable[[BatchHeader], None] | None = None) -> int:
        """Re-read the whole file: check every batch (size, magic, CRC, offsets), rebuild both indexes, and
        cut the file at the first bad byte. Returns the number of bytes truncated (Kafka's LogSegment.recover)."""
        self.offset_index.reset()
        self.time_index.reset()
        self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far = NO_TIMESTAMP, -1
        self._rolling_based_timestamp = None
        self._positions, self._last_offsets = array("q"), array("q")
        self._drop_cache()
        stat = self.log_path.stat()
        file_size = stat.st_size
        self.last_modified_ms = stat.st_mtime_ns // 1_000_000
        valid = 0
        last_index_entry = 0
        expected_offset = self.base_offset
        keep_bytes = file_size <= self._cache_limit
        with open(self.log_path, "rb") as source:
            data = source.read() if keep_bytes else None
        try:
            for position, batch_bytes in self._recovery_batches(data, file_size):
                batch = RecordBatch(batch_bytes)
                header = batch.header
                if header.magic != MAGIC_V2 or not batch.is_valid():
                    break
                if header.base_offset < expected_offset or header.last_offset_delta < 0:
                    break
                if header.max_timestamp > self.max_timestamp_so_far:
                    self.max_timestamp_so_far = header.max_timestamp
                    self.offset_of_max_timestamp_so_far = header.last_offset
                if self._rolling_based_timestamp is None:
                    self._rolling_based_timestamp = header.max_timestamp
                if valid - last_index_entry > self.index_interval_bytes:
                    self.offset_index.append(header.last_offset, valid)
                    self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far)
                    last_index_entry = valid
                self._bytes_since_last_index_entry = valid + header.size - last_index_entry
                self._remember(position, header.last_offset, bytes(batch_bytes) if keep_bytes else None)
                expected_offset = header.next_offset
                valid += header.size
                if on_batch is not None:
                    on_batch(header)
        except RecordsError:
            pass  # a malformed length or magic: the tail from here is garbage
        truncated = file_size - valid
        if truncated:
            os.truncate(self.log_path, valid)
        self.size = valid
        self.write_indexes()  # rebuilt on disk too, as Kafka's recovery leaves them
        return truncated

    def _recovery_batches(self, data: bytes | None, file_size: int) -> Iterator[tuple[int, memoryview]]:
        if data is not None:
            view = memoryview(data)
            position = 0
            for piece in batch_slices(view):
                yield position, piece
                position += len(piece)
            return
        fd = os.open(self.log_path, os.O_RDONLY)
        try:
            position = 0
            while position < file_size:
                window = os.pread(fd, _SCAN_WINDOW, position)
                consumed = 0
                for piece in batch_slices(window):
                    yield position + consumed, piece
                    consumed += len(piece)
                if consumed == 0:
                    head = os.pread(fd, LOG_OVERHEAD, position)
                    if len(head) < LOG_OVERHEAD:
                        return
                    whole = os.pread(fd, int.from_bytes(head[8:12], "big", signed=True) + LOG_OVERHEAD, position)
                    pieces = list(batch_slices(whole))
                    if not pieces:
                        return
                    yield position, pieces[0]
                    consumed = len(pieces[0])
                position += consumed
        finally:
            os.close(fd)

    def truncate_to(self, offset: int) -> int:
        """Remove every batch whose last offset is >= `offset` (Kafka truncates at the batch holding it).
        Returns the number of bytes removed."""
        found = self.translate_offset(offset)
        if found is None:
            return 0
        position = found.position
        self.offset_index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        removed = self.size - position
        if self._fd is not None:
            os.ftruncate(self._fd, position)
            keep = bisect_left(self._positions, position)
            del self._positions[keep:]
            del self._last_offsets[keep:]
            dropped = [c for c in self._chunks[keep:] if c is not None]
            dropped_bytes = sum(len(c) for c in dropped)
            del self._chunks[keep:]
            self._cached_bytes -= dropped_bytes
            self._first_cached = min(self._first_cached, len(self._chunks))
            if self._budget is not None and dropped:
                # Counted stale as the oldest of the segment's entries, though the newest went: an older chunk
                # then waits for a later entry, which only changes which chunk goes when.
                self._budget.dropped(self, dropped_bytes, len(dropped))
        else:
            os.truncate(self.log_path, position)
        self.size = position
        self._bytes_since_last_index_entry = 0
        self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far = NO_TIMESTAMP, -1
        for _, header in self.batches_from(0):
            if header.max_timestamp > self.max_timestamp_so_far:
                self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far = (
                    header.max_timestamp,
                    header.last_offset,
                )
        if self.size == 0:
            self.created_ms = self._clock.now_ms()
            self._rolling_based_timestamp = None
        return removed

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size}, active={self.is_active})"
