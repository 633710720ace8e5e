"""TCP listeners: accept connections and run each in the same nursery, which owns every task.

`serve` is usable in-process (tests, a pytest fixture) and by the CLI; cancelling its caller's scope
closes the listeners and every connection.
"""

from __future__ import annotations

import errno
import logging
import socket
import ssl
from collections.abc import Mapping

import trio

from kemu.broker.broker import BrokerCore
from kemu.coordinators import Coordinators
from kemu.handlers import Handler, all_handlers
from kemu.security.settings import ListenerSecurity
from kemu.server.connection import Connection, peer_of
from kemu.server.cpu_handoff import CpuHandoff
from kemu.server.gc_policy import POLICY
from kemu.server.hooks import RequestHooks
from kemu.server.housekeeper import run_housekeeper
from kemu.server.limits import ServerLimits
from kemu.server.nodes import NodeListeners

log = logging.getLogger("kemu.server")

BACKLOG = 128


class ServedCore:
    """The core a server serves, which can be swapped for another while the server listens.

    A test session keeps one server (and so one port, the bootstrap address its clients were given) and
    swaps in an empty core between tests rather than paying for a new listener. Each new connection is
    served by the core in place when it arrives, and the housekeeper drives whichever core is in place.
    Touched only on the server's Trio thread."""

    def __init__(self, broker: BrokerCore, coordinators: Coordinators | None = None) -> None:
        self.broker = broker
        self.coordinators = Coordinators(broker) if coordinators is None else coordinators
        self._generation = _Generation()
        self.nodes = NodeListeners()

    def swap(self, broker: BrokerCore, coordinators: Coordinators | None = None) -> trio.Event:
        """Serve `broker` from now on. The connections of the core it replaces are closed (a client of that
        core must not reach this one); the event is set once they have all ended, after which nothing of
        the server touches the old core any more."""
        old = self.broker
        # The new core listens where the old one did, so it must advertise the same endpoints.
        broker.hostname = old.hostname
        for node in broker.cluster:
            if node.node_id in old.cluster.nodes:
                node.port = old.cluster.nodes[node.node_id].port
        broker.bound_ports = dict(old.bound_ports)
        self.broker = broker
        self.coordinators = Coordinators(broker) if coordinators is None else coordinators
        retired, self._generation = self._generation, _Generation()
        retired.close()
        # The housekeeper waits on the old core's waker: wake it, and it finds the new core.
        old.housekeeping.wake()
        self.nodes.restart_stopped(broker.cluster.nodes)  # the new core's nodes are all up
        return retired.ended


class _Generation:
    """The connections served by one core."""

    def __init__(self) -> None:
        self.scopes: set[trio.CancelScope] = set()
        self.closed = False
        self.ended = trio.Event()

    def close(self) -> None:
        self.closed = True
        for scope in self.scopes:
            scope.cancel()
        self._check_ended()

    def leave(self, scope: trio.CancelScope) -> None:
        self.scopes.discard(scope)
        self._check_ended()

    def _check_ended(self) -> None:
        if self.closed and not self.scopes:
            self.ended.set()


async def serve(
    broker: BrokerCore | ServedCore,
    host: str,
    port: int,
    *,
    coordinators: Coordinators | None = None,
    handlers: Mapping[int, Handler] | None = None,
    hooks: RequestHooks | None = None,
    listener_ports: Mapping[str, int] | None = None,
    manage_gc: bool = False,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the Kafka protocol on every listener of the broker's config until cancelled; reports the first
    listener's bound port once all listen.

    Without a `listeners` setting the broker has one PLAINTEXT listener, on host:port. With one, each
    listener binds its own address; `listener_ports` (by listener name) overrides their ports, so a
    restarted broker comes back where its clients knew it. `broker` is a core, or a `ServedCore` whose
    core the caller may swap while this serves. `coordinators` are the broker's (made here when not given:
    a broker restarted on its data recovers them before it listens). `hooks` may intervene in and observe
    every request (kemu.server.hooks). `manage_gc`: the process is the server's own (`kemu serve`), and its
    full garbage collections are kept short (kemu.server.gc_policy); not for a broker inside a test's process."""
    table = all_handlers() if handlers is None else handlers
    served = broker if isinstance(broker, ServedCore) else ServedCore(broker, coordinators)
    core = served.broker
    configured = "listeners" in core.config.properties
    securities = [core.security.by_listener[e.name] for e in core.security.listeners.listeners]
    contexts = {sec.endpoint.name: _server_context(sec) for sec in securities}
    # Every node of the cluster gets every listener; the first node's first is `port`, the bootstrap address.
    # A connection finds its listener by the port it arrived on.
    by_port: dict[int, ListenerSecurity] = {}
    bound: list[tuple[int, list[trio.SocketListener]]] = []
    try:
        for node in core.cluster:
            sockets: list[trio.SocketListener] = []
            bound.append((node.node_id, sockets))
            for index, security in enumerate(securities):
                endpoint = security.endpoint
                if not configured:
                    where = (host, port if node.node_id == core.node_id else core.listen_port(node.node_id))
                elif node.node_id == core.node_id and endpoint.name in (listener_ports or {}):
                    where = (endpoint.host, (listener_ports or {})[endpoint.name])
                else:
                    where = (endpoint.host, core.listen_port(node.node_id, endpoint.name))
                opened = await open_listeners(*where)
                sockets.extend(opened)
                bound_port = opened[0].socket.getsockname()[1]
                by_port[bound_port] = security
                if index == 0:
                    node.port = bound_port
                core.bound_ports[(node.node_id, endpoint.name)] = bound_port
    except BaseException:
        for _, sockets in bound:
            for listener in sockets:
                listener.socket.close()
        raise
    core.hostname = socket.gethostname()

    limits = ServerLimits.from_config(served.broker.config)
    handoff = CpuHandoff()
    # The idle sweep has nothing to look at before the first connection: started then, so a broker no client
    # ever reaches (most of a test suite's) neither starts nor cancels the task.
    sweeping = False

    async def connection(node_id: int, stream: trio.SocketStream) -> None:
        nonlocal sweeping
        if not sweeping:
            sweeping = True
            nursery.start_soon(limits.expire_idle)
        generation, core, coordinated = served._generation, served.broker, served.coordinators
        with trio.CancelScope() as scope:
            generation.scopes.add(scope)
            try:
                peer = peer_of(stream)
                async with limits.connection(stream, peer[0]) as admitted:
                    if admitted:
                        security = by_port[stream.socket.getsockname()[1]]
                        context = contexts[security.endpoint.name]
                        secured = await _secure(stream, security, context, peer)
                        if secured is not None:
                            transport, principal = secured
                            await Connection(transport, core, coordinated, table, hooks, node_id,
                                             security=security, peer=peer, principal=principal,
                                             limits=limits, handoff=handoff).run()
            except Exception:
                # No input may take the broker down: a connection's failure ends that connection only.
                log.exception("connection failed")
            finally:
                generation.leave(scope)

    if manage_gc:
        POLICY.install()
    async with trio.open_nursery() as nursery:
        served.nodes.bind(nursery, connection)
        # Not nursery.start: whatever reaches the core before the housekeeper's first step sets its waker (a
        # handle's call) loses no wake-up, that first round running all that is due, so serving need not wait
        # for it; start's nursery and hand-over were a share of every test broker's start.
        nursery.start_soon(run_housekeeper, lambda: served.broker)
        # The first node's accept loop is this task's (the others' each a task of the nursery).
        first = served.nodes.serve_here(*bound[0])
        for node_id, sockets in bound[1:]:
            served.nodes.serve(node_id, sockets)
        for security in securities:
            endpoint = security.endpoint
            log.info("listening on %s port %d (listener %s, %s)", endpoint.host if configured else host,
                     core.bound_ports[(core.node_id, endpoint.name)], endpoint.name, endpoint.protocol)
        task_status.started(core.bound_ports[(core.node_id, securities[0].endpoint.name)])
        await first()


def _server_context(security: ListenerSecurity) -> ssl.SSLContext | None:
    if security.tls is None:
        return None
    from kemu.server.tls import server_context  # TLS settings and certificates: only for a TLS listener

    return server_context(security.tls)


async def _secure(stream: trio.SocketStream, security: ListenerSecurity, context: ssl.SSLContext | None,
                  peer: tuple[str, int]) -> tuple[trio.abc.Stream, str | None] | None:
    """The connection's transport once its TLS handshake (if any) is done, with the principal its client
    certificate names on an SSL listener; None when the handshake failed (the connection is closed)."""
    if context is None:
        return stream, None
    name = f"{peer[0]}:{peer[1]}"
    tls = trio.SSLStream(stream, context, server_side=True)
    try:
        await tls.do_handshake()
    except (trio.BrokenResourceError, trio.ClosedResourceError) as failed:
        # e.g. a PLAINTEXT client on a TLS port, or a client certificate the trust store refuses
        log.warning("closing connection from %s: TLS handshake failed on listener %s (%s): %s", name,
                    security.endpoint.name, security.endpoint.protocol, failed.__cause__ or failed)
        await _send_alert(tls, stream)
        await trio.aclose_forcefully(stream)
        return None
    if security.endpoint.protocol != "SSL":
        return tls, None
    from kemu.security.principal import NoMatchingRule, PrincipalMapper
    from kemu.server.tls import certificate_principal

    try:
        principal = certificate_principal(tls.getpeercert(), security.principal_mapper or PrincipalMapper())
    except NoMatchingRule as exc:
        log.warning("closing connection from %s: %s (ssl.principal.mapping.rules)", name, exc)
        await trio.aclose_forcefully(tls)
        return None
    return tls, principal


ALERT_TIMEOUT_S = 1.0


async def _send_alert(tls: trio.SSLStream[trio.SocketStream], stream: trio.SocketStream) -> None:
    """Send what OpenSSL wrote when it failed the handshake (the alert: unknown CA, bad certificate), as
    Kafka's SslTransportLayer flushes it before closing; trio's SSLStream drops it when it breaks. Best
    effort, and bounded: a client that does not read loses nothing but the alert."""
    outgoing = getattr(tls, "_outgoing", None)  # trio.SSLStream's MemoryBIO of bytes not yet sent
    if not isinstance(outgoing, ssl.MemoryBIO) or not outgoing.pending:
        return
    with trio.move_on_after(ALERT_TIMEOUT_S):
        try:
            await stream.send_all(outgoing.read())
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass


async def open_listeners(host: str, port: int) -> list[trio.SocketListener]:
    """One listener per address `host` resolves to, all on the same port — also when port is 0, where
    the first bind picks the port the others then share."""
    infos = await trio.socket.getaddrinfo(_ascii(host) or None, port, type=socket.SOCK_STREAM,
                                          flags=socket.AI_PASSIVE)
    listeners: list[trio.SocketListener] = []
    unsupported: list[OSError] = []
    try:
        for family, kind, proto, _, address in infos:
            try:
                sock = trio.socket.socket(family, kind, proto)
            except OSError as exc:
                if exc.errno == errno.EAFNOSUPPORT:
                    unsupported.append(exc)
                    continue
                raise
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                if listeners:
                    address = (address[0], listeners[0].socket.getsockname()[1], *address[2:])
                await sock.bind(address)
                sock.listen(BACKLOG)
            except OSError as exc:
                sock.close()
                if exc.errno == errno.EADDRNOTAVAIL and listeners:
                    unsupported.append(exc)  # e.g. ::1 on a host without IPv6
                    continue
                raise
            listeners.append(trio.SocketListener(sock))
    except BaseException:
        for listener in listeners:
            listener.socket.close()
        raise
    if not listeners:
        raise OSError(errno.EAFNOSUPPORT, f"cannot listen on {host}:{port}: {unsupported}")
    return listeners


def _ascii(host: str) -> str | bytes:
    """`host` as the bytes Python's getaddrinfo would make of it, where they are its ASCII bytes: given a str,
    it encodes it with the idna codec, which imports encodings.idna and stringprep (~0.6 ms of a start-up)
    only to hand an ASCII name back unchanged. A name the codec refuses (an empty or overlong label) or
    would change (non-ASCII) stays a str, for getaddrinfo to refuse or encode as before."""
    try:
        encoded = host.encode("ascii")
    except UnicodeEncodeError:
        return host
    *labels, last = encoded.split(b".")
    if all(0 < len(label) < 64 for label in labels) and len(last) < 64:
        return encoded
    return host
