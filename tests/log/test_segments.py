"""Segments roll like Kafka's and carry Kafka-format .index/.timeindex files."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kemu.log import LogConfig, LogEvent
from kemu.log import index as index_module
from kemu.wire.records import NewRecord, build_batch, iter_batches

from .conftest import START_MS, OpenLog, batch


def files(directory: Path, suffix: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(suffix))


def expected_index(batches: list[tuple[int, int, int]], interval: int) -> list[tuple[int, int]]:
    """Kafka's rule: before appending a batch, index it if more than `interval` bytes went in since the
    last entry. `batches` holds (position, size, last offset)."""
    entries, since = [], 0
    for position, size, last_offset in batches:
        if since > interval:
            entries.append((last_offset, position))
            since = 0
        since += size
    return entries


def test_roll_on_segment_bytes(open_log: OpenLog, log_dir: Path) -> None:
    log = open_log(LogConfig(segment_bytes=1000))
    rolled: list[int] = []
    log.add_listener(lambda source, e: rolled.append(source.log_end_offset) if e is LogEvent.ROLLED else None)
    for _ in range(20):
        log.append(batch(2, value_size=60))
    assert len(log.segments) > 1
    assert all(segment.size <= 1000 for segment in log.segments)
    bases = [segment.base_offset for segment in log.segments]
    assert files(log_dir, ".log") == [f"{base:020d}.log" for base in bases]
    assert files(log_dir, ".index") == [f"{base:020d}.index" for base in bases]
    assert files(log_dir, ".timeindex") == [f"{base:020d}.timeindex" for base in bases]
    assert rolled == bases[1:]
    for segment in log.segments:
        first = next(iter_batches((log_dir / f"{segment.base_offset:020d}.log").read_bytes()))
        assert first.header.base_offset == segment.base_offset


def test_roll_on_segment_ms_uses_record_timestamps(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(segment_ms=60_000))
    log.append(batch(1, timestamp=clock.now_ms()))
    log.append(batch(1, timestamp=clock.now_ms() + 60_000))
    assert len(log.segments) == 1
    log.append(batch(1, timestamp=clock.now_ms() + 60_001))
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_roll_on_segment_ms_uses_the_clock_without_timestamps(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(segment_ms=60_000))
    untimed = build_batch([NewRecord(b"x")])  # timestamp -1
    log.append(untimed)
    clock.advance(60_000)
    log.append(untimed)
    assert len(log.segments) == 1
    clock.advance(1)
    log.append(untimed)
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_roll_when_the_offset_index_is_full(open_log: OpenLog) -> None:
    log = open_log(LogConfig(segment_index_bytes=16, index_interval_bytes=0))  # two entries per segment
    for _ in range(10):
        log.append(batch(1))
    assert all(len(segment.offset_index) <= 2 for segment in log.segments)
    assert len(log.segments) >= 3


def test_index_files_are_kafka_format(open_log: OpenLog, log_dir: Path) -> None:
    interval = 300
    log = open_log(LogConfig(index_interval_bytes=interval, segment_bytes=5000))
    for i in range(60):
        log.append(batch(1 + i % 3, value_size=40, timestamp=START_MS + (i * 7) % 50))
    log.close()  # the active segment's newest entries reach its files when it is flushed, rolled or closed
    for segment in log.segments:
        data = (log_dir / f"{segment.base_offset:020d}.log").read_bytes()
        batches, position = [], 0
        for stored in iter_batches(data):
            batches.append((position, stored.size, stored.header.last_offset))
            position += stored.size
        raw = (log_dir / f"{segment.base_offset:020d}.index").read_bytes()
        entries = [(segment.base_offset + rel, pos) for rel, pos in struct.iter_unpack(">ii", raw)]
        assert entries == expected_index(batches, interval)
        raw = (log_dir / f"{segment.base_offset:020d}.timeindex").read_bytes()
        times = [(ts, segment.base_offset + rel) for ts, rel in struct.iter_unpack(">qi", raw)]
        assert [t for t, _ in times] == sorted(set(t for t, _ in times)), "time index timestamps strictly increase"
    closed = log.segments[0]
    last_time, last_offset = closed.time_index.last_entry
    assert last_time == closed.max_timestamp_so_far and last_offset == closed.offset_of_max_timestamp_so_far


def test_index_entries_reach_the_file_together(open_log: OpenLog, log_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # One file append per index entry cost an open, a write and a close per batch, twice: entries are
    # written PENDING_ENTRIES_WRITTEN_AT at a time, and when the segment is flushed, rolled or closed.
    writes: list[tuple[str, int]] = []
    real = index_module._append_to_file

    def counted(path: Path, data: bytes, fsync: bool) -> None:
        writes.append((path.suffix, len(data)))
        real(path, data, fsync)

    monkeypatch.setattr(index_module, "_append_to_file", counted)
    log = open_log(LogConfig(index_interval_bytes=0))
    for i in range(100):
        log.append(batch(1, timestamp=START_MS + i))
    active = log.segments[-1]
    assert len(active.offset_index) == 99 and writes == []
    assert (log_dir / f"{active.base_offset:020d}.index").read_bytes() == b""
    log.flush()
    assert writes == [(".index", 99 * 8), (".timeindex", 99 * 12)]
    for i in range(100, 100 + index_module.PENDING_ENTRIES_WRITTEN_AT):
        log.append(batch(1, timestamp=START_MS + i))
    assert writes[2:] == [(".index", index_module.PENDING_ENTRIES_WRITTEN_AT * 8),
                          (".timeindex", index_module.PENDING_ENTRIES_WRITTEN_AT * 12)]
    log.close()
    raw = (log_dir / f"{active.base_offset:020d}.index").read_bytes()
    assert len(raw) == len(active.offset_index) * 8
    assert [active.base_offset + rel for rel, _ in struct.iter_unpack(">ii", raw)] == list(range(1, len(raw) // 8 + 1))


def test_reads_from_rolled_segments_use_the_index(open_log: OpenLog) -> None:
    log = open_log(LogConfig(index_interval_bytes=100, segment_bytes=2000))
    for _ in range(100):
        log.append(batch(2, value_size=30))
    assert len(log.segments) > 3 and not log.segments[0].is_active
    for offset in (0, 1, 37, 38, 101, 150, 198, 199):
        first = next(iter_batches(log.read(offset, 1).records))
        assert first.header.base_offset <= offset <= first.header.last_offset
    whole = log.read(0, 1 << 20).records
    assert len(whole) == log.segments[0].size  # a fetch reads from one segment


def test_roll_of_an_empty_active_segment_keeps_it(open_log: OpenLog) -> None:
    log = open_log()
    assert log.roll() is log.segments[-1]
    log.append(batch(1))
    log.roll()
    log.roll()
    assert [s.base_offset for s in log.segments] == [0, 1]


def test_deleting_a_log_with_index_entries_not_yet_written(open_log: OpenLog, log_dir: Path) -> None:
    # PartitionLog.delete removes the directory before it closes the segments: their pending entries go with it.
    log = open_log(LogConfig(index_interval_bytes=0))
    for i in range(5):
        log.append(batch(1, timestamp=START_MS + i))
    assert len(log.segments[-1].offset_index) == 4
    log.delete()
    assert not log_dir.exists()
