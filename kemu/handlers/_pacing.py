"""Yielding to the event loop from inside a big request's work, by the time it has taken rather than by a
count of items: one item of a request may cost a microsecond (a Metadata topic of one partition) or
milliseconds (a topic of 10,000 partitions), and the same item costs twice as much on a loaded machine. A
handler walking many items awaits `tick()` after each; it yields once BUDGET_S has passed since the last
yield, so another client's request waits for one budget at most, and a small request never yields at all."""

from __future__ import annotations

import time

import trio

# Each yield costs a pass through Trio's scheduler (tens of microseconds): 5 ms keeps that under 1% of a
# big request's time while another client's request waits a few milliseconds for its turn, well under the
# 100 ms issue 34 allows on a machine busy enough to stretch 5 ms of CPU many times over.
BUDGET_S = 0.005


class Pacer:
    __slots__ = ("_budget_s", "_deadline", "yields")

    def __init__(self) -> None:
        self._budget_s = BUDGET_S  # read at creation: a test sets it to 0 to yield after every item
        self._deadline = time.perf_counter() + self._budget_s
        self.yields = 0

    def due(self) -> bool:
        """Whether the budget is spent (for a caller that must reach a safe point before `tick`)."""
        return time.perf_counter() >= self._deadline

    async def tick(self) -> None:
        """Yield to the event loop if the budget since the last yield is spent."""
        if time.perf_counter() >= self._deadline:
            await trio.lowlevel.checkpoint()
            self.yields += 1
            self._deadline = time.perf_counter() + self._budget_s
