"""The pytest plugin: kemu brokers as fixtures. `pip install kemu` registers it (the `pytest11` entry point).

    def test_orders(kemu_broker):
        producer = Producer({"bootstrap.servers": kemu_broker.bootstrap_servers})

- `kemu_broker`: a broker of the test's own, closed when it ends. `@pytest.mark.kemu(config={...},
  virtual_clock=True)` sets it up: the keywords are those of `kemu.testing.Broker`. The session's
  `kemu_broker` brokers run, one after another, on one thread and Trio loop (a `BrokerLoop`), which a
  broker of each test's own would otherwise start and stop.
- `kemu_broker_session`: one broker for the whole session (of each xdist worker), emptied by `reset()`
  before every test that asks for it, on the same port throughout.
- `kemu_broker_factory`: `kemu_broker_factory(**settings)` makes brokers, as many as a test wants; all are
  closed when it ends.

Broker settings for every fixture of a suite: the ini key `kemu_config` (one `NAME=VALUE` a line) and the
option `--kemu-config NAME=VALUE` (repeatable, winning over the ini key); a test's own `config` wins over both.
A setting no broker knows is warned about (`kemu.testing.UnknownConfigWarning`), as Kafka logs it.

When a test that held a broker fails, its report gets a section per broker: what the broker served (its
transcript, where the handle keeps one) and what it holds.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from kemu.testing.broker import Broker, BrokerLoop

# The broker (and Trio, and the whole core) loads when a test first asks for a kemu fixture, not when pytest
# loads this plugin: every pytest run of every project with kemu installed loads it.

_USED: pytest.StashKey[list[Broker]] = pytest.StashKey()


class BrokerFactory(Protocol):
    def __call__(self, *, config: dict[str, str] | None = None, virtual_clock: bool = False,
                 data_dir: str | Path | None = None, host: str = "127.0.0.1", port: int = 0,
                 node_id: int = 1, brokers: int = 1, racks: Sequence[str | None] = ()) -> Broker: ...


_SUITE_SETTINGS: pytest.StashKey[dict[str, str]] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("kemu_config", type="linelist", default=[],
                  help="kemu: broker settings (NAME=VALUE, one a line) for every kemu fixture's broker")
    parser.getgroup("kemu").addoption(
        "--kemu-config", action="append", default=[], metavar="NAME=VALUE",
        help="a broker setting for every kemu fixture's broker (repeatable; wins over the kemu_config ini key)")


def _parse_settings(items: Sequence[str], source: str) -> dict[str, str]:
    settings: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise pytest.UsageError(f"{source} takes NAME=VALUE, got {item!r}")
        settings[name.strip()] = value.strip()
    return settings


def suite_settings(config: pytest.Config) -> dict[str, str]:
    """The suite's broker settings: the ini key's, then the command line's over them."""
    if _SUITE_SETTINGS not in config.stash:
        config.stash[_SUITE_SETTINGS] = {**_parse_settings(config.getini("kemu_config"), "the kemu_config ini key"),
                                         **_parse_settings(config.getoption("kemu_config"), "--kemu-config")}
    return config.stash[_SUITE_SETTINGS]


def _with_suite_settings(config: pytest.Config, settings: dict[str, Any]) -> dict[str, Any]:
    suite = suite_settings(config)
    if not suite:
        return settings
    return {**settings, "config": {**suite, **(settings.get("config") or {})}}


def pytest_configure(config: pytest.Config) -> None:
    suite_settings(config)  # a malformed one stops the run here, before any test
    config.addinivalue_line(
        "markers", "kemu(config=None, virtual_clock=False, ...): how the kemu_broker fixture makes this test's "
                   "broker (the keywords of kemu.testing.Broker)")


def _used_by(request: pytest.FixtureRequest, broker: Broker) -> None:
    used = request.node.stash.setdefault(_USED, [])
    if broker not in used:
        used.append(broker)


@pytest.fixture(scope="session")
def _kemu_loop() -> Iterator[BrokerLoop]:
    # The thread and Trio loop every test's kemu_broker runs in: each test still gets a broker (core, data
    # directory, listener) of its own, without paying for a thread and a loop of its own.
    from kemu.testing.broker import BrokerLoop

    with BrokerLoop() as loop:
        yield loop


@pytest.fixture
def kemu_broker(request: pytest.FixtureRequest, _kemu_loop: BrokerLoop) -> Iterator[Broker]:
    """A broker of this test's own, ready when the test starts and closed when it ends."""
    marker = request.node.get_closest_marker("kemu")
    settings: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    if marker is not None and marker.args:
        raise pytest.UsageError("@pytest.mark.kemu takes keywords only, e.g. kemu(virtual_clock=True)")
    from kemu.testing.broker import Broker

    with Broker(**_with_suite_settings(request.config, settings), loop=_kemu_loop) as broker:
        _used_by(request, broker)
        yield broker


@pytest.fixture(scope="session")
def _kemu_session_broker(pytestconfig: pytest.Config) -> Iterator[Broker]:
    from kemu.testing.broker import Broker

    with Broker(**_with_suite_settings(pytestconfig, {})) as broker:
        yield broker


@pytest.fixture
def kemu_broker_session(_kemu_session_broker: Broker, request: pytest.FixtureRequest) -> Broker:
    """The session's broker, emptied for this test (`reset()`): same port, nothing of earlier tests."""
    if request.node.get_closest_marker("kemu") is not None:
        # The marker would do nothing here: the session's broker was made once, for every test.
        raise pytest.UsageError("@pytest.mark.kemu sets up kemu_broker, not the shared kemu_broker_session: "
                                "ask for kemu_broker (or kemu_broker_factory) to get a broker with these settings")
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

    from kemu.testing.broker import Broker

    def make(**settings: Any) -> Broker:
        broker = Broker(**_with_suite_settings(request.config, settings))
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
    if report.when == "teardown" and _USED in item.stash:
        # The test is over: its brokers need not live as long as the session's items do (every test's core,
        # closed, with all it held, grew the heap that each of Python's full garbage collections walks).
        del item.stash[_USED]
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
