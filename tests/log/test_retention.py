"""Retention by time and size, DeleteRecords, and the segments they remove — all driven by the virtual clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from kemu.log import DELETE_RECORDS_HIGH_WATERMARK, LogConfig, LogEvent, OffsetOutOfRangeError
from kemu.wire.errors import ErrorCode

from .conftest import OpenLog, batch

DAY = 86_400_000


def fill(log, count: int, clock, *, step_ms: int = 0) -> None:
    for _ in range(count):
        log.append(batch(1, value_size=80, timestamp=clock.now_ms()))
        clock.advance(step_ms)


def test_retention_ms_deletes_whole_old_segments(open_log: OpenLog, clock, log_dir: Path) -> None:
    log = open_log(LogConfig(segment_bytes=500, retention_ms=DAY))
    fill(log, 12, clock, step_ms=DAY // 10)
    before = [s.base_offset for s in log.segments]
    assert len(before) > 3
    clock.advance(DAY // 2)
    deleted = log.delete_old_segments()
    assert deleted > 0
    now = clock.now_ms()
    assert all(now - s.largest_timestamp <= DAY for s in log.segments)
    assert log.log_start_offset == log.segments[0].base_offset
    assert not (log_dir / f"{before[0]:020d}.log").exists()
    assert not (log_dir / f"{before[0]:020d}.index").exists()
    with pytest.raises(OffsetOutOfRangeError):
        log.read(0, 100)


def test_retention_ms_can_empty_the_log_keeping_the_offsets(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(segment_bytes=500, retention_ms=DAY))
    fill(log, 8, clock)
    clock.advance(DAY + 1)
    deleted = log.delete_old_segments()
    assert deleted >= 2
    assert [s.base_offset for s in log.segments] == [8]
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (8, 8, 8)
    assert log.append(batch(1, timestamp=clock.now_ms())).base_offset == 8
    assert log.delete_old_segments() == 0


def test_an_expired_active_segment_is_rolled_and_deleted(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(retention_ms=DAY))
    log.append(batch(3, timestamp=clock.now_ms() - 2 * DAY))
    assert log.delete_old_segments() == 1
    assert [s.base_offset for s in log.segments] == [3]
    assert (log.log_start_offset, log.log_end_offset) == (3, 3)


def test_retention_bytes(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(segment_bytes=500, retention_bytes=1000))
    fill(log, 20, clock)
    log.delete_old_segments()
    assert log.size_in_bytes <= 1000 + log.segments[-1].size
    assert sum(s.size for s in log.segments[1:]) <= 1000


def test_no_retention_limits(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(segment_bytes=500, retention_ms=-1, retention_bytes=-1))
    fill(log, 10, clock)
    clock.advance(100 * DAY)
    assert log.delete_old_segments() == 0


def test_compacted_topics_keep_old_segments(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(segment_bytes=500, retention_ms=DAY, cleanup_policy=("compact",)))
    fill(log, 10, clock)
    clock.advance(2 * DAY)
    assert log.delete_old_segments() == 0


def test_delete_records_moves_the_log_start(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(segment_bytes=500))
    fill(log, 12, clock)
    events: list[LogEvent] = []
    log.add_listener(lambda _log, e: events.append(e))
    assert log.delete_records(5) == 5
    assert events == [LogEvent.LOG_START_OFFSET]
    assert log.delete_records(3) == 5  # never backwards
    with pytest.raises(OffsetOutOfRangeError):
        log.read(4, 100)
    assert log.read(5, 1).records  # the batch holding 5 is readable
    segments_before = len(log.segments)
    removed = log.delete_old_segments()
    assert removed == segments_before - len(log.segments) > 0
    assert log.segments[0].base_offset <= 5 < log.segments[1].base_offset
    assert log.delete_records(DELETE_RECORDS_HIGH_WATERMARK) == 12
    with pytest.raises(OffsetOutOfRangeError, match="larger than the high watermark 12") as info:
        log.delete_records(13)
    assert info.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    with pytest.raises(OffsetOutOfRangeError, match="is not valid"):
        log.delete_records(-2)
