"""The Trio task that drives the broker core's timers (retention, coordinator timeouts, marker writing)."""

from __future__ import annotations

import trio

from kemu.broker.broker import Broker

_IDLE_CHECK_S = 1.0  # a real clock moves without telling anyone: look again at least this often


async def run_housekeeper(broker: Broker, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    woken = trio.Event()

    def wake() -> None:
        woken.set()

    token = trio.lowlevel.current_trio_token()

    def wake_from_clock(_now_ms: int) -> None:
        # A virtual clock may be moved from another thread (a test's); hop onto the Trio thread.
        try:
            token.run_sync_soon(wake)
        except trio.RunFinishedError:
            pass

    broker.housekeeping.set_waker(wake)
    add_listener = getattr(broker.clock, "add_listener", None)
    if add_listener is not None:
        add_listener(wake_from_clock)
    task_status.started()
    try:
        while True:
            woken = trio.Event()
            next_due = broker.housekeeping.run_due()
            delay = _IDLE_CHECK_S
            if next_due is not None:
                delay = min(delay, max(0.0, (next_due - broker.clock.now_ms()) / 1000))
            with trio.move_on_after(delay):
                await woken.wait()
    finally:
        remove = getattr(broker.clock, "remove_listener", None)
        if remove is not None and add_listener is not None:
            remove(wake_from_clock)
