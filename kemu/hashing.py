"""Java's String.hashCode where Kafka's answers depend on it: how Kafka places a group or transactional id on a
partition of its internal topic, and the order Java's HashSet and HashMap list strings in; and murmur2, which
places a keyed record on a topic's partition (the clients' default partitioner: `key_partition`).

Kafka takes Java's `String.hashCode` of the id, makes it non-negative with `Utils.abs` (Math.abs, with
Integer.MIN_VALUE mapped to 0 rather than overflowing) and reduces it modulo the partition count. Which
partition that is decides which broker of a cluster coordinates the id: FindCoordinator answers its leader.

Kafka answers some lists in the iteration order of a HashSet or HashMap of strings (the SASL mechanisms of a
handshake, the users of the SCRAM credential APIs, CreateTopics' refusals): a table of power-of-two buckets, a
string's bucket its hash with the high half folded into the low, a bucket's strings in the order they were
put in (a resize splits a bucket without reordering it).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache


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


_LOAD_FACTOR = 0.75
_DEFAULT_CAPACITY = 16


def _ordered(unique: list[str], capacity: int) -> list[str]:
    def bucket(text: str) -> int:
        value = java_string_hash(text) & 0xFFFFFFFF
        return (value ^ (value >> 16)) & (capacity - 1)

    return sorted(unique, key=bucket)  # sorted() is stable: insertion order within a bucket


def java_hash_set_order(items: Iterable[str]) -> list[str]:
    """`new ArrayList<>(new HashSet<>(items))`: a table of the next power of two at or above
    max(size / 0.75 + 1, 16)."""
    unique = list(dict.fromkeys(items))
    wanted = max(int(len(unique) / _LOAD_FACTOR) + 1, _DEFAULT_CAPACITY)
    return _ordered(unique, 1 << (wanted - 1).bit_length())


def java_hash_map_order(keys: Iterable[str]) -> list[str]:
    """The keys of a `new HashMap<>()` they were put into in this order: a table of 16, doubled whenever
    it holds more than three quarters of its size."""
    unique = list(dict.fromkeys(keys))
    capacity = _DEFAULT_CAPACITY
    while len(unique) > capacity * _LOAD_FACTOR:
        capacity *= 2
    return _ordered(unique, capacity)


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
