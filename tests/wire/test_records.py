"""v2 record batches: header view, CRC, header rewriting, splitting, record codec, codecs, control records.

aiokafka's and kafka-python's own batch encoders/decoders are the independent oracles: batches they build
must decode here, batches built here must decode there, and for deterministic codecs the bytes must match.
"""

from __future__ import annotations

import struct

import cramjam
import pytest
from aiokafka.record.default_records import DefaultRecordBatch as AioBatch
from aiokafka.record.default_records import DefaultRecordBatchBuilder as AioBuilder
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch as KpBatch
from kafka.record.default_records import DefaultRecordBatchBuilder as KpBuilder

from kemu.wire.compression import XERIAL_MAGIC, CompressionType, compress, decompress, snappy_decompress
from kemu.wire.errors import ErrorCode
from kemu.wire.records import (
    HEADER_SIZE,
    BatchHeader,
    ControlRecordType,
    CorruptRecordError,
    InvalidRecordError,
    NewRecord,
    RecordBatch,
    RecordsError,
    TimestampType,
    batch_slices,
    build_batch,
    build_end_txn_marker,
    build_one_record_batch,
    check_produce_records,
    crc_of,
    decode_control_key,
    decode_end_txn_marker_value,
    increment_sequence,
    iter_batches,
    make_attributes,
    offset_of_max_timestamp,
    rewrite_header,
    whole_batch_header,
)

SAMPLE = [
    NewRecord(value=b"v" * 100, key=b"k", headers=[("h", b"x")], timestamp=1000),
    NewRecord(value=b"", key=None, timestamp=999),
    NewRecord(value=None, key=b"", headers=[("n", None), ("ü", b"")], timestamp=1002),
]


def aiokafka_batch(codec: int, records: list[NewRecord] = SAMPLE, **producer: int | bool) -> bytes:
    builder = AioBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=bool(producer.get("transactional", False)),
        producer_id=int(producer.get("producer_id", -1)),
        producer_epoch=int(producer.get("producer_epoch", -1)),
        base_sequence=int(producer.get("base_sequence", -1)),
        batch_size=1 << 24,
    )
    for i, r in enumerate(records):
        builder.append(i, timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers))
    return bytes(builder.build())


def plain(records: list[NewRecord]) -> list[tuple]:
    return [(r.key, r.value, tuple(r.headers), r.timestamp) for r in records]


def decoded(batch: RecordBatch) -> list[tuple]:
    return [(r.key, r.value, r.headers, r.timestamp) for r in batch.records()]


# --- header ---------------------------------------------------------------------------------------------


def test_header_exposes_every_field() -> None:
    attributes = make_attributes(
        CompressionType.LZ4, TimestampType.LOG_APPEND_TIME, transactional=True, control=True, delete_horizon=True
    )
    raw = struct.pack(">qiibIhiqqqhii", 42, 49, 7, 2, 0xDEADBEEF, attributes, 3, 1111, 2222, 99, 4, 17, 4)
    h = BatchHeader.parse(raw)
    assert (h.base_offset, h.batch_length, h.partition_leader_epoch, h.magic, h.crc) == (42, 49, 7, 2, 0xDEADBEEF)
    assert (h.last_offset_delta, h.base_timestamp, h.max_timestamp) == (3, 1111, 2222)
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.records_count) == (99, 4, 17, 4)
    assert h.compression == CompressionType.LZ4
    assert h.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert h.is_transactional and h.is_control and h.has_delete_horizon
    assert h.delete_horizon_ms == 1111
    assert (h.size, h.last_offset, h.next_offset, h.last_sequence) == (61, 45, 46, 20)
    assert h.has_producer_id
    assert BatchHeader.parse(h.pack()) == h


def test_plain_attributes_are_all_clear() -> None:
    h = RecordBatch(build_batch(SAMPLE)).header
    assert h.attributes == 0
    assert h.timestamp_type is TimestampType.CREATE_TIME
    assert not (h.is_transactional or h.is_control or h.has_delete_horizon or h.has_producer_id)
    assert h.delete_horizon_ms == -1 and h.last_sequence == -1


def test_sequence_wraps_like_kafka() -> None:
    assert increment_sequence(2**31 - 2, 1) == 2**31 - 1
    assert increment_sequence(2**31 - 1, 1) == 0
    assert increment_sequence(2**31 - 2, 5) == 3


# --- oracle: aiokafka / kafka-python --------------------------------------------------------------------


@pytest.mark.parametrize("codec", list(CompressionType))
def test_reads_aiokafka_batches(codec: CompressionType) -> None:
    batch = RecordBatch(aiokafka_batch(codec, producer_id=5, producer_epoch=1, base_sequence=10))
    assert batch.is_valid()
    assert batch.header.compression == codec
    assert (batch.header.producer_id, batch.header.producer_epoch, batch.header.base_sequence) == (5, 1, 10)
    assert decoded(batch) == plain(SAMPLE)
    assert [r.offset for r in batch.records()] == [0, 1, 2]


@pytest.mark.parametrize("codec", list(CompressionType))
def test_aiokafka_reads_batches_built_here(codec: CompressionType) -> None:
    data = build_batch(SAMPLE, compression=codec, producer_id=5, producer_epoch=1, base_sequence=10)
    theirs = AioBatch(data)
    assert theirs.validate_crc()
    assert [(r.key, r.value, tuple(r.headers), r.timestamp) for r in theirs] == plain(SAMPLE)


@pytest.mark.parametrize(
    "codec", [CompressionType.NONE, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]
)
def test_deterministic_codecs_build_the_same_bytes_as_aiokafka(codec: CompressionType) -> None:
    assert build_batch(SAMPLE, compression=codec, producer_id=5, producer_epoch=1, base_sequence=10) == aiokafka_batch(
        codec, producer_id=5, producer_epoch=1, base_sequence=10
    )


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP])
def test_kafka_python_oracle(codec: CompressionType) -> None:
    builder = KpBuilder(
        magic=2, compression_type=codec, is_transactional=False, producer_id=-1, producer_epoch=-1, base_sequence=-1,
        batch_size=1 << 20,
    )
    for i, r in enumerate(SAMPLE):
        builder.append(i, timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers))
    theirs = bytes(builder.build())
    assert decoded(RecordBatch(theirs)) == plain(SAMPLE)
    mine = build_batch(SAMPLE, compression=codec)
    back = KpBatch(mine)
    assert back.validate_crc()
    assert [(r.key, r.value, tuple(r.headers), r.timestamp) for r in back] == plain(SAMPLE)
    if codec is CompressionType.NONE:
        # kafka-python writes partition leader epoch 0 where Java and aiokafka write -1; all else is equal.
        assert mine[:12] + mine[16:] == theirs[:12] + theirs[16:]


records_strategy = st.lists(
    st.builds(
        NewRecord,
        value=st.none() | st.binary(max_size=300),
        key=st.none() | st.binary(max_size=40),
        headers=st.lists(st.tuples(st.text(max_size=10), st.none() | st.binary(max_size=20)), max_size=3),
        timestamp=st.integers(min_value=-1, max_value=2**45),
        offset_delta=st.none(),  # st.builds fills a NamedTuple's defaulted fields too: each record at its position
    ),
    min_size=1,
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(records=records_strategy, codec=st.sampled_from(list(CompressionType)))
def test_round_trip_matches_aiokafka(records: list[NewRecord], codec: CompressionType) -> None:
    data = build_batch(records, compression=codec, base_offset=1000)
    batch = RecordBatch(data)
    assert batch.is_valid()
    assert decoded(batch) == plain(records)
    assert [r.offset for r in batch.records()] == list(range(1000, 1000 + len(records)))
    assert batch.header.max_timestamp == max(r.timestamp for r in records)
    assert [(r.key, r.value, tuple(r.headers), r.timestamp) for r in AioBatch(data)] == plain(records)


# --- codecs ---------------------------------------------------------------------------------------------


def test_raw_snappy_as_librdkafka_writes_it() -> None:
    payload = b"abc" * 5000
    raw = bytes(cramjam.snappy.compress_raw(payload))
    assert not raw.startswith(XERIAL_MAGIC)
    assert snappy_decompress(raw) == payload
    # A batch whose snappy payload is raw (no xerial framing) decodes too.
    data = bytearray(build_batch(SAMPLE))
    body = bytes(data[HEADER_SIZE:])
    raw_batch = bytearray(data[:HEADER_SIZE]) + bytes(cramjam.snappy.compress_raw(body))
    struct.pack_into(">i", raw_batch, 8, len(raw_batch) - 12)
    struct.pack_into(">h", raw_batch, 21, CompressionType.SNAPPY)
    struct.pack_into(">I", raw_batch, 17, crc_of(raw_batch))
    batch = RecordBatch(raw_batch)
    assert batch.is_valid() and decoded(batch) == plain(SAMPLE)


def test_xerial_snappy_is_java_framed_in_32k_blocks() -> None:
    payload = bytes(range(256)) * 400  # 100 KiB: four blocks
    framed = compress(CompressionType.SNAPPY, payload)
    assert framed[:8] == XERIAL_MAGIC
    assert struct.unpack_from(">ii", framed, 8) == (1, 1)
    pos, blocks = 16, 0
    while pos < len(framed):
        (n,) = struct.unpack_from(">i", framed, pos)
        pos += 4 + n
        blocks += 1
    assert blocks == 4
    assert decompress(CompressionType.SNAPPY, framed) == payload
    # Concatenated xerial streams (a header between blocks) are read as one.
    assert snappy_decompress(framed + compress(CompressionType.SNAPPY, b"tail")) == payload + b"tail"


def test_corrupt_compressed_payload_is_an_unknown_server_error_like_kafka() -> None:
    data = bytearray(build_batch(SAMPLE, compression=CompressionType.GZIP))
    data[HEADER_SIZE + 12] ^= 0xFF
    data[HEADER_SIZE + 13] ^= 0xFF
    with pytest.raises(RecordsError) as info:
        RecordBatch(data).records()
    assert info.value.code in (ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.INVALID_RECORD)


# --- CRC and header rewriting ---------------------------------------------------------------------------


def test_crc_detects_any_flipped_byte_after_the_crc() -> None:
    data = build_batch(SAMPLE)
    assert RecordBatch(data).is_valid()
    for pos in (21, 30, 60, 61, len(data) - 1):
        bad = bytearray(data)
        bad[pos] ^= 0x01
        assert not RecordBatch(bad).is_valid(), pos


def test_assigning_offsets_and_epoch_keeps_the_crc() -> None:
    data = bytearray(build_batch(SAMPLE))
    crc_before = RecordBatch(data).header.crc
    rewrite_header(data, base_offset=12345, partition_leader_epoch=9)
    batch = RecordBatch(data)
    assert (batch.header.base_offset, batch.header.partition_leader_epoch, batch.header.crc) == (12345, 9, crc_before)
    assert batch.is_valid()
    assert [r.offset for r in batch.records()] == [12345, 12346, 12347]


def test_log_append_time_rewrite_recomputes_crc_and_overrides_record_timestamps() -> None:
    data = bytearray(build_batch(SAMPLE, compression=CompressionType.ZSTD))
    rewrite_header(data, base_offset=7, max_timestamp=5555, timestamp_type=TimestampType.LOG_APPEND_TIME)
    batch = RecordBatch(data)
    assert batch.is_valid()
    assert batch.header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.header.compression == CompressionType.ZSTD
    assert [r.timestamp for r in batch.records()] == [5555, 5555, 5555]
    theirs = AioBatch(bytes(data))
    assert theirs.validate_crc()
    assert [r.timestamp for r in theirs] == [5555, 5555, 5555]


def test_offset_of_max_timestamp_is_the_first_record_carrying_it() -> None:
    records = [NewRecord(b"a", timestamp=5), NewRecord(b"b", timestamp=9), NewRecord(b"c", timestamp=9)]
    assert offset_of_max_timestamp(RecordBatch(build_batch(records, base_offset=100))) == 101


# --- splitting ------------------------------------------------------------------------------------------


def test_split_back_to_back_batches_and_ignore_a_partial_tail() -> None:
    a, b = build_batch(SAMPLE), build_batch(SAMPLE[:1], base_offset=3)
    assert [bytes(s) for s in batch_slices(a + b)] == [a, b]
    assert [bytes(s) for s in batch_slices(a + b[:-1])] == [a]
    assert [bytes(s) for s in batch_slices(a + b[:10])] == [a]
    assert [bytes(s) for s in batch_slices(a + b[:14])] == [a]
    assert [batch.header.base_offset for batch in iter_batches(a + b)] == [0, 3]


def test_split_refuses_tiny_lengths_and_unknown_magic() -> None:
    tiny = struct.pack(">qi", 0, 13) + b"\x00" * 13
    with pytest.raises(CorruptRecordError, match="less than the minimum record overhead"):
        list(batch_slices(tiny))
    bad_magic = bytearray(build_batch(SAMPLE))
    bad_magic[16] = 3
    with pytest.raises(CorruptRecordError, match="Invalid magic found in record: 3"):
        list(batch_slices(bad_magic))
    bad_magic[16] = 0xFF
    with pytest.raises(CorruptRecordError, match="Invalid magic found in record: -1"):
        list(batch_slices(bad_magic))


def test_produce_records_checks_match_kafka() -> None:
    one = build_batch(SAMPLE)
    assert check_produce_records(9, one).header.records_count == 3
    for data in (b"", None, one[:30]):
        with pytest.raises(InvalidRecordError, match="at least one record batch") as info:
            check_produce_records(9, data)
        assert info.value.code == ErrorCode.INVALID_RECORD
    with pytest.raises(InvalidRecordError, match="exactly one record batch"):
        check_produce_records(9, one + one)
    legacy = bytearray(one)
    legacy[16] = 1
    with pytest.raises(InvalidRecordError, match="magic version 2"):
        check_produce_records(3, legacy)
    zstd = build_batch(SAMPLE, compression=CompressionType.ZSTD)
    with pytest.raises(RecordsError) as info:
        check_produce_records(6, zstd)
    assert info.value.code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert check_produce_records(7, zstd).header.compression == CompressionType.ZSTD



@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["whole", "second", "partial", "tail", "tiny", "magic1", "magic3", "long"]),
                min_size=1, max_size=3))
def test_whole_batch_header_is_batch_slices_finding_exactly_the_data(parts: list[str]) -> None:
    # The produce and append fast paths take whole_batch_header's answer in place of splitting: it must
    # answer exactly when batch_slices would yield one slice, all of the data, and raise nothing.
    one = bytes(build_batch(SAMPLE))
    pieces = {"whole": one, "second": one, "partial": one[:40], "tail": b"\x00\x01",
              "tiny": struct.pack(">qi", 0, 13) + b"\x00" * 13, "magic1": one[:16] + b"\x01" + one[17:],
              "magic3": one[:16] + b"\x03" + one[17:], "long": one[:8] + struct.pack(">i", len(one)) + one[12:]}
    data = b"".join(pieces[p] for p in parts)
    try:
        slices = [bytes(s) for s in batch_slices(data)]
    except CorruptRecordError:
        slices = None
    whole = whole_batch_header(data)
    exactly_one = slices == [data] and data[16] == 2
    assert (whole is not None) == exactly_one
    if whole is not None:
        assert whole == BatchHeader.parse(data)
        assert check_produce_records(9, data).header == whole

# --- record structure errors ----------------------------------------------------------------------------


def _with_count(data: bytes, count: int) -> bytes:
    patched = bytearray(data)
    struct.pack_into(">i", patched, 57, count)
    struct.pack_into(">I", patched, 17, crc_of(patched))
    return bytes(patched)


def test_declared_count_must_match_the_records() -> None:
    data = build_batch(SAMPLE)
    with pytest.raises(InvalidRecordError, match="Found invalid record structure"):
        RecordBatch(_with_count(data, 4)).records()
    with pytest.raises(InvalidRecordError, match="records still remaining"):
        RecordBatch(_with_count(data, 2)).records()
    with pytest.raises(InvalidRecordError, match="invalid record count -1"):
        RecordBatch(_with_count(data, -1)).records()


def test_null_and_empty_stay_distinct() -> None:
    records = [NewRecord(value=None, key=None), NewRecord(value=b"", key=b"")]
    out = RecordBatch(build_batch(records)).records()
    assert [(r.key, r.value) for r in out] == [(None, None), (b"", b"")]


# --- control records ------------------------------------------------------------------------------------


_BLOBS = st.one_of(st.none(), st.binary(max_size=70), st.binary(min_size=8_000, max_size=20_000))


@given(key=_BLOBS, value=_BLOBS, timestamp=st.integers(-1, 2**45), marker=st.booleans(),
       producer_id=st.integers(0, 2**40), producer_epoch=st.integers(0, 2**15 - 1))
@settings(max_examples=200, deadline=None)  # a loaded CI machine once took 645 ms for one example
def test_the_one_record_builder_writes_what_build_batch_writes(key: bytes | None, value: bytes | None,
                                                               timestamp: int, marker: bool, producer_id: int,
                                                               producer_epoch: int) -> None:
    # Short and varint-long lengths, null and empty keys and values; a coordinator's record and a marker's
    # header (transactional, control, with a producer).
    record = NewRecord(key=key, value=value, timestamp=timestamp)
    if marker:
        expected = build_batch([record], transactional=True, control=True, producer_id=producer_id,
                               producer_epoch=producer_epoch)
        built = build_one_record_batch(key, value, timestamp, attributes=make_attributes(
            transactional=True, control=True), producer_id=producer_id, producer_epoch=producer_epoch)
    else:
        expected, built = build_batch([record]), build_one_record_batch(key, value, timestamp)
    assert built == expected
    assert RecordBatch(built).is_valid()


@pytest.mark.parametrize("commit", [True, False])
def test_end_txn_marker(commit: bool) -> None:
    data = build_end_txn_marker(
        commit=commit, producer_id=77, producer_epoch=3, coordinator_epoch=12, timestamp=4242, base_offset=50
    )
    batch = RecordBatch(data)
    h = batch.header
    assert h.is_control and h.is_transactional and (h.producer_id, h.producer_epoch, h.base_sequence) == (77, 3, -1)
    (record,) = batch.records()
    assert decode_control_key(record.key) == (0, ControlRecordType.COMMIT if commit else ControlRecordType.ABORT)
    assert decode_end_txn_marker_value(record.value) == (0, 12)
    assert record.timestamp == 4242 and record.offset == 50
    # kafka-python recognises it as a control record of the right type.
    (theirs,) = list(KpBatch(data))
    assert theirs.type == (1 if commit else 0)
    assert KpBatch(data).is_control_batch and KpBatch(data).is_transactional
