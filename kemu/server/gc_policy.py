"""Python's full garbage collections kept short on a broker with many topics (`kemu serve`'s own process).

A collection of the oldest generation walks every object the cyclic collector tracks, and a broker's state
is most of them: ~42 a one-partition topic (its partition, log, segment, indexes, epoch cache, producer
state, paths, arrays), ~420,000 at 10,000 topics, a walk of 150-450 ms. Python starts one whenever the
objects that reached the oldest generation since the last grow by a quarter of those it kept then, so a
10,000-topic CreateTopics ran ~30 of them, each over everything created so far, and a DescribeConfigs or
IncrementalAlterConfigs of every topic, whose answers outlive many young collections, started more
(70-460 ms each, on the event loop, in the middle of a request).

The policy: a full collection comes after 3 middle-generation ones, not 10, and what survives it is frozen
(`gc.freeze`, O(1): the survivors move to the permanent generation, which no collection walks), so the next
full collection walks only what reached the oldest generation since, and its time follows what the
requests allocate, not how big the broker is.

Memory: a frozen object freed by reference counting is freed at once, as any other; only a frozen object
in a reference cycle waits when it becomes garbage, for a thaw. The broker's own big state frees itself
without the collector (a deleted partition's log drops its listeners when it closes: no cycle left), so
what can wait is small: the cyclic objects of requests in flight at a full collection (Trio's cancel
scopes, tasks) and of connections open then, freed when they close. The thaw collects them: once the
server has been quiet for QUIET_S (no request received, owed or sent on any connection) after anything
was frozen, it unfreezes everything, collects it all and freezes the survivors again. That one walk is
the old full collection's cost (~13 ms for an empty broker, 150-450 ms at 10,000 topics), paid while no
client is waiting; after a crowd of connections leaves (kemu.server.memory) the same thaw runs before
memory goes back to the system.

In-process brokers (a test's) share their process with its own objects and leave the collector alone.
"""

from __future__ import annotations

import gc
import logging
import time
from typing import Any

log = logging.getLogger("kemu.server")

QUIET_S = 1.0  # no request received, owed or sent for this long: the server is quiet
# A full collection after this many middle-generation ones (Python's default: 10). With the survivors frozen
# a full collection walks only what the middle collections since promoted: more often, each a third as long
# (a 10,000-topic CreateTopics, whose every object survives, promoted enough in 10 for a 46-160 ms walk).
FULL_EVERY = 3


class GcPolicy:
    """Installed once per process; `froze` says whether anything was frozen since the last thaw."""

    def __init__(self) -> None:
        self.installed = False
        self.froze = False
        self.thaws = 0
        self._thresholds = gc.get_threshold()

    def install(self) -> None:
        if not self.installed:
            gc.callbacks.append(self._collected)
            self._thresholds = gc.get_threshold()
            young, middle, _ = self._thresholds
            gc.set_threshold(young, middle, FULL_EVERY)
            self.installed = True

    def uninstall(self) -> None:
        if self.installed:
            gc.callbacks.remove(self._collected)
            gc.set_threshold(*self._thresholds)
            self.installed = False

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info["generation"] == 2:
            gc.freeze()  # the survivors, out of every later walk until a thaw
            self.froze = True

    @property
    def pending(self) -> bool:
        """Something was frozen since the last thaw (a caller need not find out whether the server is quiet
        before it is)."""
        return self.froze and self.installed

    def settle(self, quiet: bool) -> bool:
        """Thaw if the server is quiet and something was frozen since the last thaw; True if it did."""
        if not (quiet and self.pending):
            return False
        self.thaw()
        return True

    def thaw(self) -> None:
        """Unfreeze everything, collect it all, freeze what survives (the collection's own callback does)."""
        started = time.perf_counter()
        gc.unfreeze()
        collected = gc.collect()
        if not self.installed:  # then no callback froze the survivors
            gc.freeze()
        self.froze = False
        self.thaws += 1
        log.debug("thawed the frozen objects: %d collected in %.0f ms", collected,
                  (time.perf_counter() - started) * 1000)


POLICY = GcPolicy()
