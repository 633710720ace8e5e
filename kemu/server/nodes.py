"""The listeners of the cluster's nodes, each of which can be stopped (its listener closed, its connections
cut) and started again on the same addresses while the others serve on."""

from __future__ import annotations

import errno
import functools
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Collection
from typing import Any

import trio

ConnectionHandler = Callable[[int, trio.SocketStream], Awaitable[None]]
_BACKLOG = 128
# trio.serve_listeners' answer to an accept that fails for want of resources: wait and accept again.
_ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
_ACCEPT_RETRY_S = 0.1

log = logging.getLogger("kemu.server")


class NodeListeners:
    """Touched only on the server's Trio thread."""

    def __init__(self) -> None:
        self._nursery: trio.Nursery | None = None
        self._handler: ConnectionHandler | None = None
        self._scopes: dict[int, trio.CancelScope] = {}
        self._listeners: dict[int, list[trio.SocketListener]] = {}
        # What each node's listeners were bound to, so that a node starts again where clients knew it.
        self._addresses: dict[int, list[tuple[int, Any]]] = {}

    def bind(self, nursery: trio.Nursery, handler: ConnectionHandler) -> None:
        self._nursery, self._handler = nursery, handler

    def serve(self, node_id: int, listeners: list[trio.SocketListener]) -> None:
        """Serve `node_id`'s bound listeners until the node stops or the server does."""
        assert self._nursery is not None
        self._nursery.start_soon(self.serve_here(node_id, listeners))

    def serve_here(self, node_id: int, listeners: list[trio.SocketListener]) -> Callable[[], Awaitable[None]]:
        """As `serve`, but the node's accept loop is what this returns, for the caller's own task to await (the
        server's, for its first node: a task less to start and cancel)."""
        assert self._handler is not None
        self._addresses[node_id] = [(ln.socket.family, ln.socket.getsockname()) for ln in listeners]
        scope = trio.CancelScope()
        self._scopes[node_id] = scope
        self._listeners[node_id] = listeners
        return functools.partial(self._run, scope, functools.partial(self._handler, node_id), listeners)

    @staticmethod
    async def _run(scope: trio.CancelScope, handler: Callable[[trio.SocketStream], Awaitable[None]],
                   listeners: list[trio.SocketListener]) -> None:
        try:
            with scope:
                # The connections run in this nursery, inside the scope: stopping the node ends them with its
                # listener. trio.serve_listeners, which this replaces, gave every listener a task of its own
                # besides this one: here the first listener's accept loop is this task (most nodes have one).
                async with trio.open_nursery() as connections:
                    for listener in listeners[1:]:
                        connections.start_soon(_accept, listener, connections, handler)
                    await _accept(listeners[0], connections, handler)
        except trio.ClosedResourceError:
            if not scope.cancel_called:
                raise
        finally:
            for listener in listeners:
                listener.socket.close()

    def running(self, node_id: int) -> bool:
        scope = self._scopes.get(node_id)
        return scope is not None and not scope.cancel_called

    def stop(self, node_id: int) -> None:
        """Close the node's listener now (a client connecting after this is refused) and end its
        connections."""
        scope = self._scopes.get(node_id)
        if scope is not None:
            scope.cancel()
        for listener in self._listeners.pop(node_id, []):
            listener.socket.close()

    def start(self, node_id: int) -> None:
        """Listen again on the node's addresses (bound before this returns, so clients may connect at once)."""
        if self.running(node_id):
            return
        self.serve(node_id, [_rebind(family, address) for family, address in self._addresses[node_id]])

    def restart_stopped(self, node_ids: Collection[int]) -> None:
        for node_id in self._addresses:
            if node_id in node_ids and not self.running(node_id):
                self.start(node_id)


async def _accept(listener: trio.SocketListener, connections: trio.Nursery,
                  handler: Callable[[trio.SocketStream], Awaitable[None]]) -> None:
    """Accept connections forever, each served by `handler` in `connections`, as trio.serve_listeners does:
    running out of descriptors or memory pauses accepting rather than ending the listener."""
    while True:
        try:
            stream = await listener.accept()
        except OSError as exc:
            if exc.errno not in _ACCEPT_CAPACITY_ERRNOS:
                raise
            log.error("accept returned %s (%s); retrying in %s seconds", errno.errorcode[exc.errno],
                      os.strerror(exc.errno), _ACCEPT_RETRY_S, exc_info=True)
            await trio.sleep(_ACCEPT_RETRY_S)
        else:
            connections.start_soon(_serve_connection, handler, stream)


async def _serve_connection(handler: Callable[[trio.SocketStream], Awaitable[None]],
                            stream: trio.SocketStream) -> None:
    try:
        await handler(stream)
    finally:
        await trio.aclose_forcefully(stream)


def _rebind(family: int, address: Any) -> trio.SocketListener:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(trio.socket.from_stdlib_socket(sock))
