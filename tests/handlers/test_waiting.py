"""LogWatch's waits and the one deadline heap behind them, on Trio's mock clock (no broker, no sockets)."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from kemu.handlers import _waiting
from kemu.handlers._waiting import LogWatch
from kemu.log import LogEvent


class FakeLog:
    """What LogWatch uses of a PartitionLog: its listeners."""

    def __init__(self) -> None:
        self.listeners: list[Any] = []

    def add_listener(self, listener: Any) -> None:
        self.listeners.append(listener)

    def remove_listener(self, listener: Any) -> None:
        self.listeners.remove(listener)

    def tell(self, event: LogEvent = LogEvent.APPENDED) -> None:
        for listener in list(self.listeners):
            listener(self, event)


def run(test: Any) -> None:
    trio.run(test, clock=trio.testing.MockClock(autojump_threshold=0))


def heap() -> list[Any]:
    return _waiting._deadlines()._heap


def test_a_wait_nothing_changes_ends_exactly_at_its_deadline() -> None:
    async def main() -> None:
        log = FakeLog()
        with LogWatch([log]) as watch:  # type: ignore[list-item]
            assert await watch.wait_until(trio.current_time() + 0.3) is False
            assert trio.current_time() == 0.3
        assert log.listeners == []

    run(main)


def test_a_change_wakes_the_wait_and_its_deadline_wakes_nothing_later() -> None:
    async def main() -> None:
        log = FakeLog()
        woken_at: list[float] = []
        with LogWatch([log]) as watch:  # type: ignore[list-item]
            async with trio.open_nursery() as nursery:
                async def waiter() -> None:
                    assert await watch.wait_until(10.0) is True
                    woken_at.append(trio.current_time())
                    # The first wait's deadline passes during this one; only this one's own ends it.
                    assert await watch.wait_until(30.0) is False
                    woken_at.append(trio.current_time())

                nursery.start_soon(waiter)
                await trio.sleep(1)
                log.tell()
        assert woken_at == [1.0, 30.0]
        assert _waiting._deadlines().live == 0

    run(main)


def test_a_roll_does_not_wake_a_wait() -> None:
    async def main() -> None:
        log = FakeLog()
        with LogWatch([log]) as watch:  # type: ignore[list-item]
            log.tell(LogEvent.ROLLED)
            assert await watch.wait_until(5.0) is False
        assert trio.current_time() == 5.0

    run(main)


def test_an_earlier_deadline_added_later_is_kept() -> None:
    async def main() -> None:
        ended: dict[str, float] = {}

        async def wait(name: str, deadline: float) -> None:
            with LogWatch([FakeLog()]) as watch:  # type: ignore[list-item]
                assert await watch.wait_until(deadline) is False
            ended[name] = trio.current_time()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait, "late", 100.0)
            await trio.sleep(1)
            nursery.start_soon(wait, "early", 2.0)
        assert ended == {"early": 2.0, "late": 100.0}

    run(main)


def test_a_deadline_already_passed_ends_the_wait_at_once_even_after_a_change() -> None:
    async def main() -> None:
        log = FakeLog()
        await trio.sleep(5)
        with LogWatch([log]) as watch:  # type: ignore[list-item]
            log.tell()
            assert await watch.wait_until(4.0) is False
        assert trio.current_time() == 5.0

    run(main)


def test_a_cancelled_wait_leaves_no_live_entry() -> None:
    async def main() -> None:
        with trio.move_on_after(1):
            with LogWatch([FakeLog()]) as watch:  # type: ignore[list-item]
                await watch.wait_until(1000.0)
        assert trio.current_time() == 1.0
        assert _waiting._deadlines().live == 0

    run(main)


def test_woken_waits_with_far_deadlines_do_not_pile_up() -> None:
    """A consumer with a long fetch.wait.max.ms, woken by every record: the settled entries are dropped."""
    async def main() -> None:
        log = FakeLog()
        with LogWatch([log]) as watch:  # type: ignore[list-item]
            async with trio.open_nursery() as nursery:
                async def waiter() -> None:
                    for _ in range(2000):
                        assert await watch.wait_until(trio.current_time() + 3600.0) is True

                nursery.start_soon(waiter)
                for _ in range(2000):
                    await trio.sleep(0.001)
                    log.tell()
                    assert len(heap()) <= 64 + 2 * 1 + 1
        assert _waiting._deadlines().live == 0

    run(main)
