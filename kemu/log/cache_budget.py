"""What the active segments of one log directory keep in memory together (kemu.log.segment's cache of recent
batches), bounded across all of them: the oldest cached batches go first, whichever partition holds them."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol

# Per log directory (one broker), across all its active segments: Kafka leaves recent data to the OS page cache,
# outside its heap, where kemu holds it as Python bytes. Without a bound across partitions, 500 partitions of
# one-record batches kept every byte produced (444 MiB of RSS for 1.8 million 100-byte records).
DEFAULT_CACHE_BUDGET_BYTES = 64 * 1024 * 1024


class CachingSegment(Protocol):
    """What the budget asks of a segment (kemu.log.segment.LogSegment)."""

    stale: int
    """How many of the segment's oldest entries in the budget's order name chunks it dropped by itself."""

    def evict_oldest(self) -> int:
        """Drop the oldest cached chunk; its size."""
        ...


# A weak reference to the segment (None once it is gone): a deleted partition's segments are freed at once.
SegmentRef = Callable[[], CachingSegment | None]


class CacheBudget:
    """The bytes the active segments of one log directory keep in memory together. Past `limit`, the oldest
    cached batches go first, whichever partition holds them; each segment's own `cache_bytes` bound still
    holds.

    The order is one entry per cached batch, naming only its segment (8 bytes a batch: a tuple each made the
    order cost a third of what it bounded). That is enough because a segment drops its chunks oldest first:
    the budget's turn drops the segment's oldest, and a chunk the segment dropped by itself (its own bound, a
    roll, a truncation) leaves its oldest entry stale, counted on the segment and skipped when it comes up."""

    __slots__ = ("limit", "used", "_order", "_cached", "_stale")

    def __init__(self, limit: int = DEFAULT_CACHE_BUDGET_BYTES) -> None:
        self.limit = limit
        self.used = 0
        self._order: deque[SegmentRef] = deque()
        self._cached = 0  # chunks cached now
        self._stale = 0  # entries of the order that name no cached chunk

    def added(self, segment: SegmentRef, size: int) -> None:
        self.used += size
        self._cached += 1
        order = self._order
        order.append(segment)
        while self.used > self.limit and order:
            found = order.popleft()()
            if found is None:
                # A segment is closed (its chunks counted stale) before it goes: a deleted partition's are freed
                # by reference counting at once, while their entries wait here.
                self._stale -= 1
            elif found.stale:
                found.stale -= 1
                self._stale -= 1
            else:
                self.used -= found.evict_oldest()
                self._cached -= 1
        if self._stale > 2 * self._cached + 1024:
            self._compact()

    def dropped(self, segment: CachingSegment, size: int, chunks: int) -> None:
        """`segment` dropped `chunks` cached chunks of `size` bytes by itself."""
        self.used -= size
        self._cached -= chunks
        self._stale += chunks
        segment.stale += chunks

    def _compact(self) -> None:
        kept: deque[SegmentRef] = deque()
        for entry in self._order:
            found = entry()
            if found is None:
                continue
            if found.stale:
                found.stale -= 1
                continue
            kept.append(entry)
        self._order, self._stale = kept, 0
