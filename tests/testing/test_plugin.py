"""The pytest plugin, run the way a user's suite runs it (pytester, no conftest): found through the
`pytest11` entry point, its three fixtures and the marker, under xdist, and the section a failed test's
report gets."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    assert [e.value for e in entry_points(group="pytest11") if e.name == "kemu"] == ["kemu.testing.plugin"]


def test_kemu_broker_is_a_fresh_broker_per_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import socket
        ports = []

        def test_one(kemu_broker):
            kemu_broker.create_topic("orders")
            assert kemu_broker.produce("orders", "a") == 0
            ports.append(kemu_broker.port)

        def test_two(kemu_broker):
            kemu_broker.create_topic("orders")  # no TOPIC_ALREADY_EXISTS: another broker
            assert kemu_broker.records("orders") == []
            with socket.socket() as s:  # the first test's broker is gone
                assert s.connect_ex(("127.0.0.1", ports[0])) != 0
    """)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_the_kemu_marker_sets_up_kemu_broker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.kemu(config={"num.partitions": "3"}, virtual_clock=True)
        def test_marked(kemu_broker):
            assert kemu_broker.clock.frozen
            kemu_broker.create_topic("t", partitions=3)
            assert kemu_broker.core.config.num_partitions == 3

        def test_unmarked(kemu_broker):
            assert not kemu_broker.clock.frozen
            assert kemu_broker.core.config.num_partitions == 1
    """)
    # --strict-markers: the marker is registered.
    pytester.runpytest("-p", "no:randomly", "--strict-markers").assert_outcomes(passed=2)


def test_a_tests_broker_is_let_go_once_the_test_is_over(pytester: pytest.Pytester) -> None:
    # The plugin keeps a test's brokers for its failure report, not to the end of the run.
    pytester.makepyfile("""
        import gc
        import weakref

        seen = []

        def test_one(kemu_broker):
            seen.append((weakref.ref(kemu_broker), weakref.ref(kemu_broker.core)))

        def test_two():
            gc.collect()
            assert [(handle(), core()) for handle, core in seen] == [(None, None)]
    """)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_kemu_broker_session_is_one_broker_emptied_before_each_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        seen = []

        def test_one(kemu_broker_session):
            kemu_broker_session.create_topic("orders")
            kemu_broker_session.produce("orders", "a")
            seen.append(kemu_broker_session.bootstrap_servers)

        def test_two(kemu_broker_session):
            assert kemu_broker_session.bootstrap_servers == seen[0]
            assert kemu_broker_session.call(lambda: len(kemu_broker_session.core.topics)) == 0
            kemu_broker_session.create_topic("orders")
            assert kemu_broker_session.produce("orders", "b") == 0
    """)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_kemu_broker_session_comes_back_after_a_test_left_it_stopped(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        seen = []

        def test_stops_it(kemu_broker_session):
            seen.append(kemu_broker_session.port)
            kemu_broker_session._stop()  # as a crash fault leaves it: the broker's thread gone

        def test_next(kemu_broker_session):
            assert kemu_broker_session.port == seen[0]
            kemu_broker_session.create_topic("orders")
    """)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_kemu_broker_factory_makes_brokers_and_closes_them_all(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import socket
        made = []

        def test_two_brokers(kemu_broker_factory):
            first = kemu_broker_factory()
            second = kemu_broker_factory(config={"num.partitions": "2"}, virtual_clock=True)
            assert first.port != second.port and second.clock.frozen
            made.extend([first.port, second.port])

        def test_all_closed():
            for port in made:
                with socket.socket() as s:
                    assert s.connect_ex(("127.0.0.1", port)) != 0
    """)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_asyncio_and_trio_test_functions_use_the_handle(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import asyncio
        import trio

        def test_asyncio(kemu_broker):
            async def main():
                kemu_broker.create_topic("t")
                kemu_broker.produce("t", "a")
                await asyncio.sleep(0)
                return [r.value for r in kemu_broker.records("t")]
            assert asyncio.run(main()) == [b"a"]

        def test_trio(kemu_broker_session):
            async def main():
                kemu_broker_session.create_topic("t")
                kemu_broker_session.produce("t", "b")
                await trio.sleep(0)
                return [r.value for r in kemu_broker_session.records("t")]
            assert trio.run(main) == [b"b"]
    """)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_under_xdist_each_worker_has_its_own_brokers(pytester: pytest.Pytester, tmp_path: Path) -> None:
    out = tmp_path / "ports"
    out.mkdir()
    pytester.makepyfile(f"""
        import os, pathlib, time
        import pytest

        @pytest.mark.parametrize("n", range(8))
        def test_session(kemu_broker_session, n):
            kemu_broker_session.create_topic("shared-name")
            assert kemu_broker_session.produce("shared-name", str(n)) == 0
            worker = os.environ["PYTEST_XDIST_WORKER"]
            pathlib.Path({str(out)!r}, f"{{worker}}-{{n}}").write_text(str(kemu_broker_session.port))
            time.sleep(0.05)  # let both workers hold their brokers at once

        @pytest.mark.parametrize("n", range(4))
        def test_own(kemu_broker, n):
            kemu_broker.create_topic("shared-name")
    """)
    result = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:randomly")
    result.assert_outcomes(passed=12)
    ports: dict[str, set[str]] = {}
    for path in out.iterdir():
        ports.setdefault(path.name.split("-")[0], set()).add(path.read_text())
    assert len(ports) == 2, ports  # both workers ran session tests
    worker_ports = [next(iter(found)) for found in ports.values()]
    assert all(len(found) == 1 for found in ports.values())  # one session broker per worker, same port
    assert worker_ports[0] != worker_ports[1]


def test_a_failed_test_reports_what_its_brokers_hold(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        def test_fails(kemu_broker, kemu_broker_factory):
            kemu_broker.create_topic("orders", partitions=2)
            kemu_broker.produce("orders", "a")
            kemu_broker.produce("orders", "b")
            kemu_broker.produce("orders", "c", partition=1)
            kemu_broker_factory()
            assert False, "the test's own failure"

        def test_passes(kemu_broker):
            kemu_broker.create_topic("quiet")
    """)
    result = pytester.runpytest("-p", "no:randomly", "-rA")
    result.assert_outcomes(passed=1, failed=1)
    text = result.stdout.str()
    assert text.count("kemu broker 127.0.0.1:") >= 2  # a section for each of the failed test's brokers
    assert "orders: 2 partitions, end offsets 2, 1" in text
    assert "no topics" in text  # the factory's broker
    assert "quiet" not in text  # nothing for a test that passed


def test_the_report_section_leads_with_the_transcript_when_the_handle_has_one() -> None:
    from kemu.testing import Broker
    from kemu.testing.plugin import broker_report

    class Rendered:
        def render(self) -> str:
            return "-> Produce v9 orders[0]\n<- NONE"

    with Broker() as broker:
        broker.create_topic("orders")
        broker.transcript = Rendered()  # type: ignore[assignment]  # whatever the handle holds: only render()
        text = broker_report(broker)
    assert text.startswith("-> Produce v9 orders[0]\n<- NONE\n\nkemu broker at 127.0.0.1:")
    assert "orders: 1 partition, end offsets 0" in text


def test_the_report_section_of_a_broker_that_cannot_answer_says_so() -> None:
    from kemu.testing import Broker
    from kemu.testing.plugin import broker_report

    broker = Broker()
    broker.close()
    broker.transcript = None  # type: ignore[assignment]
    assert "could not be asked what it holds" in broker_report(broker)


def test_the_marker_is_listed(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    assert any(line.startswith("@pytest.mark.kemu(") for line in result.stdout.lines)


def test_loading_the_plugins_loads_no_broker() -> None:
    # Every pytest run of a project with kemu installed loads both plugins; the broker, Trio and the core load
    # only when a test asks for a kemu fixture (benchmarks/pytest_plugin.py measures what loading costs).
    import subprocess
    import sys

    script = ("import sys, pytest, kemu.testing.plugin, kemu.spark.plugin\n"
              "heavy = sorted(m for m in sys.modules if m == 'trio' or m.startswith(('kemu.testing.broker', "
              "'kemu.broker', 'kemu.server', 'pyspark', 'confluent_kafka')))\n"
              "print(' '.join(heavy))\n")
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert completed.stdout.strip() == ""
