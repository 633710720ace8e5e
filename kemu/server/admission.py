"""What to do with one request frame, decided before any handler runs (no I/O here).

Kafka closes the connection on a frame it cannot parse, an unknown API key or an unsupported version —
except ApiVersions, which it answers as version 0 with UNSUPPORTED_VERSION and its own version range so
a newer client can retry with a version the broker knows (KIP-511). Bytes after a well-formed body are
ignored, as Kafka ignores them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from kemu.handlers import Handler
from kemu.wire import codec
from kemu.wire.buffers import MAX_DECODED_ELEMENTS
from kemu.wire.codec import DecodeError, Request, TooManyElements

API_VERSIONS = 18


# NamedTuples, not frozen dataclasses: every start-up defines them, and a dataclass definition compiles its
# generated methods (~0.5 ms each on a slow machine). The connection tells them apart with isinstance.
class Refuse(NamedTuple):
    """Close the connection (after the responses to earlier requests); `reason` is logged."""

    reason: str


class Answer(NamedTuple):
    """A response that needs no handler."""

    payload: bytes


class Dispatch(NamedTuple):  # a tuple: one is made per request
    handler: Handler
    request: Request
    size: int = 0  # the request's bytes (its frame without the size prefix), which a produce quota counts


class Offload:
    """Past `element_limit` elements: admit it again with the full budget off the event loop."""

    __slots__ = ()


# Decoding costs ~1.4 us per array element on the loop with the generated codec (~3 us with construct); a
# request near the 200,000-element budget would hold it for ~0.3 s. Past this many (~7 ms of decoding, what
# 2,000 cost before), the connection decodes it again on a worker thread.
ON_LOOP_ELEMENTS = 5_000


def admit(frame: bytes | memoryview, handlers: Mapping[int, Handler],
          element_limit: int = MAX_DECODED_ELEMENTS) -> Refuse | Answer | Dispatch | Offload:
    try:
        key, version, correlation_id = codec.peek_header(frame)
    except DecodeError as exc:
        return Refuse(str(exc))
    handler = handlers.get(key)
    if handler is None:
        return Refuse(f"unknown API key {key} (version {version})")
    if not handler.supports(version):
        if key == API_VERSIONS:
            from kemu.handlers.k18_api_versions import unsupported_version_response

            body = unsupported_version_response()
            return Answer(codec.encode_response(handler.api, 0, correlation_id, body))
        return Refuse(f"unsupported version {version} of {handler.api.name} "
                      f"(supported {handler.min_version}-{handler.max_version})")
    try:
        request = codec.decode_request(frame, allow_trailing=True, element_limit=element_limit)
    except TooManyElements as exc:
        return Offload() if element_limit < MAX_DECODED_ELEMENTS else Refuse(str(exc))
    except DecodeError as exc:
        return Refuse(str(exc))
    except Exception as exc:  # a codec gap must not cost more than this one connection
        return Refuse(f"undecodable {handler.api.name} v{version} request: {exc!r}")
    return Dispatch(handler, request, len(frame))


def admit_whole(frame: bytes | memoryview, handlers: Mapping[int, Handler]) -> Refuse | Answer | Dispatch:
    """`admit` with the full element budget (what a worker thread runs for an `Offload`)."""
    decision = admit(frame, handlers)
    assert not isinstance(decision, Offload)  # only a smaller budget offloads
    return decision
