"""What the active segments of one log directory keep in memory together (kemu.log.segment's cache of recent
batches), bounded across all of them: the oldest cached batches go first, whichever partition holds them."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol


class CachingSegment(Protocol):
    """What the budget asks of a segment (kemu.log.segment.LogSegment)."""

    def evict_through(self, generation: int, index: int) -> None: ...

    def holds(self, generation: int, index: int) -> bool: ...


# A weak reference to the segment: None once it is gone.
_SegmentRef = Callable[[], CachingSegment | None]

# Per log directory (one broker), across all its active segments: Kafka leaves recent data to the OS page cache,
# outside its heap, where kemu holds it as Python bytes. Without a bound across partitions, 500 partitions of
# one-record batches kept every byte produced (444 MiB of RSS for 1.8 million 100-byte records).
DEFAULT_CACHE_BUDGET_BYTES = 64 * 1024 * 1024


class CacheBudget:
    """The bytes the active segments of one log directory keep in memory together. Past `limit`, the oldest
    cached batches go first, whichever partition holds them; each segment's own `cache_bytes` bound still
    holds. A segment evicts only from its oldest cached batch on, so what it keeps is always its newest ones."""

    __slots__ = ("limit", "used", "_order", "_cached")

    def __init__(self, limit: int = DEFAULT_CACHE_BUDGET_BYTES) -> None:
        self.limit = limit
        self.used = 0
        # (segment, its cache generation, chunk index) in the order they were cached; an entry whose chunk has
        # gone already (its segment's own bound, a roll, a truncation, a deletion) is stale and skipped when it
        # comes up. The segment is held weakly: a deleted partition's segments are freed as soon as it goes.
        self._order: deque[tuple[_SegmentRef, int, int]] = deque()
        self._cached = 0  # chunks cached now, to know when stale entries outnumber them

    def added(self, segment: _SegmentRef, generation: int, index: int, size: int) -> None:
        self.used += size
        self._cached += 1
        order = self._order
        order.append((segment, generation, index))
        while self.used > self.limit and order:
            oldest, oldest_generation, oldest_index = order.popleft()
            found = oldest()
            if found is not None:
                found.evict_through(oldest_generation, oldest_index)
        if len(order) > 2 * self._cached + 1024:
            self._order = deque(entry for entry in order if _holds(*entry))

    def released(self, size: int, chunks: int) -> None:
        self.used -= size
        self._cached -= chunks


def _holds(segment: _SegmentRef, generation: int, index: int) -> bool:
    found = segment()
    return found is not None and found.holds(generation, index)
