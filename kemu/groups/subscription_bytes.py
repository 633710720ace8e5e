"""The topics a classic "consumer" group member subscribes to, read from its opaque protocol metadata.

Kafka reads the embedded ConsumerProtocolSubscription (a version int16, then an array of topic names, then
fields this code does not need) to learn which topics a classic consumer group reads: OffsetDelete refuses
with GROUP_SUBSCRIBED_TO_TOPIC and offset expiry spares those topics. Unparseable metadata yields None,
as Kafka's SchemaException does: the subscription is then unknown.
"""

from __future__ import annotations

import struct


def subscribed_topics(metadata: bytes) -> frozenset[str] | None:
    try:
        (version,) = struct.unpack_from(">h", metadata, 0)
        if version < 0:
            return None
        (count,) = struct.unpack_from(">i", metadata, 2)
        if count < 0:
            return None
        pos = 6
        topics: set[str] = set()
        for _ in range(count):
            (length,) = struct.unpack_from(">h", metadata, pos)
            pos += 2
            if length < 0 or pos + length > len(metadata):
                return None
            topics.add(metadata[pos:pos + length].decode("utf-8"))
            pos += length
        return frozenset(topics)
    except (struct.error, UnicodeDecodeError):
        return None


def encode_subscription(topics: list[str], user_data: bytes | None = None) -> bytes:
    """A version-0 ConsumerProtocolSubscription, as a client's JoinGroup metadata carries it."""
    out = bytearray(struct.pack(">hi", 0, len(topics)))
    for topic in topics:
        raw = topic.encode("utf-8")
        out += struct.pack(">h", len(raw)) + raw
    if user_data is None:
        out += struct.pack(">i", -1)
    else:
        out += struct.pack(">i", len(user_data)) + user_data
    return bytes(out)
