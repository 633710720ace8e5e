"""The order Java's HashSet and HashMap iterate strings in, where Kafka answers in that order (the SASL
mechanisms of a handshake, the users of the SCRAM credential APIs): a table of power-of-two buckets, a
string's bucket its String.hashCode with the high half folded into the low, a bucket's strings in the order
they were put in (a resize splits a bucket without reordering it).
"""

from __future__ import annotations

from collections.abc import Iterable

_LOAD_FACTOR = 0.75
_DEFAULT_CAPACITY = 16


def java_string_hash(text: str) -> int:
    """Java's String.hashCode over UTF-16 code units, as an unsigned 32-bit value."""
    value = 0
    units = text.encode("utf-16-be", errors="surrogatepass")
    for index in range(0, len(units), 2):
        value = (31 * value + (units[index] << 8 | units[index + 1])) & 0xFFFFFFFF
    return value


def _ordered(unique: list[str], capacity: int) -> list[str]:
    def bucket(text: str) -> int:
        value = java_string_hash(text)
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
