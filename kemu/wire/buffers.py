"""What the generated codec (`kemu.wire.compiled`) and the server need of the wire helpers, without construct:
the buffer types, splicing big byte strings (and regions of files, kemu.wire.file_region) into an encoded
response, unsigned varints, and the bound on a request's array elements. `kemu.wire.primitives` builds
construct's classes on these; a process that only meets well-formed requests never imports construct."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kemu.wire.file_region import FileRegion

# Bytes at least this long are spliced into an encoded response as they are rather than copied into it;
# below it one more entry to send costs more than the copy.
SPLICE_MIN_BYTES = 2048

Buffer = bytes | bytearray | memoryview
Part = Buffer | FileRegion
"""A piece of an encoded response: bytes in memory, or bytes named in a file."""

MAX_DECODED_ELEMENTS = 200_000
"""The most array elements one request may hold, nested arrays included. Each element costs the decoder a
dict or an object of a hundred bytes or more and ~10 us of the broker's only thread, against as little as
one byte of the frame: without a bound, one 100 MiB frame of one-byte elements is gigabytes and minutes.
No Kafka client sends that many (Kafka itself takes at most 10,000 partitions per CreateTopics)."""


def spliced_parts(encoded: bytes, spliced: list[tuple[int, Part]]) -> list[Part]:
    """The encoded bytes with the byte strings left out of them put back at their positions, as buffers."""
    if not spliced:
        return [encoded]
    out: list[Part] = []
    whole = memoryview(encoded)
    at = 0
    for position, data in spliced:
        if position > at:
            out.append(whole[at:position])
        out.append(data)
        at = position
    if at < len(encoded):
        out.append(whole[at:])
    return out


def memory_size(parts: Iterable[Part]) -> int:
    """The bytes `parts` hold in memory (a region holds none)."""
    return sum(len(part) for part in parts if not isinstance(part, FileRegion))


def joined(parts: Iterable[Part]) -> bytes:
    """The parts as one byte string, regions read from their files."""
    return b"".join(bytes(part) if isinstance(part, FileRegion) else part for part in parts)


def materialized(value: Any) -> Any:
    """`value` (a decoded message: dicts, lists, leaves) with every region in it read into bytes; the
    containers holding one are copied, the others kept."""
    if isinstance(value, FileRegion):
        return bytes(value)
    if isinstance(value, dict):
        changed = {key: materialized(item) for key, item in value.items()}
        return changed if any(changed[key] is not item for key, item in value.items()) else value
    if isinstance(value, list):
        items = [materialized(item) for item in value]
        return items if any(new is not old for new, old in zip(items, value, strict=True)) else value
    return value


def is_exported(buffer: bytearray) -> bool:
    """Whether a view of `buffer` is alive: a bytearray refuses to resize while one is."""
    try:
        buffer.append(0)
    except BufferError:
        return True
    del buffer[-1]
    return False


def encode_uvarint(value: int) -> bytes:
    """Unsigned LEB128; ValueError for a negative value (construct's classes raise it as KafkaEncodeError)."""
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
