"""A kemu broker served in-process on a background thread, for tests that talk to it over real sockets.

The broker's Trio loop runs in its own thread; tests reach the core through `call`, which runs a function
on that loop (the core is only ever touched from the Trio thread). tests/handlers/inprocess.py has the
same surface without the sockets.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar

import trio
import trio.from_thread
import trio.lowlevel

from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.clock import Clock, SystemClock
from kemu.coordinators import Coordinators
from kemu.handlers import Handler
from kemu.server import serve
from tests.server.kafka_socket import KafkaSocket

T = TypeVar("T")


class BrokerHarness(ABC):
    """What both test harnesses share (this one, on a real socket, and tests/handlers/inprocess.py's, with
    none): a broker core and its coordinators on a thread of their own, started by `with` and closed after."""

    config: BrokerConfig
    broker: BrokerCore
    port: int
    _thread: threading.Thread
    _ready: threading.Event
    _error: BaseException | None

    def __enter__(self) -> Self:
        self._thread.start()
        if not self._ready.wait(timeout=30) or self._error is not None:
            raise RuntimeError("broker did not start") from self._error
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.stop()
        finally:
            self.broker.close()

    @abstractmethod
    def stop(self) -> None:
        """Stop the harness's own loop and thread."""

    @property
    def clock(self) -> Clock:
        return self.broker.clock

    @property
    def address(self) -> tuple[str, int]:
        """The address the broker advertises (the in-process harness listens on none)."""
        return self.config.host, self.port

    @property
    def bootstrap(self) -> str:
        return f"{self.config.host}:{self.port}"


class BrokerThread(BrokerHarness):
    def __init__(self, config: BrokerConfig | None = None, handlers: Mapping[int, Handler] | None = None, *,
                 clock: Clock | None = None) -> None:
        self.config = config or BrokerConfig(port=0)
        self.broker = BrokerCore(self.config, clock or SystemClock())
        self.coordinators = Coordinators(self.broker)
        self.handlers = handlers
        self.port = 0
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kemu-broker", daemon=True)

    def connect(self, client_id: str | None = "kemu-tests") -> KafkaSocket:
        return KafkaSocket(self.address, client_id)

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the broker's Trio thread and return its result."""
        assert self._token is not None
        return trio.from_thread.run_sync(fn, *args, trio_token=self._token)

    def stop(self) -> None:
        if self._token is not None and self._scope is not None and self._thread.is_alive():
            scope = self._scope
            self._token.run_sync_soon(scope.cancel)
        self._thread.join(timeout=30)
        if self._thread.is_alive():
            raise RuntimeError("broker did not shut down")
        if self._error is not None:
            raise RuntimeError("broker failed") from self._error

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # reported to the test thread
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            self._scope = scope
            async with trio.open_nursery() as nursery:
                self.port = await nursery.start(lambda task_status: serve(
                    self.broker, self.config.host, self.config.port, coordinators=self.coordinators,
                    handlers=self.handlers, task_status=task_status))
                self._ready.set()
