"""The cleaner's key → latest offset map (Kafka's SkimpyOffsetMap).

Kafka keeps, per key, only an MD5 digest of it and the offset, in a fixed buffer of
`log.cleaner.dedupe.buffer.size` bytes (128 MiB shared by the cleaner threads, 24 bytes a slot) that it fills
to `log.cleaner.io.buffer.load.factor` (0.9). When the map is full a cleaning round stops at the last
offset it could index and the rest waits for the next round; the same happens here with the same capacity.
Keys are digested the same way, so two keys that collide in Kafka collide here too.
"""

from __future__ import annotations

import hashlib

DEFAULT_DEDUPE_BUFFER_BYTES = 128 * 1024 * 1024
DEFAULT_LOAD_FACTOR = 0.9
_BYTES_PER_ENTRY = 16 + 8  # MD5 digest + offset


def capacity_for(buffer_bytes: int = DEFAULT_DEDUPE_BUFFER_BYTES, load_factor: float = DEFAULT_LOAD_FACTOR) -> int:
    """How many keys one round may index: Kafka's `maxDesiredMapSize`."""
    return int((buffer_bytes // _BYTES_PER_ENTRY) * load_factor)


class OffsetMap:
    def __init__(self, capacity: int = capacity_for()) -> None:
        if capacity < 1:
            raise ValueError(f"an offset map needs room for at least one key (got {capacity})")
        self.capacity = capacity
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1
        """The last offset indexed (Kafka's `latestOffset`): the round cleans up to here."""

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def is_full(self) -> bool:
        return len(self._offsets) >= self.capacity

    @staticmethod
    def digest(key: bytes) -> bytes:
        return hashlib.md5(key, usedforsecurity=False).digest()

    def put(self, key: bytes, offset: int) -> None:
        self._offsets[self.digest(key)] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The latest offset of `key`, or -1 when it was not indexed."""
        return self._offsets.get(self.digest(key), -1)

    def update_latest_offset(self, offset: int) -> None:
        self.latest_offset = offset

    def clear(self) -> None:
        self._offsets.clear()
        self.latest_offset = -1

    @property
    def utilization(self) -> float:
        return len(self._offsets) / self.capacity
