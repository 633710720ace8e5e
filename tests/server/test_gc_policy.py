"""The server process's garbage-collection policy (kemu.server.gc_policy): a full collection's survivors are
frozen out of the next one's walk, a frozen cycle that becomes garbage is collected by the thaw, and the idle
sweep thaws only once every connection is quiet."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
import trio
import trio.testing

from kemu.server import limits as server_limits
from kemu.server.gc_policy import QUIET_S, GcPolicy
from kemu.server.limits import ServerLimits


class Node:
    """An object the cyclic collector tracks, in a cycle with itself."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def policy() -> Iterator[GcPolicy]:
    made = GcPolicy()
    made.install()
    try:
        yield made
    finally:
        made.uninstall()
        gc.unfreeze()  # this process's objects go back to being collected as before


def test_a_full_collections_survivors_are_frozen_out_of_the_next_walk(policy: GcPolicy) -> None:
    kept = Node()
    gc.collect()
    assert policy.froze
    assert not any(o is kept for o in gc.get_objects())  # no generation holds it: the walks skip it
    assert gc.get_freeze_count() > 0


def test_a_young_collection_freezes_nothing(policy: GcPolicy) -> None:
    gc.collect(0)
    gc.collect(1)
    assert not policy.froze


def test_a_frozen_cycle_that_becomes_garbage_waits_for_the_thaw(policy: GcPolicy) -> None:
    cycle = Node()
    alive = weakref.ref(cycle)
    gc.collect()  # frozen now
    del cycle
    gc.collect()
    assert alive() is not None  # frozen: no collection sees it
    assert not policy.settle(quiet=False)  # a client waiting: no thaw
    assert alive() is not None
    assert policy.settle(quiet=True) and alive() is None
    assert policy.thaws == 1
    assert not policy.settle(quiet=True)  # nothing frozen since: once per burst of work


def test_an_object_frozen_is_still_freed_by_reference_counting(policy: GcPolicy) -> None:
    class Plain:
        pass

    plain = Plain()
    alive = weakref.ref(plain)
    gc.collect()
    del plain
    assert alive() is None


class Quiet:
    """A connection that was quiet for `quiet` seconds at any time (0: a response is owed)."""

    def __init__(self, quiet: float) -> None:
        self.quiet = quiet

    def expire_if_idle(self, now: float, idle_s: float) -> None:
        pass

    def quiet_for(self, now: float) -> float:
        return self.quiet


class Settles:
    pending = True  # something frozen since the last thaw: the sweep asks whether the server is quiet

    def __init__(self) -> None:
        self.calls: list[bool] = []

    def settle(self, quiet: bool) -> bool:
        self.calls.append(quiet)
        return False


def test_the_idle_sweep_thaws_only_once_every_connection_is_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    settles = Settles()
    monkeypatch.setattr(server_limits, "POLICY", settles)
    limits = ServerLimits(max_connections=10, max_connections_per_ip=10, overrides={}, queued_max_requests=10,
                          idle_ms=600_000)
    busy, quiet = Quiet(0.0), Quiet(QUIET_S)

    async def main() -> None:
        # Virtual time: a sweep that never settles fails here rather than hanging the test.
        with trio.fail_after(60 * QUIET_S):
            await watch()

    async def watch() -> None:
        async with trio.open_nursery() as nursery:
            limits.live.update({busy, quiet})
            nursery.start_soon(limits.expire_idle)
            while not settles.calls:
                await trio.sleep(0.5)
            assert settles.calls == [False]  # one connection still owes a response
            limits.live.discard(busy)
            while len(settles.calls) < 2:
                await trio.sleep(0.5)
            assert settles.calls[-1] is True
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_full_collection_comes_sooner_while_installed_and_as_before_after() -> None:
    from kemu.server.gc_policy import FULL_EVERY

    before = gc.get_threshold()
    made = GcPolicy()
    made.install()
    try:
        assert gc.get_threshold() == (before[0], before[1], FULL_EVERY)
    finally:
        made.uninstall()
        gc.unfreeze()
    assert gc.get_threshold() == before
