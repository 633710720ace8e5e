"""The injected clocks."""

from __future__ import annotations

import pytest

from kemu.clock import Clock, SystemClock, VirtualClock


def test_system_clock_reads_the_machine_clocks() -> None:
    clock = SystemClock()
    assert isinstance(clock, Clock)
    first, second = clock.monotonic_ms(), clock.monotonic_ms()
    assert second >= first
    assert clock.now_ms() > 1_600_000_000_000


def test_virtual_clock_moves_only_when_told() -> None:
    clock = VirtualClock(1000, monotonic_start_ms=5)
    assert isinstance(clock, Clock)
    assert (clock.now_ms(), clock.monotonic_ms()) == (1000, 5)
    clock.advance(250)
    assert (clock.now_ms(), clock.monotonic_ms()) == (1250, 255)
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_set_steps_the_wall_clock_and_keeps_monotonic_time_monotonic() -> None:
    clock = VirtualClock(10_000)
    clock.set(20_000)
    assert (clock.now_ms(), clock.monotonic_ms()) == (20_000, 10_000)
    clock.set(5_000)  # a backwards step of the wall clock
    assert (clock.now_ms(), clock.monotonic_ms()) == (5_000, 10_000)


def test_listeners_hear_every_move_and_can_unsubscribe_while_called() -> None:
    clock = VirtualClock(0)
    heard: list[int] = []

    def once(now: int) -> None:
        heard.append(now)
        clock.remove_listener(once)

    always: list[int] = []
    clock.add_listener(once)
    clock.add_listener(always.append)
    clock.advance(10)
    clock.set(50)
    assert heard == [10]
    assert always == [10, 50]
