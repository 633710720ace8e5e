"""How Kafka places a group or transactional id on a partition of its internal topic.

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
