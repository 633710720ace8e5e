"""One module per API key (`k03_metadata.py`, `k18_api_versions.py`, ...): decode → core call → response.

Each module exports `KEY`, optionally `VERSIONS` (min, max) narrowing the declared range, and
`async def handle(ctx, request) -> dict | None` (None: the request gets no response, as acks=0 Produce).
It may export `error_response(request, code, message) -> dict | None`, Kafka's `getErrorResponse` for that
API, which answers a request the handler refused with `ApiError` or failed on unexpectedly; without it (or
when it returns None, as Kafka's does for an acks=0 Produce) such a failure closes the connection.
Modules open with a note of what each version changes and what is left out.

ApiVersions advertises exactly the keys found here, with their ranges.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from kemu.wire.apis import get_api
from kemu.wire.schema import Api

if TYPE_CHECKING:
    from kemu.handlers.context import RequestContext
    from kemu.wire.codec import Request
    from kemu.wire.errors import ErrorCode

HandleFn = Callable[["RequestContext", "Request"], Awaitable["dict[str, Any] | None"]]
ErrorResponseFn = Callable[["Request", "ErrorCode", "str | None"], "dict[str, Any] | None"]

_MODULE_NAME = re.compile(r"k(\d\d)_\w+")


@dataclass(frozen=True, slots=True)
class Handler:
    key: int
    api: Api
    min_version: int
    max_version: int
    handle: HandleFn
    error_response: ErrorResponseFn | None

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


@cache
def all_handlers() -> dict[int, Handler]:
    found: dict[int, Handler] = {}
    for info in pkgutil.iter_modules(__path__):
        if not _MODULE_NAME.fullmatch(info.name):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        key: int = module.KEY
        api = get_api(key)
        if api is None:
            raise RuntimeError(f"{info.name}: no wire declaration for API key {key}")
        low, high = getattr(module, "VERSIONS", (api.min_version, api.max_version))
        if low < api.min_version or high > api.max_version or low > high:
            raise RuntimeError(f"{info.name}: VERSIONS {low}-{high} outside {api.name}'s "
                               f"{api.min_version}-{api.max_version}")
        if key in found:
            raise RuntimeError(f"API key {key} handled twice")
        found[key] = Handler(key, api, low, high, module.handle, getattr(module, "error_response", None))
    return dict(sorted(found.items()))
