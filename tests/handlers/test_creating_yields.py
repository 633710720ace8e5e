"""A big CreateTopics is planned a slice at a time (kemu.admin.topics.TopicPlan), with the event loop let go
between slices: other tasks (other connections' requests) run while 2,000 topics are checked and planned,
instead of waiting for the whole plan."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from kemu.admin.topics import NewTopic, TopicPlan, plan_topics
from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.clock import VirtualClock
from kemu.handlers import _pacing
from kemu.handlers._creating import create


def topics(count: int) -> list[NewTopic]:
    return [NewTopic(f"t-{n}", 1, 1, [], []) for n in range(count)]


def test_other_tasks_run_between_the_slices_of_a_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_pacing, "BUDGET_S", 0.0)  # every step yields, however quick this machine is
    broker = BrokerCore(BrokerConfig(data_dir=str(tmp_path)), VirtualClock())
    ticks = 0
    seen_at_steps: list[int] = []
    names: list[str] = []

    class Watched(TopicPlan):
        def step(self) -> bool:
            seen_at_steps.append(ticks)
            return super().step()

    async def main() -> list[object]:
        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await trio.lowlevel.checkpoint()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ticker)
            outcomes = await create(broker, lambda: Watched(broker, topics(2000)))
            nursery.cancel_scope.cancel()
        names.extend(sorted(t.name for t in broker.topics))
        return list(outcomes)

    try:
        outcomes = trio.run(main)
    finally:
        broker.close()  # its 2,000 logs' files
    assert len(outcomes) == 2000 and names == sorted(f"t-{n}" for n in range(2000))
    assert len(seen_at_steps) == 2000 // TopicPlan.SLICE
    # The ticker ran between the slices (Trio may order a batch of runnable tasks either way, so not between
    # every two): planned in one go, it would have seen no tick at all.
    assert seen_at_steps[-1] - seen_at_steps[0] >= len(seen_at_steps) // 2, seen_at_steps


def test_a_plan_in_slices_answers_as_one_plan(tmp_path: Path) -> None:
    wanted = [*topics(450), NewTopic("t-3", 1, 1, [], []), NewTopic("bad name!", 1, 1, [], [])]
    one = plan_topics(BrokerCore(BrokerConfig(data_dir=str(tmp_path / "a")), VirtualClock()), wanted, True)[0]
    sliced = TopicPlan(BrokerCore(BrokerConfig(data_dir=str(tmp_path / "b")), VirtualClock()), wanted, True)
    while not sliced.step():
        pass
    assert [(o.name, o.error, o.message) for o in sliced.result()[0]] == [(o.name, o.error, o.message) for o in one]
