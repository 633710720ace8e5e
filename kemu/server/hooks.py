"""Request hooks: what a test tool may do to a request on its way through dispatch, and see of it after.

A broker served without hooks (`serve(..., hooks=None)`, the default) pays one `is None` test per request.
With a `RequestHooks`:

- **interceptors** run before the handler, in the order they were added; the first to return an
  `Intervention` decides what happens to the request: answered with an error code (the API's own error
  response, as if its handler had refused it), dropped (the connection closed before or after the handler
  runs), its response delayed, or its `throttle_time_ms` set;
- **observers** see every exchange once its outcome is known: the decoded request and the response body
  that was sent (None when nothing was).

Both run on the broker's Trio thread, between the core's steps, so they may read the core freely but must
not block. A hook that raises is logged and skipped: a test tool must never take the broker down.

The server room defines the mechanism only; what to intercept (fault scripts) and what to keep (the
transcript, the exactly-once checker) live above it, in `kemu.testing`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NamedTuple

from kemu.handlers import Handler
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

log = logging.getLogger("kemu.server")


# NamedTuples, not frozen dataclasses: every server imports this module, hooks or not, and a dataclass
# definition compiles its generated methods (~0.5 ms each on a slow machine).
class Intervention(NamedTuple):
    """What an interceptor does to one request. Fields combine: e.g. an error answered after a delay, or
    a handled request whose response carries a throttle time."""

    # Answer with this error (the handler does not run); an API without an error response closes instead.
    error: ErrorCode | None = None
    message: str | None = None
    # Close the connection without running the handler: the client sees its request vanish.
    drop_before: bool = False
    # Run the handler (its effect on the core stays), then close without sending the response.
    drop_after: bool = False
    # Hold the response back this long (real seconds: request waits stay on real time, as clients expect).
    delay_s: float = 0.0
    # Set the response's throttle_time_ms (ignored by a version whose response has none).
    throttle_time_ms: int | None = None


class Exchange(NamedTuple):
    """One request and its outcome, as an observer sees it."""

    ctx: RequestContext
    handler: Handler
    request: Request
    # The response body the broker produced; None when there is none (acks=0 Produce, a request dropped
    # before handling, a failure that closed the connection instead of answering).
    response: dict[str, Any] | None
    # Whether a response went back to the client: not for acks=0, nor when a fault dropped it.
    sent: bool
    # The connection was closed after this request (by a fault, or because the broker could not answer).
    closed: bool = False
    # The intervention applied to it, if any.
    intervention: Intervention | None = None

    @property
    def api_key(self) -> int:
        return self.request.header.api_key

    @property
    def api_version(self) -> int:
        return self.request.header.api_version

    @property
    def api_name(self) -> str:
        return self.handler.api.name

    @property
    def client_id(self) -> str | None:
        return self.request.header.client_id

    @property
    def correlation_id(self) -> int:
        return self.request.header.correlation_id


Interceptor = Callable[[RequestContext, Handler, Request], "Intervention | None"]
Observer = Callable[[Exchange], None]


class RequestHooks:
    """The interceptors and observers one served broker consults. Add and remove them at any time from
    the broker's thread (a test handle does it through its `call`)."""

    __slots__ = ("_interceptors", "_observers")

    def __init__(self) -> None:
        self._interceptors: list[Interceptor] = []
        self._observers: list[Observer] = []

    def intercept(self, interceptor: Interceptor) -> Callable[[], None]:
        """Add `interceptor`; returns the function that removes it again."""
        self._interceptors.append(interceptor)
        return lambda: _discard(self._interceptors, interceptor)

    def observe(self, observer: Observer) -> Callable[[], None]:
        """Add `observer`; returns the function that removes it again."""
        self._observers.append(observer)
        return lambda: _discard(self._observers, observer)

    @property
    def intercepting(self) -> bool:
        """Whether an interceptor may intervene (a delay or a dropped response needs a task of its own)."""
        return bool(self._interceptors)

    def before(self, ctx: RequestContext, handler: Handler, request: Request) -> Intervention | None:
        """The first intervention any interceptor asks for (dispatch calls this before the handler)."""
        for interceptor in tuple(self._interceptors):
            try:
                intervention = interceptor(ctx, handler, request)
            except Exception:
                log.exception("request interceptor %r failed", interceptor)
                continue
            if intervention is not None:
                return intervention
        return None

    def after(self, exchange: Exchange) -> None:
        """Tell every observer (dispatch calls this once the request's outcome is known)."""
        for observer in tuple(self._observers):
            try:
                observer(exchange)
            except Exception:
                log.exception("request observer %r failed", observer)


def _discard(items: list[Any], item: object) -> None:
    # Remove by identity: two equal bound methods of different objects must not remove each other.
    for index, present in enumerate(items):
        if present is item:
            del items[index]
            return
