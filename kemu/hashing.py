"""Where Java's hashing of strings shows through Kafka's answers.

Kafka places a group or transactional id on a partition of its internal topic: Java's `String.hashCode` of
the id, made non-negative with `Utils.abs` (a bit mask, so Integer.MIN_VALUE maps to 0 rather than
overflowing), modulo the partition count. Clients never compute this themselves, but an operator comparing
kemu's `__transaction_state` layout with Kafka's will.

Kafka also breaks some ties by the iteration order of a `java.util.HashMap` (a classic group's protocol vote,
the uniform assignor's order of members and topic ids): `java_hash_order` gives that order.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, Iterable
from functools import lru_cache
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

_HASH_MAP_CAPACITY = 16
_HASH_MAP_LOAD_FACTOR = 0.75


# A coordinator looks its ids up on every request; a client keeps using the same few.
@lru_cache(maxsize=4096)
def java_string_hash(text: str) -> int:
    """Java's String.hashCode: over UTF-16 code units, in signed 32-bit arithmetic."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(key: str, partitions: int) -> int:
    return (java_string_hash(key) & 0x7FFFFFFF) % partitions


def java_hash_map_order(keys: Iterable[str]) -> list[str]:
    """The order in which a java.util.HashMap iterates these distinct strings, put in this order into a new map."""
    return java_hash_order(keys, java_string_hash)


def java_uuid_hash(value: uuid.UUID) -> int:
    """Kafka's Uuid.hashCode: the two 64-bit halves xored, then the two 32-bit halves of that."""
    xor = (value.int >> 64) ^ (value.int & 0xFFFFFFFFFFFFFFFF)
    h = ((xor >> 32) ^ xor) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_hash_order(keys: Iterable[K], hash_code: Callable[[K], int], *, copied: bool = False) -> list[K]:
    """The order in which a java.util.HashMap (or HashSet) iterates these distinct keys, put in this order.

    By bucket in the table the map grew to (16, doubled each time the size passes three quarters of it; a
    set made from a collection, `copied`, starts at the size that holds it), a bucket being the low bits of
    the hash spread by `h ^ (h >>> 16)`; within a bucket, in insertion order (a resize splits buckets keeping
    it). Buckets of 8 or more keys become trees in Java, whose order this does not follow: no key set Kafka
    orders so is that large."""
    ordered = list(dict.fromkeys(keys))
    capacity = _HASH_MAP_CAPACITY
    if copied:
        while capacity < int(len(ordered) / _HASH_MAP_LOAD_FACTOR) + 1:
            capacity *= 2
    while len(ordered) > capacity * _HASH_MAP_LOAD_FACTOR:
        capacity *= 2

    def bucket(key: K) -> int:
        h = hash_code(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(ordered, key=bucket)  # a stable sort: insertion order within a bucket
