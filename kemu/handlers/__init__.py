"""One module per API key (`k03_metadata.py`, `k18_api_versions.py`, ...): decode → core call → response.

Each module exports `KEY` and `async def handle(ctx, request) -> dict | None` (None: the request gets no
response, as acks=0 Produce). A module answering fewer versions than its wire declaration has sets
`VERSIONS = NARROWED[KEY]` from `kemu.handlers.versions`, the table the registry reads without importing
the module; the others' ranges come from `kemu.wire.apis.VERSIONS`, so neither a handler module nor its
wire declaration is imported before its API is first asked for. A module may export
`error_response(request, code, message) -> dict | None`, Kafka's `getErrorResponse` for that API (most are
built by `kemu.handlers.error_responses` from the response schema), which answers a request the handler
refused with `ApiError` or failed on unexpectedly; without it (or when it returns None, as Kafka's does for
an acks=0 Produce) such a failure closes the connection.
Handlers leave `throttle_time_ms` out but Produce and Fetch, which a client quota throttles
(kemu.broker.client_quotas, `RequestContext.throttle_ms`); the encoder writes every absent field as its
schema default, here 0. Modules open with a note of what each version changes and what is left out.

ApiVersions advertises exactly the keys found here, with their ranges (from `advertised_min_version`: below
the lowest served version for Produce, as Kafka 4's broker listener advertises it, `versions.ADVERTISED_MIN`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Awaitable, Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from kemu.handlers.versions import ADVERTISED_MIN, NARROWED
from kemu.wire.apis import VERSIONS, get_api, source_modules
from kemu.wire.schema import Api

if TYPE_CHECKING:
    from kemu.handlers.context import Continuation, RequestContext
    from kemu.wire.codec import Request
    from kemu.wire.errors import ErrorCode

# A handler answers with a response body, None (no response), or a Continuation that finishes it later.
HandleFn = Callable[["RequestContext", "Request"], Awaitable["dict[str, Any] | Continuation[dict[str, Any]] | None"]]
ErrorResponseFn = Callable[["Request", "ErrorCode", "str | None"], "dict[str, Any] | None"]

_MODULE_NAME = re.compile(r"k(\d\d)_\w+")


class Handler:
    """One API's handler. Discovered handlers import their module, and their API's wire declaration, on
    first use: a broker answering its first Metadata should not pay for every API it may never be asked
    for."""

    __slots__ = ("key", "_api", "min_version", "max_version", "advertised_min_version", "_module_name", "_handle",
                 "_error_response", "_suspends")

    def __init__(self, key: int, api: Api | None, min_version: int, max_version: int,
                 handle: HandleFn | None = None, error_response: ErrorResponseFn | None = None, *,
                 module_name: str | None = None, suspends: bool = True,
                 advertised_min_version: int | None = None) -> None:
        if handle is None and module_name is None:
            raise ValueError("a handler needs a handle function or a module to load it from")
        self.key = key
        self._api = api  # None: kemu.wire.apis declares it, loaded when first wanted
        self.min_version = min_version
        self.max_version = max_version
        # What ApiVersions lists as the minimum: the lowest version served, but for Produce (ADVERTISED_MIN).
        self.advertised_min_version = min_version if advertised_min_version is None else advertised_min_version
        self._module_name = module_name
        self._handle = handle
        self._error_response = error_response
        self._suspends = suspends

    def _load(self) -> None:
        if self._handle is None and self._module_name is not None:
            module = importlib.import_module(self._module_name)
            self._error_response = getattr(module, "error_response", None)
            self._suspends = bool(getattr(module, "SUSPENDS", False))
            self._handle = module.handle

    @property
    def api(self) -> Api:
        if self._api is None:
            declared = get_api(self.key)
            if declared is None:
                raise RuntimeError(f"no wire declaration for API key {self.key}")
            self._api = declared
        return self._api

    @property
    def handle(self) -> HandleFn:
        self._load()
        assert self._handle is not None
        return self._handle

    @property
    def error_response(self) -> ErrorResponseFn | None:
        self._load()
        return self._error_response

    @property
    def suspends(self) -> bool:
        """Whether the handler may wait (its module says `SUSPENDS = True`): a long-polling Fetch, a JoinGroup.
        One that never waits can run on the connection's reader; one that may wait gets a task, so the
        connection's next request can start while it waits. A handler given as a function is assumed to."""
        self._load()
        return self._suspends

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


@cache
def all_handlers() -> dict[int, Handler]:
    found: dict[int, Handler] = {}
    for module in source_modules(__path__):
        name = _MODULE_NAME.fullmatch(module)
        if name is None:
            continue
        key = int(name.group(1))
        declared = VERSIONS.get(key)
        if declared is None:
            raise RuntimeError(f"{module}: no wire declaration for API key {key}")
        low, high = NARROWED.get(key, declared)
        if low < declared[0] or high > declared[1] or low > high:
            raise RuntimeError(f"{module}: versions {low}-{high} outside the declared {declared[0]}-{declared[1]}")
        if key in found:
            raise RuntimeError(f"API key {key} handled twice")
        found[key] = Handler(key, None, low, high, module_name=f"{__name__}.{module}",
                             advertised_min_version=ADVERTISED_MIN.get(key))
    if stray := sorted((NARROWED.keys() | ADVERTISED_MIN.keys()) - found.keys()):
        raise RuntimeError(f"kemu.handlers.versions narrows API keys no module handles: {stray}")
    return dict(sorted(found.items()))
