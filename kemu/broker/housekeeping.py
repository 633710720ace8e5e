"""The broker's timers, in one place: each subsystem registers a `tick(now_ms)` that does what is due and
returns when it next wants to run (ms on the broker clock's wall time), or None for "only when woken".

The core stays sans-I/O: the server's housekeeper task sleeps until the earliest deadline, or until
`wake()` is called (a coordinator queued work, a virtual clock moved), and then calls `run_due()`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kemu.clock import Clock

Tick = Callable[[int], "int | None"]

log = logging.getLogger(__name__)


class Housekeeping:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._ticks: list[tuple[str, Tick]] = []
        self._due: dict[str, int | None] = {}
        self._wake: Callable[[], None] = lambda: None
        # When the server's housekeeper will look next (what `run_due` returned; None: only when woken).
        self._next_due: int | None = None
        self._running = False
        self._woken = False  # `wake()` asked for a tick that has not run yet

    def add(self, name: str, tick: Tick, first_run_ms: int | None = None) -> None:
        self._ticks.append((name, tick))
        self._due[name] = self.clock.now_ms() if first_run_ms is None else first_run_ms
        self._woken = True  # a round computes when it is next due
        self._wake()

    def set_waker(self, wake: Callable[[], None]) -> None:
        self._wake = wake

    def wake(self, name: str | None = None) -> None:
        """Ask for `name` (or every tick) to run as soon as possible."""
        now = self.clock.now_ms()
        for tick_name, _ in self._ticks:
            if name is None or tick_name == name:
                self._due[tick_name] = now
                self._next_due = now
        self._woken = True
        self._wake()

    def schedule(self, name: str, at_ms: int) -> None:
        """Ask for `name` to run no later than `at_ms`. The housekeeper is woken only when that is earlier
        than it means to look anyway, so a subsystem may call this on every change it makes for the price of
        a comparison (the transaction coordinator does, once per state change)."""
        due = self._due.get(name)
        if due is not None and due <= at_ms:
            return
        self._due[name] = at_ms
        # From inside a tick, the round's end takes it into account; no need to wake anyone.
        if not self._running and (self._next_due is None or at_ms < self._next_due):
            self._next_due = at_ms
            self._wake()

    def run_woken(self) -> None:
        """Run now what `wake()` asked for, if anything. The server calls this once it has written a batch
        of responses, before it reads another request: so EndTxn's markers are written right after its
        answer, before any request that could observe them (the client's OffsetFetch of the offsets it just
        committed) — the housekeeper task, also woken, could only run after whatever else is runnable."""
        if self._woken:
            self.run_due()

    @property
    def next_due(self) -> int | None:
        """When the tick due first is due (None: nothing is scheduled), as the last round or change left it."""
        return self._next_due

    def round_due(self) -> bool:
        """Whether `run_due` has anything to do now: a wake-up nobody served yet, or a deadline passed. The
        housekeeper asks before each round: a wake-up whose work a connection already ran needs none."""
        return self._woken or (self._next_due is not None and self._next_due <= self.clock.now_ms())

    def run_due(self) -> int | None:
        """Run every tick that is due; returns the next deadline (None if nothing is scheduled)."""
        now = self.clock.now_ms()
        self._woken = False
        self._running = True
        try:
            for name, tick in self._ticks:
                due = self._due.get(name)
                if due is not None and due <= now:
                    try:
                        self._due[name] = tick(now)
                    except Exception:
                        # A failing subsystem must not stop the others' timers; it is retried in a second.
                        log.exception("housekeeping task %s failed", name)
                        self._due[name] = now + 1000
        finally:
            self._running = False
        pending = [d for d in self._due.values() if d is not None]
        self._next_due = min(pending, default=None)
        return self._next_due
