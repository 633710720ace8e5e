"""Record batches, magic v2 — the unit a producer sends, the log stores and a fetch returns.

Layout (big-endian, 61-byte header; the CRC-32C covers attributes through the end of the batch):

    0  base_offset int64          27 base_timestamp int64 (the delete horizon when attribute bit 6 is set)
    8  batch_length int32         35 max_timestamp int64
   12  partition_leader_epoch     43 producer_id int64
   16  magic int8                 51 producer_epoch int16
   17  crc uint32                 53 base_sequence int32
   21  attributes int16           57 records_count int32
   23  last_offset_delta int32    61 records (compressed as a whole when attribute bits 0-2 say so)

Attributes: bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd), bit 3 timestamp type
(1 = LogAppendTime), bit 4 transactional, bit 5 control, bit 6 delete horizon set.

Each record: length varint, attributes int8, timestamp delta varlong, offset delta varint, key
(varint length, -1 = null, distinct from empty), value (likewise), header count varint, then per header a
varint-length UTF-8 key and a varint-length value (-1 = null). Every varint is zigzag-encoded.

The hot path (produce → log → fetch) touches only the header: `BatchHeader.parse` is one `unpack_from`,
`crc_of` runs in crc32c's C code, and `rewrite_header` patches a copy in place. Records are decoded only
where Kafka has to look at them (validation that needs them, timestamp searches, coordinators, tests).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from enum import IntEnum
from typing import NamedTuple

from kemu.wire import checksum  # its crc32c loads on the first checksum
from kemu.wire.compression import CompressionError, CompressionType, DecompressedTooLarge, compress, decompress
from kemu.wire.errors import CodedError, ErrorCode

MAGIC_V2 = 2
LOG_OVERHEAD = 12
"""base_offset + batch_length: the bytes before the length counts."""
HEADER_SIZE = 61
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAX_TIMESTAMP_OFFSET = 35
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1
LEGACY_RECORD_OVERHEAD_V0 = 14
"""The smallest length Kafka's batch splitter accepts before it even looks at the magic byte."""

NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

_INT32_MAX = 2**31 - 1

_HEADER = struct.Struct(">qiibIhiqqqhii")
_BASE_OFFSET = struct.Struct(">q")
_PARTITION_LEADER_EPOCH = struct.Struct(">i")
_PARTITION_LEADER_EPOCH_OFFSET = 12
_CRC = struct.Struct(">I")
_ATTRIBUTES = struct.Struct(">h")
_MAX_TIMESTAMP = struct.Struct(">q")
_LENGTH = struct.Struct(">i")
_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_MARKER_VALUE = struct.Struct(">hi")


class TimestampType(IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def kafka_name(self) -> str:
        return "CreateTime" if self is TimestampType.CREATE_TIME else "LogAppendTime"


class ControlRecordType(IntEnum):
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


class RecordsError(CodedError, ValueError):
    """Bytes that Kafka would refuse, with the error code a real broker answers with."""

    code: ErrorCode = ErrorCode.CORRUPT_MESSAGE


class CorruptRecordError(RecordsError):
    """Kafka's CorruptRecordException: CORRUPT_MESSAGE."""

    code = ErrorCode.CORRUPT_MESSAGE


class InvalidRecordError(RecordsError):
    """Kafka's InvalidRecordException: INVALID_RECORD."""

    code = ErrorCode.INVALID_RECORD


class UnsupportedCompressionError(RecordsError):
    code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


class RecordDecompressionError(RecordsError):
    # Kafka wraps a codec failure in a plain KafkaException, which reaches the client as
    # UNKNOWN_SERVER_ERROR; only a stream that ends early becomes INVALID_RECORD.
    code = ErrorCode.UNKNOWN_SERVER_ERROR


class DecompressedBatchTooLargeError(RecordsError):
    """A compressed batch whose records expand past `MAX_DECOMPRESSED_BATCH_BYTES`: refused as too large
    (a producer splits a batch it is told is too large) before the expansion is held in memory."""

    code = ErrorCode.MESSAGE_TOO_LARGE


MAX_DECOMPRESSED_BATCH_BYTES = 104_857_600
"""The most record bytes one batch may expand to: Kafka's default `socket.request.max.bytes`, the largest
request a broker reads, so an uncompressed batch could never be larger. Kafka streams a compressed batch
record by record instead; kemu decodes it whole, and without this bound a few kilobytes of zstd could
make it allocate gigabytes."""


class BatchHeader(NamedTuple):
    """The decoded 61-byte header of a v2 batch (a tuple, so decoding it is a single C call)."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @classmethod
    def parse(cls, buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
        return cls._make(_HEADER.unpack_from(buf, pos))

    def pack(self) -> bytes:
        return _HEADER.pack(*self)

    @property
    def size(self) -> int:
        """Bytes of the whole batch, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def first_timestamp(self) -> int:
        return self.base_timestamp

    @property
    def compression(self) -> int:
        """Attribute bits 0-2; values 5-7 are not a codec, so this stays an int (see `CompressionType`)."""
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType.LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def delete_horizon_ms(self) -> int:
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else NO_TIMESTAMP

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's sequence arithmetic: sequences wrap from Int32.MAX back to 0."""
    if sequence > _INT32_MAX - increment:
        return increment - (_INT32_MAX - sequence) - 1
    return sequence + increment


def make_attributes(
    compression: int = CompressionType.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    *,
    transactional: bool = False,
    control: bool = False,
    delete_horizon: bool = False,
) -> int:
    attributes = int(compression) & COMPRESSION_MASK
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if transactional:
        attributes |= TRANSACTIONAL_MASK
    if control:
        attributes |= CONTROL_MASK
    if delete_horizon:
        attributes |= DELETE_HORIZON_MASK
    return attributes


def crc_of(batch: bytes | bytearray | memoryview) -> int:
    """The CRC-32C a v2 batch must carry: over attributes through the end."""
    return checksum.crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:])


class RecordBatch:
    """A v2 batch: its exact bytes (`data`, never copied) and its decoded header."""

    __slots__ = ("data", "header")

    def __init__(self, data: bytes | bytearray | memoryview, header: BatchHeader | None = None) -> None:
        view = memoryview(data)
        if header is not None:  # already parsed from exactly these bytes (whole_batch_header)
            self.header, self.data = header, view
            return
        if len(view) < HEADER_SIZE:
            raise CorruptRecordError(
                f"Record batch is corrupt (the size {len(view)} is smaller than the minimum allowed overhead "
                f"{HEADER_SIZE})"
            )
        self.header = BatchHeader.parse(view)
        self.data = view[: self.header.size] if len(view) != self.header.size else view

    @property
    def size(self) -> int:
        return len(self.data)

    def computed_crc(self) -> int:
        return crc_of(self.data)

    def is_valid(self) -> bool:
        """Kafka's `DefaultRecordBatch.isValid`: big enough and the stored CRC matches."""
        return len(self.data) >= HEADER_SIZE and self.header.crc == self.computed_crc()

    def records_payload(self) -> bytes:
        """The record bytes after decompression (a copy), at most MAX_DECOMPRESSED_BATCH_BYTES of them."""
        compression = self.header.compression
        payload = self.data[HEADER_SIZE:]
        if compression == CompressionType.NONE:
            return bytes(payload)
        try:
            return decompress(compression, payload, MAX_DECOMPRESSED_BATCH_BYTES)
        except DecompressedTooLarge as exc:
            raise DecompressedBatchTooLargeError(f"Record batch is too large once decompressed: {exc}") from exc
        except CompressionError as exc:
            raise RecordDecompressionError(f"Failed to decompress record stream: {exc}") from exc

    def records(self) -> list[DecodedRecord]:
        return decode_records(self.header, self.records_payload())

    def __iter__(self) -> Iterator[DecodedRecord]:
        return iter(self.records())

    def __repr__(self) -> str:
        h = self.header
        return (
            f"RecordBatch(base_offset={h.base_offset}, last_offset={h.last_offset}, count={h.records_count}, "
            f"size={len(self.data)}, compression={h.compression}, timestamp_type={h.timestamp_type.kafka_name}, "
            f"transactional={h.is_transactional}, control={h.is_control}, producer_id={h.producer_id}, "
            f"producer_epoch={h.producer_epoch}, base_sequence={h.base_sequence})"
        )


def batch_slices(data: bytes | bytearray | memoryview) -> Iterator[memoryview]:
    """Split back-to-back batches the way Kafka's ByteBufferLogInputStream does.

    A trailing partial batch (fewer bytes than its length claims, or too few to read a length) ends the
    iteration silently — Kafka trims it. A length below the smallest legal record, or a magic byte other
    than 0, 1 or 2, is CORRUPT_MESSAGE. Each slice is the batch's exact bytes; its magic may be < 2.
    """
    view = memoryview(data)
    pos = 0
    end = len(view)
    while end - pos >= LOG_OVERHEAD:
        (length,) = _LENGTH.unpack_from(view, pos + 8)
        if length < LEGACY_RECORD_OVERHEAD_V0:
            raise CorruptRecordError(
                f"Record size {length} is less than the minimum record overhead ({LEGACY_RECORD_OVERHEAD_V0})"
            )
        if end - pos < HEADER_SIZE_UP_TO_MAGIC:
            return
        magic = view[pos + MAGIC_OFFSET]
        if magic > MAGIC_V2:  # a byte >= 128 is a negative Java byte, also refused
            raise CorruptRecordError(f"Invalid magic found in record: {magic if magic < 128 else magic - 256}")
        size = length + LOG_OVERHEAD
        if end - pos < size:
            return
        yield view[pos : pos + size]
        pos += size


def whole_batch_header(data: bytes | bytearray | memoryview) -> BatchHeader | None:
    """The header when `data` is exactly one whole v2 batch — what a client's produce nearly always is, and
    where `batch_slices` would yield that one batch and raise nothing — else None (take the general path)."""
    if len(data) < HEADER_SIZE or data[MAGIC_OFFSET] != MAGIC_V2:
        return None
    header = BatchHeader.parse(data)
    if header.batch_length + LOG_OVERHEAD != len(data) or header.batch_length < LEGACY_RECORD_OVERHEAD_V0:
        return None
    return header


def iter_batches(data: bytes | bytearray | memoryview) -> Iterator[RecordBatch]:
    """The v2 batches of a buffer (log segment data, a fetch response's records)."""
    for piece in batch_slices(data):
        if piece[MAGIC_OFFSET] != MAGIC_V2:
            raise InvalidRecordError(f"Record batch with magic {piece[MAGIC_OFFSET]} is not supported (only magic 2)")
        yield RecordBatch(piece)


def check_produce_records(api_version: int, data: bytes | bytearray | memoryview | None,
                          whole: BatchHeader | None = None) -> RecordBatch:
    """Kafka's `ProduceRequest.validateRecords` for one partition's records (produce v3+).

    Returns the single batch; raises `RecordsError` with the code Kafka answers for that partition:
    no whole batch, a magic other than 2 or more than one batch → INVALID_RECORD; zstd before produce
    v7 → UNSUPPORTED_COMPRESSION_TYPE; a malformed length or magic → CORRUPT_MESSAGE. (Kafka sends these
    partition errors without an error message.) `whole`: what `whole_batch_header(data)` gave, when the
    caller has it already.
    """
    if whole is None and data is not None:
        whole = whole_batch_header(data)
    if whole is not None and data is not None:
        if api_version < 7 and whole.compression == CompressionType.ZSTD:
            raise UnsupportedCompressionError(
                f"Produce requests with version {api_version} are not allowed to use ZStandard compression"
            )
        return RecordBatch(data, whole)
    slices = batch_slices(b"" if data is None else data)
    first = next(slices, None)
    if first is None:
        raise InvalidRecordError(
            f"Produce requests with version {api_version} must have at least one record batch per partition"
        )
    if first[MAGIC_OFFSET] != MAGIC_V2:
        raise InvalidRecordError(
            f"Produce requests with version {api_version} are only allowed to contain record batches with "
            "magic version 2"
        )
    batch = RecordBatch(first)
    if api_version < 7 and batch.header.compression == CompressionType.ZSTD:
        raise UnsupportedCompressionError(
            f"Produce requests with version {api_version} are not allowed to use ZStandard compression"
        )
    if next(slices, None) is not None:
        raise InvalidRecordError(
            f"Produce requests with version {api_version} are only allowed to contain exactly one record batch "
            "per partition"
        )
    return batch


def rewrite_header(
    buf: bytearray | memoryview,
    *,
    base_offset: int | None = None,
    partition_leader_epoch: int | None = None,
    max_timestamp: int | None = None,
    timestamp_type: TimestampType | None = None,
    payload: bytes | bytearray | memoryview | None = None,
) -> None:
    """Patch a writable batch in place, recomputing the CRC only when a CRC-covered field changed.

    Base offset and partition leader epoch sit before the CRC'd region, so assigning offsets is two
    stores; a new max timestamp or timestamp type (LogAppendTime) changes covered bytes, as Kafka's
    `setMaxTimestamp` does, and so costs one CRC pass. `buf` is the whole batch, or only its 61-byte
    header when the records follow separately as `payload`.
    """
    if base_offset is not None:
        _BASE_OFFSET.pack_into(buf, 0, base_offset)
    if partition_leader_epoch is not None:
        _PARTITION_LEADER_EPOCH.pack_into(buf, _PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)
    if max_timestamp is None and timestamp_type is None:
        return
    (attributes,) = _ATTRIBUTES.unpack_from(buf, ATTRIBUTES_OFFSET)
    (current_max,) = _MAX_TIMESTAMP.unpack_from(buf, MAX_TIMESTAMP_OFFSET)
    new_attributes = attributes
    if timestamp_type is not None:
        new_attributes = (attributes & ~TIMESTAMP_TYPE_MASK) | (
            TIMESTAMP_TYPE_MASK if timestamp_type is TimestampType.LOG_APPEND_TIME else 0
        )
    new_max = current_max if max_timestamp is None else max_timestamp
    if new_attributes == attributes and new_max == current_max:
        return
    _ATTRIBUTES.pack_into(buf, ATTRIBUTES_OFFSET, new_attributes)
    _MAX_TIMESTAMP.pack_into(buf, MAX_TIMESTAMP_OFFSET, new_max)
    crc = (crc_of(buf) if payload is None
           else checksum.crc32c(payload, checksum.crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:HEADER_SIZE])))
    _CRC.pack_into(buf, CRC_OFFSET, crc)


# --- records --------------------------------------------------------------------------------------------


# NamedTuples, not frozen dataclasses: one is made per record decoded or built, which a tuple makes more
# cheaply (no object.__setattr__ per field), and every start-up defines them (a dataclass definition compiles
# its generated methods, ~0.5 ms each on a slow machine).
class DecodedRecord(NamedTuple):
    """A decoded record. `timestamp` is the effective one (the batch's max timestamp under LogAppendTime)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    attributes: int = 0
    size: int = 0
    """Encoded size, including the leading length varint."""


class NewRecord(NamedTuple):
    """A record to put into a batch being built. `offset_delta` defaults to the record's position."""

    value: bytes | None
    key: bytes | None = None
    headers: Sequence[tuple[str, bytes | None]] = ()
    timestamp: int = NO_TIMESTAMP
    offset_delta: int | None = None


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint (or varlong) at `pos`; returns (value, next position). IndexError on underflow."""
    b = buf[pos]
    pos += 1
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos
    raw = b & 0x7F
    shift = 7
    while True:
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if shift > 63:
            raise ValueError("varint is too long")


def decode_records(header: BatchHeader, payload: bytes) -> list[DecodedRecord]:
    """Decode `records_count` records from decompressed record bytes, with Kafka's structural checks.

    Raises InvalidRecordError with the message Kafka's DefaultRecord/DefaultRecordBatch would give.
    """
    count = header.records_count
    if count < 0:
        raise InvalidRecordError(f"Found invalid record count {count} in magic v{header.magic} batch")
    base_offset = header.base_offset
    base_timestamp = header.base_timestamp
    log_append_time = header.max_timestamp if header.attributes & TIMESTAMP_TYPE_MASK else None
    records: list[DecodedRecord] = []
    pos = 0
    end = len(payload)
    try:
        for _ in range(count):
            start = pos
            body_size, pos = _read_varint(payload, pos)
            if end - pos < body_size:
                raise InvalidRecordError(
                    f"Invalid record size: expected {body_size} bytes in record payload, but instead the buffer "
                    f"has only {end - pos} remaining bytes."
                )
            body_start = pos
            attributes = payload[pos]
            pos += 1
            timestamp_delta, pos = _read_varint(payload, pos)
            offset_delta, pos = _read_varint(payload, pos)
            key_len, pos = _read_varint(payload, pos)
            if key_len < 0:
                key = None
            else:
                if pos + key_len > end:
                    raise IndexError
                key = payload[pos : pos + key_len]
                pos += key_len
            value_len, pos = _read_varint(payload, pos)
            if value_len < 0:
                value = None
            else:
                if pos + value_len > end:
                    raise IndexError
                value = payload[pos : pos + value_len]
                pos += value_len
            header_count, pos = _read_varint(payload, pos)
            if header_count < 0:
                raise InvalidRecordError(f"Found invalid number of record headers {header_count}")
            headers: list[tuple[str, bytes | None]] = []
            for _h in range(header_count):
                hkey_len, pos = _read_varint(payload, pos)
                if hkey_len < 0:
                    raise InvalidRecordError(f"Invalid negative header key size {hkey_len}")
                if pos + hkey_len > end:
                    raise IndexError
                hkey = payload[pos : pos + hkey_len].decode("utf-8")
                pos += hkey_len
                hvalue_len, pos = _read_varint(payload, pos)
                if hvalue_len < 0:
                    hvalue = None
                else:
                    if pos + hvalue_len > end:
                        raise IndexError
                    hvalue = payload[pos : pos + hvalue_len]
                    pos += hvalue_len
                headers.append((hkey, hvalue))
            if pos - body_start != body_size:
                raise InvalidRecordError(
                    f"Invalid record size: expected to read {body_size} bytes in record payload, but instead "
                    f"read {pos - body_start}"
                )
            records.append(
                DecodedRecord(  # positionally: offset, timestamp, key, value, headers, attributes, size
                    base_offset + offset_delta,
                    base_timestamp + timestamp_delta if log_append_time is None else log_append_time,
                    key,
                    value,
                    tuple(headers),
                    attributes,
                    pos - start,
                )
            )
    except (IndexError, ValueError) as exc:
        if isinstance(exc, RecordsError):
            raise
        raise InvalidRecordError("Found invalid record structure") from exc
    if pos != end:
        raise InvalidRecordError("Incorrect declared batch size, records still remaining in file")
    return records


def _varint(value: int) -> bytes:
    raw = (value << 1) ^ (value >> 63)
    if raw < 0x80:
        return bytes((raw,))
    out = bytearray()
    while raw > 0x7F:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Iterable[tuple[str, bytes | None]] = (),
    attributes: int = 0,
) -> bytes:
    parts = [bytes((attributes & 0xFF,)), _varint(timestamp_delta), _varint(offset_delta)]
    for blob in (key, value):
        if blob is None:
            parts.append(_varint(-1))
        else:
            parts.append(_varint(len(blob)))
            parts.append(bytes(blob))
    header_list = list(headers)
    parts.append(_varint(len(header_list)))
    for hkey, hvalue in header_list:
        encoded_key = hkey.encode("utf-8")
        parts.append(_varint(len(encoded_key)))
        parts.append(encoded_key)
        if hvalue is None:
            parts.append(_varint(-1))
        else:
            parts.append(_varint(len(hvalue)))
            parts.append(bytes(hvalue))
    body = b"".join(parts)
    return _varint(len(body)) + body


def build_batch(
    records: Iterable[NewRecord],
    *,
    base_offset: int = 0,
    compression: CompressionType | int = CompressionType.NONE,
    compression_level: int | None = None,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int = NO_TIMESTAMP,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
    control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    delete_horizon_ms: int | None = None,
    last_offset_delta: int | None = None,
) -> bytes:
    """Encode a v2 batch the way Kafka's MemoryRecordsBuilder does.

    The base timestamp is the first record's timestamp (or the delete horizon when one is given); the max
    timestamp is the largest record timestamp, or `log_append_time` under LogAppendTime. `last_offset_delta`
    overrides the last record's delta (Kafka's overrideLastOffset: a compacted batch keeps its original last
    offset, so the producer's last sequence survives).
    """
    items = list(records)
    if not items:
        raise ValueError("a record batch needs at least one record")
    first_timestamp = items[0].timestamp
    base_timestamp = first_timestamp if delete_horizon_ms is None else delete_horizon_ms
    encoded: list[bytes] = []
    max_timestamp = NO_TIMESTAMP
    last_delta = -1
    for index, record in enumerate(items):
        delta = index if record.offset_delta is None else record.offset_delta
        if delta <= last_delta:
            raise ValueError(f"offset deltas must increase (got {delta} after {last_delta})")
        last_delta = delta
        if record.timestamp > max_timestamp:
            max_timestamp = record.timestamp
        encoded.append(
            encode_record(delta, record.timestamp - base_timestamp, record.key, record.value, record.headers)
        )
    if last_offset_delta is not None:
        if last_offset_delta < last_delta:
            raise ValueError(f"last offset delta {last_offset_delta} is below the last record's {last_delta}")
        last_delta = last_offset_delta
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        max_timestamp = log_append_time
    payload = b"".join(encoded)
    if compression != CompressionType.NONE:
        payload = compress(compression, payload, compression_level)
    attributes = make_attributes(
        compression,
        timestamp_type,
        transactional=transactional,
        control=control,
        delete_horizon=delete_horizon_ms is not None,
    )
    header = bytearray(
        _HEADER.pack(
            base_offset,
            HEADER_SIZE - LOG_OVERHEAD + len(payload),
            partition_leader_epoch,
            MAGIC_V2,
            0,
            attributes,
            last_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            len(items),
        )
    )
    crc = checksum.crc32c(payload, checksum.crc32c(memoryview(header)[ATTRIBUTES_OFFSET:]))
    _CRC.pack_into(header, CRC_OFFSET, crc)
    return bytes(header) + payload


_TRANSACTIONAL_CONTROL = make_attributes(transactional=True, control=True)


def build_one_record_batch(key: bytes | None, value: bytes | None, timestamp: int, *, attributes: int = 0,
                           producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH) -> bytes:
    """`build_batch([NewRecord(key=key, value=value, timestamp=timestamp)], ...)` byte for byte, for the
    one-record, uncompressed, header-less CreateTime batches the broker writes itself on every transaction
    (the coordinators' state records and the COMMIT/ABORT markers): one pack and one CRC, without the
    general builder's per-record and per-field passes."""
    body = bytearray(b"\0\0\0")  # attributes, timestamp delta 0, offset delta 0
    for blob in (key, value):
        if blob is None:
            body.append(1)  # varint -1
        else:
            body += _varint(len(blob))
            body += blob
    body.append(0)  # no headers
    payload = _varint(len(body)) + body
    batch = bytearray(_HEADER.pack(0, HEADER_SIZE - LOG_OVERHEAD + len(payload), NO_PARTITION_LEADER_EPOCH,
                                   MAGIC_V2, 0, attributes, 0, timestamp, timestamp, producer_id,
                                   producer_epoch, NO_SEQUENCE, 1))
    batch += payload
    _CRC.pack_into(batch, CRC_OFFSET, checksum.crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]))
    return bytes(batch)


# --- control records ------------------------------------------------------------------------------------

CONTROL_RECORD_KEY_VERSION = 0
END_TXN_MARKER_VALUE_VERSION = 0


def encode_control_key(record_type: ControlRecordType | int, version: int = CONTROL_RECORD_KEY_VERSION) -> bytes:
    return _CONTROL_KEY.pack(version, int(record_type))


def decode_control_key(key: bytes | None) -> tuple[int, int]:
    """(version, type) of a control record's key. Kafka reads only the first 4 bytes."""
    if key is None or len(key) < _CONTROL_KEY.size:
        raise InvalidRecordError(
            f"Invalid value size found for end control record key. Must have at least {_CONTROL_KEY.size} bytes"
        )
    version, record_type = _CONTROL_KEY.unpack_from(key)
    return version, record_type


def encode_end_txn_marker_value(coordinator_epoch: int, version: int = END_TXN_MARKER_VALUE_VERSION) -> bytes:
    return _END_TXN_MARKER_VALUE.pack(version, coordinator_epoch)


def decode_end_txn_marker_value(value: bytes | None) -> tuple[int, int]:
    """(version, coordinator epoch) of an ABORT/COMMIT marker's value."""
    if value is None or len(value) < _END_TXN_MARKER_VALUE.size:
        raise InvalidRecordError(
            "Invalid value size found for end transaction marker. Must have at least "
            f"{_END_TXN_MARKER_VALUE.size} bytes"
        )
    version, coordinator_epoch = _END_TXN_MARKER_VALUE.unpack_from(value)
    return version, coordinator_epoch


def build_end_txn_marker(
    *,
    commit: bool,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """A transaction marker batch, as `MemoryRecords.withEndTransactionMarker` writes it."""
    record_type = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    batch = build_one_record_batch(encode_control_key(record_type), encode_end_txn_marker_value(coordinator_epoch),
                                   timestamp, attributes=_TRANSACTIONAL_CONTROL, producer_id=producer_id,
                                   producer_epoch=producer_epoch)
    if base_offset == 0 and partition_leader_epoch == NO_PARTITION_LEADER_EPOCH:
        return batch
    placed = bytearray(batch)  # both fields lie before the CRC'd bytes
    rewrite_header(placed, base_offset=base_offset, partition_leader_epoch=partition_leader_epoch)
    return bytes(placed)


def offset_of_max_timestamp(batch: RecordBatch) -> int | None:
    """The offset of the first record whose timestamp equals the batch's max timestamp (ListOffsets -3)."""
    target = batch.header.max_timestamp
    for record in batch.records():
        if record.timestamp == target:
            return record.offset
    return None
