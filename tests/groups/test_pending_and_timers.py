"""The two small pieces the I/O shell drives: Pending answers and keyed timers."""

from __future__ import annotations

import pytest

from kemu.groups.pending import Pending
from kemu.groups.timers import Timers


def test_pending_runs_callbacks_once_with_the_result() -> None:
    pending: Pending[int] = Pending()
    seen: list[int] = []
    pending.add_done_callback(seen.append)
    assert not pending.done
    with pytest.raises(RuntimeError):
        pending.result()
    pending.set_result(7)
    assert pending.done and pending.result() == 7 and seen == [7]
    pending.add_done_callback(seen.append)  # late subscribers are called at once
    assert seen == [7, 7]
    with pytest.raises(RuntimeError):
        pending.set_result(8)


def test_timers_fire_in_deadline_order_and_rescheduling_replaces() -> None:
    timers = Timers()
    fired: list[str] = []
    timers.schedule("a", 100, lambda: fired.append("a"))
    timers.schedule("b", 50, lambda: fired.append("b"))
    timers.schedule("a", 200, lambda: fired.append("a2"))  # replaces the first "a"
    timers.schedule("c", 10, lambda: fired.append("c"))
    timers.cancel("c")
    assert timers.next_deadline() == 50
    assert timers.run_due(100) == 1 and fired == ["b"]
    assert timers.next_deadline() == 200
    assert timers.run_due(1000) == 1 and fired == ["b", "a2"]
    assert timers.next_deadline() is None and len(timers) == 0


def test_a_timer_callback_may_schedule_again() -> None:
    timers = Timers()
    fired: list[int] = []

    def tick() -> None:
        fired.append(len(fired))
        if len(fired) < 3:
            timers.schedule("t", 10 * (len(fired) + 1), tick)

    timers.schedule("t", 10, tick)
    timers.run_due(100)
    assert fired == [0, 1, 2]
