"""The wire harness: a broker core for tests that speak the Kafka protocol to it request by request, on a loop
of its own (a `BrokerLoop`, the thread and Trio loop the handle's shared brokers run on).

Unlike the handle (`kemu.testing.Broker`, settings by name, a clock of its own), it takes a `BrokerConfig`, any
`kemu.clock.Clock`, a table of handlers to serve instead of kemu's, and a Trio clock for its loop: what the
tests of the server and of the handlers need. Two kinds:

- `InProcessBroker` listens on no socket: its connections (`connect()`) take requests as the bytes a client
  sends and give back the bytes the broker writes, and nothing crosses the kernel. A request is admitted and
  decoded as the server does (`kemu.server.admission.admit_whole`), run by `kemu.server.dispatch.dispatch` (the
  connection's own handler call, ApiError / failure → error response or close, response encoding), its turn
  at the core and its place in the answers kept by `kemu.server.request_order` as the server's connection
  keeps them. What is left to the real-socket tests is framing, the socket itself and the streams.
  `send` returns once the request has had its turn at the core (it finished, or stepped aside to wait):
  what a test does next happens after the broker has seen it, with no polling.
- `SocketBroker` serves the broker on real sockets (`kemu.server.serve`), for a client of the test's own.

In both, the core, its coordinators and the housekeeper (the timers that write transaction markers and fire
group timeouts) live on the loop, as on the real server: a long-polling Fetch or a JoinGroup waiting for its
rebalance waits there while the test goes on, and the core is only touched from that loop (`call`).
"""

from __future__ import annotations

import itertools
import threading
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from types import TracebackType
from typing import Any, Self, TypeVar

import trio
import trio.from_thread
import trio.lowlevel

from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.clock import Clock, SystemClock
from kemu.coordinators import Coordinators
from kemu.handlers import Handler, all_handlers
from kemu.handlers.context import ClientInfo, RequestContext
from kemu.server import serve
from kemu.server.admission import Answer, Dispatch, Refuse, admit_whole
from kemu.server.connection import MAX_BUFFERED_RESPONSE_BYTES, MAX_PENDING
from kemu.server.dispatch import Reply, dispatch
from kemu.server.housekeeper import run_housekeeper
from kemu.server.request_order import RequestOrder, Slot
from kemu.testing.broker import BrokerLoop
from kemu.wire import codec
from kemu.wire.buffers import joined

T = TypeVar("T")

TIMEOUT_S = 10.0  # as a test's socket timeout: a response that never comes fails the test instead of hanging it
_START_TIMEOUT_S = 30.0
# No listener is bound; an in-process broker advertises this port (Metadata, FindCoordinator, `listeners`)
# as if it were.
ADVERTISED_PORT = 9092
_client_ports = itertools.count(40000)


class Harness(ABC):
    """A broker core and its coordinators on a loop of their own, started by `with` and closed after."""

    def __init__(self, config: BrokerConfig | None, handlers: Mapping[int, Handler] | None, *,
                 clock: Clock | None, trio_clock: trio.abc.Clock | None, name: str) -> None:
        self.config = config or BrokerConfig(port=0)
        self.broker = BrokerCore(self.config, clock or SystemClock())
        self.coordinators = Coordinators(self.broker)
        self.handlers = handlers
        self.port = 0
        self._loop = BrokerLoop(name, trio_clock)
        self._ready = threading.Event()
        self._done = threading.Event()  # set once the broker's task has ended
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._error: BaseException | None = None

    def __enter__(self) -> Self:
        self._loop.start_soon(self._main)
        if not self._ready.wait(_START_TIMEOUT_S) or self._error is not None:
            raise RuntimeError("broker did not start") from self._error
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.stop()
        finally:
            self.broker.close()

    @property
    def clock(self) -> Clock:
        return self.broker.clock

    @property
    def address(self) -> tuple[str, int]:
        """The address the broker advertises (an in-process broker listens on none)."""
        return self.config.host, self.port

    @property
    def bootstrap(self) -> str:
        return f"{self.config.host}:{self.port}"

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the broker's loop and return its result."""
        return trio.from_thread.run_sync(fn, *args, trio_token=self._live_token())

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run the async `fn(*args)` on the broker's loop and return its result. Past TIMEOUT_S of real time
        (whatever the loop's clock says: it may be a MockClock) it is cancelled and TimeoutError raised, as a
        socket timeout fails a test instead of hanging it."""
        token = self._live_token()
        finished = threading.Event()
        scope = trio.CancelScope()
        result: list[T] = []
        failure: list[BaseException] = []

        async def run_it() -> None:
            try:
                with scope:
                    result.append(await fn(*args))
            except BaseException as exc:  # the test's thread raises it
                failure.append(exc)
            finally:
                finished.set()

        def start() -> None:
            assert self._nursery is not None
            self._nursery.start_soon(run_it)

        token.run_sync_soon(start)
        if not finished.wait(TIMEOUT_S):
            token.run_sync_soon(scope.cancel)
            finished.wait(TIMEOUT_S)
            raise TimeoutError(f"{getattr(fn, '__name__', fn)} did not finish within {TIMEOUT_S} s")
        if failure:
            raise failure[0]
        if not result:
            raise RuntimeError("the broker stopped first")
        return result[0]

    def stop(self) -> None:
        """End the broker's task and its loop; raises what took the broker down, if anything did."""
        token, nursery = self._token, self._nursery
        if token is not None and nursery is not None and not self._done.is_set():
            try:
                token.run_sync_soon(nursery.cancel_scope.cancel)
            except trio.RunFinishedError:
                pass
        if self._token is not None and not self._done.wait(_START_TIMEOUT_S):
            raise RuntimeError("broker did not shut down")
        self._loop.close()
        if self._error is not None:
            raise RuntimeError("broker failed") from self._error

    def _live_token(self) -> trio.lowlevel.TrioToken:
        if self._token is None or self._error is not None or self._done.is_set():
            raise RuntimeError("the broker is not running") from self._error
        return self._token

    async def _main(self) -> None:
        try:
            self._token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                await self._serve(nursery)
                self._ready.set()
                await trio.sleep_forever()
        except BaseException as exc:  # reported to the test's thread: nothing may escape into the loop
            self._error = exc
        finally:
            self._done.set()
            self._ready.set()

    @abstractmethod
    async def _serve(self, nursery: trio.Nursery) -> None:
        """Start serving the broker in `nursery` (its listeners, or only its housekeeper)."""


class SocketBroker(Harness):
    """The broker served on real sockets (`config`'s listeners; port 0: an ephemeral one, `port` once started)."""

    def __init__(self, config: BrokerConfig | None = None, handlers: Mapping[int, Handler] | None = None, *,
                 clock: Clock | None = None, trio_clock: trio.abc.Clock | None = None) -> None:
        super().__init__(config, handlers, clock=clock, trio_clock=trio_clock, name="kemu-broker")

    async def _serve(self, nursery: trio.Nursery) -> None:
        self.port = await nursery.start(partial(serve, self.broker, self.config.host, self.config.port,
                                                coordinators=self.coordinators, handlers=self.handlers))


class InProcessBroker(Harness):
    """The broker with no socket (see the module's docstring); `connect()` opens an `InProcessConnection`."""

    def __init__(self, config: BrokerConfig | None = None, handlers: Mapping[int, Handler] | None = None, *,
                 clock: Clock | None = None, trio_clock: trio.abc.Clock | None = None) -> None:
        """The config's data_dir, or a temporary directory the broker removes on close; `clock`: the broker's
        (default the system's; a `VirtualClock` for tests that move time); `trio_clock`: the loop's own clock,
        which Fetch's max_wait_ms runs on (e.g. trio.testing.MockClock)."""
        table = all_handlers() if handlers is None else handlers
        super().__init__(config, table, clock=clock, trio_clock=trio_clock, name="kemu-inprocess")
        self.handlers: Mapping[int, Handler] = table
        self.port = self.config.port or ADVERTISED_PORT
        self.broker.bound_port = self.port

    def connect(self, client_id: str | None = "kemu-tests", node: int | None = None) -> InProcessConnection:
        """A connection to the cluster node `node` (default: the first, the one broker of a one-broker kemu)."""
        return InProcessConnection(self, client_id, node)

    async def _serve(self, nursery: trio.Nursery) -> None:
        await nursery.start(run_housekeeper, self.broker)


class InProcessConnection:
    """One client connection to an `InProcessBroker`; blocking, like a test's socket client (`request`,
    `send`, `receive`, `receive_frame`, `closed_by_peer`)."""

    def __init__(self, owner: InProcessBroker, client_id: str | None = "kemu-tests", node: int | None = None) -> None:
        self.owner = owner
        self.client_id = client_id
        self.node = node
        self.client = ClientInfo("127.0.0.1", next(_client_ports))
        self.name = f"{self.client.host}:{self.client.port} (in-process)"
        self._next_correlation = 1
        # The fields below are touched on the broker's loop only. A test reads the answers when it likes, so
        # none is ever held back for one unread (the order's `full()` is not asked).
        self._order = RequestOrder(MAX_PENDING, MAX_BUFFERED_RESPONSE_BYTES)
        self._progress = trio.Event()  # set (and replaced) whenever a request finishes
        self._closed = False  # the connection is gone (the broker closed it and the test saw it, or the test did)
        self._scope: trio.CancelScope | None = None
        self._nursery: trio.Nursery | None = None
        self._failure: Exception | None = None  # what took the connection down, if anything did
        owner.run(self._open)

    def __enter__(self) -> InProcessConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop the connection: requests still waiting are cancelled, as when a client goes away."""
        owner = self.owner
        if owner._token is not None and owner._error is None and not owner._done.is_set():
            owner.call(self._cancel)

    def encode(self, api_key: int, version: int, body: dict[str, Any], correlation_id: int | None = None) -> bytes:
        """One request frame (without the size prefix the socket would add)."""
        if correlation_id is None:
            correlation_id = self._next_correlation
            self._next_correlation += 1
        return codec.encode_request(api_key, version, correlation_id, body, client_id=self.client_id)

    def send_frame(self, frame: bytes) -> None:
        self.owner.run(self._admit, frame)

    def send(self, api_key: int, version: int, body: dict[str, Any], correlation_id: int | None = None) -> None:
        self.send_frame(self.encode(api_key, version, body, correlation_id))

    def receive_frame(self) -> bytes:
        """The next response (header and body, as the broker wrote it); ConnectionError once the broker
        closed the connection instead."""
        payload = self.owner.run(self._next_payload)
        if payload is None:
            raise ConnectionError("connection closed by the broker") from self._failure
        return payload

    def receive(self, api_key: int, version: int) -> tuple[int, dict[str, Any]]:
        return codec.decode_response(api_key, version, self.receive_frame())

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """`send` then `receive`, in one trip to the broker's loop."""
        payload = self.owner.run(self._exchange, self.encode(api_key, version, body))
        if payload is None:
            raise ConnectionError("connection closed by the broker") from self._failure
        return codec.decode_response(api_key, version, payload)[1]

    def closed_by_peer(self) -> bool:
        """True once the broker has closed the connection with no response left unread."""
        return bool(self.owner.run(self._closed_with_nothing_unread))

    # ---- on the broker's loop ----

    async def _open(self) -> None:
        assert self.owner._nursery is not None
        await self.owner._nursery.start(self._hold)

    async def _hold(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The connection's nursery: its requests run here, and go with it."""
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                self._scope = scope
                self._nursery = nursery
                task_status.started()
                await trio.sleep_forever()

    def _cancel(self) -> None:
        self._closed = True
        if self._scope is not None:
            self._scope.cancel()

    async def _exchange(self, frame: bytes) -> bytes | None:
        self._start(frame)
        return await self._next_payload()

    async def _admit(self, frame: bytes) -> None:
        turn_over = self._start(frame)
        if turn_over is not None:
            await turn_over.wait()

    def _start(self, frame: bytes) -> trio.Event | None:
        """Admit the frame as the server does and start its request; returns the event that marks the end of
        its turn at the core (None: no handler runs for it)."""
        order = self._order
        if self._closed or order.close_answered:
            return None  # the broker stopped reading this connection
        decision = admit_whole(frame, self.owner.handlers)
        if isinstance(decision, Refuse):
            order.answered(None, close=True)
            return None
        if isinstance(decision, Answer):
            order.answered([decision.payload])
            return None
        slot = order.admit()
        if not order.take_turn(slot):
            slot.waiter = trio.Event()  # set when the request before it is done with the core
        turn_over = trio.Event()
        assert self._nursery is not None
        self._nursery.start_soon(self._run_request, decision, slot, turn_over)
        return turn_over

    def _end_turn(self, slot: Slot, turn_over: trio.Event) -> None:
        turn_over.set()
        following = self._order.end_turn(slot)
        if following is not None:
            following.waiter.set()

    async def _run_request(self, job: Dispatch, slot: Slot, turn_over: trio.Event) -> None:
        request = job.request
        end_turn = partial(self._end_turn, slot, turn_over)
        try:
            if slot.waiter is not None:
                await slot.waiter.wait()
            ctx = RequestContext(self.owner.broker, self.owner.coordinators, self.client, request.header.client_id,
                                 end_turn, node=self.node, request_size=job.size)
            try:
                reply = await dispatch(job.handler, request, ctx, self.name)
            except Exception as exc:
                # On the server this ends the connection (the listener logs it); here the test hears why.
                self._failure = exc
                reply = Reply(None, close=True)
            # Joined now: the pieces may be views of buffers the broker reuses before the test reads them, and
            # regions of files are read (as the server does on TLS).
            self._order.finish(slot, None if reply.payload is None else [joined(reply.payload)], reply.close)
        finally:
            end_turn()  # also when cancelled: `send` is waiting for it
            if not slot.done:
                self._order.abandon(slot)
            self._progress.set()
            self._progress = trio.Event()

    async def _next_written(self) -> Slot | None:
        """The oldest request whose answer (or close) the broker has yet to write, once it is finished; None when
        the connection is closed (then `_closed`) or nothing is outstanding."""
        order = self._order
        while not self._closed:
            slot = order.next_to_send()
            if slot is not None:
                return slot
            if order.closing:
                self._cancel()
                break
            if not order.owed:
                break
            await self._progress.wait()
        return None

    async def _next_payload(self) -> bytes | None:
        """The next response the broker writes on this connection; requests that get none are passed over.
        None: the connection is closed."""
        while (slot := await self._next_written()) is not None:
            close = self._order.sent(slot)
            if slot.payload is not None:
                return joined(slot.payload)  # a close after it is seen by the next call
            if close:
                self._cancel()
        if not self._closed:
            raise TimeoutError("no response is outstanding on this connection")
        return None

    async def _closed_with_nothing_unread(self) -> bool:
        while (slot := await self._next_written()) is not None:
            if slot.payload is not None:
                return False
            if self._order.sent(slot):
                self._cancel()
        return self._closed
