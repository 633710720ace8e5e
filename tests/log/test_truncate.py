"""Truncation (Kafka's truncateTo / truncateFullyAndStartAt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kemu.log import LogConfig, LogEvent
from kemu.wire.records import iter_batches

from .conftest import OpenLog, batch

SMALL = LogConfig(segment_bytes=700, index_interval_bytes=100)


def stored_offsets(log) -> list[int]:
    return [r.offset for b in log.batches() for r in b.records()]


def test_truncate_inside_the_active_segment(open_log: OpenLog) -> None:
    log = open_log()
    for _ in range(5):
        log.append(batch(2))
    events: list[LogEvent] = []
    log.add_listener(lambda _log, e: events.append(e))
    assert log.truncate_to(6)
    assert events == [LogEvent.TRUNCATED]
    assert (log.log_end_offset, log.high_watermark) == (6, 6)
    assert stored_offsets(log) == list(range(6))
    assert log.append(batch(1)).base_offset == 6
    assert not log.truncate_to(100)


def test_truncate_mid_batch_drops_the_whole_batch_like_kafka(open_log: OpenLog) -> None:
    log = open_log()
    log.append(batch(3))
    log.append(batch(3))
    log.truncate_to(4)
    assert stored_offsets(log) == [0, 1, 2]
    assert log.log_end_offset == 4  # Kafka sets the end to the target even so
    assert log.append(batch(1)).base_offset == 4


def test_truncate_into_an_older_segment(open_log: OpenLog, log_dir: Path) -> None:
    log = open_log(SMALL)
    for i in range(30):
        log.append(batch(1, value_size=60), leader_epoch=1 if i < 20 else 2)
    assert len(log.segments) > 3
    target = log.segments[1].base_offset + 1
    log.truncate_to(target)
    assert log.segments[-1].is_active and len(log.segments) == 2
    assert stored_offsets(log) == list(range(target))
    assert log.latest_epoch == 1
    assert sorted(p.name for p in log_dir.glob("*.log")) == [f"{s.base_offset:020d}.log" for s in log.segments]
    result = log.append(batch(1, value_size=60))
    assert result.base_offset == target
    assert all(b.is_valid() for b in iter_batches(log.read(0, 1 << 20).records))
    log.close()
    again = open_log(SMALL)
    assert stored_offsets(again) == list(range(target + 1))


def test_truncate_below_the_first_segment_starts_afresh(open_log: OpenLog) -> None:
    log = open_log(SMALL)
    for _ in range(10):
        log.append(batch(1, value_size=60))
    log.truncate_to(0)
    assert (log.log_start_offset, log.log_end_offset, len(log.segments)) == (0, 0, 1)
    log.truncate_fully_and_start_at(42)
    assert (log.log_start_offset, log.log_end_offset, log.segments[0].base_offset) == (42, 42, 42)
    assert log.append(batch(1)).base_offset == 42
    with pytest.raises(ValueError):
        log.truncate_to(-1)
