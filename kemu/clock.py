"""Time for the broker core: a wall clock and a monotonic clock, real or virtual.

Everything in the core that depends on time (retention, segment rolling by age, LogAppendTime stamps,
transaction and session timeouts) reads an injected `Clock` and never `time.time()`, so a test can make a
week pass in a microsecond with `VirtualClock.advance`.

The virtual clock tells listeners whenever it moves; the async layer turns that into wake-ups for its
sleepers (a Trio task waiting for "10 virtual seconds from now" is woken by the callback, not by a real
timer). Listeners run synchronously inside `advance`/`set`, so they must be cheap and must not raise.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

ClockListener = Callable[[int], None]
"""Called with the new wall-clock reading (ms since the epoch) after the clock moved."""


@runtime_checkable
class Clock(Protocol):
    def now_ms(self) -> int:
        """Wall-clock time in milliseconds since the Unix epoch (what Kafka stamps into records)."""
        ...

    def monotonic_ms(self) -> int:
        """A clock that never goes backwards, for measuring durations (timeouts, delays)."""
        ...


class SystemClock:
    """The real clocks of the machine."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"


class VirtualClock:
    """A clock that only moves when a test moves it.

    `advance(ms)` moves both readings forward; `set(ms)` jumps the wall clock to an absolute time
    (backwards too, like an NTP step) and moves the monotonic reading forward by the same amount when the
    jump is forwards, so durations measured across it stay sensible.
    """

    def __init__(self, start_ms: int | None = None, *, monotonic_start_ms: int = 0) -> None:
        self._now_ms = time.time_ns() // 1_000_000 if start_ms is None else start_ms
        self._monotonic_ms = monotonic_start_ms
        self._listeners: list[ClockListener] = []

    def now_ms(self) -> int:
        return self._now_ms

    def monotonic_ms(self) -> int:
        return self._monotonic_ms

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"cannot advance a clock by a negative amount ({ms} ms); use set() to step back")
        self._now_ms += ms
        self._monotonic_ms += ms
        self._notify()

    def set(self, ms: int) -> None:
        if ms > self._now_ms:
            self._monotonic_ms += ms - self._now_ms
        self._now_ms = ms
        self._notify()

    def add_listener(self, listener: ClockListener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: ClockListener) -> None:
        self._listeners.remove(listener)

    def _notify(self) -> None:
        # A listener may unsubscribe itself while being called; iterate over a snapshot.
        for listener in tuple(self._listeners):
            listener(self._now_ms)

    def __repr__(self) -> str:
        return f"VirtualClock(now_ms={self._now_ms}, monotonic_ms={self._monotonic_ms})"
