from __future__ import annotations

import struct
import tracemalloc

import pytest

from kemu.server.framing import CHUNK_BYTES, FrameBuffer, FrameError, frame_buffers


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


def test_frames_stay_intact_while_later_bytes_arrive() -> None:
    # Views handed out must not see the buffer rewound under them (the produce path keeps them).
    buffer = FrameBuffer(1 << 20, chunk_size=16)
    kept = []
    for i in range(20):
        buffer.feed(FrameBuffer.frame(bytes([i]) * 10))
        while (frame := buffer.next_frame()) is not None:
            kept.append(frame)
    assert [bytes(frame) for frame in kept] == [bytes([i]) * 10 for i in range(20)]


def test_buffer_is_reused_once_no_frame_is_held() -> None:
    buffer = FrameBuffer(1 << 20, chunk_size=64)
    buffer.feed(FrameBuffer.frame(b"a" * 50))
    frame = buffer.next_frame()
    assert frame is not None
    first = buffer.writable().obj
    frame.release()
    buffer.feed(FrameBuffer.frame(b"b" * 50))
    assert buffer.writable().obj is first
    assert buffer.next_frame() == b"b" * 50


def test_a_frame_bigger_than_the_chunk_gets_room_as_its_bytes_arrive() -> None:
    buffer = FrameBuffer(1 << 20, chunk_size=64)
    payload = bytes(range(256)) * 40
    data = FrameBuffer.frame(payload)
    buffer.feed(data[:100])
    assert buffer.next_frame() is None
    rooms = []
    received = 100
    while received < len(data):
        with buffer.writable() as target:
            rooms.append(len(target))
            count = min(len(target), len(data) - received)
            target[:count] = data[received:received + count]
        buffer.advance(count)
        received += count
    assert buffer.next_frame() == payload
    # Never more room than twice what had arrived: the buffer doubles, it is not sized by the prefix.
    assert len(rooms) > 1 and all(room <= 2 * (100 + sum(rooms[:n])) for n, room in enumerate(rooms))


def test_a_declared_size_takes_no_memory_before_its_bytes_arrive() -> None:
    buffer = FrameBuffer(200 * 1024 * 1024)
    tracemalloc.start()
    try:
        buffer.feed(FrameBuffer.size_prefix(100 * 1024 * 1024) + b"\x00")
        assert buffer.next_frame() is None
        with buffer.writable() as target:
            room = len(target)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert room <= 2 * CHUNK_BYTES and peak < 4 * CHUNK_BYTES


def test_frame_buffers_prefix_the_total_size() -> None:
    pieces = [b"head", memoryview(b"x" * 5000), b"tail"]
    framed = frame_buffers(pieces)
    assert b"".join(framed) == FrameBuffer.frame(b"".join(pieces))
    assert framed[2] is pieces[1]
