"""The clock a test holds: real time until it says otherwise, then time it moves.

A broker's core reads an injected `kemu.clock.Clock`. `TestClock` is that clock for brokers a test runs:
it follows the machine's clocks while running, stops on `freeze()`, and jumps on `advance()` whether
running or frozen. Every jump is told to the clock's listeners (the broker's housekeeper), which fire what
fell due. Both readings move together, so a duration measured across a jump sees the jump.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

ClockListener = Callable[[int], None]


class TestClock:
    """Thread-safe: a test moves it from its own thread while the broker reads it on the Trio thread."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(self, *, frozen: bool = False, start_ms: int | None = None,
                 settle: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        wall, mono = time.time_ns() // 1_000_000, time.monotonic_ns() // 1_000_000
        # While running, a reading is the machine's plus an offset; while frozen, the stored reading.
        self._wall_offset = 0 if start_ms is None else start_ms - wall
        self._mono_offset = 0
        self._frozen_at: tuple[int, int] | None = None
        if frozen:
            self._frozen_at = (wall + self._wall_offset, mono)
        self._listeners: list[ClockListener] = []
        # The broker's handle gives it: runs, before advance() returns, what the jump made due. Listeners only
        # wake the housekeeper, which would fire it a moment later; a test asserts right after advancing.
        self._settle = settle

    # ---- kemu.clock.Clock ------------------------------------------------------------------------------
    # Readings take no lock: the core reads the clock many times per request, and a reading racing a change
    # sees the state before it or after it (one attribute read each; the writers set the offsets before
    # they clear `_frozen_at`), which is all a lock would give it.
    def now_ms(self) -> int:
        frozen = self._frozen_at
        if frozen is not None:
            return frozen[0]
        return time.time_ns() // 1_000_000 + self._wall_offset

    def monotonic_ms(self) -> int:
        frozen = self._frozen_at
        if frozen is not None:
            return frozen[1]
        return time.monotonic_ns() // 1_000_000 + self._mono_offset

    # ---- what a test does --------------------------------------------------------------------------------
    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None

    def advance(self, seconds: float) -> None:
        """Jump forward; what falls due fires before this returns (when a broker's handle holds the clock)."""
        ms = round(seconds * 1000)
        if ms < 0:
            raise ValueError(f"cannot move the clock back ({seconds} s)")
        with self._lock:
            if self._frozen_at is not None:
                wall, mono = self._frozen_at
                self._frozen_at = (wall + ms, mono + ms)
            else:
                self._wall_offset += ms
                self._mono_offset += ms
        self._notify()
        if self._settle is not None:
            self._settle()

    def freeze(self) -> None:
        with self._lock:
            if self._frozen_at is None:
                self._frozen_at = (time.time_ns() // 1_000_000 + self._wall_offset,
                                   time.monotonic_ns() // 1_000_000 + self._mono_offset)

    def resume(self) -> None:
        """Run on from the frozen reading: the time spent frozen never happened."""
        with self._lock:
            if self._frozen_at is None:
                return
            wall, mono = self._frozen_at
            self._wall_offset = wall - time.time_ns() // 1_000_000
            self._mono_offset = mono - time.monotonic_ns() // 1_000_000
            self._frozen_at = None

    # ---- listeners (the housekeeper) ---------------------------------------------------------------------
    def add_listener(self, listener: ClockListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: ClockListener) -> None:
        with self._lock:
            self._listeners.remove(listener)

    def _notify(self) -> None:
        now = self.now_ms()
        with self._lock:
            listeners = tuple(self._listeners)
        for listener in listeners:
            listener(now)

    def __repr__(self) -> str:
        state = "frozen" if self.frozen else "running"
        return f"TestClock({state}, now_ms={self.now_ms()})"
