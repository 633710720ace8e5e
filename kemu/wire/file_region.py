"""Bytes of a file named rather than held: what a Fetch answer sends of a segment file (Kafka's FileRecords).

Kafka writes a Fetch answer's records to the socket with `FileChannel.transferTo` (`sendfile`) straight from
the page cache, so an answer a slow client has not read costs the broker's heap nothing. A `FileRegion` is
that here: an open file, a position and a length, sent with `os.sendfile` by the server (kemu.server) and
read into bytes (`bytes(region)`) by whoever must look at them or cannot send from a file (TLS, the test
harness, hooks).

The descriptor a region names must stay valid, and name the same inode, until the answer is sent or dropped,
whatever happens to the segment meanwhile (closed, rolled, deleted by retention, replaced by compaction): a
`SharedFile` is one descriptor per segment file, shared by the segment and every region of it, and closed when
the last of them lets go of it. CPython's reference count is that count (`weakref.finalize` closes it), so a
region dropped with an unsent answer, by whatever path, releases it too: no region needs a descriptor of its
own, which 500 connections owing 50 partitions each would run out of.
"""

from __future__ import annotations

import os
import weakref


class RegionTruncatedError(OSError):
    """The file is shorter than a region of it (the log was truncated under an unsent answer): its size was
    already framed, so the answer cannot be sent whole (Kafka's "Size of FileRecords has been truncated
    during write"), and the connection must close rather than send short or shifted bytes."""


class SharedFile:
    """One open descriptor of a file, closed once nothing refers to this object any more."""

    __slots__ = ("fd", "_closer", "__weakref__")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._closer = weakref.finalize(self, os.close, fd)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> SharedFile:
        return cls(os.open(path, os.O_RDONLY))

    @property
    def closed(self) -> bool:
        return not self._closer.alive


class FileRegion:
    """`length` bytes of `file` from `position`; it keeps `file` open while it lives."""

    __slots__ = ("file", "position", "length")

    def __init__(self, file: SharedFile, position: int, length: int) -> None:
        self.file, self.position, self.length = file, position, length

    def __len__(self) -> int:
        return self.length

    def __bytes__(self) -> bytes:
        return self.read(self.length)

    def read(self, size: int) -> bytes:
        """The region's first `size` bytes (RegionTruncatedError when the file no longer holds them)."""
        size = min(size, self.length)
        data = os.pread(self.file.fd, size, self.position)
        if len(data) == size:
            return data
        parts = [data]
        got = len(data)
        while got < size:  # a regular file reads short only at its end: then it was truncated
            more = os.pread(self.file.fd, size - got, self.position + got)
            if not more:
                raise RegionTruncatedError(f"{size - got} of {size} bytes of a region are past the end of its file")
            parts.append(more)
            got += len(more)
        return b"".join(parts)

    def __repr__(self) -> str:
        return f"FileRegion(fd={self.file.fd}, position={self.position}, length={self.length})"


Records = bytes | memoryview | FileRegion
"""A Fetch's records as the log reads them: cached bytes, bytes read, or a region of a segment file."""
