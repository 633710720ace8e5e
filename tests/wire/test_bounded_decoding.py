"""Counts and sizes a client chooses are bounded before anything proportional to them is built: array
counts (Kafka's "Tried to allocate a collection of size N" check) and compressed batches that expand past
`MAX_DECOMPRESSED_BATCH_BYTES` (decompression bombs). Each refusal is asserted together with a tracemalloc
peak far below what honouring the number would have allocated."""

from __future__ import annotations

import struct
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import cramjam
import pytest

from kemu.wire import codec, records
from kemu.wire.compression import XERIAL_MAGIC, CompressionType, DecompressedTooLarge, compress, decompress
from kemu.wire.errors import ErrorCode
from kemu.wire.primitives import MAX_DECODED_ELEMENTS
from kemu.wire.records import DecompressedBatchTooLargeError, NewRecord, RecordBatch, build_batch

MIB = 1024 * 1024
LIMIT = 1 * MIB
BOMB = 64 * MIB  # what the bombs below expand to: 64 times the limit


def peak_of(action: Callable[[], Any]) -> tuple[Any, int]:
    """(what `action` returned or raised, the peak of Python allocations while it ran)."""
    tracemalloc.start()
    try:
        try:
            outcome: Any = action()
        except Exception as exc:  # the outcome is asserted by the caller
            outcome = exc
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    monkeypatch.setattr(records, "MAX_DECOMPRESSED_BATCH_BYTES", LIMIT)
    yield LIMIT


def metadata_v1_with_topic_count(count: int, elements: bytes = b"") -> bytes:
    header = codec.encode_request(3, 1, 7, {"topics": []})
    return header[:-4] + struct.pack(">i", count) + elements  # v1's topics array: an int32 count


def test_an_array_count_of_two_to_the_31_is_refused_before_any_element() -> None:
    # 512 Ki well-formed elements (an empty topic name is two bytes) follow the count: decoding them before
    # finding the count a lie would build half a million dicts (over 100 MB) from this 1 MiB frame.
    frame = metadata_v1_with_topic_count(2**31 - 1, bytes(MIB))
    codec.decode_request(metadata_v1_with_topic_count(1, b"\x00\x01t"))  # schemas built outside the trace
    outcome, peak = peak_of(lambda: codec.decode_request(frame))
    assert isinstance(outcome, codec.DecodeError)
    assert f"Tried to allocate a collection of size 2147483647, but there are only {MIB} bytes remaining." in str(
        outcome)
    assert peak < 2 * MIB  # the frame's copy into the decoder's stream, and nothing per element


def test_a_compact_array_count_of_two_to_the_63_is_refused_before_any_element() -> None:
    header = codec.encode_request(3, 12, 7, {"topics": [], "allow_auto_topic_creation": False,
                                             "include_topic_authorized_operations": False})
    body = codec.encode_body(3, 12, "request", {"topics": [], "allow_auto_topic_creation": False,
                                                "include_topic_authorized_operations": False})
    count = b"\xff" * 8 + b"\x7f"  # uvarint 2^63 - 1, the compact length of 2^63 - 2 topics
    frame = header[:len(header) - len(body)] + count + body[1:]
    codec.decode_request(header)  # schemas built outside the trace
    outcome, peak = peak_of(lambda: codec.decode_request(frame))
    assert isinstance(outcome, codec.DecodeError)
    assert "Tried to allocate a collection of size" in str(outcome)
    assert peak < 64 * 1024


def test_an_array_count_within_the_bytes_left_still_decodes() -> None:
    frame = codec.encode_request(3, 1, 7, {"topics": [{"name": "a"}, {"name": "b"}]})
    assert [t["name"] for t in codec.decode_request(frame).body["topics"]] == ["a", "b"]


def bomb(codec_type: CompressionType) -> bytes:
    # One record of 64 MiB of zeros: a few kilobytes compressed (snappy's raw blocks expand at most ~20x).
    return build_batch([NewRecord(bytes(BOMB))], compression=codec_type)


@pytest.mark.parametrize("codec_type", [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4,
                                        CompressionType.ZSTD])
def test_a_decompression_bomb_is_message_too_large_without_its_expansion_in_memory(
        small_limit: int, codec_type: CompressionType) -> None:
    batch = RecordBatch(bomb(codec_type))
    outcome, peak = peak_of(batch.records)
    assert isinstance(outcome, DecompressedBatchTooLargeError)
    assert outcome.code == ErrorCode.MESSAGE_TOO_LARGE
    assert peak < 3 * small_limit  # the output buffer stops at the limit; honouring the batch is 64 MiB


@pytest.mark.parametrize("codec_type", list(CompressionType))
def test_decompress_returns_what_fits_and_refuses_one_byte_more(codec_type: CompressionType) -> None:
    data = b"kemu reliability " * 50_000
    packed = compress(codec_type, data)
    assert decompress(codec_type, packed, len(data)) == data
    with pytest.raises(DecompressedTooLarge):
        decompress(codec_type, packed, len(data) - 1)


def test_raw_and_xerial_snappy_are_refused_by_their_stated_lengths() -> None:
    data = bytes(4 * MIB)
    raw = bytes(cramjam.snappy.compress_raw(data))
    with pytest.raises(DecompressedTooLarge):
        decompress(CompressionType.SNAPPY, raw, LIMIT)
    xerial = compress(CompressionType.SNAPPY, data)
    assert xerial.startswith(XERIAL_MAGIC)
    outcome, peak = peak_of(lambda: decompress(CompressionType.SNAPPY, xerial, LIMIT))
    assert isinstance(outcome, DecompressedTooLarge) and outcome.limit == LIMIT
    assert peak < 2 * LIMIT


def test_an_honest_compressed_batch_under_the_limit_decodes(small_limit: int) -> None:
    values = [b"v%d" % i * 1000 for i in range(100)]
    batch = RecordBatch(build_batch([NewRecord(v) for v in values], compression=CompressionType.ZSTD))
    assert [r.value for r in batch.records()] == values


def test_more_elements_than_the_decoders_budget_are_refused_before_they_are_built() -> None:
    # 300,000 two-byte elements: 600 KB of frame, but some 60 MB of dicts had they been decoded.
    count = MAX_DECODED_ELEMENTS + 100_000
    frame = metadata_v1_with_topic_count(count, bytes(2 * count))
    codec.decode_request(metadata_v1_with_topic_count(1, b"\x00\x01t"))  # schemas built outside the trace
    outcome, peak = peak_of(lambda: codec.decode_request(frame))
    assert isinstance(outcome, codec.DecodeError)
    assert f"more than {MAX_DECODED_ELEMENTS} array elements in one request" in str(outcome)
    assert peak < 2 * len(frame)


def test_the_budget_counts_nested_arrays_and_allows_what_fits() -> None:
    # Produce v3: topics, each with a partitions array; 400 x 400 = 160,400 elements fit the budget.
    topics = [{"name": f"t{i}", "partition_data": [{"index": p, "records": None} for p in range(400)]}
              for i in range(400)]
    body = {"transactional_id": None, "acks": 1, "timeout_ms": 1, "topic_data": topics}
    assert len(codec.decode_request(codec.encode_request(0, 3, 1, body)).body["topic_data"]) == 400
    body["topic_data"] = topics + topics[:200]  # 200 more topics of 400 partitions: past the budget
    with pytest.raises(codec.DecodeError, match="array elements in one request"):
        codec.decode_request(codec.encode_request(0, 3, 1, body))
