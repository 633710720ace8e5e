"""The kept buffers big segment reads go into: the same bytes as `os.pread`, a buffer reused only once no
view of it is alive, and the pool's bound."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.clock import VirtualClock
from kemu.log import LogConfig, PartitionLog, read_buffers

from .conftest import START_MS, batch

BIG = 256 * 1024


@pytest.fixture
def file_fd(tmp_path: Path) -> Iterator[tuple[int, bytes]]:
    data = os.urandom(4 * BIG)
    path = tmp_path / "data"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    yield fd, data
    os.close(fd)


@pytest.fixture(autouse=True)
def empty_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_buffers, "_pools", {})
    monkeypatch.setattr(read_buffers, "_kept", [0])


def test_a_big_read_is_the_bytes_pread_gives(file_fd: tuple[int, bytes]) -> None:
    fd, data = file_fd
    got = read_buffers.pread(fd, BIG, 100)
    assert isinstance(got, memoryview)
    assert bytes(got) == data[100:100 + BIG]


def test_a_small_read_is_plain_bytes(file_fd: tuple[int, bytes]) -> None:
    fd, data = file_fd
    got = read_buffers.pread(fd, 61, 7)
    assert got == data[7:68] and isinstance(got, bytes)
    assert read_buffers.kept_bytes() == 0


def test_a_read_at_the_end_of_the_file_is_short(file_fd: tuple[int, bytes]) -> None:
    fd, data = file_fd
    got = read_buffers.pread(fd, BIG, len(data) - 1000)
    assert bytes(got) == data[-1000:]


def test_a_buffer_is_read_into_again_once_its_view_is_gone(file_fd: tuple[int, bytes]) -> None:
    fd, data = file_fd
    first = read_buffers.pread(fd, BIG, 0)
    assert isinstance(first, memoryview)
    buffer = first.obj
    del first
    second = read_buffers.pread(fd, BIG, BIG)
    assert isinstance(second, memoryview) and second.obj is buffer
    assert bytes(second) == data[BIG:2 * BIG]
    assert read_buffers.kept_bytes() == BIG


def test_bytes_still_held_are_never_read_over(file_fd: tuple[int, bytes]) -> None:
    # A Fetch of several partitions holds one read per partition until the answer is sent; a slice of a
    # read (a batch kept by its reader) holds it as well.
    fd, data = file_fd
    held = [read_buffers.pread(fd, BIG, i * BIG) for i in range(3)]
    batch = held[1][10:20]
    del held[1]
    more = [read_buffers.pread(fd, BIG, 3 * BIG) for _ in range(2)]
    assert [bytes(view) for view in held] == [data[:BIG], data[2 * BIG:3 * BIG]]
    assert bytes(batch) == data[BIG + 10:BIG + 20]
    assert [bytes(view) for view in more] == [data[3 * BIG:]] * 2
    assert len({id(view.obj) for view in [*held, batch, *more] if isinstance(view, memoryview)}) == 5


def test_the_pool_keeps_at_most_its_bound(file_fd: tuple[int, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    fd, data = file_fd
    monkeypatch.setattr(read_buffers, "KEEP_BYTES", 2 * BIG)
    held = [read_buffers.pread(fd, BIG, i * BIG) for i in range(4)]
    assert [bytes(view) for view in held] == [data[i * BIG:(i + 1) * BIG] for i in range(4)]
    assert read_buffers.kept_bytes() == 2 * BIG
    del held
    again = [read_buffers.pread(fd, BIG, 0) for _ in range(2)]
    assert read_buffers.kept_bytes() == 2 * BIG
    assert [bytes(view) for view in again] == [data[:BIG]] * 2


def test_reads_of_other_sizes_get_buffers_of_their_class(file_fd: tuple[int, bytes]) -> None:
    fd, data = file_fd
    small = read_buffers.pread(fd, read_buffers.POOLED_MIN_BYTES, 0)
    big = read_buffers.pread(fd, BIG + 1, 0)
    assert [len(view.obj) for view in (small, big) if isinstance(view, memoryview)] == [
        read_buffers.POOLED_MIN_BYTES, 2 * BIG]
    assert bytes(big) == data[:BIG + 1]


def test_joined_parts_are_their_bytes_in_order() -> None:
    parts = [memoryview(bytes([n]) * (40 * 1024)) for n in range(3)]
    joined = read_buffers.joined(parts)
    assert isinstance(joined, memoryview)
    assert bytes(joined) == b"".join(parts)
    assert read_buffers.joined(parts[:1]) == bytes(parts[0])


def test_two_logs_read_from_their_files_at_once_each_get_their_own_bytes(tmp_path: Path,
                                                                        clock: VirtualClock) -> None:
    # Two partitions' rolled segments read from their files and held at once (a cleaner's batches; a Fetch's
    # reads are regions of the files instead, tests/log/test_file_regions.py).
    logs = [PartitionLog.open(tmp_path / name, "topic", 0, LogConfig(segment_bytes=300_000), clock)
            for name in ("a", "b")]
    for n, log in enumerate(logs):
        for _ in range(12):
            log.append(batch(1, value_size=50_000, timestamp=START_MS + n))
        assert len(log.segments) > 1
    reads = [log.segments[0].read_bytes(0, BIG) for log in logs]
    files = [(tmp_path / name / f"{0:020d}.log").read_bytes() for name in ("a", "b")]
    assert files[0] != files[1]
    for read, data in zip(reads, files, strict=True):
        assert isinstance(read, memoryview) and isinstance(read.obj, bytearray)
        assert len(read) > read_buffers.POOLED_MIN_BYTES
        assert bytes(read) == data[:len(read)]
