"""Handler tests run in-process (kemu/testing/harness.py: the wire codec both ways, no sockets); a test
marked `real_socket` gets a broker serving on a real socket on a background thread instead
(tests/server/broker_thread.py), with the same surface. Each API area keeps one or two of those."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kemu.broker.config import BrokerConfig
from kemu.testing.harness import InProcessBroker
from tests.handlers.harness import Broker, Connection, MakeBroker, broker_config
from tests.server.broker_thread import BrokerThread


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real_socket: the test's brokers serve on a real socket (BrokerThread)")


@pytest.fixture
def make_broker(request: pytest.FixtureRequest) -> MakeBroker:
    """`make_broker(config=None, **options)`: a broker, not yet started (use it as a context manager):
    in-process, or on a real socket for a `real_socket` test. The config defaults to harness.broker_config();
    without a data_dir in it, the broker keeps its logs in a temporary directory it removes on close (with a
    data dir under tmp_path, which pytest keeps and removes at exit three runs later, this directory's run
    took ~1.7x as long).
    Options are those both kinds take (`clock`, `handlers`), and for in-process brokers `trio_clock`."""
    real = request.node.get_closest_marker("real_socket") is not None

    def make(config: BrokerConfig | None = None, **options: Any) -> Broker:
        config = config or broker_config()
        return BrokerThread(config, **options) if real else InProcessBroker(config, **options)

    return make


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    with make_broker() as running:
        yield running


@pytest.fixture
def conn(broker: Broker) -> Iterator[Connection]:
    # A module that needs another broker (e.g. with group_wire.group_config) overrides `broker` only: this
    # connects to whichever broker the module's tests get.
    with broker.connect() as connection:
        yield connection
