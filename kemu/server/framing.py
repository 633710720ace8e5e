"""Kafka's framing: each request is a 4-byte big-endian size followed by that many bytes.

Sans-IO: bytes go in with `feed`, whole frames come out of `next_frame`. A size beyond
`socket.request.max.bytes` (or negative) is refused as soon as the 4 size bytes are in, before any of
the body is read, as Kafka's `NetworkReceive` does.
"""

from __future__ import annotations

import struct

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The size prefix is not one a Kafka broker would accept; the connection must be closed."""


class FrameBuffer:
    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._buffer = bytearray()
        self._pending: int | None = None  # size of the frame being read, once its prefix is in

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next_frame(self) -> bytes | None:
        """The next complete frame, or None until more bytes arrive."""
        if self._pending is None:
            if len(self._buffer) < _SIZE.size:
                return None
            (size,) = _SIZE.unpack_from(self._buffer)
            if size < 0 or size > self.max_size:
                raise FrameError(f"invalid request size {size} (socket.request.max.bytes is {self.max_size})")
            del self._buffer[:_SIZE.size]
            self._pending = size
        if len(self._buffer) < self._pending:
            return None
        with memoryview(self._buffer) as view:  # one copy, not a bytearray slice and then bytes of it
            frame = bytes(view[:self._pending])
        del self._buffer[:self._pending]
        self._pending = None
        return frame

    @staticmethod
    def frame(payload: bytes) -> bytes:
        return _SIZE.pack(len(payload)) + payload

    @staticmethod
    def size_prefix(payload: bytes) -> bytes:
        return _SIZE.pack(len(payload))
