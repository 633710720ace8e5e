"""TestClock: real time until frozen, jumps on advance (running or frozen), listeners told of every jump."""

from __future__ import annotations

import time

import pytest

from kemu.testing import TestClock


def test_runs_with_real_time_until_frozen() -> None:
    clock = TestClock()
    assert abs(clock.now_ms() - time.time_ns() // 1_000_000) < 1000
    clock.freeze()
    frozen = clock.now_ms(), clock.monotonic_ms()
    time.sleep(0.02)  # real time passing is what is under test here
    assert (clock.now_ms(), clock.monotonic_ms()) == frozen
    clock.resume()
    # The frozen spell never happened: the reading goes on from where it stopped.
    assert frozen[0] <= clock.now_ms() < frozen[0] + 1000


def test_advance_jumps_both_readings_and_tells_listeners() -> None:
    clock = TestClock(frozen=True, start_ms=1_000_000)
    heard: list[int] = []
    clock.add_listener(heard.append)
    before = clock.monotonic_ms()
    clock.advance(61)
    assert clock.now_ms() == 1_061_000 and clock.monotonic_ms() == before + 61_000
    assert heard == [1_061_000]
    clock.remove_listener(heard.append)
    clock.advance(0.5)
    assert clock.now_ms() == 1_061_500 and heard == [1_061_000]
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_advance_while_running_moves_real_time_forward() -> None:
    clock = TestClock()
    clock.advance(3600)
    assert clock.now_ms() - time.time_ns() // 1_000_000 >= 3_599_000
    assert not clock.frozen


def test_the_handles_clock_fires_what_fell_due_before_advance_returns() -> None:
    from kemu.testing import Broker
    from kemu.txn.state import TxnState
    from tests.testing.support import begin_on_coordinator

    with Broker(virtual_clock=True) as broker:
        broker.create_topic("t")

        begin_on_coordinator(broker, "slow", 10_000, [("t", 0)])
        broker.clock.advance(11)  # the clock itself, not the handle's advance()
        assert broker.call(lambda: broker.coordinators.txn.coordinator.txns["slow"].state) is TxnState.COMPLETE_ABORT
        broker.reset()
        # The reset broker's clock (a new one, made ahead of time) settles as the first did.
        assert broker.clock.frozen
        broker.create_topic("t")
        begin_on_coordinator(broker, "slow", 10_000, [("t", 0)])
        broker.clock.advance(11)
        assert broker.call(lambda: broker.coordinators.txn.coordinator.txns["slow"].state) is TxnState.COMPLETE_ABORT
