"""A kemu broker for handler tests with no sockets: requests go in as the bytes a client sends and come back
as the bytes the broker writes, but nothing crosses the kernel.

`InProcessBroker` has the surface of `tests.server.broker_thread.BrokerThread` that handler tests use
(`broker`, `coordinators`, `call`, `port`, `connect()`), and its connections that of
`tests.server.kafka_socket.KafkaSocket` (`request`, `send`, `receive`, `receive_frame`, `closed_by_peer`), so
a test runs on either by the fixture it is given.

The broker core, its coordinators and the housekeeper (the timers that write transaction markers and fire
group timeouts) live on a Trio loop in a thread of their own, as on the real server: a long-polling Fetch or
a JoinGroup waiting for its rebalance waits there while the test goes on, and the core is only touched from
that loop (`call`). A request is encoded with the wire codec (header included), admitted and decoded as the
server does (`kemu.server.admission.admit`), run by `kemu.server.dispatch.dispatch` — the connection's own
handler call, ApiError / failure → error response or close, response encoding — and the response decoded
back by the test. Requests on one connection reach the core one at a time in order and their responses
come back in order, as `kemu.server.connection` keeps them; what is left to the real-socket tests
(tests/server, and the few per API area marked `real_socket` here) is framing, the socket itself and the
connection's own bookkeeping.

`send` returns once the request has had its turn at the core (it finished, or detached to wait): what a
test does next happens after the broker has seen it, with no polling.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import outcome
import trio
import trio.from_thread
import trio.lowlevel

from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.clock import Clock, SystemClock
from kemu.coordinators import Coordinators
from kemu.handlers import Handler, all_handlers
from kemu.handlers.context import ClientInfo, RequestContext
from kemu.server.admission import Answer, Dispatch, Refuse, admit
from kemu.server.dispatch import Reply, dispatch
from kemu.server.housekeeper import run_housekeeper
from kemu.wire import codec
from tests.server.broker_thread import BrokerHarness

T = TypeVar("T")

TIMEOUT_S = 10.0  # as KafkaSocket's: a response that never comes fails the test instead of hanging it
# No listener is bound; the broker advertises this port (Metadata, FindCoordinator, `listeners`) as if it were.
ADVERTISED_PORT = 9092
_client_ports = itertools.count(40000)


class InProcessBroker(BrokerHarness):
    def __init__(self, config: BrokerConfig | None = None, handlers: Mapping[int, Handler] | None = None, *,
                 clock: Clock | None = None, trio_clock: trio.abc.Clock | None = None) -> None:
        """As BrokerThread's (the config's data_dir, or a temporary directory the broker removes on close);
        `clock`: the broker's (default the system's; a `VirtualClock` for tests that move time);
        `trio_clock`: the loop's own clock, which Fetch's max_wait_ms runs on (e.g. trio.testing.MockClock)."""
        config = config or BrokerConfig(port=0)
        self.config = config
        self.port = config.port or ADVERTISED_PORT
        self.broker = BrokerCore(config, clock or SystemClock())
        self.broker.bound_port = self.port
        self.coordinators = Coordinators(self.broker)
        self.handlers = all_handlers() if handlers is None else handlers
        self._trio_clock = trio_clock
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kemu-inprocess", daemon=True)

    def connect(self, client_id: str | None = "kemu-tests", node: int | None = None) -> InProcessConnection:
        """A connection to the cluster node `node` (default: the first, the one broker of a one-broker kemu)."""
        return InProcessConnection(self, client_id, node)

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the broker's Trio loop and return its result."""
        return trio.from_thread.run_sync(fn, *args, trio_token=self._live_token())

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run the async `fn(*args)` on the broker's Trio loop and return its result. Past TIMEOUT_S of real
        time (whatever the loop's clock says: it may be a MockClock) it is cancelled and TimeoutError raised,
        as KafkaSocket's socket timeout fails a test instead of hanging it."""
        token = self._live_token()
        finished = threading.Event()
        scope = trio.CancelScope()
        result: list[outcome.Outcome[T]] = []

        async def run_it() -> None:
            try:
                with scope:
                    result.append(await outcome.acapture(fn, *args))
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
        if not result:
            raise RuntimeError("the broker stopped first")
        return result[0].unwrap()

    def stop(self) -> None:
        if self._token is not None and self._nursery is not None and self._thread.is_alive():
            try:
                self._token.run_sync_soon(self._nursery.cancel_scope.cancel)
            except trio.RunFinishedError:
                pass
        if self._thread.ident is not None:
            self._thread.join(timeout=30)
            if self._thread.is_alive():
                raise RuntimeError("broker did not shut down")
        if self._error is not None:
            raise RuntimeError("broker failed") from self._error

    def _live_token(self) -> trio.lowlevel.TrioToken:
        if self._token is None or self._error is not None:
            raise RuntimeError("the broker is not running") from self._error
        return self._token

    def _run(self) -> None:
        try:
            trio.run(self._main, clock=self._trio_clock)
        except BaseException as exc:  # reported to the test thread
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await nursery.start(run_housekeeper, self.broker)
            self._ready.set()
            await trio.sleep_forever()


@dataclasses.dataclass(slots=True, eq=False)
class _Slot:
    """One request's place in the response order (as kemu.server.connection keeps it)."""

    done: trio.Event = dataclasses.field(default_factory=trio.Event)
    payload: bytes | None = None
    close: bool = False


class InProcessConnection:
    """One client connection to an `InProcessBroker`; blocking, like KafkaSocket."""

    def __init__(self, owner: InProcessBroker, client_id: str | None = "kemu-tests", node: int | None = None) -> None:
        self.owner = owner
        self.client_id = client_id
        self.node = node
        self.client = ClientInfo("127.0.0.1", next(_client_ports))
        self.name = f"{self.client.host}:{self.client.port} (in-process)"
        self._next_correlation = 1
        # The fields below are touched on the broker's loop only.
        self._slots: list[_Slot] = []  # admitted, response not yet taken by the test
        self._closing = False  # a request forced the connection closed: later ones are not read
        self._closed = False  # ... and the test has reached that point in the responses
        self._previous_turn: trio.Event | None = None
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
        if self.owner._thread.is_alive() and self.owner._error is None:
            self.owner.call(self._cancel)

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
        self._closing = self._closed = True
        if self._scope is not None:
            self._scope.cancel()

    async def _exchange(self, frame: bytes) -> bytes | None:
        self._start(frame)
        return await self._next_payload()

    async def _admit(self, frame: bytes) -> None:
        turn = self._start(frame)
        if turn is not None:
            await turn.wait()

    def _start(self, frame: bytes) -> trio.Event | None:
        """Admit the frame as the server does and start its request; returns the event that marks the end of
        its turn at the core (None: no handler runs for it)."""
        if self._closing:
            return None  # the broker stopped reading this connection
        decision = admit(frame, self.owner.handlers)
        slot = _Slot()
        self._slots.append(slot)
        if isinstance(decision, Refuse):
            self._closing = slot.close = True
            slot.done.set()
            return None
        if isinstance(decision, Answer):
            slot.payload = decision.payload
            slot.done.set()
            return None
        after, turn = self._previous_turn, trio.Event()
        self._previous_turn = turn
        assert self._nursery is not None
        self._nursery.start_soon(self._run_request, decision, slot, after, turn)
        return turn

    async def _run_request(self, job: Dispatch, slot: _Slot, after: trio.Event | None, turn: trio.Event) -> None:
        request = job.request
        try:
            if after is not None:
                await after.wait()
            ctx = RequestContext(self.owner.broker, self.owner.coordinators, self.client, request.header.client_id,
                                 turn.set, node=self.node, request_size=job.size)
            try:
                reply = await dispatch(job.handler, request, ctx, self.name)
            except Exception as exc:
                # On the server this ends the connection (the listener logs it); here the test hears why.
                self._failure = exc
                reply = Reply(None, close=True)
            slot.payload = None if reply.payload is None else b"".join(reply.payload)
            slot.close = reply.close
            if reply.close:
                self._closing = True
        finally:
            turn.set()  # also when cancelled: `send` is waiting for it
            slot.done.set()

    async def _next_slot(self) -> _Slot | None:
        """The first request whose response (or close) is still to be taken, once it is done; requests that
        get no response are passed over. None: nothing is outstanding."""
        while self._slots:
            slot = self._slots[0]
            await slot.done.wait()
            if slot.payload is not None or slot.close:
                return slot
            self._slots.pop(0)
        return None

    async def _next_payload(self) -> bytes | None:
        if self._closed:
            return None
        slot = await self._next_slot()
        if slot is None:
            raise TimeoutError("no response is outstanding on this connection")
        self._slots.pop(0)
        if slot.payload is not None:
            if slot.close:
                self._slots.insert(0, _Slot(close=True))  # the close comes after this response
                self._slots[0].done.set()
            return slot.payload
        self._mark_closed()
        return None

    async def _closed_with_nothing_unread(self) -> bool:
        if self._closed:
            return True
        slot = await self._next_slot()
        if slot is None or slot.payload is not None:
            return False
        self._slots.pop(0)
        self._mark_closed()
        return True

    def _mark_closed(self) -> None:
        self._slots.clear()
        self._cancel()
