"""Housekeeping: ticks run when due, `wake` runs one at once, and `schedule` wakes the server's housekeeper
only when it moves a deadline earlier than the housekeeper means to look anyway; the housekeeper goes round
only when there is something to do."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing

from kemu.broker.broker import BrokerCore
from kemu.broker.broker_configs import apply_properties
from kemu.broker.config import BrokerConfig
from kemu.broker.housekeeping import Housekeeping
from kemu.clock import VirtualClock
from kemu.server.housekeeper import run_housekeeper


def make() -> tuple[VirtualClock, Housekeeping, list[str], list[int]]:
    clock = VirtualClock(1_000)
    housekeeping = Housekeeping(clock)
    ran: list[str] = []
    wakes: list[int] = []
    housekeeping.set_waker(lambda: wakes.append(clock.now_ms()))
    return clock, housekeeping, ran, wakes


def test_schedule_wakes_only_for_an_earlier_deadline() -> None:
    clock, housekeeping, ran, wakes = make()
    housekeeping.add("slow", lambda now: ran.append("slow") or now + 10_000)
    housekeeping.add("on-demand", lambda now: ran.append("on-demand") or None)
    wakes.clear()
    assert housekeeping.run_due() == 11_000 and ran == ["slow", "on-demand"]
    housekeeping.schedule("on-demand", 20_000)  # later than the housekeeper looks anyway
    assert wakes == []
    housekeeping.schedule("on-demand", 5_000)  # earlier: it must be told
    assert wakes == [1_000]
    housekeeping.schedule("on-demand", 7_000)  # already due earlier: nothing changes
    assert wakes == [1_000]
    ran.clear()
    clock.advance(3_999)
    assert housekeeping.run_due() == 5_000 and ran == []
    clock.advance(1)
    assert housekeeping.run_due() == 11_000 and ran == ["on-demand"]


def test_schedule_from_inside_a_tick_is_taken_by_that_round() -> None:
    clock, housekeeping, ran, wakes = make()
    housekeeping.add("later", lambda now: ran.append("later") or None)

    def first(now: int) -> None:
        ran.append("first")
        housekeeping.schedule("later", now + 50)

    housekeeping.add("first", first)
    wakes.clear()
    # "later" runs before "first" in the round, so it is not due yet; the round's answer includes it.
    assert housekeeping.run_due() == 1_050 and wakes == []
    ran.clear()
    clock.advance(50)
    assert housekeeping.run_due() is None and ran == ["later"]


def test_wake_runs_a_tick_at_once() -> None:
    clock, housekeeping, ran, wakes = make()
    housekeeping.add("t", lambda now: ran.append("t") or now + 60_000)
    housekeeping.run_due()
    ran.clear()
    wakes.clear()
    housekeeping.wake("t")
    assert wakes == [1_000]
    assert housekeeping.run_due() == 61_000 and ran == ["t"]


def test_run_woken_runs_only_what_a_wake_asked_for() -> None:
    clock, housekeeping, ran, wakes = make()
    housekeeping.add("t", lambda now: ran.append("t") or now + 60_000)
    housekeeping.run_due()
    ran.clear()
    housekeeping.run_woken()  # nothing asked: nothing runs, even though the server may call it often
    assert ran == []
    housekeeping.wake("t")
    housekeeping.run_woken()
    assert ran == ["t"]
    housekeeping.run_woken()  # done once
    assert ran == ["t"]


def test_round_due_says_whether_a_round_has_anything_to_do() -> None:
    clock, housekeeping, ran, wakes = make()
    housekeeping.add("t", lambda now: ran.append("t") or now + 60_000)
    assert housekeeping.round_due()  # added: its first run is now
    housekeeping.run_due()
    assert not housekeeping.round_due() and housekeeping.next_due == 61_000
    housekeeping.wake("t")
    assert housekeeping.round_due()
    housekeeping.run_woken()  # a connection ran it: nothing is left for the housekeeper
    assert not housekeeping.round_due()
    housekeeping.schedule("t", 2_000)
    assert not housekeeping.round_due() and housekeeping.next_due == 2_000
    clock.advance(1_000)
    assert housekeeping.round_due()


def test_the_housekeeper_runs_no_round_for_work_a_connection_already_ran() -> None:
    # EndTxn wakes the marker writer, and its connection runs it right after the answer (run_woken); the
    # housekeeper task, woken too, must not go round again for nothing. A wake-up nobody served still runs.
    rounds: list[str] = []

    async def main() -> None:
        broker = BrokerCore(BrokerConfig(port=0), VirtualClock(1_000))
        housekeeping = broker.housekeeping
        async with trio.open_nursery() as nursery:
            await nursery.start(run_housekeeper, broker)
            housekeeping.add("markers", lambda now: rounds.append("markers") or None)
            await trio.testing.wait_all_tasks_blocked()
            rounds.clear()
            original_run_due = housekeeping.run_due

            def counted() -> int | None:
                rounds.append("round")
                return original_run_due()

            housekeeping.run_due = counted  # type: ignore[method-assign]
            housekeeping.wake("markers")
            housekeeping.run_woken()  # what the connection does after sending the answer
            await trio.testing.wait_all_tasks_blocked()
            assert rounds == ["round", "markers"]
            rounds.clear()
            housekeeping.wake("markers")  # nobody runs it inline: the housekeeper does
            await trio.testing.wait_all_tasks_blocked()
            assert rounds == ["round", "markers"]
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_the_cleaner_rests_log_cleaner_backoff_ms_when_no_log_is_due(tmp_path: Path) -> None:
    config = BrokerConfig(data_dir=str(tmp_path))
    assert apply_properties(config, {"log.cleaner.backoff.ms": "250"}) == []
    broker = BrokerCore(config, VirtualClock(1_000))
    try:
        assert broker._run_cleaner(1_000) == 1_250
        broker.config.log_cleaner_backoff_ms = BrokerConfig().log_cleaner_backoff_ms
        assert broker._run_cleaner(2_000) == 17_000  # Kafka's default: 15 s
    finally:
        broker.close()
