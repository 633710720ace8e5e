"""A segment's sparse indexes, in Kafka's on-disk format.

`.index`: 8-byte entries (int32 offset relative to the segment's base offset, int32 byte position of the
batch), one per `index.interval.bytes` of log data. `.timeindex`: 12-byte entries (int64 timestamp,
int32 relative offset), appended alongside when the segment's max timestamp has grown.

Entries live in memory (arrays) and are appended to the file as they are made, so the file always holds
what has been indexed. Unlike Kafka, files are not preallocated to `segment.index.bytes` and then
trimmed; they simply grow, which is the trimmed form Kafka leaves after a clean roll.
"""

from __future__ import annotations

import os
import struct
from array import array
from bisect import bisect_left, bisect_right
from pathlib import Path

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
NO_TIMESTAMP = -1


class CorruptIndexError(ValueError):
    pass


# Entries are kept in memory as they are made and reach the file this many at a time, and whenever the
# segment is flushed, rolled or closed (`write_pending`). Kafka's indexes are memory-mapped, so an entry costs
# it a store; a file append per entry cost kemu an open, a write and a close for every batch of 4 KiB or
# more, twice (offset and time index): most of a small Produce's system time. Nothing reads an active
# segment's index file: a log's last segment is always recovered from its batches when it is opened again.
PENDING_ENTRIES_WRITTEN_AT = 512


def _append_to_file(path: Path, data: bytes, fsync: bool) -> None:
    # Opened per write, not kept open, so an active segment holds one file descriptor (its log), as before.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _rewrite_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as out:
        out.write(data)


class OffsetIndex:
    ENTRY_SIZE = _OFFSET_ENTRY.size

    def __init__(self, path: Path, base_offset: int, max_index_size: int, *, fsync: bool = False) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(max_index_size // self.ENTRY_SIZE, 1)
        self._fsync = fsync
        self._offsets = array("q")
        self._positions = array("q")
        self._in_file = 0  # entries the file holds; those after them are pending

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def is_full(self) -> bool:
        return len(self._offsets) >= self.max_entries

    @property
    def last_offset(self) -> int:
        return self._offsets[-1] if self._offsets else self.base_offset

    def load(self, segment_size: int) -> None:
        """Read the file, raising CorruptIndexError if it cannot be an index of this segment."""
        data = self.path.read_bytes()
        if len(data) % self.ENTRY_SIZE:
            raise CorruptIndexError(f"{self.path}: size {len(data)} is not a multiple of {self.ENTRY_SIZE}")
        offsets, positions = array("q"), array("q")
        last_relative, last_position = -1, -1
        for relative, position in _OFFSET_ENTRY.iter_unpack(data):
            if relative <= last_relative or position <= last_position or position >= segment_size:
                raise CorruptIndexError(f"{self.path}: entry ({relative}, {position}) out of order or beyond the log")
            offsets.append(self.base_offset + relative)
            positions.append(position)
            last_relative, last_position = relative, position
        self._offsets, self._positions = offsets, positions
        self._in_file = len(offsets)

    def append(self, offset: int, position: int) -> None:
        if self._offsets and offset <= self._offsets[-1]:
            raise ValueError(f"index entry offset {offset} does not follow {self._offsets[-1]}")
        self._offsets.append(offset)
        self._positions.append(position)
        if len(self._offsets) - self._in_file >= PENDING_ENTRIES_WRITTEN_AT:
            self.write_pending()

    def write_pending(self) -> None:
        """Append the entries made since the last write to the file."""
        if self._in_file < len(self._offsets):
            _append_to_file(self.path, self._packed(self._in_file), self._fsync)
            self._in_file = len(self._offsets)

    def _packed(self, start: int) -> bytes:
        base, pack = self.base_offset, _OFFSET_ENTRY.pack
        return b"".join(pack(o - base, p) for o, p in zip(self._offsets[start:], self._positions[start:], strict=True))

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the last entry at or below `offset`; (base offset, 0) if none."""
        i = bisect_right(self._offsets, offset)
        if i == 0:
            return self.base_offset, 0
        return self._offsets[i - 1], self._positions[i - 1]

    def first_at_or_after(self, position: int) -> int | None:
        """The offset of the first entry whose position is at or after `position` (Kafka's
        fetchUpperBoundOffset), None if there is none."""
        i = bisect_left(self._positions, position)
        return self._offsets[i] if i < len(self._offsets) else None

    def truncate_to(self, offset: int) -> None:
        """Drop entries for offsets at or above `offset`."""
        keep = bisect_right(self._offsets, offset - 1)
        if keep == len(self._offsets):
            return
        del self._offsets[keep:]
        del self._positions[keep:]
        self.write_all()

    def reset(self) -> None:
        self._offsets, self._positions = array("q"), array("q")
        self.write_all()

    def write_all(self) -> None:
        _rewrite_file(self.path, self._packed(0))
        self._in_file = len(self._offsets)


class TimeIndex:
    ENTRY_SIZE = _TIME_ENTRY.size

    def __init__(self, path: Path, base_offset: int, max_index_size: int, *, fsync: bool = False) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(max_index_size // self.ENTRY_SIZE, 1)
        self._fsync = fsync
        self._timestamps = array("q")
        self._offsets = array("q")
        self._in_file = 0  # entries the file holds; those after them are pending

    def __len__(self) -> int:
        return len(self._timestamps)

    @property
    def is_full(self) -> bool:
        return len(self._timestamps) >= self.max_entries

    @property
    def last_entry(self) -> tuple[int, int]:
        """(timestamp, offset) of the last entry; (NO_TIMESTAMP, base offset) when empty, as Kafka."""
        if not self._timestamps:
            return NO_TIMESTAMP, self.base_offset
        return self._timestamps[-1], self._offsets[-1]

    def load(self, next_offset: int) -> None:
        data = self.path.read_bytes()
        if len(data) % self.ENTRY_SIZE:
            raise CorruptIndexError(f"{self.path}: size {len(data)} is not a multiple of {self.ENTRY_SIZE}")
        timestamps, offsets = array("q"), array("q")
        last_timestamp, last_relative = NO_TIMESTAMP, -1
        for timestamp, relative in _TIME_ENTRY.iter_unpack(data):
            if (
                timestamp <= last_timestamp
                or relative < last_relative
                or self.base_offset + relative >= max(next_offset, self.base_offset + 1)
            ):
                raise CorruptIndexError(f"{self.path}: entry ({timestamp}, {relative}) out of order or beyond the log")
            timestamps.append(timestamp)
            offsets.append(self.base_offset + relative)
            last_timestamp, last_relative = timestamp, relative
        self._timestamps, self._offsets = timestamps, offsets
        self._in_file = len(timestamps)

    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> None:
        """Append only when the timestamp grew (Kafka's TimeIndex.maybeAppend)."""
        if not skip_full_check and self.is_full:
            raise ValueError(f"time index {self.path} is full")
        last_timestamp, last_offset = self.last_entry
        if self._timestamps and offset < last_offset:
            raise ValueError(f"time index entry offset {offset} is below {last_offset}")
        if timestamp > last_timestamp:
            self._timestamps.append(timestamp)
            self._offsets.append(offset)
            if len(self._timestamps) - self._in_file >= PENDING_ENTRIES_WRITTEN_AT:
                self.write_pending()

    def write_pending(self) -> None:
        """Append the entries made since the last write to the file."""
        if self._in_file < len(self._timestamps):
            _append_to_file(self.path, self._packed(self._in_file), self._fsync)
            self._in_file = len(self._timestamps)

    def _packed(self, start: int) -> bytes:
        base, pack = self.base_offset, _TIME_ENTRY.pack
        return b"".join(pack(t, o - base) for t, o in zip(self._timestamps[start:], self._offsets[start:], strict=True))

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """(timestamp, offset) of the last entry with a timestamp at or below `timestamp`, else (-1, base)."""
        i = bisect_right(self._timestamps, timestamp)
        if i == 0:
            return NO_TIMESTAMP, self.base_offset
        return self._timestamps[i - 1], self._offsets[i - 1]

    def truncate_to(self, offset: int) -> None:
        keep = len(self._offsets)
        while keep and self._offsets[keep - 1] >= offset:
            keep -= 1
        if keep == len(self._offsets):
            return
        del self._timestamps[keep:]
        del self._offsets[keep:]
        self.write_all()

    def reset(self) -> None:
        self._timestamps, self._offsets = array("q"), array("q")
        self.write_all()

    def write_all(self) -> None:
        _rewrite_file(self.path, self._packed(0))
        self._in_file = len(self._timestamps)
