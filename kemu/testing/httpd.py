"""A small HTTP/1.1 server on Trio, enough for the control endpoint's JSON requests.

The standard library's `http.server` would need a thread per connection and `socket` for an IPv6 bind; this
serves on the Kafka listener's own `open_listeners`, so `--host localhost` or `::` binds the control port the
way it binds the broker's. It speaks what curl, node's fetch and urllib send: a request line, headers, a
body of Content-Length bytes (after `100 Continue` when asked), persistent connections unless either side
says `close`. It does not take chunked request bodies (411), which none of those clients send for a JSON
body of known length.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import parse_qs, unquote, urlsplit

import trio

from kemu.server.listener import open_listeners

log = logging.getLogger("kemu.control")

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024
# A connection with no request in flight may idle this long; a client that holds one open for longer
# reconnects, which every HTTP client does on its own.
IDLE_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class HttpRequest:
    method: str
    path: str  # percent-decoded, without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


HttpHandler = Callable[[HttpRequest], Awaitable[HttpResponse]]


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def serve_http(handler: HttpHandler, host: str, port: int, *,
                     task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve `handler` on host:port until cancelled; reports the bound port once listening."""
    listeners = await open_listeners(host, port)
    try:
        async def connection(stream: trio.SocketStream) -> None:
            try:
                await _Connection(stream, handler).run()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # the client went away; nothing to answer
            except Exception:
                log.exception("control connection failed")

        async with trio.open_nursery() as nursery:
            await nursery.start(trio.serve_listeners, connection, listeners)
            task_status.started(listeners[0].socket.getsockname()[1])
    finally:
        for listener in listeners:
            listener.socket.close()


class _Connection:
    def __init__(self, stream: trio.SocketStream, handler: HttpHandler) -> None:
        self.stream = stream
        self.handler = handler
        self.buffer = bytearray()

    async def run(self) -> None:
        async with self.stream:
            while True:
                head = None
                with trio.move_on_after(IDLE_TIMEOUT_S):
                    head = await self._read_head()
                if head is None:
                    return
                try:
                    request, keep_alive = await self._parse(head)
                except _BadRequest as bad:
                    await self._send(HttpResponse(bad.status, _error_body(bad.status, str(bad))), keep_alive=False)
                    return
                response = await self.handler(request)
                await self._send(response, keep_alive=keep_alive)
                if not keep_alive:
                    return

    async def _read_head(self) -> bytes | None:
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end >= 0:
                head = bytes(self.buffer[:end])
                del self.buffer[:end + 4]
                return head
            if len(self.buffer) > MAX_HEAD_BYTES:
                return None
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                return None
            self.buffer += chunk

    async def _read_body(self, length: int) -> bytes:
        while len(self.buffer) < length:
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                raise _BadRequest(HTTPStatus.BAD_REQUEST, "the body ended early")
            self.buffer += chunk
        body = bytes(self.buffer[:length])
        del self.buffer[:length]
        return body

    async def _parse(self, head: bytes) -> tuple[HttpRequest, bool]:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest(HTTPStatus.BAD_REQUEST, f"not an HTTP/1.x request line: {lines[0]!r}")
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise _BadRequest(HTTPStatus.BAD_REQUEST, f"not a header: {line!r}")
            headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        if "transfer-encoding" in headers:
            raise _BadRequest(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            raise _BadRequest(HTTPStatus.BAD_REQUEST, "Content-Length is not a number") from None
        if not 0 <= length <= MAX_BODY_BYTES:
            raise _BadRequest(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a body of {length} bytes")
        if length and headers.get("expect", "").lower() == "100-continue":
            await self.stream.send_all(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await self._read_body(length)
        split = urlsplit(target)
        request = HttpRequest(method.upper(), unquote(split.path), parse_qs(split.query, keep_blank_values=True),
                              headers, body)
        return request, keep_alive

    async def _send(self, response: HttpResponse, *, keep_alive: bool) -> None:
        reason = HTTPStatus(response.status).phrase
        head = [f"HTTP/1.1 {response.status} {reason}", f"Content-Length: {len(response.body)}",
                f"Connection: {'keep-alive' if keep_alive else 'close'}"]
        if response.body:
            head.append(f"Content-Type: {response.content_type}")
        head.extend(f"{name}: {value}" for name, value in response.headers.items())
        await self.stream.send_all(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body)


def json_body(document: object) -> bytes:
    """A JSON document as a response body, ending in a newline as a terminal (curl) wants it."""
    return (json.dumps(document) + "\n").encode()


def _error_body(status: int, message: str) -> bytes:
    return json_body({"error": {"code": HTTPStatus(status).name, "message": message}})
