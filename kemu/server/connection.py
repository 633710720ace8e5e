"""One client connection: a reader, a task per request, and a sender that keeps request order.

The reader admits frames in arrival order. Each request runs in its own task, but a request reaches the
core only after the previous one has finished (or `detach`ed to wait), so the core sees a connection's
requests in order, one at a time, as on a Kafka broker. The sender writes responses strictly in request
order, however the handlers' finishing times interleave; a request that gets no response (acks=0
Produce) still holds its place. Anything that forces the connection closed is queued in that order too,
so responses to earlier requests still go out first.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import trio

from kemu.broker.broker import Broker
from kemu.coordinators import Coordinators
from kemu.handlers import Handler
from kemu.handlers.context import ClientInfo, RequestContext
from kemu.security.settings import ListenerSecurity
from kemu.server.admission import ON_LOOP_ELEMENTS, Answer, Dispatch, Offload, Refuse, admit, admit_whole
from kemu.server.authenticator import SaslAuthenticator
from kemu.server.dispatch import dispatch
from kemu.server.framing import FrameBuffer, FrameError, frame_buffers
from kemu.server.hooks import RequestHooks
from kemu.server.limits import ServerLimits
from kemu.wire.primitives import Buffer

log = logging.getLogger("kemu.server")

# Requests admitted but not yet answered, per connection; beyond it the reader waits (backpressure).
MAX_PENDING = 32
# A response this small goes out as one joined string; a bigger one as its pieces (one sendmsg).
_JOIN_BELOW_BYTES = 16 * 1024
_MAX_IOV = 512  # below every platform's IOV_MAX (1024 on Linux)
# Finished responses waiting for a slow reader, per connection; beyond it the reader stops admitting requests.
# Kafka mutes a connection while its one response goes out; kemu reads ahead (MAX_PENDING), so it bounds
# the bytes that read-ahead can leave buffered instead: one fetch.max.bytes response and some.
MAX_BUFFERED_RESPONSE_BYTES = 64 * 1024 * 1024


@dataclass(slots=True)
class _Slot:
    """One request's place in the response order."""

    done: trio.Event = field(default_factory=trio.Event)
    payload: Sequence[Buffer] | None = None
    close: bool = False  # close the connection once everything before has been sent
    close_delay_s: float = 0.0  # and this long after this slot's payload went out


class Connection:
    def __init__(self, stream: trio.abc.Stream, broker: Broker, coordinators: Coordinators,
                 handlers: Mapping[int, Handler], hooks: RequestHooks | None = None,
                 node_id: int | None = None, *, security: ListenerSecurity | None = None,
                 peer: tuple[str, int] | None = None, principal: str | None = None,
                 limits: ServerLimits | None = None) -> None:
        self.stream = stream
        self.limits = limits
        self.buffered = 0  # bytes of finished responses not yet sent
        self._sent = trio.Event()  # set (and replaced) whenever a response has gone out
        self._owed = 0  # admitted requests whose response (or close) has not gone out yet
        self._last_activity = trio.current_time()
        self.node_id = broker.node_id if node_id is None else node_id  # the cluster node it connected to
        self.hooks = hooks
        self.broker = broker
        self.coordinators = coordinators
        self.handlers = handlers
        host, port = peer if peer is not None else peer_of(stream)
        self.client = ClientInfo(host, port)
        self.name = f"{host}:{port}"
        self.authenticator: SaslAuthenticator | None = None
        if security is not None:
            self.client.listener_name = security.endpoint.name
            self.client.security_protocol = security.endpoint.protocol
            if security.endpoint.uses_sasl:
                self.authenticator = SaslAuthenticator(security, handlers, broker.clock.now_ms,
                                                       broker.scram_credentials.get, self.name)
        if principal is not None:
            self.client.principal = principal

    async def run(self) -> None:
        async with self.stream:
            async with trio.open_nursery() as nursery:
                to_sender, from_reader = trio.open_memory_channel[_Slot](MAX_PENDING)
                nursery.start_soon(self._send_in_order, from_reader, nursery.cancel_scope)
                async with to_sender:
                    if not await self._read(nursery, to_sender):
                        nursery.cancel_scope.cancel()  # the client went away: drop what is pending

    async def _read(self, nursery: trio.Nursery, slots: trio.MemorySendChannel[_Slot]) -> bool:
        """Admit frames until the client leaves (False) or a frame forces a close (True)."""
        frames = FrameBuffer(self.broker.config.socket_request_max_bytes)
        authenticator = self.authenticator
        if authenticator is not None:
            # Kafka's sasl.server.max.receive.size bounds what an unauthenticated client may send.
            frames.max_size = min(frames.max_size, authenticator.security.max_receive_size)
        previous_turn = trio.Event()
        previous_turn.set()
        while True:
            try:
                frame = frames.next_frame()
            except FrameError as exc:
                return await self._refuse(slots, str(exc) + _tls_hint(exc.size))
            if frame is None:
                try:
                    received = await self._receive_or_expire(frames)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    return False
                if not received:
                    return False
                continue
            if authenticator is not None:
                step = authenticator.receive(frame)
                if authenticator.authenticated and authenticator.principal is not None:
                    self.client.principal = authenticator.principal
                    frames.max_size = self.broker.config.socket_request_max_bytes
                if not step.dispatch:
                    if step.close:
                        log.warning("closing connection from %s: %s", self.name, step.reason)
                    slot = _Slot(payload=None if step.payload is None else [step.payload], close=step.close,
                                 close_delay_s=step.close_delay_ms / 1000)
                    self._owed += 1
                    self.buffered += 0 if step.payload is None else len(step.payload)
                    slot.done.set()
                    await slots.send(slot)
                    if step.close:
                        return True
                    continue
            while self.buffered > MAX_BUFFERED_RESPONSE_BYTES:
                await self._sent.wait()  # a slow reader: admit nothing more until it has taken some
            first = admit(frame, self.handlers, ON_LOOP_ELEMENTS)
            # Past ON_LOOP_ELEMENTS, decoded again off the loop: the other connections are served meanwhile.
            decision = (await trio.to_thread.run_sync(admit_whole, frame, self.handlers)
                        if isinstance(first, Offload) else first)
            if isinstance(decision, Refuse):
                return await self._refuse(slots, decision.reason)
            slot = _Slot()
            self._owed += 1
            if isinstance(decision, Answer):
                slot.payload = [decision.payload]
                self.buffered += len(decision.payload)
                slot.done.set()
            else:
                if self.limits is not None:
                    await self.limits.queue_slots.acquire()  # released when the request's turn comes
                turn = trio.Event()
                nursery.start_soon(self._run_request, decision, slot, previous_turn, turn)
                previous_turn = turn
            await slots.send(slot)

    async def _receive_or_expire(self, frames: FrameBuffer) -> int:
        """Receive once; 0 also when the connection has been idle for connections.max.idle.ms (nothing
        received, nothing owed, nothing sent), which closes it as Kafka's Selector does."""
        if self.limits is None:
            return await _receive(self.stream, frames)
        idle_s = self.limits.idle_ms / 1000
        while True:
            deadline = self._last_activity + idle_s
            with trio.move_on_at(deadline):
                received = await _receive(self.stream, frames)
                self._last_activity = trio.current_time()
                return received
            if self._owed == 0 and trio.current_time() >= self._last_activity + idle_s:
                log.info("closing connection from %s: idle for %d ms (connections.max.idle.ms)",
                         self.name, self.limits.idle_ms)
                return 0
            if self._owed:
                self._last_activity = trio.current_time()  # a response is still being worked on

    async def _refuse(self, slots: trio.MemorySendChannel[_Slot], reason: str) -> bool:
        log.warning("closing connection from %s: %s", self.name, reason)
        self._owed += 1
        slot = _Slot(close=True)
        slot.done.set()
        await slots.send(slot)
        return True

    async def _send_in_order(self, slots: trio.MemoryReceiveChannel[_Slot], scope: trio.CancelScope) -> None:
        try:
            async for slot in slots:
                await slot.done.wait()
                if slot.payload is not None:
                    await _send(self.stream, frame_buffers(slot.payload))
                    self.buffered -= sum(len(part) for part in slot.payload)
                    self._last_activity = trio.current_time()
                self._owed -= 1
                self._sent.set()
                self._sent = trio.Event()
                if slot.close:
                    if slot.close_delay_s > 0:
                        await trio.sleep(slot.close_delay_s)
                    break
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        scope.cancel()

    async def _run_request(self, job: Dispatch, slot: _Slot, after: trio.Event, turn: trio.Event) -> None:
        request = job.request
        try:
            try:
                await after.wait()
            finally:
                if self.limits is not None:
                    self.limits.queue_slots.release()  # out of the queue: its turn has come (or never will)
            ctx = RequestContext(self.broker, self.coordinators, self.client, request.header.client_id, turn.set,
                                 node=self.node_id)
            reply = await dispatch(job.handler, request, ctx, self.name, self.hooks)
            slot.payload, slot.close = reply.payload, reply.close
            if reply.payload is not None:
                self.buffered += sum(len(part) for part in reply.payload)
        finally:
            slot.done.set()


async def _receive(stream: trio.abc.Stream, frames: FrameBuffer) -> int:
    """Receive once into `frames`: straight into its buffer from a plain socket, through a copy from a
    stream that hands out bytes of its own (TLS). 0: the peer closed."""
    if isinstance(stream, trio.SocketStream):
        with frames.writable() as target:
            count = await stream.socket.recv_into(target)
        frames.advance(count)
        return count
    data = await stream.receive_some()
    frames.feed(data)
    return len(data)


async def _send(stream: trio.abc.Stream, buffers: list[Buffer]) -> None:
    """Send a framed response: record bytes as they lie, with one sendmsg over all the pieces when the
    stream is a plain socket."""
    if not isinstance(stream, trio.SocketStream) or sum(len(buffer) for buffer in buffers) < _JOIN_BELOW_BYTES:
        # TLS copies whatever it encrypts anyway; a small response is cheaper joined than gathered.
        await stream.send_all(b"".join(buffers))
        return
    views = [memoryview(buffer) for buffer in buffers if len(buffer)]
    first = 0
    while first < len(views):
        sent = await stream.socket.sendmsg(views[first:first + _MAX_IOV])
        while sent and sent >= len(views[first]):
            sent -= len(views[first])
            first += 1
        if sent:
            views[first] = views[first][sent:]


def _tls_hint(size: int) -> str:
    # A TLS record starts 0x16 0x03, read as a size: a client configured for SSL on a listener that is not.
    if size >> 16 == 0x1603:
        return " (the client began a TLS handshake: is it configured for SSL on a PLAINTEXT listener?)"
    return ""


def peer_of(stream: trio.abc.Stream) -> tuple[str, int]:
    while isinstance(stream, trio.SSLStream):
        stream = stream.transport_stream
    try:
        address = stream.socket.getpeername()  # type: ignore[attr-defined]
        return str(address[0]), int(address[1])
    except (OSError, AttributeError):
        return "?", 0
