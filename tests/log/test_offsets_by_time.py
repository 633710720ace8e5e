"""ListOffsets: earliest, latest, max timestamp and lookups by timestamp."""

from __future__ import annotations

from kemu.log import ListOffsetsTimestamp, LogConfig, TimestampAndOffset
from kemu.wire.records import NewRecord, build_batch

from .conftest import START_MS, OpenLog

T = START_MS


def timed(*timestamps: int) -> bytes:
    return build_batch([NewRecord(b"v", key=b"k", timestamp=ts) for ts in timestamps])


def test_empty_log(open_log: OpenLog) -> None:
    log = open_log()
    assert log.offset_for_timestamp(ListOffsetsTimestamp.EARLIEST) == TimestampAndOffset(-1, 0, None)
    assert log.offset_for_timestamp(ListOffsetsTimestamp.LATEST) == TimestampAndOffset(-1, 0, None)
    assert log.offset_for_timestamp(ListOffsetsTimestamp.MAX_TIMESTAMP) is None
    assert log.offset_for_timestamp(T) is None
    assert log.offset_for_timestamp(ListOffsetsTimestamp.LATEST_TIERED) == TimestampAndOffset(-1, -1, -1)


def test_lookup_by_timestamp_across_segments(open_log: OpenLog) -> None:
    log = open_log(LogConfig(segment_bytes=400, index_interval_bytes=50))
    for i in range(20):
        log.append(timed(T + 10 * i, T + 10 * i + 5), leader_epoch=3)  # offsets 2i, 2i+1
    assert len(log.segments) > 2
    assert log.offset_for_timestamp(T) == TimestampAndOffset(T, 0, 3)
    assert log.offset_for_timestamp(T - 100) == TimestampAndOffset(T, 0, 3)
    assert log.offset_for_timestamp(T + 5) == TimestampAndOffset(T + 5, 1, 3)
    assert log.offset_for_timestamp(T + 6) == TimestampAndOffset(T + 10, 2, 3)
    assert log.offset_for_timestamp(T + 123) == TimestampAndOffset(T + 125, 25, 3)
    assert log.offset_for_timestamp(T + 195) == TimestampAndOffset(T + 195, 39, 3)
    assert log.offset_for_timestamp(T + 196) is None


def test_out_of_order_timestamps_find_the_first_record_at_or_after(open_log: OpenLog) -> None:
    log = open_log(LogConfig(index_interval_bytes=0))
    log.append(timed(T + 50, T + 10))
    log.append(timed(T + 20, T + 60))
    assert log.offset_for_timestamp(T + 15).offset == 0  # T+50 is the first record with ts >= T+15
    assert log.offset_for_timestamp(T + 55).offset == 3


def test_max_timestamp_is_the_first_record_carrying_it(open_log: OpenLog) -> None:
    log = open_log(LogConfig(segment_bytes=300))
    log.append(timed(T + 1, T + 9, T + 9))
    for _ in range(6):
        log.append(timed(T + 2))
    log.append(timed(T + 9))
    assert len(log.segments) > 1
    assert log.offset_for_timestamp(ListOffsetsTimestamp.MAX_TIMESTAMP) == TimestampAndOffset(T + 9, 1, 0)


def test_log_append_time_topics_search_by_append_time(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(message_timestamp_type="LogAppendTime"))
    log.append(timed(1, 2))
    clock.advance(1000)
    log.append(timed(3))
    assert log.offset_for_timestamp(T + 1) == TimestampAndOffset(T + 1000, 2, 0)
    assert log.offset_for_timestamp(ListOffsetsTimestamp.MAX_TIMESTAMP) == TimestampAndOffset(T + 1000, 2, 0)


def test_partition_view_bounds_by_isolation(open_log: OpenLog) -> None:
    log = open_log()
    for i in range(4):
        log.append(timed(T + i), leader_epoch=4)
    stable, hw = 2, log.high_watermark  # a read_committed reader's bound, and a read_uncommitted one's
    latest_committed = log.fetch_offset_for_timestamp(ListOffsetsTimestamp.LATEST, stable, 4)
    assert latest_committed == TimestampAndOffset(-1, 2, 4)
    assert log.fetch_offset_for_timestamp(ListOffsetsTimestamp.LATEST, hw, 4).offset == 4
    assert log.fetch_offset_for_timestamp(T + 3, stable, 4) is None
    assert log.fetch_offset_for_timestamp(T + 1, stable, 4).offset == 1
    assert log.fetch_offset_for_timestamp(T + 3, hw, 4).offset == 3
    assert log.fetch_offset_for_timestamp(ListOffsetsTimestamp.MAX_TIMESTAMP, stable, 4) is None
    assert log.fetch_offset_for_timestamp(ListOffsetsTimestamp.EARLIEST, stable, 4).offset == 0


def test_earliest_follows_delete_records(open_log: OpenLog) -> None:
    log = open_log()
    for i in range(5):
        log.append(timed(T + i), leader_epoch=2)
    log.delete_records(3)
    assert log.offset_for_timestamp(ListOffsetsTimestamp.EARLIEST) == TimestampAndOffset(-1, 3, 2)
    assert log.offset_for_timestamp(ListOffsetsTimestamp.EARLIEST_LOCAL) == TimestampAndOffset(-1, 3, 2)
    assert log.offset_for_timestamp(T).offset == 3  # records below the log start are not found


def test_max_timestamp_without_any_timestamps_is_the_first_record(open_log: OpenLog) -> None:
    log = open_log()
    log.append(timed(-1, -1))
    log.append(timed(-1))
    assert log.offset_for_timestamp(ListOffsetsTimestamp.MAX_TIMESTAMP) == TimestampAndOffset(-1, 0, 0)
