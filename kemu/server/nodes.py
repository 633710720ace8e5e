"""The listeners of the cluster's nodes, each of which can be stopped (its listener closed, its connections
cut) and started again on the same addresses while the others serve on."""

from __future__ import annotations

import functools
import socket
from collections.abc import Awaitable, Callable, Collection
from typing import Any

import trio

ConnectionHandler = Callable[[int, trio.SocketStream], Awaitable[None]]
_BACKLOG = 128


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
        assert self._nursery is not None and self._handler is not None
        self._addresses[node_id] = [(ln.socket.family, ln.socket.getsockname()) for ln in listeners]
        scope = trio.CancelScope()
        self._scopes[node_id] = scope
        self._listeners[node_id] = listeners
        self._nursery.start_soon(self._run, scope, functools.partial(self._handler, node_id), listeners)

    @staticmethod
    async def _run(scope: trio.CancelScope, handler: Callable[[trio.SocketStream], Awaitable[None]],
                   listeners: list[trio.SocketListener]) -> None:
        try:
            with scope:
                # The connections run in serve_listeners' own nursery, inside the scope: stopping the node
                # ends them with its listener.
                await trio.serve_listeners(handler, listeners)
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
