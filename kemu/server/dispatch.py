"""One admitted request through its handler to the bytes of its response, with no I/O.

Kafka answers a request its handler refused (`ApiError`) or failed on with the API's own error response
(`getErrorResponse`); an API without one, or a request that wants no response (an acks=0 Produce), gets its
connection closed instead. A response that cannot be encoded closes the connection too. The connection
writes what comes back; the in-process test harness (kemu/testing/harness.py) calls it directly.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import trio

from kemu.broker.errors import ApiError
from kemu.handlers import Handler
from kemu.handlers.context import Continuation, RequestContext
from kemu.server.hooks import Exchange, Intervention, RequestHooks
from kemu.wire import codec
from kemu.wire.buffers import Part, materialized
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

log = logging.getLogger("kemu.server")


class Reply(NamedTuple):
    """What to send for one request: `payload` (a response without its size prefix, as buffers to send one
    after the other; None: nothing), and whether to close the connection once it (and everything before
    it) has been sent. A tuple: one is made per request."""

    payload: list[Part] | None
    close: bool = False
    # The response body the broker produced (what hooks observe): what `payload` encodes, or what a fault
    # kept from the client. None when there is none. Hooks see it through `observed`, regions read.
    body: dict[str, Any] | None = None


async def dispatch(handler: Handler, request: Request, ctx: RequestContext, peer: str,
                   hooks: RequestHooks | None = None) -> Reply:
    """Run `handler` on `request`; `peer` names the connection in the log. The request's turn at the core
    ends (`ctx.detach()`) when the handler does, if it has not detached before. `hooks` may intervene
    before the handler runs and observe the outcome (kemu.server.hooks)."""
    if log.isEnabledFor(logging.DEBUG):
        _log_request(handler, request, peer)
    if hooks is None:
        return await _run(handler, request, ctx, peer)
    intervention = hooks.before(ctx, handler, request)
    if intervention is None:
        reply = await _run(handler, request, ctx, peer)
        hooks.after(_exchange(ctx, handler, request, reply))
        return reply
    reply = await _intervened(handler, request, ctx, peer, intervention)
    hooks.after(_exchange(ctx, handler, request, reply, intervention))
    return reply


def _exchange(ctx: RequestContext, handler: Handler, request: Request, reply: Reply,
              intervention: Intervention | None = None) -> Exchange:
    """What hooks observe of `reply`: its body with the regions of files in it read (a transcript, a checker
    or a fault reads records as bytes; the payload still sends them from the file). Only a Fetch answer holds
    regions: no other body is walked for them (a hook sees every answer of a test's broker)."""
    body = reply.body
    if handler.key == _FETCH:
        try:
            body = materialized(body)
        except OSError:  # a file truncated meanwhile: the region is left as it is (its send closes the connection)
            pass
    return Exchange(ctx, handler, request, body, reply.payload is not None, reply.close, intervention)


_FETCH = 1  # the one API whose answers hold regions of files (kemu.log's read_for_sending)


def _log_request(handler: Handler, request: Request, peer: str) -> None:
    header = request.header
    log.debug("%s v%d (correlation id %d, client id %r) from %s", handler.api.name, header.api_version,
              header.correlation_id, header.client_id, peer)


class Unfinished:
    """A request whose handler answered with a Continuation: `finish()` waits for it and gives the Reply."""

    @property
    def holds_turn(self) -> bool:
        return self._continuation.holds_turn

    __slots__ = ("_handler", "_request", "_ctx", "_peer", "_hooks", "_continuation")

    def __init__(self, handler: Handler, request: Request, ctx: RequestContext, peer: str,
                 hooks: RequestHooks | None, continuation: Continuation[dict[str, Any]]) -> None:
        self._handler, self._request, self._ctx, self._peer = handler, request, ctx, peer
        self._hooks, self._continuation = hooks, continuation

    @property
    def ctx(self) -> RequestContext:
        return self._ctx

    async def finish(self) -> Reply:
        handler, request, ctx = self._handler, self._request, self._ctx
        reply = await _finish(handler, request, ctx, self._peer, self._continuation)
        if self._hooks is not None:
            self._hooks.after(_exchange(ctx, handler, request, reply))
        return reply


async def dispatch_or_defer(handler: Handler, request: Request, ctx: RequestContext, peer: str,
                            hooks: RequestHooks | None = None) -> Reply | Unfinished:
    """`dispatch` for a request run where it must not wait (a connection's reader): a handler's
    Continuation comes back unfinished, for the caller to finish in a task of its own. `hooks` must not be
    intercepting (an intervention may delay; such a request is dispatched in a task instead)."""
    if log.isEnabledFor(logging.DEBUG):
        _log_request(handler, request, peer)
    body, close = await _start(handler, request, ctx, peer)
    if isinstance(body, Continuation):
        return Unfinished(handler, request, ctx, peer, hooks, body)
    ctx.detach()
    if handler.api.key in _ALWAYS_ON_LOOP:
        reply = _encoded(handler, request, body, close, peer)
    else:
        # A handler that never waits may still answer big (ListOffsets or DescribeLogDirs of thousands of
        # partitions): the reader awaits its encoding on a thread as a suspending handler's task would.
        reply = await _encoded_off_loop_if_big(handler, request, body, close, peer)
    if hooks is not None:
        hooks.after(_exchange(ctx, handler, request, reply))
    return reply


async def _intervened(handler: Handler, request: Request, ctx: RequestContext, peer: str,
                      intervention: Intervention) -> Reply:
    if intervention.drop_before:
        ctx.detach()
        log.info("closing connection from %s before %s v%d: a fault drops it", peer, handler.api.name,
                 request.version)
        return Reply(None, True)
    if intervention.error is not None:
        ctx.detach()
        body, close = _error_body(handler, request, intervention.error, intervention.message, peer)
        reply = _encoded(handler, request, body, close, peer)
    else:
        reply = await _run(handler, request, ctx, peer)
    if intervention.delay_s > 0:
        await trio.sleep(intervention.delay_s)
    if intervention.drop_after:
        log.info("closing connection from %s after %s v%d: a fault drops its response", peer, handler.api.name,
                 request.version)
        # The body stays for the hooks to see what the client missed; nothing is sent.
        return Reply(None, True, reply.body)
    if intervention.throttle_time_ms is not None and reply.body is not None:
        body = {**reply.body, "throttle_time_ms": intervention.throttle_time_ms}
        return _encoded(handler, request, body, reply.close, peer)
    return reply


async def _run(handler: Handler, request: Request, ctx: RequestContext, peer: str) -> Reply:
    body, close = await _start(handler, request, ctx, peer)
    if isinstance(body, Continuation):
        if body.holds_turn:
            try:
                return await _finish(handler, request, ctx, peer, body)
            finally:
                ctx.detach()
        ctx.detach()  # the handler is about to wait: the connection's next request may start
        return await _finish(handler, request, ctx, peer, body)
    ctx.detach()
    return await _encoded_off_loop_if_big(handler, request, body, close, peer)


# Encoding costs about a microsecond per element of a response's arrays: a DescribeConfigs of 2,000 topics
# (~300,000 elements) held the event loop for 0.7 s, every other client waiting. Past this many elements
# (a few milliseconds of encoding) an answer is encoded on a worker thread, which the GIL lets the event
# loop interrupt every few milliseconds.
OFF_LOOP_ELEMENTS = 5_000


# Answers never counted, always encoded on the loop. Produce and Fetch, the busiest: one element or so per
# partition of the request, which holds under 5,000 partitions but for rare clients, while looking costs a
# small answer a few microseconds. ApiVersions (every connection's first request): one entry per API served,
# about 70, whose count was most of its cost (61 us of a 170 us round trip).
_ALWAYS_ON_LOOP = frozenset({0, 1, 18})


def elements_over(body: Any, limit: int) -> bool:
    """Whether `body` holds more than `limit` dicts and array elements; looks at no more than that many."""
    pending = [body]
    seen = 0
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        for child in children:
            if isinstance(child, (dict, list)):
                seen += 1
                if seen > limit:
                    return True
                pending.append(child)
    return False


async def _encoded_off_loop_if_big(handler: Handler, request: Request, body: dict[str, Any] | None,
                                   close: bool, peer: str) -> Reply:
    if body is not None and elements_over(body, OFF_LOOP_ELEMENTS):
        # The body is the handler's and no longer changes: the thread reads what the loop no longer touches.
        return await trio.to_thread.run_sync(_encoded, handler, request, body, close, peer)
    return _encoded(handler, request, body, close, peer)


async def _start(handler: Handler, request: Request, ctx: RequestContext,
                 peer: str) -> tuple[dict[str, Any] | Continuation[dict[str, Any]] | None, bool]:
    """The handler's answer, or the error response it failed with; and whether to close the connection.
    The turn is still the request's: the caller detaches."""
    try:
        return await handler.handle(ctx, request), False
    except ApiError as exc:
        return _error_body(handler, request, exc.code, exc.message, peer)
    except OSError as exc:
        return _storage_failed(handler, request, exc, peer)
    except Exception:
        log.exception("%s v%d from %s failed", handler.api.name, request.version, peer)
        return _error_body(handler, request, ErrorCode.UNKNOWN_SERVER_ERROR, None, peer)
    except BaseException:
        ctx.detach()
        raise


async def _finish(handler: Handler, request: Request, ctx: RequestContext, peer: str,
                  continuation: Continuation[dict[str, Any]]) -> Reply:
    close = False
    try:
        body = await continuation.finish()
    except ApiError as exc:
        body, close = _error_body(handler, request, exc.code, exc.message, peer)
    except OSError as exc:
        body, close = _storage_failed(handler, request, exc, peer)
    except Exception:
        log.exception("%s v%d from %s failed", handler.api.name, request.version, peer)
        body, close = _error_body(handler, request, ErrorCode.UNKNOWN_SERVER_ERROR, None, peer)
    return await _encoded_off_loop_if_big(handler, request, body, close, peer)


def _storage_failed(handler: Handler, request: Request, exc: OSError,
                    peer: str) -> tuple[dict[str, Any] | None, bool]:
    """A handler's files could not be written or read (a full disk, an I/O error): Kafka's KafkaStorageException,
    KAFKA_STORAGE_ERROR, with one line in the log rather than a traceback for every request while the disk stays
    full."""
    log.error("%s v%d from %s failed on storage: %s", handler.api.name, request.version, peer, exc.strerror or exc)
    return _error_body(handler, request, ErrorCode.KAFKA_STORAGE_ERROR, None, peer)


def _encoded(handler: Handler, request: Request, body: dict[str, Any] | None, close: bool, peer: str) -> Reply:
    if body is None:
        return Reply(None, close)
    try:
        payload = codec.encode_response_parts(handler.api, request.version, request.header.correlation_id, body)
    except Exception as exc:
        # Imported here: only construct's encoder raises it, and a serve that never fails to encode never
        # loads construct (tests/server/test_serve_startup.py).
        from kemu.wire.primitives import StringTooLong

        if not isinstance(exc, StringTooLong):
            log.exception("closing connection from %s: cannot encode %s v%d response", peer, handler.api.name,
                          request.version)
            return Reply(None, True)
        # An answer quoting a long name of its request: Kafka's writer refuses it too, and KafkaApis'
        # handleError answers the request's error response with UNKNOWN_SERVER_ERROR (no message) instead.
        log.warning("%s v%d from %s: the answer cannot be written (%s); answered UNKNOWN_SERVER_ERROR",
                    handler.api.name, request.version, peer, exc)
        error_body, error_close = _error_body(handler, request, ErrorCode.UNKNOWN_SERVER_ERROR, None, peer)
        if error_body is None:
            return Reply(None, True)
        try:
            payload = codec.encode_response_parts(handler.api, request.version, request.header.correlation_id,
                                                  error_body)
        except StringTooLong:
            log.warning("closing connection from %s: %s v%d's error response cannot be written either", peer,
                        handler.api.name, request.version)
            return Reply(None, True)
        return Reply(payload, close or error_close, error_body)
    return Reply(payload, close, body)


def _error_body(handler: Handler, request: Request, code: ErrorCode, message: str | None,
                peer: str) -> tuple[dict[str, Any] | None, bool]:
    """The error response to send, and whether to close the connection."""
    if handler.error_response is None:
        log.warning("closing connection from %s: %s v%d refused with %s", peer, handler.api.name,
                    request.version, code.name)
        return None, True
    body = handler.error_response(request, code, message)
    if body is None:
        # Kafka's getErrorResponse has nothing to send (an acks=0 Produce): it closes the connection
        # instead, so the client notices and refreshes its metadata.
        log.info("closing connection from %s: %s v%d failed with %s and wants no response", peer,
                 handler.api.name, request.version, code.name)
        return None, True
    return body, False
