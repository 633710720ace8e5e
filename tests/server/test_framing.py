from __future__ import annotations

import struct

import pytest

from kemu.server.framing import FrameBuffer, FrameError


def test_frames_split_and_joined_arbitrarily() -> None:
    frames = [b"", b"a", b"hello" * 100, b"\x00" * 7]
    stream = b"".join(FrameBuffer.frame(f) for f in frames)
    buffer = FrameBuffer(1 << 20)
    out = []
    for i in range(0, len(stream), 3):
        buffer.feed(stream[i:i + 3])
        while (frame := buffer.next_frame()) is not None:
            out.append(frame)
    assert out == frames
    assert buffer.next_frame() is None


def test_oversized_prefix_refused_before_body() -> None:
    buffer = FrameBuffer(100)
    buffer.feed(struct.pack(">i", 101))
    with pytest.raises(FrameError, match="invalid request size 101"):
        buffer.next_frame()


def test_max_size_itself_is_accepted() -> None:
    buffer = FrameBuffer(100)
    buffer.feed(FrameBuffer.frame(b"x" * 100))
    assert buffer.next_frame() == b"x" * 100


def test_negative_size_refused() -> None:
    buffer = FrameBuffer(100)
    buffer.feed(struct.pack(">i", -1))
    with pytest.raises(FrameError):
        buffer.next_frame()
