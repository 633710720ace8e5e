"""`Broker.reset()`: the broker emptied on the same port, the old core's connections closed and its files
deleted off the test's path, a fresh clock; and the handle's calls from inside other event loops."""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
from pathlib import Path

import pytest
import trio

from kemu.testing import Broker
from kemu.txn.state import TxnState
from tests.server.kafka_socket import KafkaSocket

API_VERSIONS = 18
METADATA = 3


def api_versions(port: int) -> int:
    with KafkaSocket(("127.0.0.1", port)) as conn:
        body = conn.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    return int(body["error_code"])


def open_transaction(broker: Broker, transactional_id: str) -> None:
    def begin() -> None:
        coordinator = broker.coordinators.txn.coordinator
        init = coordinator.init_producer_id(transactional_id, 60_000)
        coordinator.add_partitions(transactional_id, init.producer_id, init.producer_epoch, [("t", 0)])

    broker.call(begin)


def test_reset_empties_the_broker_on_the_same_port() -> None:
    with Broker() as broker:
        port, old_dir = broker.port, broker.data_dir
        broker.create_topic("t", partitions=2)
        broker.produce("t", "x")
        open_transaction(broker, "tx")
        assert broker.call(lambda: broker.coordinators.txn.coordinator.txns["tx"].state) is TxnState.ONGOING
        broker.reset()
        assert broker.port == port and broker.bootstrap_servers == f"127.0.0.1:{port}"
        assert broker.call(lambda: [topic.name for topic in broker.core.topics]) == []
        assert broker.call(lambda: "tx" in broker.coordinators.txn.coordinator.txns) is False
        assert broker.data_dir != old_dir
        assert api_versions(port) == 0
        # The same name again is a new topic, offsets from 0.
        broker.create_topic("t")
        assert broker.produce("t", "y") == 0
        assert [r.value for r in broker.records("t")] == [b"y"]
        with KafkaSocket(("127.0.0.1", port)) as conn:
            body = conn.request(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                               "include_topic_authorized_operations": False})
        assert [(b["host"], b["port"]) for b in body["brokers"]] == [("127.0.0.1", port)]
        assert [t["name"] for t in body["topics"]] == ["t"]


def test_reset_closes_the_connections_of_the_broker_as_it_was() -> None:
    with Broker() as broker:
        with KafkaSocket(("127.0.0.1", broker.port)) as old:
            assert old.request(API_VERSIONS, 3, {"client_software_name": "t",
                                                 "client_software_version": "1"})["error_code"] == 0
            broker.reset()
            assert old.closed_by_peer()
        assert api_versions(broker.port) == 0


def test_reset_deletes_the_old_data_off_the_tests_path_and_leaves_no_thread() -> None:
    threads = threading.active_count()
    with Broker() as broker:
        first = broker.data_dir
        broker.create_topic("t")
        broker.produce("t", "x")
        broker.reset()
        broker.reset()
        second_last = broker.data_dir
        broker.create_topic("u")
        broker.reset()
    assert not first.exists() and not second_last.exists() and not broker.data_dir.exists()
    assert threading.active_count() == threads


def test_no_directory_is_left_behind_not_even_by_a_refused_setting_or_a_failed_reset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the handle makes its directories
    with pytest.raises(Exception, match="num.partitions"):
        Broker(config={"num.partitions": "zero"})
    broker = Broker()
    broker.create_topic("t")
    broker.reset()
    broker.reset()
    broker._stop()  # as a crash leaves it: the broker's thread gone
    with pytest.raises(RuntimeError, match="not running"):
        broker.reset()
    broker.kill()
    broker.reset()
    broker.close()
    assert list(tmp_path.iterdir()) == []


def test_reset_empties_a_data_dir_the_test_gave_and_leaves_it(tmp_path: Path) -> None:
    given = tmp_path / "data"
    with Broker(data_dir=given) as broker:
        broker.create_topic("t")
        broker.produce("t", "x")
        broker.reset()
        assert broker.data_dir != given
        broker.create_topic("after")
    assert given.is_dir() and list(given.iterdir()) == []


def test_reset_after_restart_and_restart_after_reset() -> None:
    with Broker() as broker:
        broker.create_topic("t")
        broker.restart()
        broker.reset()
        broker.create_topic("u")
        broker.produce("u", "kept")
        broker.restart()
        assert [r.value for r in broker.records("u")] == [b"kept"]
        broker.kill()
        assert [r.value for r in broker.records("u")] == [b"kept"]
        assert broker.call(lambda: [topic.name for topic in broker.core.topics]) == ["u"]


def test_reset_puts_the_clock_back_on_real_time() -> None:
    with Broker() as broker:
        broker.advance(3600)
        assert broker.clock.now_ms() > time.time() * 1000 + 3_000_000
        broker.reset()
        assert not broker.clock.frozen
        assert abs(broker.clock.now_ms() - time.time() * 1000) < 5_000


def test_reset_of_a_virtual_clock_broker_starts_frozen_again_and_timers_still_fire() -> None:
    with Broker(virtual_clock=True) as broker:
        broker.advance(3600)
        broker.reset()
        assert broker.clock.frozen
        assert abs(broker.clock.now_ms() - time.time() * 1000) < 5_000
        broker.create_topic("t")
        open_transaction(broker, "slow")
        broker.advance(61)  # the coordinator's 60 s timeout, on the new core's clock
        assert broker.call(lambda: broker.coordinators.txn.coordinator.txns["slow"].state) is TxnState.COMPLETE_ABORT


def test_resets_back_to_back_each_empty_the_broker() -> None:
    with Broker() as broker:
        for round_ in range(20):
            broker.create_topic(f"t{round_}")
            broker.reset()
            assert broker.call(lambda: len(broker.core.topics)) == 0


# ---- the handle from inside other event loops ---------------------------------------------------------------


def test_the_handle_works_inside_a_trio_run_without_stalling_it() -> None:
    with Broker() as broker:
        async def main() -> float:
            longest = 0.0
            done = trio.Event()

            async def ticker() -> None:
                nonlocal longest
                last = trio.current_time()
                while not done.is_set():
                    await trio.sleep(0.001)
                    now = trio.current_time()
                    longest = max(longest, now - last)
                    last = now

            async with trio.open_nursery() as nursery:
                nursery.start_soon(ticker)
                await trio.sleep(0.01)
                for index in range(50):
                    broker.create_topic(f"t{index}")
                    broker.produce(f"t{index}", "x")
                    assert [r.value for r in broker.records(f"t{index}")] == [b"x"]
                    await trio.sleep(0)
                done.set()
            return longest

        longest = trio.run(main)
        # Each call holds the loop for well under a millisecond; a whole second would be a blocked loop.
        assert longest < 0.5


def test_the_handle_works_inside_asyncio_and_from_a_worker_thread() -> None:
    with Broker() as broker:
        async def main() -> list[bytes | None]:
            broker.create_topic("t")
            broker.produce("t", "direct")
            await asyncio.to_thread(broker.produce, "t", "from a thread")
            return [r.value for r in await asyncio.to_thread(broker.records, "t")]

        assert asyncio.run(main()) == [b"direct", b"from a thread"]


def test_a_call_on_a_stopped_broker_says_so() -> None:
    broker = Broker()
    broker.close()
    with pytest.raises(RuntimeError, match="not running"):
        broker.records("t")
