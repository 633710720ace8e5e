"""Waiting for partition logs to change, for long-polling requests (Fetch's max_wait_ms / min_bytes).

Kafka parks such a request in a purgatory keyed by partition and re-checks it whenever one of those
partitions is appended to. Here a `LogWatch` listens to the logs' events (the core calls listeners
synchronously on the Trio thread) and wakes the waiting handler, which re-checks its own condition.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType

import trio

from kemu.log import LogEvent, PartitionLog

# A roll moves no offsets; everything else (appends, markers moving the LSO, a new log start offset,
# truncation, the log closing because its topic went away) may change what a fetch would return.
_IGNORED = frozenset({LogEvent.ROLLED})


class LogWatch:
    """Use as a context manager around the wait; the listeners go when it exits."""

    def __init__(self, logs: Iterable[PartitionLog]) -> None:
        self._logs = list(dict.fromkeys(logs))
        self._changed = trio.Event()

    def __enter__(self) -> LogWatch:
        for log in self._logs:
            log.add_listener(self._on_event)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for log in self._logs:
            try:
                log.remove_listener(self._on_event)
            except ValueError:
                pass

    def _on_event(self, log: PartitionLog, event: LogEvent) -> None:
        if event not in _IGNORED:
            self._changed.set()

    async def wait_until(self, deadline: float) -> bool:
        """Until one of the logs changes (True) or Trio's clock reaches `deadline` (False)."""
        with trio.move_on_at(deadline):
            await self._changed.wait()
            self._changed = trio.Event()
            return True
        return False
