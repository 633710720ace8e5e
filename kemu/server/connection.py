"""One client connection: a reader that runs requests in order, and responses sent strictly in that order.

The reader admits frames in arrival order. A request reaches the core only after the previous one has
finished (or `detach`ed to wait), so the core sees a connection's requests in order, one at a time, as on
a Kafka broker. A request whose handler never waits runs on the reader itself; one that may wait (a long
poll, a JoinGroup) runs in a task of its own, so the next request can start while it waits. Responses
leave strictly in request order, however the handlers' finishing times interleave: each request holds a
slot in the connection's `RequestOrder` (kemu/server/request_order.py, which keeps the order, the turns,
the backpressure and the mute without I/O), and whoever completes the slot at its head (the reader, or a
waiting request's task) sends every finished slot from the head on. A request that gets no response
(acks=0 Produce) still holds its place. Anything that forces the connection closed is queued in that order
too, so responses to earlier requests still go out first. What is left here is the streams, the tasks and
the waiting.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Mapping
from functools import partial

import trio

from kemu.broker.broker import BrokerCore
from kemu.coordinators import Coordinators
from kemu.handlers import Handler
from kemu.handlers._pacing import Pacer
from kemu.handlers.context import ClientInfo, RequestContext
from kemu.security.settings import ListenerSecurity
from kemu.server.admission import ON_LOOP_ELEMENTS, Answer, Dispatch, Offload, Refuse, admit, admit_whole
from kemu.server.authenticator import SaslAuthenticator
from kemu.server.cpu_handoff import CpuHandoff
from kemu.server.dispatch import Reply, Unfinished, dispatch, dispatch_or_defer
from kemu.server.framing import FrameBuffer, FrameError, frame_buffers
from kemu.server.hooks import RequestHooks
from kemu.server.limits import ServerLimits
from kemu.server.request_order import RequestOrder, Slot
from kemu.wire.buffers import Part, joined
from kemu.wire.file_region import FileRegion, RegionTruncatedError

log = logging.getLogger("kemu.server")
_CONNECTION_INDEX = itertools.count()  # the index ending a connection id (ClientInfo.connection_id)

# Requests admitted but not yet answered, per connection; beyond it the reader waits (backpressure).
MAX_PENDING = 32
# Requests the reader runs back to back from what it has already received before it lets other tasks run.
_REQUESTS_PER_TURN = 16
# A response this small goes out as one joined string; a bigger one as its pieces (one sendmsg).
_JOIN_BELOW_BYTES = 16 * 1024
_MAX_IOV = 512  # below every platform's IOV_MAX (1024 on Linux)
# Finished responses waiting for a slow reader, per connection; beyond it the reader stops admitting requests.
# Kafka mutes a connection while its one response goes out; kemu reads ahead (MAX_PENDING), so it bounds
# the bytes that read-ahead can leave buffered instead: one fetch.max.bytes response and some.
MAX_BUFFERED_RESPONSE_BYTES = 64 * 1024 * 1024


class Connection:
    def __init__(self, stream: trio.abc.Stream, broker: BrokerCore, coordinators: Coordinators,
                 handlers: Mapping[int, Handler], hooks: RequestHooks | None = None,
                 node_id: int | None = None, *, security: ListenerSecurity | None = None,
                 peer: tuple[str, int] | None = None, principal: str | None = None,
                 limits: ServerLimits | None = None, handoff: CpuHandoff | None = None) -> None:
        self.stream = stream
        self.handoff = handoff
        # A plain socket is read and written through its descriptor (see `_receive`); TLS is not.
        self._fd = stream.socket.fileno() if isinstance(stream, trio.SocketStream) else None
        self.limits = limits
        self.order = RequestOrder(MAX_PENDING, MAX_BUFFERED_RESPONSE_BYTES, trio.current_time(), broker.owed_answers)
        # Set (and dropped) when a response has gone out; made only when the reader waits for one.
        self._sent: trio.Event | None = None
        # A task that finished a long poll and waits for the next one (see `_finish_later`), or None; and the
        # next one, as handed to it.
        self._idle_finisher: trio.lowlevel.Task | None = None
        self._handed: tuple[Unfinished, Slot] | None = None
        self.node_id = broker.node_id if node_id is None else node_id  # the cluster node it connected to
        self.hooks = hooks
        self.broker = broker
        self.coordinators = coordinators
        self.handlers = handlers
        host, port = peer if peer is not None else peer_of(stream)
        self.client = ClientInfo(host, port)
        # Kafka's Processor numbers its connections so an id stays unique when a port is used again; kemu has
        # one "processor", 0.
        local_host, local_port = _local_of(stream)
        self.client.connection_id = f"{local_host}:{local_port}-{host}:{port}-0-{next(_CONNECTION_INDEX)}"
        self.name = f"{host}:{port}"
        self.authenticator: SaslAuthenticator | None = None
        if security is not None:
            self.client.listener_name = security.endpoint.name
            self.client.security_protocol = security.endpoint.protocol
            if security.endpoint.uses_sasl:
                self.authenticator = SaslAuthenticator(security, handlers, broker.clock.now_ms,
                                                       broker.scram_credentials.get, self.name,
                                                       broker.token_credential)
        if principal is not None:
            self.client.principal = principal

    async def run(self) -> None:
        log.debug("connection from %s", self.name)
        try:
            await self._serve()
        finally:
            self.order.release()
            self.broker.connection_closed(self.client.host, self.client.port)
            log.debug("connection from %s closed", self.name)

    async def _serve(self) -> None:
        self._draining = False  # a task is sending from the head of the queue
        async with self.stream:
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                if self.limits is not None:
                    self.limits.live.add(self)
                try:
                    if not await self._read(nursery):
                        nursery.cancel_scope.cancel()  # the client went away: drop what is pending
                finally:
                    if self.limits is not None:
                        self.limits.live.discard(self)

    def quiet_for(self, now: float) -> float:
        """How long nothing was received, owed or sent (0 while a response is owed)."""
        return self.order.quiet_for(now)

    def expire_if_idle(self, now: float, idle_s: float) -> None:
        """Close the connection if nothing was received, owed or sent for `idle_s` (connections.max.idle.ms),
        as Kafka's Selector does; one still working on a response counts as active."""
        if self.order.idle_expired(now, idle_s) and not self._scope.cancel_called:
            log.info("closing connection from %s: idle for %d ms (connections.max.idle.ms)", self.name,
                     round(idle_s * 1000))
            self._scope.cancel()

    async def _read(self, nursery: trio.Nursery) -> bool:
        """Admit frames until the client leaves (False) or a frame forces a close (True)."""
        frames = FrameBuffer(self.broker.config.socket_request_max_bytes)
        authenticator = self.authenticator
        if authenticator is not None:
            # Kafka's sasl.server.max.receive.size bounds what an unauthenticated client may send.
            frames.max_size = min(frames.max_size, authenticator.security.max_receive_size)
        order = self.order
        run_back_to_back = 0
        receiving = Pacer()
        while True:
            try:
                frame = frames.next_frame()
            except FrameError as exc:
                return await self._refuse(str(exc) + _tls_hint(exc.size))
            if frame is None:
                # Everything received has been run: send what is finished before waiting for more (the
                # responses to requests that arrived together go out together).
                run_back_to_back = 0
                await self._drain()
                try:
                    received = await self._receive_once(frames)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    return False
                if not received:
                    return False
                if frames.mid_frame():
                    # A big frame arrives faster than the loop reads it (50 MiB of Produce held the loop for
                    # 0.7 s): yield between receives now and then, so other connections are served meanwhile.
                    await receiving.tick()
                continue
            if authenticator is not None:
                step = authenticator.receive(frame)
                if authenticator.authenticated and authenticator.principal is not None:
                    self.client.principal = authenticator.principal
                    self.client.token_authenticated = authenticator.token_authenticated
                    frames.max_size = self.broker.config.socket_request_max_bytes
                if not step.dispatch:
                    if step.close:
                        log.warning("closing connection from %s: %s", self.name, step.reason)
                    order.answered(None if step.payload is None else [step.payload], close=step.close,
                                   close_delay_s=step.close_delay_ms / 1000)
                    await self._drain()
                    if step.close:
                        return True
                    continue
            run_back_to_back += 1
            if run_back_to_back > _REQUESTS_PER_TURN:
                # A client that keeps the buffer full would otherwise hold the loop: let the others run.
                run_back_to_back = 0
                await self._drain()
                await trio.lowlevel.checkpoint()
            while order.full():
                await self._drain()
                if order.full():
                    if self._sent is None:
                        self._sent = trio.Event()
                    await self._sent.wait()  # a slow reader: admit nothing more until it has taken some
            if order.muted_until_ms:
                await self._wait_unmuted()
            first = admit(frame, self.handlers, ON_LOOP_ELEMENTS)
            # Past ON_LOOP_ELEMENTS, decoded again off the loop: the other connections are served meanwhile.
            decision = (await trio.to_thread.run_sync(admit_whole, frame, self.handlers)
                        if isinstance(first, Offload) else first)
            if isinstance(decision, Refuse):
                return await self._refuse(decision.reason)
            if isinstance(decision, Answer):
                order.answered([decision.payload])
            elif order.turn_free and not decision.handler.suspends and (
                    self.hooks is None or not self.hooks.intercepting):
                # Its turn has come and it will not wait: run it here rather than in a task of its own (a
                # spawn, a turn event and a wake-up per request were a fifth of a small request's cost).
                await self._run_here(nursery, decision, order.admit())
            else:
                slot = order.admit()  # owed from now: waiting for a queue slot, the connection is not idle
                if self.limits is not None:
                    await self.limits.queue_slots.acquire()  # released when the request's turn comes
                if not order.take_turn(slot):
                    slot.waiter = trio.Event()  # set by `_end_turn` of the request before it
                nursery.start_soon(self._run_request, decision, slot)
            # The request holds views of the frame buffer; let them go, so the buffer is rewound for the
            # next frames instead of replaced (a bytearray cannot move while a view of it is alive).
            del first, decision, frame

    def _mute(self, throttle_ms: int) -> None:
        self.order.mute(self.broker.clock.now_ms(), throttle_ms)

    async def _wait_unmuted(self) -> None:
        """Send what is finished (the throttled response first), then read nothing more until the broker's
        clock reaches the end of the throttle: Kafka's muted channel. A virtual clock that moves wakes it."""
        await self._drain()
        clock = self.broker.clock
        moved = trio.Event()
        token = trio.lowlevel.current_trio_token()

        def on_move(_now_ms: int) -> None:
            # The clock may be moved from another thread (a test's); hop onto the Trio thread.
            try:
                token.run_sync_soon(moved.set)
            except trio.RunFinishedError:
                pass

        add_listener, remove_listener = (getattr(clock, "add_listener", None),
                                         getattr(clock, "remove_listener", None))
        if add_listener is not None:
            add_listener(on_move)
        try:
            while (remaining_ms := self.order.muted_for(clock.now_ms())) > 0:
                with trio.move_on_after(remaining_ms / 1000):
                    await moved.wait()
                moved = trio.Event()
        finally:
            if remove_listener is not None:
                remove_listener(on_move)

    async def _receive_once(self, frames: FrameBuffer) -> int:
        """Receive once (0: the peer closed), noting the activity for `expire_if_idle`."""
        received = await _receive(self.stream, self._fd, frames)
        self.order.last_activity = trio.current_time()
        return received

    async def _refuse(self, reason: str) -> bool:
        log.warning("closing connection from %s: %s", self.name, reason)
        self.order.answered(None, close=True)
        await self._drain()
        return True

    async def _drain(self) -> None:
        """Send every finished response from the head of the queue on, unless another task already is
        (it sends this one too once it gets there). A close at the head ends the connection after the
        responses before it, and its delay."""
        if self._draining:
            return
        self._draining = True
        sent = False
        try:
            order = self.order
            while (slot := order.next_to_send()) is not None:
                if slot.payload is not None:
                    await _send(self.stream, self._fd, frame_buffers(slot.payload), slot.size + 4)
                    sent = True
                    order.last_activity = trio.current_time()
                close = order.sent(slot)
                if self._sent is not None:
                    self._sent.set()
                    self._sent = None
                if close:
                    if slot.close_delay_s > 0:
                        await trio.sleep(slot.close_delay_s)
                    self._scope.cancel()
        except RegionTruncatedError as exc:
            # Kafka's "Size of FileRecords has been truncated during write": the frame's size went out already.
            log.warning("closing connection from %s: a response's records were truncated while it was sent (%s)",
                        self.name, exc)
            self._scope.cancel()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self._scope.cancel()
        finally:
            self._draining = False
        if sent and self.handoff is not None:
            self.handoff.after_answer()  # before the work below: the client the answer woke runs first
        self.broker.housekeeping.run_woken()  # work a request queued for after its answer: EndTxn's markers

    async def _run_here(self, nursery: trio.Nursery, job: Dispatch, slot: Slot) -> None:
        """Run a request on the reader; an answer that has to wait is finished in a task of its own."""
        ctx = RequestContext(self.broker, self.coordinators, self.client, job.request.header.client_id,
                             node=self.node_id, request_size=job.size)
        try:
            outcome = await dispatch_or_defer(job.handler, job.request, ctx, self.name, self.hooks)
        except BaseException:
            self.order.abandon(slot)
            raise
        if isinstance(outcome, Unfinished):
            if outcome.holds_turn:
                # Finished here, on the reader: nothing after it is read or run until it has its answer.
                self._fill(slot, await self._finished(outcome, slot))
                if ctx.throttle_ms:
                    self._mute(ctx.throttle_ms)
                await self._drain()
            elif not self._hand_to_finisher((outcome, slot)):
                nursery.start_soon(self._finish_later, outcome, slot)
        else:
            self._fill(slot, outcome)
            if ctx.throttle_ms:
                self._mute(ctx.throttle_ms)

    async def _finish_later(self, unfinished: Unfinished, slot: Slot) -> None:
        """Finish a request whose answer waits (a long-polling Fetch), then wait for the next one: a consumer
        parks one Fetch after another on its connection, and handing each to a waiting task costs a fraction
        of spawning a task for it. A second such request while this one waits gets a task of its own."""
        while True:
            self._fill(slot, await self._finished(unfinished, slot))
            if unfinished.ctx.throttle_ms:
                self._mute(unfinished.ctx.throttle_ms)
            await self._drain()
            if self._idle_finisher is not None:
                return
            self._idle_finisher = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(self._abort_idle)
            assert self._handed is not None
            (unfinished, slot), self._handed = self._handed, None

    def _hand_to_finisher(self, job: tuple[Unfinished, Slot]) -> bool:
        """Give `job` to the waiting finisher; False when none waits. (It ends when the connection's nursery
        is cancelled, as every connection's is when it closes.)"""
        task = self._idle_finisher
        if task is None:
            return False
        self._idle_finisher = None
        self._handed = job
        trio.lowlevel.reschedule(task)
        return True

    def _abort_idle(self, _raise_cancel: object) -> trio.lowlevel.Abort:
        self._idle_finisher = None  # cancelled while waiting (the connection is closing)
        return trio.lowlevel.Abort.SUCCEEDED

    def _fill(self, slot: Slot, reply: Reply) -> None:
        self.order.finish(slot, reply.payload, reply.close)

    async def _finished(self, unfinished: Unfinished, slot: Slot) -> Reply:
        try:
            return await unfinished.finish()
        except BaseException:
            self.order.abandon(slot)
            raise

    def _end_turn(self, slot: Slot) -> None:
        """`slot`'s request is done with the core (its context detached): wake the next one waiting."""
        following = self.order.end_turn(slot)
        if following is not None:
            following.waiter.set()

    async def _run_request(self, job: Dispatch, slot: Slot) -> None:
        request = job.request
        try:
            if slot.waiter is not None:
                await slot.waiter.wait()
        finally:
            if self.limits is not None:
                self.limits.queue_slots.release()  # out of the queue: its turn has come (or never will)
        ctx = RequestContext(self.broker, self.coordinators, self.client, request.header.client_id,
                             partial(self._end_turn, slot), node=self.node_id, request_size=job.size)
        try:
            reply = await dispatch(job.handler, request, ctx, self.name, self.hooks)
        except BaseException:
            self.order.abandon(slot)
            raise
        self._fill(slot, reply)
        if ctx.throttle_ms:
            self._mute(ctx.throttle_ms)
        await self._drain()


async def _receive(stream: trio.abc.Stream, fd: int | None, frames: FrameBuffer) -> int:
    """Receive once into `frames`: straight into its buffer from a plain socket, through a copy from a
    stream that hands out bytes of its own (TLS). 0: the peer closed.

    A plain socket is read through its descriptor, waiting only when it has nothing: trio's socket methods
    pass through the scheduler on every call even when data is there, which per small request cost more
    than the read itself."""
    if fd is not None:
        with frames.writable() as target:
            while True:
                try:
                    count = os.readv(fd, [target])
                    break
                except BlockingIOError:
                    await trio.lowlevel.wait_readable(fd)
        frames.advance(count)
        return count
    data = await stream.receive_some()
    frames.feed(data)
    return len(data)


async def _send(stream: trio.abc.Stream, fd: int | None, buffers: list[Part], size: int) -> None:
    """Send a framed response of `size` bytes: record bytes as they lie, gathered by writev over the pieces in
    memory and sent with sendfile from the regions of files between them, when the stream is a plain socket,
    through its descriptor `fd` (as `_receive` reads it). RegionTruncatedError: a file was cut short under a
    region, and what went out of the answer is less than its size said: the connection must close."""
    if fd is None:
        await stream.send_all(joined(buffers))  # TLS copies whatever it encrypts anyway
        return
    if size < _JOIN_BELOW_BYTES:
        # A small response is cheaper joined than gathered, and usually leaves in one write.
        data = joined(buffers)
        try:
            sent = os.write(fd, data)
        except BlockingIOError:
            sent = 0
        if sent < len(data):
            await _write_all(fd, [memoryview(data)[sent:]])  # the rest when the socket is full
        return
    run: list[memoryview] = []
    for buffer in buffers:
        if isinstance(buffer, FileRegion):
            if run:
                await _write_all(fd, run)
                run = []
            await _send_region(fd, buffer)
        elif len(buffer):
            run.append(memoryview(buffer))
    if run:
        await _write_all(fd, run)


async def _write_all(fd: int, views: list[memoryview]) -> None:
    first = 0
    while first < len(views):
        try:
            sent = os.writev(fd, views[first:first + _MAX_IOV])
        except BlockingIOError:
            await trio.lowlevel.wait_writable(fd)
            continue
        while sent and sent >= len(views[first]):
            sent -= len(views[first])
            first += 1
        if sent:
            views[first] = views[first][sent:]


async def _send_region(fd: int, region: FileRegion) -> None:
    """Kafka's FileRecords.writeTo: the region's bytes from the page cache to the socket, with no copy."""
    position, end = region.position, region.position + region.length
    while position < end:
        try:
            sent = os.sendfile(fd, region.file.fd, position, end - position)
        except BlockingIOError:
            await trio.lowlevel.wait_writable(fd)
            continue
        if not sent:
            raise RegionTruncatedError(
                f"a region of {region.length} bytes lost its last {end - position} to a truncation of its file")
        position += sent


def _tls_hint(size: int) -> str:
    # A TLS record starts 0x16 0x03, read as a size: a client configured for SSL on a listener that is not.
    if size >> 16 == 0x1603:
        return " (the client began a TLS handshake: is it configured for SSL on a PLAINTEXT listener?)"
    return ""


def peer_of(stream: trio.abc.Stream) -> tuple[str, int]:
    return _address_of(stream, peer=True)


def _local_of(stream: trio.abc.Stream) -> tuple[str, int]:
    return _address_of(stream, peer=False)


def _address_of(stream: trio.abc.Stream, *, peer: bool) -> tuple[str, int]:
    while isinstance(stream, trio.SSLStream):
        stream = stream.transport_stream
    try:
        sock = stream.socket  # type: ignore[attr-defined]
        address = sock.getpeername() if peer else sock.getsockname()
        return str(address[0]), int(address[1])
    except (OSError, AttributeError):
        return "?", 0
