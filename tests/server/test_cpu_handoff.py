"""CpuHandoff: yield after answers, stop for a while after a yield that came back late."""

from __future__ import annotations

import os

import pytest

from kemu.server.cpu_handoff import LATE_S, QUIET_S, CpuHandoff


class _Machine:
    """A clock and a sched_yield that takes as long as the test says."""

    def __init__(self) -> None:
        self.now = 100.0
        self.yields = 0
        self.next_yield_takes = 0.0

    def clock(self) -> float:
        return self.now

    def sched_yield(self) -> None:
        self.yields += 1
        self.now += self.next_yield_takes


def handoff_on(machine: _Machine, monkeypatch: pytest.MonkeyPatch) -> CpuHandoff:
    monkeypatch.setattr(os, "sched_yield", machine.sched_yield)
    return CpuHandoff(machine.clock)


def test_yields_after_every_answer_while_yields_come_back_quickly(monkeypatch: pytest.MonkeyPatch) -> None:
    machine = _Machine()
    handoff = handoff_on(machine, monkeypatch)
    machine.next_yield_takes = LATE_S / 2  # the woken client ran, then kemu again
    for _ in range(5):
        handoff.after_answer()
        machine.now += 0.001
    assert machine.yields == 5


def test_a_late_yield_stops_yielding_for_the_quiet_period_then_it_tries_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    machine = _Machine()
    handoff = handoff_on(machine, monkeypatch)
    machine.next_yield_takes = 0.003  # the CPU was busy with others
    handoff.after_answer()
    assert machine.yields == 1
    machine.next_yield_takes = 0.0
    late_returned = machine.now
    machine.now = late_returned + QUIET_S - 0.001
    handoff.after_answer()
    assert machine.yields == 1  # still quiet
    machine.now = late_returned + QUIET_S
    handoff.after_answer()
    assert machine.yields == 2  # tried again, came back quickly
    handoff.after_answer()
    assert machine.yields == 3
