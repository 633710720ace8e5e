"""The Trio task that drives the broker core's timers (retention, coordinator timeouts, marker writing)."""

from __future__ import annotations

from collections.abc import Callable

import trio

from kemu.broker.broker import BrokerCore

_IDLE_CHECK_S = 1.0  # a real clock moves without telling anyone: look again at least this often


async def run_housekeeper(broker: BrokerCore | Callable[[], BrokerCore], *,
                          task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Run `broker`'s due timers until cancelled. Given a function instead, drive whichever core it returns
    at each round (a server whose core is swapped between tests wakes this task through the old core's
    `housekeeping.wake()` when it swaps)."""
    current = _fixed(broker) if isinstance(broker, BrokerCore) else broker
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

    driven: BrokerCore | None = None
    run = True
    try:
        while True:
            # One cancel scope per sleep that reaches its deadline; a wake-up only moves the deadline (a
            # scope made and torn down per wake-up cost more than the round itself).
            with trio.CancelScope() as sleep:
                while True:
                    woken = trio.Event()
                    core = current()
                    if core is not driven:
                        if driven is not None:
                            _stop_listening(driven, wake_from_clock)
                        driven = core
                        core.housekeeping.set_waker(wake)
                        add_listener = getattr(core.clock, "add_listener", None)
                        if add_listener is not None:
                            add_listener(wake_from_clock)
                        task_status.started()
                        task_status = trio.TASK_STATUS_IGNORED
                        run = True
                    housekeeping = core.housekeeping
                    # Work a request wakes (EndTxn's markers) is usually done already by now: its connection
                    # runs it once the answer is written (Housekeeping.run_woken). Then there is no round.
                    next_due = housekeeping.run_due() if run or housekeeping.round_due() else housekeeping.next_due
                    delay = _IDLE_CHECK_S
                    if next_due is not None:
                        delay = min(delay, max(0.0, (next_due - core.clock.now_ms()) / 1000))
                    sleep.deadline = trio.current_time() + delay
                    run = False
                    await woken.wait()
            run = True  # the deadline came: a timer is due, or the idle check
    finally:
        if driven is not None:
            _stop_listening(driven, wake_from_clock)


def _fixed(broker: BrokerCore) -> Callable[[], BrokerCore]:
    return lambda: broker


def _stop_listening(broker: BrokerCore, listener: Callable[[int], None]) -> None:
    remove = getattr(broker.clock, "remove_listener", None)
    if remove is not None:
        remove(listener)
