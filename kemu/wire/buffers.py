"""What the generated codec (`kemu.wire.compiled`) and the server need of the wire helpers, without construct:
the buffer types, splicing big byte strings into an encoded response, unsigned varints, and the bound on
a request's array elements. `kemu.wire.primitives` builds construct's classes on these; a process that
only meets well-formed requests never imports construct."""

from __future__ import annotations

# Bytes at least this long are spliced into an encoded response as they are rather than copied into it;
# below it one more entry to send costs more than the copy.
SPLICE_MIN_BYTES = 2048

Buffer = bytes | bytearray | memoryview

MAX_DECODED_ELEMENTS = 200_000
"""The most array elements one request may hold, nested arrays included. Each element costs the decoder a
dict or an object of a hundred bytes or more and ~10 us of the broker's only thread, against as little as
one byte of the frame: without a bound, one 100 MiB frame of one-byte elements is gigabytes and minutes.
No Kafka client sends that many (Kafka itself takes at most 10,000 partitions per CreateTopics)."""


def spliced_parts(encoded: bytes, spliced: list[tuple[int, Buffer]]) -> list[Buffer]:
    """The encoded bytes with the byte strings left out of them put back at their positions, as buffers."""
    if not spliced:
        return [encoded]
    out: list[Buffer] = []
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
