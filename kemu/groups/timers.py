"""Keyed one-shot timers on the monotonic clock, fired when the I/O shell calls `run_due`.

Like Kafka's CoordinatorTimer: scheduling a key that is already scheduled replaces it, so "reschedule the
session timeout of member m" is one call. Callbacks may schedule or cancel timers, including their own key.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable

TimerCallback = Callable[[], None]


class Timers:
    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[int, int, TimerCallback]] = {}
        self._heap: list[tuple[int, int, Hashable]] = []
        self._seq = itertools.count()

    def schedule(self, key: Hashable, deadline_ms: int, callback: TimerCallback) -> None:
        seq = next(self._seq)
        self._entries[key] = (deadline_ms, seq, callback)
        heapq.heappush(self._heap, (deadline_ms, seq, key))

    def cancel(self, key: Hashable) -> None:
        self._entries.pop(key, None)

    def is_scheduled(self, key: Hashable) -> bool:
        return key in self._entries

    def deadline(self, key: Hashable) -> int | None:
        entry = self._entries.get(key)
        return entry[0] if entry else None

    def next_deadline(self) -> int | None:
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def run_due(self, now_ms: int) -> int:
        """Fire every timer whose deadline is at or before `now_ms`, earliest first; returns how many fired."""
        fired = 0
        while True:
            self._drop_stale()
            if not self._heap or self._heap[0][0] > now_ms:
                return fired
            _, _, key = heapq.heappop(self._heap)
            _, _, callback = self._entries.pop(key)
            callback()
            fired += 1

    def __len__(self) -> int:
        return len(self._entries)

    def _drop_stale(self) -> None:
        # Cancelled or rescheduled keys leave their old heap entries behind; skip them lazily.
        heap = self._heap
        while heap:
            deadline, seq, key = heap[0]
            entry = self._entries.get(key)
            if entry is not None and entry[1] == seq:
                return
            heapq.heappop(heap)
