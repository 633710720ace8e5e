"""Appending assigns offsets by rewriting headers; reading returns stored bytes, bounded like Kafka."""

from __future__ import annotations

import pytest
from aiokafka.record.default_records import DefaultRecordBatch as AioBatch
from aiokafka.record.default_records import DefaultRecordBatchBuilder as AioBuilder

from kemu.log import LogConfig, LogEvent, OffsetOutOfRangeError
from kemu.wire.compression import CompressionType
from kemu.wire.errors import ErrorCode
from kemu.wire.records import RecordBatch, iter_batches

from .conftest import START_MS, OpenLog, batch


def test_offsets_are_assigned_from_the_log_end(open_log: OpenLog) -> None:
    log = open_log()
    first = log.append(batch(3))
    second = log.append(batch(2))
    assert (first.base_offset, first.last_offset, first.record_count) == (0, 2, 3)
    assert (second.base_offset, second.last_offset) == (3, 4)
    assert first.log_append_time == -1 and first.log_start_offset == 0
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == (0, 5, 5)
    stored = list(iter_batches(log.read(0, 1 << 20).records))
    assert [(b.header.base_offset, b.header.last_offset) for b in stored] == [(0, 2), (3, 4)]
    assert all(b.is_valid() for b in stored)
    assert [r.offset for b in stored for r in b.records()] == [0, 1, 2, 3, 4]


def test_stored_batch_is_the_client_batch_with_offset_and_epoch_patched(open_log: OpenLog) -> None:
    log = open_log()
    sent = batch(4, producer_id=11, producer_epoch=2, base_sequence=0)
    log.append(batch(1), leader_epoch=7)
    result = log.append(sent, leader_epoch=7)
    stored = bytes(log.read(result.base_offset, 1 << 20).records)
    assert len(stored) == len(sent)
    assert stored[:8] == (1).to_bytes(8, "big")
    assert stored[12:16] == (7).to_bytes(4, "big")
    assert stored[8:12] == sent[8:12] and stored[16:] == sent[16:]  # CRC and records untouched
    assert result.batch.producer_id == 11 and result.batch.partition_leader_epoch == 7


@pytest.mark.parametrize("codec", list(CompressionType))
def test_aiokafka_batches_round_trip_through_the_log(open_log: OpenLog, codec: CompressionType) -> None:
    log = open_log()
    for round_ in range(2):
        builder = AioBuilder(
            magic=2,
            compression_type=codec,
            is_transactional=False,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
            batch_size=1 << 20,
        )
        for i in range(5):
            builder.append(
                i, timestamp=START_MS + i, key=b"key", value=b"value-%d-%d" % (round_, i), headers=[("h", b"1")]
            )
        log.append(bytes(builder.build()))
    data = bytes(log.read(0, 1 << 20).records)
    offsets, values = [], []
    pos = 0
    while pos < len(data):
        size = int.from_bytes(data[pos + 8 : pos + 12], "big") + 12
        theirs = AioBatch(data[pos : pos + size])
        assert theirs.validate_crc()
        for record in theirs:
            offsets.append(record.offset)
            values.append(record.value)
        pos += size
    assert offsets == list(range(10))
    assert values == [b"value-%d-%d" % (r, i) for r in range(2) for i in range(5)]


def test_read_max_bytes_min_one_batch_and_partial_tail(open_log: OpenLog) -> None:
    log = open_log()
    sizes = [log.append(batch(1, value_size=100)).size for _ in range(5)]
    one = sizes[0]
    # Kafka hands back a byte range: the last batch may be cut short.
    partial = log.read(0, one + 10).records
    assert len(partial) == one + 10
    assert [b.header.base_offset for b in iter_batches(partial)] == [0]
    # At least one whole batch even when max bytes is smaller, unless min_one_batch is off.
    assert len(log.read(2, 1).records) == one
    # Without it, a first batch that does not fit whole is not cut: nothing is read (Kafka's
    # ReplicaManager drops a first entry that is incomplete).
    assert log.read(2, 1, min_one_batch=False).records == b""
    assert log.read(2, one - 1, min_one_batch=False).records == b""
    assert len(log.read(2, one + 1, min_one_batch=False).records) == one + 1
    assert log.read(2, 0, min_one_batch=False).records == b""
    # A read from the middle of a batch starts at that batch.
    multi = log.append(batch(3))
    data = log.read(multi.base_offset + 1, 1 << 20).records
    assert RecordBatch(data).header.base_offset == multi.base_offset


def test_read_bounds_and_out_of_range(open_log: OpenLog) -> None:
    log = open_log()
    log.append(batch(2))
    assert log.read(2, 100).records == b""  # at the log end: empty, no error
    with pytest.raises(OffsetOutOfRangeError) as info:
        log.read(3, 100)
    assert info.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert "but we only have log segments upto 2" in info.value.message
    log.delete_records(1)
    with pytest.raises(OffsetOutOfRangeError, match="starting from offset: 1"):
        log.read(0, 100)
    with pytest.raises(ValueError):
        log.read(1, -1)


def test_isolation_bounds_reads_at_hw_and_lso(open_log: OpenLog) -> None:
    log = open_log()
    for _ in range(4):
        log.append(batch(1))
    # A read_committed reader is bounded by the last stable offset, which the partition passes in.
    committed = log.read(0, 1 << 20, upper_bound=2, last_stable_offset=2)
    assert [b.header.base_offset for b in iter_batches(committed.records)] == [0, 1]
    assert committed.last_stable_offset == 2 and committed.high_watermark == 4
    assert log.read(2, 1 << 20, upper_bound=2).records == b""
    assert len(list(iter_batches(log.read(0, 1 << 20).records))) == 4
    log.set_high_watermark(3)
    assert [b.header.base_offset for b in iter_batches(log.read(0, 1 << 20).records)] == [0, 1, 2]
    assert log.read(0, 1 << 20).last_stable_offset == 3
    assert len(list(iter_batches(log.read(0, 1 << 20, upper_bound=log.log_end_offset).records))) == 4


def test_listeners_hear_appends(open_log: OpenLog) -> None:
    log = open_log()
    events: list[tuple[int, LogEvent]] = []
    log.add_listener(lambda lg, e: events.append((lg.high_watermark, e)))
    log.append(batch(2))
    assert events == [(2, LogEvent.APPENDED)]


def test_log_append_time_stamps_the_batch(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(message_timestamp_type="LogAppendTime"))
    clock.advance(5000)
    result = log.append(batch(3, compression=CompressionType.LZ4))
    assert result.log_append_time == clock.now_ms()
    stored = RecordBatch(log.read(0, 1 << 20).records)
    assert stored.is_valid()
    assert stored.header.max_timestamp == clock.now_ms()
    assert [r.timestamp for r in stored.records()] == [clock.now_ms()] * 3


def test_prepare_validates_without_changing_the_log(open_log: OpenLog) -> None:
    log = open_log()
    sent = batch(2, producer_id=5, producer_epoch=0, base_sequence=0)
    prepared = log.prepare_append(sent, leader_epoch=0)
    assert prepared.source.producer_id == 5 and log.log_end_offset == 0 and log.producers.producers == {}
    result = log.append(sent)
    assert result.base_offset == 0 and log.log_end_offset == 2 and 5 in log.producers.producers


def test_stored_batches_for_coordinators(open_log: OpenLog) -> None:
    log = open_log(LogConfig(segment_bytes=300))
    for _ in range(6):
        log.append(batch(2, value_size=50))
    assert len(log.segments) > 1
    batches = log.batches()
    assert [b.header.base_offset for b in batches] == [0, 2, 4, 6, 8, 10]
    assert [b.header.base_offset for b in log.batches(3, 7)] == [2, 4, 6]


def test_fetch_upper_bound_is_the_first_index_entry_past_the_bytes_read(open_log: OpenLog) -> None:
    """Kafka's bound for a read_committed fetch's aborted list: the offset-index entry at or after the end of the
    bytes read, else the next segment's base, else the log end."""
    log = open_log(LogConfig(index_interval_bytes=1))  # an entry for every batch after the first
    sizes = [log.append(batch(1)) for _ in range(4)]
    first = len(log.read(0, 1).records)  # the first batch alone
    assert all(result.record_count == 1 for result in sizes)
    assert log.fetch_upper_bound(0, first) == 1
    assert log.fetch_upper_bound(0, first + 1) == 2
    assert log.fetch_upper_bound(3, 10**6) == 4  # past the last entry: the log end
