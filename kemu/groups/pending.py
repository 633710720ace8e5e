"""A result that the core fills in later: what a parked JoinGroup or SyncGroup gets back.

The core never blocks. An operation that Kafka answers only when the group moves on (the rebalance
completes, the leader sends the assignment, a timer fires) returns a `Pending`; the core calls
`set_result` when that happens, and the I/O shell learns of it through `add_done_callback` (for Trio:
set an Event in the callback and await it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Pending(Generic[T]):
    __slots__ = ("_done", "_result", "_callbacks")

    def __init__(self) -> None:
        self._done = False
        self._result: T | None = None
        self._callbacks: list[Callable[[T], None]] = []

    @classmethod
    def completed(cls, value: T) -> Pending[T]:
        pending: Pending[T] = cls()
        pending.set_result(value)
        return pending

    @property
    def done(self) -> bool:
        return self._done

    def result(self) -> T:
        if not self._done:
            raise RuntimeError("the result is not available yet")
        return self._result  # type: ignore[return-value]

    def add_done_callback(self, callback: Callable[[T], None]) -> None:
        """Run `callback(result)` when the result is set; at once if it already is."""
        if self._done:
            callback(self._result)  # type: ignore[arg-type]
        else:
            self._callbacks.append(callback)

    def set_result(self, value: T) -> None:
        if self._done:
            raise RuntimeError("the result was already set")
        self._done = True
        self._result = value
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(value)

    def __repr__(self) -> str:
        return f"Pending(done={self._done})"
