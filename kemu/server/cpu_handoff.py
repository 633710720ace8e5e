"""Handing the CPU to the client an answer woke, unless the machine is busy with other work.

kemu shares its machine with its clients: a test suite's producers and consumers run beside it. Writing an
answer to a local socket wakes the client's thread, and Linux puts a thread woken that way on the waker's
CPU when the waker runs alone there, expecting the waker to sleep next. kemu does not sleep next: it
finishes the request's bookkeeping, runs what the request queued for after its answer (EndTxn's markers,
~80 µs), reads the socket once more and parks its task in Trio, while the woken client waits on that CPU and
the other one may idle. Yielding once the answers are out lets the client run first: its wake-up cost the
client 15-25 µs per answer on a one-record transaction's round trips, and 110 µs after EndTxn's.

On a machine whose CPUs are busy anyway (200 clients on 2 cores), a yield puts kemu behind whatever else is
runnable there while other connections' requests wait: yielding after every answer took produce p99 from
144 to 232-259 ms. A yield that came back late tells just that (one that only let the woken client run
returned within 30 µs, 90 at most; under that load one in ten took over 200 µs, up to 5 ms), so after one,
kemu stops yielding for a while and then tries again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

# A yield that took longer let more than the one woken client run: the CPU is contended.
LATE_S = 200e-6
# How long to stop yielding after a late one (the probe that finds the CPU still busy costs one late yield).
QUIET_S = 1.0


class CpuHandoff:
    """One per server: whether yielding pays reflects the whole machine, not one connection."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._quiet_until = float("-inf")

    def after_answer(self) -> None:
        """Called once answers have been written: yield the CPU, unless a recent yield came back late."""
        start = self._clock()
        if start < self._quiet_until:
            return
        os.sched_yield()  # looked up on each call: a test stands in for it
        took = self._clock() - start
        if took > LATE_S:
            self._quiet_until = start + took + QUIET_S
