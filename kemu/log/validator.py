"""Validating a batch before it is appended, as Kafka's `UnifiedLog.analyzeAndValidateRecords` and
`LogValidator` do, with the same error codes and messages, in the same order:

1. split: a malformed length or magic → CORRUPT_MESSAGE; no whole batch, or more than one → INVALID_RECORD;
2. per batch (client appends): base offset must be 0 → INVALID_RECORD; size over `max.message.bytes` →
   MESSAGE_TOO_LARGE; CRC → CORRUPT_MESSAGE; a compression id above 4 → UNKNOWN_SERVER_ERROR;
3. `validateBatch` (client appends): offset range, record count, no control batches, a sequence when there
   is a producer id → INVALID_RECORD;
4. per record: keys on compacted topics → INVALID_RECORD, timestamps against
   `message.timestamp.before/after.max.ms` and client-set LogAppendTime → INVALID_TIMESTAMP, each with a
   per-record error and the batch refused as a whole;
5. offsets, partition leader epoch and (LogAppendTime) the max timestamp are stamped on a copy; the batch is
   rebuilt only when `compression.type` asks for another codec or a compressed batch's inner offsets are not
   0..n-1, as Kafka does.

Step 4 needs the records. Kafka always walks them; kemu walks them only when the outcome could depend on
them (`needs_record_scan`): a compacted topic, a finite `before.max.ms`, a header max timestamp beyond
`after.max.ms`, a client-set LogAppendTime, a codec change — or when asked to (`verify_records`). On the
fast path a batch from an honest client gets exactly Kafka's result; one whose header lies about its
records (a wrong max timestamp, a record count that the records do not match) is accepted as sent.

A batch the broker built itself (`built=True`: a coordinator's journal record or a transaction marker) skips
what only a sender's mistake could fail: its CRC is not recomputed, and a compacted topic does not make its
records be walked for keys (the coordinators always write one). The topic's settings still apply to it as to
any other batch.
"""

from __future__ import annotations

from dataclasses import dataclass

from kemu.log.config import LONG_MAX, LogConfig
from kemu.log.errors import LogError, RecordError, RecordValidationError
from kemu.log.kinds import AppendOrigin as AppendOrigin
from kemu.wire.compression import CompressionType
from kemu.wire.errors import ErrorCode
from kemu.wire.records import (
    HEADER_SIZE,
    MAGIC_OFFSET,
    MAGIC_V2,
    NO_TIMESTAMP,
    BatchHeader,
    DecodedRecord,
    NewRecord,
    RecordBatch,
    RecordsError,
    TimestampType,
    batch_slices,
    build_batch,
    crc_of,
    rewrite_header,
    whole_batch_header,
)

_UNCOMPRESSED_NAMES = {"uncompressed": CompressionType.NONE}


@dataclass(slots=True)
class ValidatedBatch:
    """A batch ready to append: a patched 61-byte header (all but the base offset) and the payload."""

    header: bytearray
    payload: memoryview | bytes
    source: BatchHeader
    """The header as it arrived (producer id, epoch, sequence, transactional flag...)."""
    record_count: int
    last_offset_delta: int
    max_timestamp: int
    log_append_time: int
    """The broker time stamped into the batch under LogAppendTime, else -1."""
    records_scanned: bool

    @property
    def size(self) -> int:
        return len(self.header) + len(self.payload)

    def with_base_offset(self, base_offset: int) -> tuple[bytes, BatchHeader]:
        rewrite_header(self.header, base_offset=base_offset)
        return b"".join((self.header, self.payload)), BatchHeader.parse(self.header)


def _int64(value: int) -> int:
    """Java long arithmetic wraps; Kafka's messages print the wrapped value."""
    return (value + 2**63) % 2**64 - 2**63


def target_compression(config: LogConfig, source: int) -> int:
    if config.compression_type == "producer":
        return source
    if config.compression_type in _UNCOMPRESSED_NAMES:
        return CompressionType.NONE
    return CompressionType[config.compression_type.upper()]


def _compression_level(config: LogConfig, codec: int) -> int | None:
    if codec == CompressionType.GZIP:
        return config.compression_gzip_level
    if codec == CompressionType.LZ4:
        return config.compression_lz4_level
    if codec == CompressionType.ZSTD:
        return config.compression_zstd_level
    return None


def validate_append(
    data: bytes | bytearray | memoryview,
    *,
    config: LogConfig,
    origin: AppendOrigin,
    now_ms: int,
    partition_leader_epoch: int,
    topic_partition: str,
    verify_records: bool = False,
    built: bool = False,
    whole: BatchHeader | None = None,
) -> ValidatedBatch:
    """Check one append's bytes; raise LogError (code, message, record errors) or return what to write.
    `built`: the broker built the batch itself (see the module docstring). `whole`: what
    `whole_batch_header(data)` gave, when the caller has it already (a produce reads it for its own checks)."""
    piece = memoryview(data)
    source = whole if whole is not None else whole_batch_header(piece)
    if source is not None:
        _analyze(piece, source, config, origin, topic_partition, check_crc=not built)
    else:
        try:
            pieces = list(batch_slices(piece))
        except RecordsError as exc:
            raise LogError(exc.message, exc.code) from exc
        if not pieces:
            raise LogError("Record batch has no batches at all", ErrorCode.INVALID_RECORD)
        for each in pieces:
            _analyze(each, _v2_header(each, topic_partition), config, origin, topic_partition, check_crc=not built)
        if len(pieces) > 1:
            raise LogError("Compressed outer record has more than one batch", ErrorCode.INVALID_RECORD)
        piece = pieces[0]
        source = BatchHeader.parse(piece)
    if origin is AppendOrigin.CLIENT:
        _validate_batch(source, topic_partition)
    validated = _validate_records(
        piece, source, config, now_ms, partition_leader_epoch, topic_partition, verify_records, built
    )
    if validated.size > config.segment_bytes:
        raise LogError(
            f"Message batch size is {validated.size} bytes in append to partition {topic_partition}, which exceeds "
            f"the maximum configured segment size of {config.segment_bytes}.",
            ErrorCode.RECORD_LIST_TOO_LARGE,
        )
    return validated


def _v2_header(piece: memoryview, topic_partition: str) -> BatchHeader:
    magic = piece[MAGIC_OFFSET]
    if magic != MAGIC_V2:
        raise LogError(
            f"Record batch with magic {magic} in the append to {topic_partition} is not supported: only magic 2",
            ErrorCode.INVALID_RECORD,
        )
    if len(piece) < HEADER_SIZE:
        raise LogError(
            f"Record batch is corrupt (the size {len(piece)} is smaller than the minimum allowed overhead "
            f"{HEADER_SIZE})",
            ErrorCode.CORRUPT_MESSAGE,
        )
    return BatchHeader.parse(piece)


def _analyze(piece: memoryview, header: BatchHeader, config: LogConfig, origin: AppendOrigin,
             topic_partition: str, *, check_crc: bool) -> None:
    if origin is AppendOrigin.CLIENT and header.base_offset != 0:
        raise LogError(
            f"The baseOffset of the record batch in the append to {topic_partition} should be 0, "
            f"but it is {header.base_offset}",
            ErrorCode.INVALID_RECORD,
        )
    if len(piece) > config.max_message_bytes:
        raise LogError(
            f"The record batch size in the append to {topic_partition} is {len(piece)} bytes which exceeds the maximum "
            f"configured value of {config.max_message_bytes}.",
            ErrorCode.MESSAGE_TOO_LARGE,
        )
    if check_crc and header.crc != crc_of(piece):
        raise LogError(
            f"Record is corrupt (stored crc = {header.crc}) in topic partition {topic_partition}.",
            ErrorCode.CORRUPT_MESSAGE,
        )
    if header.compression > CompressionType.ZSTD:
        raise LogError(f"Unknown compression type id: {header.compression}", ErrorCode.UNKNOWN_SERVER_ERROR)


def _validate_batch(header: BatchHeader, topic_partition: str) -> None:
    last_offset = header.last_offset
    if header.last_offset_delta + 1 <= 0:
        raise LogError(
            f"Batch has an invalid offset range: [{header.base_offset}, {last_offset}] "
            f"in topic partition {topic_partition}",
            ErrorCode.INVALID_RECORD,
        )
    count = header.records_count
    if count <= 0:
        raise LogError(
            f"Invalid reported count for record batch: {count} in topic partition {topic_partition}",
            ErrorCode.INVALID_RECORD,
        )
    if header.last_offset_delta + 1 != count:
        raise LogError(
            f"Inconsistent batch offset range [{header.base_offset}, {last_offset}] and count of records {count} in "
            f"topic partition {topic_partition}",
            ErrorCode.INVALID_RECORD,
        )
    if header.is_control:
        raise LogError(
            f"Clients are not allowed to write control records in topic partition {topic_partition}",
            ErrorCode.INVALID_RECORD,
        )
    if header.has_producer_id and header.base_sequence < 0:
        raise LogError(
            f"Invalid sequence number {header.base_sequence} in record batch with producerId {header.producer_id} in "
            f"topic partition {topic_partition}",
            ErrorCode.INVALID_RECORD,
        )


def needs_record_scan(header: BatchHeader, config: LogConfig, now_ms: int, target: int,
                      built: bool = False) -> bool:
    """Whether Kafka's answer for this batch could depend on its records (see the module docstring)."""
    if (config.compact and not built) or header.timestamp_type is TimestampType.LOG_APPEND_TIME:
        return True
    if target != header.compression and not (header.compression == CompressionType.NONE and header.is_control):
        return True
    if config.timestamp_type is TimestampType.CREATE_TIME:
        if config.message_timestamp_before_max_ms < LONG_MAX:
            return True
        if (
            header.max_timestamp != NO_TIMESTAMP
            and header.max_timestamp - now_ms > config.message_timestamp_after_max_ms
        ):
            return True
    return False


def _validate_records(
    piece: memoryview,
    source: BatchHeader,
    config: LogConfig,
    now_ms: int,
    partition_leader_epoch: int,
    topic_partition: str,
    verify_records: bool,
    built: bool,
) -> ValidatedBatch:
    timestamp_type = config.timestamp_type
    log_append_time = now_ms if timestamp_type is TimestampType.LOG_APPEND_TIME else NO_TIMESTAMP
    target = target_compression(config, source.compression)
    payload = piece[HEADER_SIZE:]
    header = bytearray(piece[:HEADER_SIZE])
    rewrite_header(header, partition_leader_epoch=partition_leader_epoch)

    if not verify_records and not needs_record_scan(source, config, now_ms, target, built):
        max_timestamp = source.max_timestamp
        if timestamp_type is TimestampType.LOG_APPEND_TIME:
            max_timestamp = now_ms
            _restamp_max_timestamp(header, payload, now_ms, timestamp_type)
        return ValidatedBatch(
            header,
            payload,
            source,
            source.records_count,
            source.last_offset_delta,
            max_timestamp,
            log_append_time,
            False,
        )

    try:
        records = RecordBatch(piece).records()
    except RecordsError as exc:
        raise LogError(exc.message, exc.code) from exc
    errors: list[tuple[ErrorCode, RecordError]] = []
    max_timestamp = NO_TIMESTAMP
    inner_offsets_in_order = True
    for index, record in enumerate(records):
        problem = _record_problem(record, index, source, config, now_ms, topic_partition)
        if problem is not None:
            errors.append(problem)
        elif record.timestamp > max_timestamp:
            max_timestamp = record.timestamp
        if record.offset - source.base_offset != index:
            inner_offsets_in_order = False
    if errors:
        _raise_record_errors(errors)
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        max_timestamp = now_ms

    in_place = target == source.compression and (source.compression == CompressionType.NONE or inner_offsets_in_order)
    if source.compression == CompressionType.NONE and source.is_control:
        in_place = True
    if in_place:
        _restamp_max_timestamp(header, payload, max_timestamp, timestamp_type)
        return ValidatedBatch(
            header, payload, source, len(records), source.last_offset_delta, max_timestamp, log_append_time, True
        )

    rebuilt = build_batch(
        [NewRecord(value=r.value, key=r.key, headers=r.headers, timestamp=r.timestamp) for r in records],
        compression=target,
        compression_level=_compression_level(config, target),
        timestamp_type=timestamp_type,
        log_append_time=now_ms,
        producer_id=source.producer_id,
        producer_epoch=source.producer_epoch,
        base_sequence=source.base_sequence,
        transactional=source.is_transactional,
        partition_leader_epoch=partition_leader_epoch,
    )
    if len(rebuilt) > config.max_message_bytes:
        raise LogError(
            f"Message batch size is {len(rebuilt)} bytes in append topartition {topic_partition} which exceeds the "
            f"maximum configured size of {config.max_message_bytes}.",
            ErrorCode.MESSAGE_TOO_LARGE,
        )
    view = memoryview(rebuilt)
    rebuilt_header = BatchHeader.parse(view)
    return ValidatedBatch(
        bytearray(view[:HEADER_SIZE]),
        view[HEADER_SIZE:],
        source,
        len(records),
        rebuilt_header.last_offset_delta,
        rebuilt_header.max_timestamp,
        log_append_time,
        True,
    )


def _restamp_max_timestamp(
    header: bytearray, payload: memoryview, max_timestamp: int, timestamp_type: TimestampType
) -> None:
    """Kafka's `setMaxTimestamp`: new attributes/max timestamp, and a new CRC only if either changed."""
    rewrite_header(header, max_timestamp=max_timestamp, timestamp_type=timestamp_type, payload=payload)


def _record_problem(
    record: DecodedRecord, index: int, header: BatchHeader, config: LogConfig, now_ms: int, topic_partition: str
) -> tuple[ErrorCode, RecordError] | None:
    if config.compact and record.key is None:
        return ErrorCode.INVALID_RECORD, RecordError(
            index, f"Compacted topic cannot accept message without key in topic partition {topic_partition}"
        )
    if config.timestamp_type is TimestampType.CREATE_TIME and record.timestamp != NO_TIMESTAMP:
        difference = now_ms - record.timestamp
        before, after = config.message_timestamp_before_max_ms, config.message_timestamp_after_max_ms
        if difference > before or -difference > after:
            return ErrorCode.INVALID_TIMESTAMP, RecordError(
                index,
                f"Timestamp {record.timestamp} of message with offset {record.offset} is out of range. The timestamp "
                f"should be within [{_int64(now_ms - before)}, {_int64(now_ms + after)}]",
            )
    elif header.timestamp_type is TimestampType.LOG_APPEND_TIME:
        described = (
            f"DefaultRecord(offset={record.offset}, timestamp={record.timestamp}, "
            f"key={0 if record.key is None else len(record.key)} bytes, "
            f"value={0 if record.value is None else len(record.value)} bytes)"
        )
        return ErrorCode.INVALID_TIMESTAMP, RecordError(
            index,
            f"Invalid timestamp type in message {described}. Producer should not set timestamp type to LogAppendTime.",
        )
    return None


def _raise_record_errors(errors: list[tuple[ErrorCode, RecordError]]) -> None:
    record_errors = [error for _, error in errors]
    if any(code is ErrorCode.INVALID_TIMESTAMP for code, _ in errors):
        raise RecordValidationError(
            "One or more records have been rejected due to invalid timestamp",
            ErrorCode.INVALID_TIMESTAMP,
            record_errors,
        )
    shown = ", ".join(str(error) for error in record_errors[:3])
    raise RecordValidationError(
        f"One or more records have been rejected due to {len(record_errors)} record errors in total, and only showing "
        f"the first three errors at most: [{shown}]",
        ErrorCode.INVALID_RECORD,
        record_errors,
    )
