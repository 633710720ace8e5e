"""Kafka's wire primitives as construct classes.

Fixed-width integers come straight from construct. The rest — varints, classic and compact
strings/bytes/arrays with their null encodings, UUIDs, nullable structs — are small Construct subclasses
so every message structure is a plain construct tree.
"""

from __future__ import annotations

import io
import struct
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from construct import (
    Construct,
    ConstructError,
    Float64b,
    Int8sb,
    Int16sb,
    Int16ub,
    Int32sb,
    Int32ub,
    Int64sb,
    SizeofError,
    StreamError,
    stream_read,
    stream_write,
)

from kemu.wire import buffers
from kemu.wire.buffers import MAX_DECODED_ELEMENTS, SPLICE_MIN_BYTES, Buffer, Part, spliced_parts

_i16 = struct.Struct(">h")
_i32 = struct.Struct(">i")
_MAX_VARINT_BYTES = 10


class FrameStream(io.BytesIO):
    """A request frame being decoded: `records` fields are handed out as views of the frame itself."""

    def __init__(self, frame: Buffer) -> None:
        super().__init__(frame)
        self.frame = memoryview(frame).cast("B")

    def view(self, length: int, path: str) -> memoryview:
        start = self.tell()
        if length > len(self.frame) - start:
            raise StreamError(f"stream read less than specified amount, expected {length}, found "
                              f"{len(self.frame) - start}", path=path)
        self.seek(start + length)
        return self.frame[start:start + length]


class SpliceStream(io.BytesIO):
    """A response being encoded: big byte strings (a Fetch's record batches) are not copied in but noted
    with their position, and `parts` hands out the encoded pieces with them in between."""

    def __init__(self) -> None:
        super().__init__()
        self._spliced: list[tuple[int, Part]] = []

    def splice(self, data: Part) -> None:
        self._spliced.append((self.tell(), data))

    def parts(self) -> list[Part]:
        return spliced_parts(self.getvalue(), self._spliced)


class KafkaEncodeError(ConstructError):
    """A value that cannot be written at this version (None where not nullable, out of range, ...)."""


class StringTooLong(KafkaEncodeError):
    """A classic string of more than 32767 bytes, which its int16 length cannot hold and Kafka's generated
    writers refuse ("field is too long to be serialized"): an answer that quotes a long name from its request.
    Kafka's writers refuse a longer compact string too; kemu's refuse it in a response (RESPONSE in the build
    context) and write it in a request, so its tests can send what a client of another writer might."""


RESPONSE = "kemu_response"  # in a build's context: the message is a response


def read_uvarint(stream: Any, path: str) -> int:
    result = 0
    shift = 0
    for _ in range(_MAX_VARINT_BYTES):
        b: int = stream_read(stream, 1, path)[0]
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result
        shift += 7
    raise ConstructError("varint is too long", path=path)


def encode_uvarint(value: int) -> bytes:
    try:
        return buffers.encode_uvarint(value)
    except ValueError as exc:
        raise KafkaEncodeError(str(exc)) from None


def zigzag_encode(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def zigzag_decode(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


class UVarInt(Construct):
    """Unsigned LEB128 varint, as used for compact lengths and tagged-field headers."""

    def _parse(self, stream: Any, context: Any, path: str) -> int:
        return read_uvarint(stream, path)

    def _build(self, obj: int, stream: Any, context: Any, path: str) -> int:
        stream_write(stream, encode_uvarint(obj), -1, path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("varint has no fixed size", path=path)


class VarInt(Construct):
    """Signed zigzag varint (int32 range) / varlong (int64 range), as used inside records."""

    def __init__(self, bits: int = 32) -> None:
        super().__init__()
        self.bits = bits

    def _parse(self, stream: Any, context: Any, path: str) -> int:
        return zigzag_decode(read_uvarint(stream, path))

    def _build(self, obj: int, stream: Any, context: Any, path: str) -> int:
        limit = 1 << (self.bits - 1)
        if not -limit <= obj < limit:
            raise KafkaEncodeError(f"{obj} does not fit a {self.bits}-bit varint", path=path)
        stream_write(stream, encode_uvarint(zigzag_encode(obj) & ((1 << 64) - 1)), -1, path)
        return obj


class _Sized(Construct):
    """Common length handling: classic (int16/int32 length, -1 null) or compact (uvarint length+1, 0 null)."""

    def __init__(self, compact: bool, nullable: bool, wide: bool) -> None:
        super().__init__()
        self.compact = compact
        self.nullable = nullable
        self.wide = wide  # int32 length (bytes, arrays) rather than int16 (strings)

    def _read_length(self, stream: Any, path: str) -> int:
        if self.compact:
            return read_uvarint(stream, path) - 1
        length: int
        if self.wide:
            (length,) = _i32.unpack(stream_read(stream, 4, path))
        else:
            (length,) = _i16.unpack(stream_read(stream, 2, path))
        return length

    def _write_length(self, length: int, stream: Any, path: str) -> None:
        if self.compact:
            data = encode_uvarint(length + 1)
        elif self.wide:
            data = _i32.pack(length)
        else:
            if length > 0x7FFF:
                raise StringTooLong("string longer than 32767 bytes", path=path)
            data = _i16.pack(length)
        stream_write(stream, data, len(data), path)

    def _null(self, path: str) -> None:
        if not self.nullable:
            raise ConstructError("null where the field is not nullable", path=path)


class KString(_Sized):
    def __init__(self, compact: bool, nullable: bool) -> None:
        super().__init__(compact, nullable, wide=False)

    def _parse(self, stream: Any, context: Any, path: str) -> str | None:
        length = self._read_length(stream, path)
        if length < 0:
            self._null(path)
            return None
        if length > 0x7FFF:  # as Kafka's generated readers: "string field ... had invalid length"
            raise ConstructError("a string longer than 32767 bytes", path=path)
        data: bytes = stream_read(stream, length, path)
        return data.decode("utf-8")

    def _build(self, obj: str | None, stream: Any, context: Any, path: str) -> str | None:
        if obj is None:
            if not self.nullable:
                raise KafkaEncodeError("None for a non-nullable string", path=path)
            self._write_length(-1, stream, path)
            return obj
        data = obj.encode("utf-8")
        if self.compact and len(data) > 0x7FFF and context.get(RESPONSE):
            raise StringTooLong("string longer than 32767 bytes", path=path)
        self._write_length(len(data), stream, path)
        stream_write(stream, data, len(data), path)
        return obj


class KBytes(_Sized):
    def __init__(self, compact: bool, nullable: bool) -> None:
        super().__init__(compact, nullable, wide=True)

    def _parse(self, stream: Any, context: Any, path: str) -> bytes | memoryview | None:
        length = self._read_length(stream, path)
        if length < 0:
            self._null(path)
            return None
        data: bytes = stream_read(stream, length, path)
        return data

    def _build(self, obj: bytes | memoryview | None, stream: Any, context: Any, path: str) -> bytes | memoryview | None:
        if obj is None:
            if not self.nullable:
                raise KafkaEncodeError("None for non-nullable bytes", path=path)
            self._write_length(-1, stream, path)
            return obj
        if isinstance(obj, memoryview) and (obj.format != "B" or obj.ndim != 1):
            obj = obj.cast("B")
        self._write_length(len(obj), stream, path)
        if len(obj) >= SPLICE_MIN_BYTES and isinstance(stream, SpliceStream) and not isinstance(obj, bytearray):
            # Fetch hands over log segment bytes (views of the cache, or read from the file): they are sent
            # from where they lie, never copied into the response.
            stream.splice(obj)
        else:
            stream.write(obj)
        return obj


class KRecords(KBytes):
    """Record batches: as KBytes, but decoded from a request frame as a view of it rather than a copy, so
    a Produce's batches are copied once, when the log writes them."""

    def _parse(self, stream: Any, context: Any, path: str) -> bytes | memoryview | None:
        if not isinstance(stream, FrameStream):
            return super()._parse(stream, context, path)
        length = self._read_length(stream, path)
        if length < 0:
            self._null(path)
            return None
        return stream.view(length, path)


class KArray(_Sized):
    def __init__(self, element: Construct, compact: bool, nullable: bool) -> None:
        super().__init__(compact, nullable, wide=True)
        self.element = element

    def _parse(self, stream: Any, context: Any, path: str) -> list[Any] | None:
        count = self._read_length(stream, path)
        if count < 0:
            self._null(path)
            return None
        _check_count(count, stream, path)
        _spend(count, path)
        element = self.element
        return [element._parsereport(stream, context, path) for _ in range(count)]

    def _build(self, obj: list[Any] | None, stream: Any, context: Any, path: str) -> Any:
        if obj is None:
            if not self.nullable:
                raise KafkaEncodeError("None for a non-nullable array", path=path)
            self._write_length(-1, stream, path)
            return obj
        self._write_length(len(obj), stream, path)
        element = self.element
        for item in obj:
            element._build(item, stream, context, path)
        return obj


def _check_count(count: int, stream: Any, path: str) -> None:
    """Kafka's generated readers refuse an array longer than the bytes left (every element takes at least
    one), before building any of it: the count is the client's, up to 2^31 - 1 (compact: 2^64)."""
    remaining = _remaining(stream)
    if remaining is not None and count > remaining:
        raise ConstructError(f"Tried to allocate a collection of size {count}, but there are only {remaining} "
                             "bytes remaining.", path=path)


_budget: ContextVar[int | None] = ContextVar("element_budget", default=None)
_limit: ContextVar[int] = ContextVar("element_limit", default=MAX_DECODED_ELEMENTS)


class ElementBudgetExceeded(ConstructError):
    """More array elements than the budget `element_budget` set."""


@contextmanager
def element_budget(limit: int = MAX_DECODED_ELEMENTS) -> Iterator[None]:
    """Decode within `limit` array elements (arrays decoded outside any budget are unbounded)."""
    token, limit_token = _budget.set(limit), _limit.set(limit)
    try:
        yield
    finally:
        _budget.reset(token)
        _limit.reset(limit_token)


def _spend(count: int, path: str) -> None:
    left = _budget.get()
    if left is None:
        return
    if count > left:
        raise ElementBudgetExceeded(f"more than {_limit.get()} array elements in one request", path=path)
    _budget.set(left - count)


def _remaining(stream: Any) -> int | None:
    if isinstance(stream, FrameStream):
        return len(stream.frame) - stream.tell()
    if isinstance(stream, io.BytesIO):
        return len(stream.getbuffer()) - stream.tell()
    return None


class Uuid(Construct):
    def _parse(self, stream: Any, context: Any, path: str) -> uuid.UUID:
        return uuid.UUID(bytes=stream_read(stream, 16, path))

    def _build(self, obj: uuid.UUID, stream: Any, context: Any, path: str) -> uuid.UUID:
        stream_write(stream, obj.bytes, 16, path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        return 16


class Bool(Construct):
    """Kafka booleans: one byte, non-zero is true."""

    def _parse(self, stream: Any, context: Any, path: str) -> bool:
        data: bytes = stream_read(stream, 1, path)
        return data != b"\x00"

    def _build(self, obj: bool, stream: Any, context: Any, path: str) -> bool:
        stream_write(stream, b"\x01" if obj else b"\x00", 1, path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        return 1


class NullableStruct(Construct):
    """A struct that may be null: an int8 marker (-1 null, 1 present) precedes it.

    Inside a tagged field Kafka writes the marker as an unsigned varint instead (0 null, 1 present).
    """

    def __init__(self, inner: Construct, varint_marker: bool = False) -> None:
        super().__init__()
        self.inner = inner
        self.varint_marker = varint_marker

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        if self.varint_marker:
            present = read_uvarint(stream, path) > 0
        else:
            present = Int8sb._parse(stream, context, path) >= 0
        if not present:
            return None
        return self.inner._parsereport(stream, context, path)

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        if self.varint_marker:
            marker = encode_uvarint(0 if obj is None else 1)
            stream_write(stream, marker, len(marker), path)
        else:
            Int8sb._build(-1 if obj is None else 1, stream, context, path)
        if obj is None:
            return obj
        return self.inner._build(obj, stream, context, path)


FIXED: dict[str, Construct] = {
    "int8": Int8sb,
    "int16": Int16sb,
    "int32": Int32sb,
    "int64": Int64sb,
    "uint16": Int16ub,
    "uint32": Int32ub,
    "float64": Float64b,
    "bool": Bool(),
    "uuid": Uuid(),
}
