"""Giving memory back to the system once many connections have gone.

A closed connection's objects are freed by reference counting only where they form no cycle; Trio's tasks,
streams and cancel scopes do, so they wait for the collector's oldest generation, and what is freed goes back
to Python's and glibc's free lists, not to the system. After a crowd of connections leaves (2,000 idle
connections took kemu serve from 31 MiB to 57 MiB, and it stayed at 52 MiB after they closed), one full
collection and glibc's `malloc_trim` return most of it (to 43 MiB). Both take milliseconds on the event
loop, so they run only when at least TRIM_AFTER_CLOSED connections have closed, at most half of the peak
remain and none has closed for QUIET_S (the idle-connection sweep looks, at most a second apart).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
from collections.abc import Callable
from functools import cache

from kemu.server.gc_policy import POLICY

log = logging.getLogger("kemu.server")

TRIM_AFTER_CLOSED = 256
QUIET_S = 1.0  # no connection closed for this long: the crowd has left


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def give_back() -> None:
    """Collect every generation (with the objects the process's policy froze: kemu.server.gc_policy), then
    hand the C heap's free pages back to the system."""
    if POLICY.installed:
        POLICY.thaw()
    else:
        gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class ClosedConnections:
    """Counts the connections open, their peak and those closed since memory was last given back; `settle`
    (called now and then) gives it back once a crowd has left and no connection has closed for QUIET_S, so
    the last of the crowd is gone too: memory freed while others of the crowd still hold their pages cannot
    be handed back."""

    def __init__(self, give_back: Callable[[], None] = give_back) -> None:
        self.open = 0
        self.peak = 0
        self.closed_since = 0
        self.last_close = 0.0
        self._give_back = give_back

    def opened(self) -> None:
        self.open += 1
        self.peak = max(self.peak, self.open)

    def closed(self, now: float) -> None:
        self.open -= 1
        self.closed_since += 1
        self.last_close = now

    def settle(self, now: float) -> bool:
        """Give memory back if a crowd has left and things are quiet; True if it did."""
        if (self.closed_since < TRIM_AFTER_CLOSED or self.open > self.peak // 2
                or now - self.last_close < QUIET_S):
            return False
        log.debug("%d connections gone (of %d at most): giving memory back", self.closed_since, self.peak)
        self._give_back()
        self.peak, self.closed_since = self.open, 0
        return True
