"""Waiting on a condition with a deadline, instead of sleeping a guessed amount of time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 20.0
# Each check is usually a network round trip to the broker; the pause only keeps a condition
# that answers instantly (e.g. "not yet") from spinning the CPU.
_PAUSE_BETWEEN_CHECKS_S = 0.05


def wait_for(
    condition: Callable[[], T],
    *,
    what: str,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> T:
    """Call `condition` until it returns something truthy, and return that.

    Fails the test with `what` and the last value seen once `timeout` seconds have passed.
    Exceptions from `condition` propagate: a client error is a finding, not a reason to retry.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last saw {value!r}")
        time.sleep(_PAUSE_BETWEEN_CHECKS_S)


async def wait_for_async(
    condition: Callable[[], Awaitable[T]],
    *,
    what: str,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> T:
    """`wait_for` for asyncio clients: awaits `condition` until it returns something truthy."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await condition()
        if value:
            return value
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last saw {value!r}")
        await asyncio.sleep(_PAUSE_BETWEEN_CHECKS_S)
