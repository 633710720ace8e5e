"""Append validation: Kafka's error codes, messages and per-record errors, and nothing written on refusal."""

from __future__ import annotations

import struct

import pytest

from kemu.log import AppendOrigin, LogConfig, LogError, PartitionLog, RecordValidationError
from kemu.wire.compression import CompressionType
from kemu.wire.errors import ErrorCode
from kemu.wire.records import (
    NewRecord,
    RecordBatch,
    TimestampType,
    build_batch,
    build_end_txn_marker,
    crc_of,
    iter_batches,
)

from .conftest import START_MS, OpenLog, batch

HOUR = 3_600_000


def patched(data: bytes, fmt: str, offset: int, value: int, *, fix_crc: bool = True) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    if fix_crc:
        struct.pack_into(">I", out, 17, crc_of(out))
    return bytes(out)


def refused(log: PartitionLog, data: bytes, origin: AppendOrigin = AppendOrigin.CLIENT) -> LogError:
    end, size = log.log_end_offset, log.size_in_bytes
    with pytest.raises(LogError) as info:
        log.append(data, origin=origin)
    assert (log.log_end_offset, log.size_in_bytes) == (end, size), "a refused append must write nothing"
    return info.value


def test_crc_mismatch_is_corrupt_message(open_log: OpenLog) -> None:
    log = open_log()
    data = bytearray(batch(2))
    data[-1] ^= 0xFF
    error = refused(log, bytes(data))
    stored_crc = RecordBatch(data).header.crc
    assert error.code == ErrorCode.CORRUPT_MESSAGE
    assert error.message == f"Record is corrupt (stored crc = {stored_crc}) in topic partition topic-0."
    assert error.response_message is None and error.record_errors == ()


def test_client_batches_must_start_at_offset_zero(open_log: OpenLog) -> None:
    error = refused(open_log(), batch(1, base_offset=5))
    assert error.code == ErrorCode.INVALID_RECORD
    assert error.message == "The baseOffset of the record batch in the append to topic-0 should be 0, but it is 5"


def test_max_message_bytes_is_message_too_large(open_log: OpenLog) -> None:
    data = batch(1, value_size=500)
    log = open_log(LogConfig(max_message_bytes=len(data) - 1))
    error = refused(log, data)
    assert error.code == ErrorCode.MESSAGE_TOO_LARGE
    assert f"is {len(data)} bytes which exceeds the maximum configured value of {len(data) - 1}." in error.message
    assert open_log(LogConfig(max_message_bytes=len(data))).append(data).base_offset == 0


def test_batch_bigger_than_a_segment_is_record_list_too_large(open_log: OpenLog) -> None:
    data = batch(1, value_size=500)
    error = refused(open_log(LogConfig(segment_bytes=len(data) - 1)), data)
    assert error.code == ErrorCode.RECORD_LIST_TOO_LARGE


@pytest.mark.parametrize(
    ("fmt", "offset", "value", "message"),
    [
        (">i", 23, -1, "Batch has an invalid offset range: [0, -1] in topic partition topic-0"),
        (">i", 57, 0, "Invalid reported count for record batch: 0 in topic partition topic-0"),
        (">i", 57, 2, "Inconsistent batch offset range [0, 2] and count of records 2 in topic partition topic-0"),
    ],
)
def test_offset_range_and_count_must_agree(open_log: OpenLog, fmt: str, offset: int, value: int, message: str) -> None:
    error = refused(open_log(), patched(batch(3), fmt, offset, value))
    assert (error.code, error.message) == (ErrorCode.INVALID_RECORD, message)


def test_clients_may_not_write_control_batches_but_coordinators_may(open_log: OpenLog) -> None:
    log = open_log()
    marker = build_end_txn_marker(commit=True, producer_id=3, producer_epoch=0, coordinator_epoch=1, timestamp=START_MS)
    error = refused(log, marker)
    assert error.message == "Clients are not allowed to write control records in topic partition topic-0"
    result = log.append(marker, origin=AppendOrigin.COORDINATOR)
    assert result.base_offset == 0 and result.batch.is_control


def test_a_producer_id_needs_a_sequence(open_log: OpenLog) -> None:
    error = refused(open_log(), batch(1, producer_id=9, producer_epoch=0, base_sequence=-1))
    assert error.message == "Invalid sequence number -1 in record batch with producerId 9 in topic partition topic-0"


def test_timestamps_too_far_ahead_are_refused_per_record(open_log: OpenLog, clock) -> None:
    log = open_log()  # message.timestamp.after.max.ms defaults to one hour in Kafka 4
    now = clock.now_ms()
    records = [NewRecord(b"a", timestamp=now), NewRecord(b"b", timestamp=now + HOUR + 1),
               NewRecord(b"c", timestamp=now + HOUR)]
    error = refused(log, build_batch(records))
    assert isinstance(error, RecordValidationError)
    assert error.code == ErrorCode.INVALID_TIMESTAMP
    assert error.response_message == "One or more records have been rejected due to invalid timestamp"
    assert [e.batch_index for e in error.record_errors] == [1]
    assert error.record_errors[0].message == (
        f"Timestamp {now + HOUR + 1} of message with offset 1 is out of range. The timestamp should be within "
        f"[{now - (2**63 - 1)}, {now + HOUR}]"
    )
    assert log.append(build_batch([records[0], records[2]])).base_offset == 0


def test_timestamps_too_old_when_before_max_is_set(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(message_timestamp_before_max_ms=1000))
    now = clock.now_ms()
    error = refused(log, build_batch([NewRecord(b"x", timestamp=now - 1001), NewRecord(b"y", timestamp=-1)]))
    assert error.code == ErrorCode.INVALID_TIMESTAMP
    assert [e.batch_index for e in error.record_errors] == [0]
    accepted = log.append(build_batch([NewRecord(b"x", timestamp=now - 1000), NewRecord(b"y", timestamp=-1)]))
    assert accepted.record_count == 2


def test_log_append_time_topics_ignore_record_timestamps(open_log: OpenLog, clock) -> None:
    log = open_log(LogConfig(message_timestamp_type="LogAppendTime"))
    result = log.append(build_batch([NewRecord(b"x", timestamp=clock.now_ms() + 100 * HOUR)]))
    assert result.log_append_time == clock.now_ms()


def test_producer_set_log_append_time_is_refused_on_log_append_time_topics(open_log: OpenLog) -> None:
    log = open_log(LogConfig(message_timestamp_type="LogAppendTime"))
    data = build_batch([NewRecord(b"x", key=b"k", timestamp=START_MS)], timestamp_type=TimestampType.LOG_APPEND_TIME,
                       log_append_time=START_MS)
    error = refused(log, data)
    assert error.code == ErrorCode.INVALID_TIMESTAMP
    assert error.record_errors[0].message == (
        f"Invalid timestamp type in message DefaultRecord(offset=0, timestamp={START_MS}, key=1 bytes, value=1 bytes). "
        "Producer should not set timestamp type to LogAppendTime."
    )


def test_producer_set_log_append_time_becomes_create_time_on_create_time_topics(open_log: OpenLog) -> None:
    log = open_log()
    data = build_batch([NewRecord(b"x", timestamp=START_MS - 5), NewRecord(b"y", timestamp=START_MS - 9)],
                       timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=START_MS)
    log.append(data)
    stored = RecordBatch(log.read(0, 1 << 20).records)
    assert stored.is_valid()
    assert stored.header.timestamp_type is TimestampType.CREATE_TIME
    assert stored.header.max_timestamp == START_MS


def test_compacted_topics_need_keys(open_log: OpenLog) -> None:
    log = open_log(LogConfig(cleanup_policy=("compact",)))
    records = [NewRecord(b"a", key=b"k"), NewRecord(b"b"), NewRecord(b"c"), NewRecord(b"d"), NewRecord(b"e")]
    error = refused(log, build_batch(records, compression=CompressionType.SNAPPY))
    assert error.code == ErrorCode.INVALID_RECORD
    assert [e.batch_index for e in error.record_errors] == [1, 2, 3, 4]
    shown = ", ".join(
        f"RecordError(batchIndex={i}, "
        "message='Compacted topic cannot accept message without key in topic partition topic-0')"
        for i in (1, 2, 3)
    )
    assert error.response_message == (
        "One or more records have been rejected due to 4 record errors in total, and only showing the first three "
        f"errors at most: [{shown}]"
    )
    assert log.append(build_batch([NewRecord(b"a", key=b"k"), NewRecord(None, key=b"tombstone")])).record_count == 2


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", ErrorCode.INVALID_RECORD),
        (batch(1) + batch(1), ErrorCode.INVALID_RECORD),
        (patched(batch(1), ">b", 16, 1, fix_crc=False), ErrorCode.INVALID_RECORD),
        (patched(batch(1), ">i", 8, 3, fix_crc=False), ErrorCode.CORRUPT_MESSAGE),
        (patched(batch(1), ">h", 21, 5), ErrorCode.UNKNOWN_SERVER_ERROR),
    ],
    ids=["empty", "two-batches", "magic-1", "tiny-length", "compression-5"],
)
def test_malformed_input(open_log: OpenLog, data: bytes, code: ErrorCode) -> None:
    assert refused(open_log(), data).code == code


def test_undecompressable_payload_is_refused_when_records_must_be_read(open_log: OpenLog) -> None:
    data = bytearray(batch(3, compression=CompressionType.ZSTD))
    data[70] ^= 0xFF
    data[71] ^= 0xFF
    struct.pack_into(">I", data, 17, crc_of(data))
    error = refused(open_log(LogConfig(cleanup_policy=("compact",))), bytes(data))
    assert error.code in (ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.INVALID_RECORD)


def test_verify_records_catches_a_header_that_lies_about_its_records(open_log: OpenLog) -> None:
    lying = patched(patched(batch(3), ">i", 57, 2), ">i", 23, 1)  # says 2 records, holds 3
    strict = open_log()
    strict.verify_records = True
    error = refused(strict, lying)
    assert (error.code, error.message) == (
        ErrorCode.INVALID_RECORD, "Incorrect declared batch size, records still remaining in file")


@pytest.mark.parametrize(("topic_codec", "stored_codec"), [
    ("gzip", CompressionType.GZIP), ("uncompressed", CompressionType.NONE), ("zstd", CompressionType.ZSTD)])
def test_compression_type_recompresses(open_log: OpenLog, topic_codec: str, stored_codec: CompressionType) -> None:
    log = open_log(LogConfig(compression_type=topic_codec))
    log.append(batch(2))
    log.append(batch(3, compression=CompressionType.SNAPPY, producer_id=4, producer_epoch=1, base_sequence=7))
    stored = list(iter_batches(log.read(0, 1 << 20).records))
    assert [b.header.compression for b in stored] == [stored_codec, stored_codec]
    assert all(b.is_valid() for b in stored)
    assert [r.offset for b in stored for r in b.records()] == [0, 1, 2, 3, 4]
    h = stored[1].header
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (4, 1, 7)
    assert [r.value for r in stored[1].records()] == [b"A" * 10, b"B" * 10, b"C" * 10]


def test_compressed_inner_offsets_out_of_order_are_rewritten(open_log: OpenLog) -> None:
    records = [NewRecord(b"a", key=b"1", offset_delta=0), NewRecord(b"b", key=b"2", offset_delta=5),
               NewRecord(b"c", key=b"3", offset_delta=6)]
    data = patched(build_batch(records, compression=CompressionType.GZIP), ">i", 23, 2)
    log = open_log(LogConfig(cleanup_policy=("compact",)))  # keys must be read, so the records are walked
    log.append(data)
    stored = RecordBatch(log.read(0, 1 << 20).records)
    assert stored.is_valid()
    assert [r.offset for r in stored.records()] == [0, 1, 2]


def test_a_batch_the_broker_built_skips_the_key_walk_but_not_the_topic_settings(open_log: OpenLog, clock) -> None:
    from kemu.log.validator import validate_append

    compacted = LogConfig(cleanup_policy=("compact",))
    data = batch(3)

    def validated(config: LogConfig, built: bool) -> tuple[bytes, bytes, bool]:
        v = validate_append(data, config=config, origin=AppendOrigin.COORDINATOR, now_ms=clock.now_ms(),
                            partition_leader_epoch=0, topic_partition="t-0", built=built)
        return bytes(v.header), bytes(v.payload), v.records_scanned

    # A compacted topic walks a client's records for keys; a coordinator's own batch always has them, and is
    # written exactly as the walk would have left it.
    checked, trusted = validated(compacted, built=False), validated(compacted, built=True)
    assert checked[2] and not trusted[2]
    assert checked[:2] == trusted[:2]
    # The topic's own settings still apply: a codec to convert to, a size limit.
    assert validated(LogConfig(cleanup_policy=("compact",), compression_type="gzip"), built=True)[2]
    log = open_log(LogConfig(cleanup_policy=("compact",), max_message_bytes=len(data) - 1))
    with pytest.raises(LogError) as info:
        log.append(data, origin=AppendOrigin.COORDINATOR, built=True)
    assert info.value.code == ErrorCode.MESSAGE_TOO_LARGE


@pytest.mark.parametrize("config", [LogConfig(), LogConfig(cleanup_policy=("compact",)),
                                    LogConfig(compression_type="gzip"),
                                    LogConfig(message_timestamp_type="LogAppendTime")])
def test_a_header_the_caller_read_already_validates_the_same(config: LogConfig, clock) -> None:
    # A produce reads the batch header for its own checks and hands it on (`whole`) instead of it being
    # parsed again: what is validated, and every refusal, must be what parsing it here gives.
    from kemu.log.validator import validate_append
    from kemu.wire.records import whole_batch_header

    def outcome(data: bytes, whole: bool) -> tuple[bytes, bytes, int, int, bool] | tuple[ErrorCode, str]:
        header = whole_batch_header(data) if whole else None
        try:
            v = validate_append(data, config=config, origin=AppendOrigin.CLIENT, now_ms=clock.now_ms(),
                                partition_leader_epoch=3, topic_partition="t-0", whole=header)
        except LogError as error:
            return error.code, error.message
        return bytes(v.header), bytes(v.payload), v.record_count, v.max_timestamp, v.records_scanned

    keyless = build_batch([NewRecord(value=b"v", timestamp=START_MS)])
    corrupt = bytearray(batch(2))
    corrupt[-1] ^= 0xFF
    cases = [batch(3), keyless, bytes(corrupt), batch(1, base_offset=5)]
    for data in cases:
        assert whole_batch_header(data) is not None
        assert outcome(data, whole=True) == outcome(data, whole=False)
    assert isinstance(outcome(keyless, whole=True)[0], bytes) != config.compact  # a compacted topic refuses it
