"""Java's String.hashCode where Kafka's answers depend on it: how Kafka places a group or transactional id on a
partition of its internal topic, and the order Java's HashSet and HashMap list keys in; and murmur2, which
places a keyed record on a topic's partition (the clients' default partitioner: `key_partition`).

Kafka takes Java's `String.hashCode` of the id, makes it non-negative with `Utils.abs` (Math.abs, with
Integer.MIN_VALUE mapped to 0 rather than overflowing) and reduces it modulo the partition count. Which
partition that is decides which broker of a cluster coordinates the id: FindCoordinator answers its leader.

Kafka answers some lists in the iteration order of a HashSet or HashMap (the SASL mechanisms of a handshake,
the users of the SCRAM credential APIs, CreateTopics' refusals) and breaks some ties by it (a classic group's
protocol vote, the uniform assignor's order of members and topic ids): `java_hash_order` gives that order.
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


def java_abs(value: int) -> int:
    """Kafka's Utils.abs: Math.abs, except that Integer.MIN_VALUE (whose negation overflows) is 0."""
    return 0 if value == -(1 << 31) else abs(value)


def partition_for(key: str, partitions: int) -> int:
    return java_abs(java_string_hash(key)) % partitions


def java_hash_set_order(items: Iterable[str]) -> list[str]:
    """`new ArrayList<>(new HashSet<>(items))`: a set made from a collection, sized to hold it."""
    return java_hash_order(items, java_string_hash, copied=True)


def java_hash_map_order(keys: Iterable[str]) -> list[str]:
    """The order in which a java.util.HashMap iterates these distinct strings, put in this order into a new map."""
    return java_hash_order(keys, java_string_hash)


def java_uuid_hash(value: uuid.UUID) -> int:
    """Kafka's Uuid.hashCode: the two 64-bit halves xored, then the two 32-bit halves of that."""
    xor = (value.int >> 64) ^ (value.int & 0xFFFFFFFFFFFFFFFF)
    h = ((xor >> 32) ^ xor) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_hash_order(keys: Iterable[K], hash_code: Callable[[K], int], *, copied: bool = False,
                    sized: int | None = None) -> list[K]:
    """The order in which a java.util.HashMap (or HashSet) iterates these distinct keys, put in this order.

    By bucket in the table the map grew to (16, doubled each time the size passes three quarters of it; a
    set made from a collection, `copied`, starts at the size that holds it; a map made `new HashMap<>(sized)`
    at the power of two that is at least `sized`, 1 at the least), a bucket being the low bits of
    the hash spread by `h ^ (h >>> 16)`; within a bucket, in insertion order (a resize splits buckets keeping
    it). Buckets of 8 or more keys become trees in Java, whose order this does not follow: no key set Kafka
    orders so is that large."""
    ordered = list(dict.fromkeys(keys))
    capacity = _HASH_MAP_CAPACITY if sized is None else 1 << max(sized - 1, 0).bit_length()
    if copied:
        while capacity < int(len(ordered) / _HASH_MAP_LOAD_FACTOR) + 1:
            capacity *= 2
    while len(ordered) > capacity * _HASH_MAP_LOAD_FACTOR:
        capacity *= 2

    def bucket(key: K) -> int:
        h = hash_code(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(ordered, key=bucket)  # a stable sort: insertion order within a bucket


_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's `Utils.murmur2`: 32-bit MurmurHash2 with seed 0x9747b28c over little-endian words, as a signed
    int, as its clients' default partitioner hashes a record's key."""
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    whole = length & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = length - whole
    if tail:
        if tail == 3:
            h ^= data[whole + 2] << 16
        if tail >= 2:
            h ^= data[whole + 1] << 8
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def key_partition(key: bytes, partitions: int) -> int:
    """The partition a Kafka producer's default partitioner gives a keyed record: toPositive(murmur2(key)) % n."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions
