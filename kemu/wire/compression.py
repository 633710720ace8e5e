"""The record-batch compression codecs (attribute bits 0-2), on top of cramjam.

What each client writes, and so what the broker must read:
- gzip: a gzip stream (Java's GZIPOutputStream); concatenated members are legal and read as one stream.
- snappy: the Java client wraps blocks in xerial's framing (magic `\\x82SNAPPY\\x00`, version and
  compatible-version int32s, then int32-size-prefixed raw snappy blocks of at most 32 KiB of input);
  librdkafka and others send one plain raw snappy block. Kafka reads both, so do we.
- lz4: the standard LZ4 frame format (KIP-57), independent blocks.
- zstd: a standard zstd frame, possibly without a content size (streamed).

`compress` writes what the Java client writes (xerial snappy, independent-block lz4, Kafka's default
levels), so batches kemu builds look like a Java producer's.
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import Any

# cramjam is imported by the functions that compress or decompress (its import is ~1 ms): a broker whose
# batches are all uncompressed, or that has served none yet, never loads it.


class CompressionType(IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def kafka_name(self) -> str:
        """The name Kafka uses in `compression.type` ('none' is spelled 'uncompressed' there)."""
        return "uncompressed" if self is CompressionType.NONE else self.name.lower()


class CompressionError(ValueError):
    """The payload cannot be decompressed with the codec its batch claims (or the codec is unknown)."""


# Kafka's default levels (KIP-390): gzip -1 means zlib's default, which is 6.
DEFAULT_GZIP_LEVEL = 6
DEFAULT_LZ4_LEVEL = 9
DEFAULT_ZSTD_LEVEL = 3

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")
_XERIAL_VERSION = 1
_XERIAL_MIN_COMPATIBLE_VERSION = 1
_XERIAL_BLOCK_SIZE = 32 * 1024
_I32 = struct.Struct(">i")


def compress(codec: CompressionType | int, data: bytes | bytearray | memoryview, level: int | None = None) -> bytes:
    codec = CompressionType(codec)
    if codec is CompressionType.NONE:
        return bytes(data)
    import cramjam

    if codec is CompressionType.GZIP:
        gzip_level = DEFAULT_GZIP_LEVEL if level is None or level < 0 else level
        return bytes(cramjam.gzip.compress(data, level=gzip_level))
    if codec is CompressionType.SNAPPY:
        return snappy_xerial_compress(data)
    if codec is CompressionType.LZ4:
        compressor = cramjam.lz4.Compressor(
            level=DEFAULT_LZ4_LEVEL if level is None else level, content_checksum=False, block_linked=False
        )
        compressor.compress(data)
        return bytes(compressor.finish())
    return bytes(cramjam.zstd.compress(data, level=DEFAULT_ZSTD_LEVEL if level is None else level))


class DecompressedTooLarge(CompressionError):
    """The payload expands past the caller's limit; decompression stopped there (a decompression bomb)."""

    def __init__(self, codec: CompressionType, limit: int) -> None:
        super().__init__(f"{codec.name.lower()} payload expands to more than {limit} bytes")
        self.limit = limit


# The first output buffer a bounded decompression tries, as a multiple of the compressed size; it grows
# fourfold up to the limit, so an honest batch is decompressed once and a bomb costs at most ~1.33x the limit.
_FIRST_GUESS_RATIO = 8
_MIN_FIRST_GUESS = 64 * 1024
_OUTPUT_FULL = ("failed to write whole buffer", "smaller than required")


def decompress(codec: CompressionType | int, data: bytes | bytearray | memoryview, limit: int | None = None) -> bytes:
    """The decompressed bytes. With `limit`, at most that many are ever produced: a payload that expands
    further raises DecompressedTooLarge without its output being held in memory."""
    try:
        codec = CompressionType(codec)
    except ValueError:
        raise CompressionError(f"Unknown compression type id: {codec}") from None
    if codec is CompressionType.NONE:
        if limit is not None and len(data) > limit:
            raise DecompressedTooLarge(codec, limit)
        return bytes(data)
    import cramjam

    try:
        if codec is CompressionType.SNAPPY:
            return snappy_decompress(data, limit)
        module = {CompressionType.GZIP: cramjam.gzip, CompressionType.LZ4: cramjam.lz4,
                  CompressionType.ZSTD: cramjam.zstd}[codec]
        if limit is None:
            return bytes(module.decompress(data))
        return _bounded(codec, module, data, limit)
    except (cramjam.DecompressionError, ValueError) as exc:
        if isinstance(exc, CompressionError):
            raise
        raise CompressionError(f"Failed to decompress {codec.name.lower()} payload: {exc}") from exc


def _bounded(codec: CompressionType, module: Any, data: bytes | bytearray | memoryview, limit: int) -> bytes:
    import cramjam

    size = min(limit + 1, max(_MIN_FIRST_GUESS, _FIRST_GUESS_RATIO * len(data)))
    while True:
        out = bytearray(size)
        try:
            written: int = module.decompress_into(data, out)
        except cramjam.DecompressionError as exc:
            if not any(marker in str(exc) for marker in _OUTPUT_FULL):
                raise
            written = size
        if written <= limit and written < size:
            del out[written:]
            return bytes(out)
        if size > limit:
            raise DecompressedTooLarge(codec, limit)
        size = min(limit + 1, size * 4)


def snappy_xerial_compress(data: bytes | bytearray | memoryview) -> bytes:
    """Snappy in xerial's block framing, as the Java client's SnappyOutputStream writes it."""
    import cramjam

    view = memoryview(data)
    parts = [_XERIAL_HEADER.pack(XERIAL_MAGIC, _XERIAL_VERSION, _XERIAL_MIN_COMPATIBLE_VERSION)]
    for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK_SIZE]))
        parts.append(_I32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def snappy_decompress(data: bytes | bytearray | memoryview, limit: int | None = None) -> bytes:
    """Read xerial-framed snappy (Java clients) or a plain raw snappy block (librdkafka and others).
    A raw block states its decompressed length first: past `limit`, nothing is decompressed."""
    import cramjam

    view = memoryview(data)
    if not _starts_with_xerial_header(view, 0):
        _check_snappy_length(view, limit)
        return bytes(cramjam.snappy.decompress_raw(view))
    budget = limit
    out: list[bytes] = []
    pos = 0
    end = len(view)
    while pos < end:
        # xerial allows streams to be concatenated, so a header may reappear between blocks.
        if _starts_with_xerial_header(view, pos):
            pos += _XERIAL_HEADER.size
            continue
        if end - pos < _I32.size:
            raise CompressionError("truncated xerial snappy block length")
        (block_len,) = _I32.unpack_from(view, pos)
        pos += _I32.size
        if block_len < 0 or pos + block_len > end:
            raise CompressionError(f"xerial snappy block of {block_len} bytes overruns the payload")
        block = view[pos : pos + block_len]
        if budget is not None and limit is not None:
            budget -= _check_snappy_length(block, budget, limit)
        out.append(bytes(cramjam.snappy.decompress_raw(block)))
        pos += block_len
    return b"".join(out)


def _check_snappy_length(block: memoryview, budget: int | None, limit: int | None = None) -> int:
    """The block's stated decompressed length, refused past what is left of the limit."""
    if budget is None:
        return 0
    import cramjam

    length: int = cramjam.snappy.decompress_raw_len(block)
    if length > budget:
        raise DecompressedTooLarge(CompressionType.SNAPPY, budget if limit is None else limit)
    return length


def _starts_with_xerial_header(view: memoryview, pos: int) -> bool:
    return len(view) - pos >= _XERIAL_HEADER.size and view[pos : pos + len(XERIAL_MAGIC)] == XERIAL_MAGIC
