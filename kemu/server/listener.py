"""TCP listeners: accept connections and run each in the same nursery, which owns every task.

`serve` is usable in-process (tests, a pytest fixture) and by the CLI; cancelling its caller's scope
closes the listeners and every connection.
"""

from __future__ import annotations

import errno
import logging
import socket
from collections.abc import Mapping

import trio

from kemu.broker.broker import Broker
from kemu.coordinators import Coordinators
from kemu.handlers import Handler, all_handlers
from kemu.server.connection import Connection
from kemu.server.hooks import RequestHooks
from kemu.server.housekeeper import run_housekeeper

log = logging.getLogger("kemu.server")

BACKLOG = 128


async def serve(
    broker: Broker,
    host: str,
    port: int,
    *,
    coordinators: Coordinators | None = None,
    handlers: Mapping[int, Handler] | None = None,
    hooks: RequestHooks | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the Kafka protocol on host:port until cancelled; reports the bound port once listening.

    `coordinators` are the broker's (made here when not given: a broker restarted on its data recovers
    them before it listens). `hooks` may intervene in and observe every request (kemu.server.hooks)."""
    table = all_handlers() if handlers is None else handlers
    coordinated = Coordinators(broker) if coordinators is None else coordinators
    listeners = await open_listeners(host, port)
    bound = listeners[0].socket.getsockname()[1]
    broker.bound_port = bound
    broker.hostname = socket.gethostname()

    async def connection(stream: trio.SocketStream) -> None:
        try:
            await Connection(stream, broker, coordinated, table, hooks).run()
        except Exception:
            # No input may take the broker down: a connection's failure ends that connection only.
            log.exception("connection failed")

    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(run_housekeeper, broker)
            await nursery.start(trio.serve_listeners, connection, listeners)
            log.info("listening on %s port %d", host, bound)
            task_status.started(bound)
    finally:
        for listener in listeners:
            listener.socket.close()


async def open_listeners(host: str, port: int) -> list[trio.SocketListener]:
    """One listener per address `host` resolves to, all on the same port — also when port is 0, where
    the first bind picks the port the others then share."""
    infos = await trio.socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
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
