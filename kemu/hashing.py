"""How Kafka places a group or transactional id on a partition of its internal topic, and a keyed record on a
topic's partition (the clients' default partitioner, murmur2: see `key_partition`).

Kafka takes Java's `String.hashCode` of the id, makes it non-negative with `Utils.abs` and reduces it modulo
the partition count (TransactionStateManager.partitionFor, GroupCoordinatorService.partitionFor). `Utils.abs`
is Math.abs with Integer.MIN_VALUE mapped to 0 — not the producer partitioner's bit mask (`toPositive`),
which gives another partition for every negative hash. Clients see the result: FindCoordinator's node in a
cluster, and the `__consumer_offsets` partition AddOffsetsToTxn puts in a transaction (DescribeTransactions).
"""

from __future__ import annotations

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
