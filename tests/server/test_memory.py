"""Memory given back after a crowd of connections has left (kemu.server.memory)."""

from __future__ import annotations

from kemu.server.memory import QUIET_S, TRIM_AFTER_CLOSED, ClosedConnections, give_back


def test_memory_is_given_back_once_a_crowd_has_left_and_things_are_quiet() -> None:
    given: list[int] = []
    crowd = ClosedConnections(give_back=lambda: given.append(crowd.open))
    for _ in range(2 * TRIM_AFTER_CLOSED):
        crowd.opened()
    for step in range(TRIM_AFTER_CLOSED + 10):
        crowd.closed(now=10.0 + step * 0.001)
        assert not crowd.settle(now=10.0 + step * 0.001)  # still closing: the crowd is leaving
    last = crowd.last_close
    assert not crowd.settle(now=last + QUIET_S / 2)
    assert crowd.settle(now=last + QUIET_S) and given == [TRIM_AFTER_CLOSED - 10]
    assert not crowd.settle(now=last + 10 * QUIET_S)  # once per crowd


def test_a_few_closed_or_most_still_open_keep_their_memory() -> None:
    given: list[None] = []
    crowd = ClosedConnections(give_back=lambda: given.append(None))
    for _ in range(4 * TRIM_AFTER_CLOSED):
        crowd.opened()
    for _ in range(TRIM_AFTER_CLOSED):  # a quarter gone: most are still open
        crowd.closed(now=1.0)
    assert not crowd.settle(now=100.0)
    small = ClosedConnections(give_back=lambda: given.append(None))
    for _ in range(TRIM_AFTER_CLOSED - 1):
        small.opened()
    for _ in range(TRIM_AFTER_CLOSED - 1):  # all gone, but too few to be worth a collection
        small.closed(now=1.0)
    assert not small.settle(now=100.0)
    assert given == []


def test_glibc_trim_is_found_where_the_c_library_is_glibc() -> None:
    import platform

    from kemu.server.memory import _malloc_trim

    assert (_malloc_trim() is not None) == (platform.libc_ver()[0] == "glibc")
    give_back()  # a full collection and the trim: neither may raise
