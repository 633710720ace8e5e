"""Waiting for partition logs to change, for long-polling requests (Fetch's max_wait_ms / min_bytes).

Kafka parks such a request in a purgatory keyed by partition and re-checks it whenever one of those
partitions is appended to. Here a `LogWatch` listens to the partitions' log events (the core calls listeners
synchronously on the Trio thread) and wakes the waiting handler, which re-checks its own condition.

A wait's deadline is not a Trio cancel scope of its own: most waits end with a change long before their
deadline, and a scope made and closed per wait was a tenth of a parked fetch's cost. One system task per Trio
run keeps every wait's deadline in a heap and wakes those that reach it, as Kafka's purgatory has one timer
for all its delayed operations.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable
from types import TracebackType

import trio

from kemu.broker.partition import Partition
from kemu.log import LogEvent, PartitionLog

# A roll moves no offsets; everything else (appends, markers moving the LSO, a new log start offset,
# truncation, the log closing because its topic went away) may change what a fetch would return.
_IGNORED = frozenset({LogEvent.ROLLED})


class LogWatch:
    """Use as a context manager around the wait; the listeners go when it exits."""

    def __init__(self, partitions: Iterable[Partition]) -> None:
        self._partitions = list(dict.fromkeys(partitions))
        self._changed = trio.Event()

    def __enter__(self) -> LogWatch:
        for partition in self._partitions:
            partition.add_listener(self._on_event)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for partition in self._partitions:
            try:
                partition.remove_listener(self._on_event)
            except ValueError:
                pass

    def _on_event(self, log: PartitionLog, event: LogEvent) -> None:
        if event not in _IGNORED:
            self._changed.set()

    async def wait_until(self, deadline: float) -> bool:
        """Until one of the partitions' logs changes (True) or Trio's clock reaches `deadline` (False)."""
        if trio.current_time() >= deadline:
            await trio.lowlevel.checkpoint()
            return False
        deadlines = _deadlines()
        expiry = _Expiry(self._changed, deadlines)
        deadlines.add(deadline, expiry)
        try:
            await self._changed.wait()
        finally:
            expiry.settle()
        self._changed = trio.Event()
        return not expiry.expired


class _Expiry:
    """One wait's entry in the deadline heap: it stays there, settled, once the wait ends otherwise."""

    __slots__ = ("event", "owner", "settled", "expired")

    def __init__(self, event: trio.Event, owner: _Deadlines) -> None:
        self.event, self.owner = event, owner
        self.settled = False
        self.expired = False

    def settle(self) -> None:
        if not self.settled:
            self.settled = True
            self.owner.live -= 1

    def expire(self) -> None:
        self.expired = True
        self.settle()
        self.event.set()


class _Deadlines:
    """Every waiting watch's deadline, earliest first, and the task that sleeps until the earliest.

    Settled entries are left where they are (removing one from the middle of a heap costs more than the
    wait saved) and dropped when they reach the top, or all at once when they outnumber the live ones."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Expiry]] = []
        self._order = itertools.count()
        self.live = 0
        self._sleep: trio.CancelScope | None = None  # the task's, while it sleeps

    def add(self, deadline: float, expiry: _Expiry) -> None:
        heap = self._heap
        heapq.heappush(heap, (deadline, next(self._order), expiry))
        self.live += 1
        if len(heap) > 2 * self.live + 64:
            self._heap = heap = [entry for entry in heap if not entry[2].settled]
            heapq.heapify(heap)
        if self._sleep is not None and deadline < self._sleep.deadline:
            self._sleep.deadline = deadline

    async def run(self) -> None:
        while True:
            with trio.CancelScope() as sleep:
                self._sleep = sleep
                sleep.deadline = self._next_deadline()
                await trio.sleep_forever()
            self._sleep = None
            now = trio.current_time()
            heap = self._heap
            while heap and heap[0][0] <= now:
                _, _, expiry = heapq.heappop(heap)
                if not expiry.settled:
                    expiry.expire()

    def _next_deadline(self) -> float:
        heap = self._heap
        while heap and heap[0][2].settled:
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf


_RUN_DEADLINES: trio.lowlevel.RunVar[_Deadlines] = trio.lowlevel.RunVar("kemu_fetch_deadlines")


def _deadlines() -> _Deadlines:
    try:
        return _RUN_DEADLINES.get()
    except LookupError:
        deadlines = _Deadlines()
        _RUN_DEADLINES.set(deadlines)
        trio.lowlevel.spawn_system_task(deadlines.run, name="kemu fetch deadlines")
        return deadlines
