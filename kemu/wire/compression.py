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

import cramjam


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


def decompress(codec: CompressionType | int, data: bytes | bytearray | memoryview) -> bytes:
    try:
        codec = CompressionType(codec)
    except ValueError:
        raise CompressionError(f"Unknown compression type id: {codec}") from None
    try:
        if codec is CompressionType.NONE:
            return bytes(data)
        if codec is CompressionType.GZIP:
            return bytes(cramjam.gzip.decompress(data))
        if codec is CompressionType.SNAPPY:
            return snappy_decompress(data)
        if codec is CompressionType.LZ4:
            return bytes(cramjam.lz4.decompress(data))
        return bytes(cramjam.zstd.decompress(data))
    except (cramjam.DecompressionError, ValueError) as exc:
        raise CompressionError(f"Failed to decompress {codec.name.lower()} payload: {exc}") from exc


def snappy_xerial_compress(data: bytes | bytearray | memoryview) -> bytes:
    """Snappy in xerial's block framing, as the Java client's SnappyOutputStream writes it."""
    view = memoryview(data)
    parts = [_XERIAL_HEADER.pack(XERIAL_MAGIC, _XERIAL_VERSION, _XERIAL_MIN_COMPATIBLE_VERSION)]
    for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK_SIZE]))
        parts.append(_I32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def snappy_decompress(data: bytes | bytearray | memoryview) -> bytes:
    """Read xerial-framed snappy (Java clients) or a plain raw snappy block (librdkafka and others)."""
    view = memoryview(data)
    if not _starts_with_xerial_header(view, 0):
        return bytes(cramjam.snappy.decompress_raw(view))
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
        out.append(bytes(cramjam.snappy.decompress_raw(view[pos : pos + block_len])))
        pos += block_len
    return b"".join(out)


def _starts_with_xerial_header(view: memoryview, pos: int) -> bool:
    return len(view) - pos >= _XERIAL_HEADER.size and view[pos : pos + len(XERIAL_MAGIC)] == XERIAL_MAGIC
