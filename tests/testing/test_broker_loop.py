"""Brokers run as tasks of a shared `BrokerLoop` (what the pytest plugin's `kemu_broker` brokers share): each
is still a broker of its own — core, data directory, port — that closes, restarts, is killed and stops dead at
a crash point as a broker on a thread of its own does, while the loop and its thread serve the others."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from compat_tests.polling import wait_for
from kemu.coordinators.crash_points import CrashPoint
from kemu.testing import Broker
from kemu.testing.broker import BrokerLoop
from kemu.testing.faults import Fault
from kemu.txn.state import TxnState
from kemu.wire.errors import ErrorCode
from tests.testing.test_faults import open_transaction, txn_state

pytest_plugins = ["pytester"]


@pytest.fixture
def loop() -> Iterator[BrokerLoop]:
    with BrokerLoop() as shared:
        yield shared


def refused(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_brokers_of_one_loop_share_its_thread_and_nothing_else(loop: BrokerLoop) -> None:
    # Compared by identity, not by count: a thread an earlier test left winding down may end meanwhile.
    before = set(threading.enumerate())

    def started() -> set[threading.Thread]:
        return {thread for thread in threading.enumerate() if thread not in before}

    with Broker(loop=loop) as first, Broker(loop=loop) as second:
        loop_thread = first.call(threading.current_thread)
        assert started() == {loop_thread}  # the loop's thread, started with the first broker
        assert second.call(threading.current_thread) is loop_thread is not threading.current_thread()
        assert first.port != second.port and first.data_dir != second.data_dir
        first.create_topic("orders")
        second.create_topic("orders")  # another broker: no TOPIC_ALREADY_EXISTS
        assert first.produce("orders", "a") == 0 and second.records("orders") == []
        first.close()
        assert refused(first.port) and not first.data_dir.exists()
        with pytest.raises(RuntimeError, match="not running"):
            first.call(lambda: None)
        second.produce("orders", "b")  # the loop serves on
        assert [r.value for r in second.records("orders")] == [b"b"]
    assert started() == {loop_thread}  # the loop outlives its brokers ...
    loop.close()
    assert not loop_thread.is_alive() and started() == set()  # ... until it is closed
    with Broker(loop=loop) as again:  # and starts again with the next
        again.create_topic("orders")


def test_restart_and_kill_in_a_loop_keep_data_and_port(loop: BrokerLoop) -> None:
    with Broker(loop=loop) as broker:
        broker.create_topic("t")
        broker.produce("t", "one")
        port = broker.port
        broker.restart()
        broker.produce("t", "two")
        broker.kill()
        assert broker.port == port
        assert [r.value for r in broker.records("t")] == [b"one", b"two"]


def test_a_crash_point_stops_one_broker_of_the_loop_dead_and_restart_recovers_it(loop: BrokerLoop) -> None:
    with Broker(loop=loop) as bystander, Broker(loop=loop) as broker:
        broker.create_topic("t", partitions=2)
        broker.faults.add(Fault(crash=CrashPoint.AFTER_PREPARE, transactional_id="tx"))
        pid, epoch = open_transaction(broker, "tx", "t", 2)
        assert broker.call(lambda: broker.coordinators.txn.coordinator.end_txn("tx", pid, epoch, commit=True)) \
            is ErrorCode.NONE
        wait_for(lambda: broker.crashed, what="the crash point", timeout=10.0)
        assert refused(broker.port)
        with pytest.raises(RuntimeError, match="not running"):
            broker.call(lambda: None)
        bystander.create_topic("t")  # the loop and its other broker serve on
        assert bystander.produce("t", "x") == 0

        broker.restart()
        assert not broker.crashed
        wait_for(lambda: broker.call(lambda: txn_state(broker, "tx")) is TxnState.COMPLETE_COMMIT,
                 what="recovery to complete the commit", timeout=10.0)


def test_a_broker_that_cannot_listen_leaves_the_loop_serving(loop: BrokerLoop) -> None:
    with Broker(loop=loop) as first:
        # The port is taken: as on a thread of its own, the handle returns not running, with what stopped it.
        with Broker(loop=loop, port=first.port) as taken:
            with pytest.raises(RuntimeError, match="not running") as failed:
                taken.create_topic("t")
            assert isinstance(failed.value.__cause__, ExceptionGroup)
            assert [type(e) for e in failed.value.__cause__.exceptions] == [OSError]
        with Broker(loop=loop) as second:
            second.create_topic("t")
        first.create_topic("t")


def test_kemu_broker_brokers_share_the_sessions_loop_which_ends_with_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import threading
        seen = []

        def test_one(kemu_broker):
            seen.append((kemu_broker.call(threading.get_ident), kemu_broker.port))

        def test_two(kemu_broker):
            thread, port = seen[0]
            assert kemu_broker.call(threading.get_ident) == thread and kemu_broker.port != port
    """)
    # This session's own loop (a kemu_broker earlier in the run) is not the inner session's.
    before = {t for t in threading.enumerate() if t.name == "kemu-brokers"}
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)
    left = [t for t in threading.enumerate() if t.name == "kemu-brokers" and t not in before]
    for thread in left:
        thread.join(10)
    assert not [t for t in left if t.is_alive()]
