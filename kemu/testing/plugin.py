"""The pytest plugin: kemu brokers as fixtures. `pip install kemu` registers it (the `pytest11` entry point).

    def test_orders(kemu_broker):
        producer = Producer({"bootstrap.servers": kemu_broker.bootstrap_servers})

- `kemu_broker`: a broker of the test's own, closed when it ends. `@pytest.mark.kemu(config={...},
  virtual_clock=True)` sets it up: the keywords are those of `kemu.testing.Broker`.
- `kemu_broker_session`: one broker for the whole session (of each xdist worker), emptied by `reset()`
  before every test that asks for it, on the same port throughout.
- `kemu_broker_factory`: `kemu_broker_factory(**settings)` makes brokers, as many as a test wants; all are
  closed when it ends.

When a test that held a broker fails, its report gets a section per broker: what the broker served (its
transcript, where the handle keeps one) and what it holds.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest

from kemu.testing.broker import Broker

_USED: pytest.StashKey[list[Broker]] = pytest.StashKey()


class BrokerFactory(Protocol):
    def __call__(self, *, config: dict[str, str] | None = None, virtual_clock: bool = False,
                 data_dir: str | Path | None = None, host: str = "127.0.0.1", port: int = 0,
                 node_id: int = 1, brokers: int = 1, racks: Sequence[str | None] = ()) -> Broker: ...


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "kemu(config=None, virtual_clock=False, ...): how the kemu_broker fixture makes this test's "
                   "broker (the keywords of kemu.testing.Broker)")


def _used_by(request: pytest.FixtureRequest, broker: Broker) -> None:
    used = request.node.stash.setdefault(_USED, [])
    if broker not in used:
        used.append(broker)


@pytest.fixture
def kemu_broker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    """A broker of this test's own, ready when the test starts and closed when it ends."""
    marker = request.node.get_closest_marker("kemu")
    settings: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    if marker is not None and marker.args:
        raise pytest.UsageError("@pytest.mark.kemu takes keywords only, e.g. kemu(virtual_clock=True)")
    with Broker(**settings) as broker:
        _used_by(request, broker)
        yield broker


@pytest.fixture(scope="session")
def _kemu_session_broker() -> Iterator[Broker]:
    with Broker() as broker:
        yield broker


@pytest.fixture
def kemu_broker_session(_kemu_session_broker: Broker, request: pytest.FixtureRequest) -> Broker:
    """The session's broker, emptied for this test (`reset()`): same port, nothing of earlier tests."""
    try:
        _kemu_session_broker.reset()
    except RuntimeError:
        # An earlier test left it stopped (a crash fault it never restarted from): bring it back on the same
        # port, so one test's crash does not fail every later one, then empty it.
        _kemu_session_broker.kill()
        _kemu_session_broker.reset()
    _used_by(request, _kemu_session_broker)
    return _kemu_session_broker


@pytest.fixture
def kemu_broker_factory(request: pytest.FixtureRequest) -> Iterator[BrokerFactory]:
    """Makes brokers with settings of the test's choosing; every one is closed when the test ends."""
    made: list[Broker] = []

    def make(**settings: Any) -> Broker:
        broker = Broker(**settings)
        made.append(broker)
        _used_by(request, broker)
        return broker

    try:
        yield make
    finally:
        failures: list[BaseException] = []
        for broker in reversed(made):
            try:
                broker.close()
            except Exception as exc:  # the others must still be closed
                failures.append(exc)
        if failures:
            raise failures[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed and report.when in ("setup", "call"):
        for broker in item.stash.get(_USED, []):
            report.sections.append((f"kemu broker {broker.bootstrap_servers}", broker_report(broker)))
    return report


def broker_report(broker: Broker) -> str:
    """What a failed test's report shows of a broker: what it served, if the handle keeps a transcript,
    then what it holds. Never raises: a broker that cannot answer says so instead."""
    parts: list[str] = []
    transcript = getattr(broker, "transcript", None)
    if transcript is not None:
        try:
            parts.append(transcript.render())
        except Exception as exc:
            parts.append(f"(the transcript could not be rendered: {exc!r})")
    try:
        parts.append(broker.summary())
    except Exception as exc:
        parts.append(f"(the broker could not be asked what it holds: {exc!r})")
    return "\n\n".join(part.rstrip("\n") for part in parts if part) + "\n"
