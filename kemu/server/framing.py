"""Kafka's framing: each request is a 4-byte big-endian size followed by that many bytes.

Sans-IO and copy-free: the socket receives straight into the buffer (`writable()` then `advance(n)`, or
`feed` for a stream that can only hand out bytes), and `next_frame` hands out each whole frame as a
`memoryview` of that buffer — nothing of the unread rest is moved per frame. A frame's view (and the record
batches decoded as views of it) may outlive the next receive, so the buffer is only rewound in place while
no view of it is alive; otherwise the unread tail moves to a fresh buffer and the old one lives on for
whoever still holds a view. A frame bigger than the buffer gets a bigger buffer as its bytes arrive (twice
what has come, up to its size), which the socket then fills directly. A size beyond
`socket.request.max.bytes` (or negative) is refused as soon as the 4 size bytes are in, before any of the body
is read, as Kafka's `NetworkReceive` does.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kemu.wire.buffers import Part, is_exported

_SIZE = struct.Struct(">i")
SIZE_BYTES = _SIZE.size
CHUNK_BYTES = 65536
INITIAL_BYTES = 1024
"""What a connection's buffer starts with: the requests of an idle or chatty client (ApiVersions, Metadata,
heartbeats) fit, and a thousand idle connections hold 1 MiB, not 64 MiB; a bigger request grows it by chunks."""

Buffer = bytes | bytearray | memoryview


class FrameError(Exception):
    """The size prefix is not one a Kafka broker would accept; the connection must be closed."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


class FrameBuffer:
    def __init__(self, max_size: int, chunk_size: int = CHUNK_BYTES) -> None:
        self.max_size = max_size
        self.chunk_size = chunk_size
        self._buffer = bytearray(min(chunk_size, INITIAL_BYTES))
        self._start = 0  # the first unread byte
        self._end = 0  # one past the last received byte
        self._pending = -1  # body size of the frame at `_start`, once its prefix is in and checked

    def writable(self) -> memoryview:
        """Where the next received bytes go (never empty); say how many arrived with `advance`."""
        needed = max(SIZE_BYTES + self._pending if self._pending >= 0 else SIZE_BYTES, self._frame_size())
        if self._end == len(self._buffer) or (self._start > 0 and len(self._buffer) - self._start < needed):
            unread = self._end - self._start
            # Room grows with the bytes that came, not with the size the prefix declares: at most twice what
            # has arrived of the frame (a chunk at least), so 5 bytes declaring 100 MiB take a chunk, not
            # 100 MiB, and a frame that does arrive costs its size plus the copies of a doubling buffer.
            self._make_room(max(unread + 1, min(needed, max(self.chunk_size, 2 * unread))))
        return memoryview(self._buffer)[self._end:]

    def _frame_size(self) -> int:
        """The whole size of the frame at `_start` once its prefix is in (0 before, or if it is invalid:
        `next_frame` refuses that)."""
        if self._end - self._start < SIZE_BYTES:
            return 0
        (size,) = _SIZE.unpack_from(self._buffer, self._start)
        return SIZE_BYTES + size if 0 <= size <= self.max_size else 0

    def advance(self, count: int) -> None:
        self._end += count

    def mid_frame(self) -> bool:
        """Whether what is buffered is the start of a frame and nothing more: a receive is still needed."""
        available = self._end - self._start
        return 0 < available < max(SIZE_BYTES, self._frame_size())

    def feed(self, data: Buffer) -> None:
        """Copy `data` in: for streams that receive into bytes of their own (TLS), and for tests."""
        with memoryview(data) as view:
            view = view.cast("B")
            while view:
                with self.writable() as target:
                    count = min(len(target), len(view))
                    target[:count] = view[:count]
                self.advance(count)
                view = view[count:]

    def next_frame(self) -> memoryview | None:
        """The next complete frame, or None until more bytes arrive."""
        available = self._end - self._start
        if self._pending < 0:
            if available < SIZE_BYTES:
                return None
            (size,) = _SIZE.unpack_from(self._buffer, self._start)
            if size < 0 or size > self.max_size:
                raise FrameError(f"invalid request size {size} (socket.request.max.bytes is {self.max_size})", size)
            self._pending = size
        if available < SIZE_BYTES + self._pending:
            return None
        begin = self._start + SIZE_BYTES
        self._start = begin + self._pending
        self._pending = -1
        return memoryview(self._buffer)[begin:self._start]

    def _make_room(self, needed: int) -> None:
        unread = self._end - self._start
        if len(self._buffer) >= needed and not is_exported(self._buffer):
            # No frame handed out before is still alive: rewind in place.
            self._buffer[:unread] = self._buffer[self._start:self._end]
        else:
            fresh = bytearray(max(self.chunk_size, needed))
            fresh[:unread] = memoryview(self._buffer)[self._start:self._end]
            self._buffer = fresh
        self._start, self._end = 0, unread

    @staticmethod
    def frame(payload: Buffer) -> bytes:
        return _SIZE.pack(len(payload)) + payload

    @staticmethod
    def size_prefix(payload: Buffer | int) -> bytes:
        return _SIZE.pack(payload if isinstance(payload, int) else len(payload))


def frame_buffers(payload: Sequence[Part]) -> list[Part]:
    """A response in pieces (kemu.wire.codec.Encoded), with its size prefix in front."""
    return [_SIZE.pack(sum(len(part) for part in payload)), *payload]

