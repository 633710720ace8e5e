"""Encoding and decoding whole request and response frames (without the 4-byte size prefix).

The broker decodes requests and encodes responses; tests and the control tools need the reverse, so both
directions exist for every API.
"""

from __future__ import annotations

import io
import struct
from typing import Any, NamedTuple

from kemu.wire import compiled
from kemu.wire.apis import get_api
from kemu.wire.buffers import MAX_DECODED_ELEMENTS, Part, joined, spliced_parts
from kemu.wire.schema import Api

# construct (and kemu's structures built on it: kemu.wire.primitives, structs, headers) is imported by the
# `*_with_construct` functions only: the generated codec serves every well-formed message, so a broker
# whose clients send nothing malformed never loads it (~10 ms of a `kemu serve` start).

API_VERSIONS_KEY = 18
_PREFIX = struct.Struct(">hhi")
_CORRELATION = struct.Struct(">i")
# Outside a request, construct counts no elements; the fast path's budget is then one no frame can spend.
_UNBOUNDED = 1 << 62


class DecodeError(Exception):
    """The bytes are not a well-formed message of the API and version they claim."""


class TooManyElements(DecodeError):
    """The request holds more array elements than the decoder was allowed."""


class UnknownApi(DecodeError):
    def __init__(self, api_key: int, api_version: int, correlation_id: int) -> None:
        super().__init__(f"unknown API key {api_key}")
        self.api_key, self.api_version, self.correlation_id = api_key, api_version, correlation_id


class UnsupportedVersion(DecodeError):
    def __init__(self, api: Api, api_version: int, correlation_id: int) -> None:
        super().__init__(f"{api.name} v{api_version} is not supported")
        self.api, self.api_version, self.correlation_id = api, api_version, correlation_id


class RequestHeader(NamedTuple):  # a tuple: one is made per request
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


class Request(NamedTuple):  # not a dataclass: one is made per request, and it is cheaper to define
    header: RequestHeader
    api: Api
    body: dict[str, Any]

    @property
    def version(self) -> int:
        return self.header.api_version


def request_header_version(api: Api, version: int) -> int:
    return 2 if api.flexible_for(version, "request") else 1


def response_header_version(api: Api, version: int) -> int:
    # ApiVersions answers with header v0 always, so a client can read it whatever version it sent.
    if api.key == API_VERSIONS_KEY:
        return 0
    return 1 if api.flexible_for(version, "response") else 0


def peek_header(frame: bytes | memoryview) -> tuple[int, int, int]:
    """(api key, api version, correlation id) — readable before the rest of the header is known."""
    if len(frame) < _PREFIX.size:
        raise DecodeError("frame shorter than a request header")
    key, version, correlation_id = _PREFIX.unpack_from(frame)
    return key, version, correlation_id


def decode_request(frame: bytes | memoryview, *, allow_trailing: bool = False,
                   element_limit: int = MAX_DECODED_ELEMENTS) -> Request:
    """`allow_trailing` ignores bytes after the body, as Kafka's broker does (it never checks, and
    librdkafka's all-topics Metadata v12 request carries three stray bytes). Record batches (Produce's
    `records`) come out as views of `frame`, not copies. More than `element_limit` array elements:
    TooManyElements."""
    if len(frame) >= _PREFIX.size:
        key, version, correlation_id = _PREFIX.unpack_from(frame)
        try:
            known = _REQUEST_DECODERS.get((key, version)) or _request_decoder(key, version)
        except Exception:
            known = None  # construct's path raises what is wrong
        if known is not None:
            api, header_version, decoder = known
            try:
                view = memoryview(frame).cast("B")
                client_id, pos = compiled.read_request_header(view, header_version)
                body, pos, _ = decoder(view, pos, element_limit)
                if pos == len(view) or allow_trailing:
                    return Request(RequestHeader(key, version, correlation_id, client_id), api, body)
            except compiled.BudgetSpent:
                # Not decoded again by construct to find it out: past the budget is where the server offloads
                # a request to a thread, and construct's pass up to it is what the budget spares the event loop.
                name = f"{api.name} v{version}"
                raise TooManyElements(f"malformed {name} request: Error in path ({name})\n"
                                      f"more than {element_limit} array elements in one request") from None
            except Exception:  # noqa: S110 - construct decodes it again and says what is wrong
                pass
    return decode_request_with_construct(frame, allow_trailing=allow_trailing, element_limit=element_limit)


# (API key, version) -> (Api, request header version, decoder), for the versions the schemas declare.
_REQUEST_DECODERS: dict[tuple[int, int], tuple[Api, int, compiled.Decoder]] = {}


def _request_decoder(key: int, version: int) -> tuple[Api, int, compiled.Decoder] | None:
    api = get_api(key)
    if api is None or version not in api.versions:
        return None  # construct's path raises the error
    made = (api, request_header_version(api, version), compiled.message_decoder(api, version, "request", True))
    _REQUEST_DECODERS[(key, version)] = made
    return made


def decode_request_with_construct(frame: bytes | memoryview, *, allow_trailing: bool = False,
                                  element_limit: int = MAX_DECODED_ELEMENTS) -> Request:
    """`decode_request` by construct alone: the reference the fast path is checked against, and the path
    that finds the error in what the fast path could not take."""
    from construct import ConstructError

    from kemu.wire.headers import REQUEST_HEADERS
    from kemu.wire.primitives import ElementBudgetExceeded, FrameStream, element_budget
    from kemu.wire.structs import message_struct

    key, version, correlation_id = peek_header(frame)
    api = get_api(key)
    if api is None:
        raise UnknownApi(key, version, correlation_id)
    if version not in api.versions:
        raise UnsupportedVersion(api, version, correlation_id)
    stream = FrameStream(frame)
    try:
        with element_budget(element_limit):
            raw = REQUEST_HEADERS[request_header_version(api, version)]._parsereport(stream, {}, "(header)")
            body = message_struct(api, version, "request")._parsereport(stream, {}, f"({api.name} v{version})")
    except ElementBudgetExceeded as exc:
        raise TooManyElements(f"malformed {api.name} v{version} request: {exc}") from exc
    except (ConstructError, UnicodeDecodeError, ValueError) as exc:
        raise DecodeError(f"malformed {api.name} v{version} request: {exc}") from exc
    if stream.tell() != len(frame) and not allow_trailing:
        raise DecodeError(f"{len(frame) - stream.tell()} trailing bytes after {api.name} v{version} request")
    header = RequestHeader(key, version, correlation_id, raw.get("client_id"))
    return Request(header, api, body)


def encode_response(api: Api, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    return joined(encode_response_parts(api, version, correlation_id, body))


def encode_response_parts(api: Api, version: int, correlation_id: int, body: dict[str, Any]) -> list[Part]:
    """The response as buffers to send one after the other: record batches handed over as views (Fetch's
    segment bytes) or as regions of segment files stay where they lie, between the encoded pieces around
    them."""
    known = _RESPONSE_ENCODERS.get((id(api), version))
    if known is None or known[0] is not api:
        try:
            known = _response_encoder(api, version)
        except Exception:
            known = None  # construct's path raises what is wrong
        if known is None:
            return encode_response_parts_with_construct(api, version, correlation_id, body)
    try:
        out = bytearray(_CORRELATION.pack(correlation_id))
        if known[1]:
            out.append(0)  # response header v1: no tagged fields
        spliced: compiled.Spliced = []
        known[2](body, out, spliced)
    except Exception:
        return encode_response_parts_with_construct(api, version, correlation_id, body)
    return spliced_parts(bytes(out), spliced)


# (id of the Api, version) -> (Api, response header v1?, encoder); keyed by identity as message_struct is.
_RESPONSE_ENCODERS: dict[tuple[int, int], tuple[Api, int, compiled.Encoder]] = {}


def _response_encoder(api: Api, version: int) -> tuple[Api, int, compiled.Encoder]:
    # Generated on first use (~0.6 ms for a Metadata response): encoding a process's first response with
    # construct instead would cost importing construct (~10 ms) in a process that otherwise never needs it.
    made = (api, response_header_version(api, version), compiled.message_encoder(api, version, "response"))
    _RESPONSE_ENCODERS[(id(api), version)] = made
    return made


def encode_response_parts_with_construct(api: Api, version: int, correlation_id: int,
                                         body: dict[str, Any]) -> list[Part]:
    """`encode_response_parts` by construct alone (the reference, and the path that raises its errors)."""
    from kemu.wire.headers import RESPONSE_HEADERS
    from kemu.wire.primitives import RESPONSE, SpliceStream
    from kemu.wire.structs import message_struct

    stream = SpliceStream()
    RESPONSE_HEADERS[response_header_version(api, version)]._build(
        {"correlation_id": correlation_id}, stream, {}, "(header)")
    message_struct(api, version, "response")._build(body, stream, {RESPONSE: True}, f"({api.name} v{version})")
    return stream.parts()


def encode_request(
    api_key: int, version: int, correlation_id: int, body: dict[str, Any], client_id: str | None = "kemu"
) -> bytes:
    api = _known(api_key)
    try:
        out = bytearray(_PREFIX.pack(api_key, version, correlation_id))
        compiled.write_request_header(out, request_header_version(api, version), client_id)
        compiled.message_encoder(api, version, "request")(body, out, None)
        return bytes(out)
    except Exception:
        return encode_request_with_construct(api_key, version, correlation_id, body, client_id)


def encode_request_with_construct(
    api_key: int, version: int, correlation_id: int, body: dict[str, Any], client_id: str | None = "kemu"
) -> bytes:
    from kemu.wire.headers import REQUEST_HEADERS
    from kemu.wire.structs import message_struct

    api = _known(api_key)
    stream = io.BytesIO()
    REQUEST_HEADERS[request_header_version(api, version)]._build(
        {"request_api_key": api_key, "request_api_version": version, "correlation_id": correlation_id,
         "client_id": client_id}, stream, {}, "(header)")
    message_struct(api, version, "request")._build(body, stream, {}, f"({api.name} v{version})")
    return stream.getvalue()


def decode_response(api_key: int, version: int, frame: bytes | memoryview) -> tuple[int, dict[str, Any]]:
    api = _known(api_key)
    try:
        correlation_id = _CORRELATION.unpack_from(frame)[0]
        pos = compiled.skip_tags(frame, 4) if response_header_version(api, version) else 4
        body, pos, _ = compiled.message_decoder(api, version, "response", False)(frame, pos, _UNBOUNDED)
        if pos == len(frame):
            return correlation_id, body
    except Exception:  # noqa: S110 - construct decodes it again and says what is wrong
        pass
    return decode_response_with_construct(api_key, version, frame)


def decode_response_with_construct(api_key: int, version: int,
                                   frame: bytes | memoryview) -> tuple[int, dict[str, Any]]:
    from construct import ConstructError

    from kemu.wire.headers import RESPONSE_HEADERS
    from kemu.wire.structs import message_struct

    api = _known(api_key)
    stream = io.BytesIO(frame)
    try:
        header = RESPONSE_HEADERS[response_header_version(api, version)]._parsereport(stream, {}, "(header)")
        body = message_struct(api, version, "response")._parsereport(stream, {}, f"({api.name} v{version})")
    except (ConstructError, UnicodeDecodeError, ValueError) as exc:
        raise DecodeError(f"malformed {api.name} v{version} response: {exc}") from exc
    if stream.tell() != len(frame):
        raise DecodeError(f"trailing bytes after {api.name} v{version} response")
    return header["correlation_id"], body


def encode_body(api_key: int, version: int, direction: str, body: dict[str, Any]) -> bytes:
    """A message body alone, without any header: what the oracle tests compare with kio."""
    api = _known(api_key)
    try:
        out = bytearray()
        compiled.message_encoder(api, version, direction)(body, out, None)
        return bytes(out)
    except Exception:
        return encode_body_with_construct(api_key, version, direction, body)


def encode_body_with_construct(api_key: int, version: int, direction: str, body: dict[str, Any]) -> bytes:
    from kemu.wire.structs import message_struct

    stream = io.BytesIO()
    message_struct(_known(api_key), version, direction)._build(body, stream, {}, "(body)")
    return stream.getvalue()


def decode_body(api_key: int, version: int, direction: str, data: bytes) -> dict[str, Any]:
    api = _known(api_key)
    try:
        body, pos, _ = compiled.message_decoder(api, version, direction, False)(data, 0, _UNBOUNDED)
        if pos == len(data):
            return body
    except Exception:  # noqa: S110 - construct decodes it again and says what is wrong
        pass
    return decode_body_with_construct(api_key, version, direction, data)


def decode_body_with_construct(api_key: int, version: int, direction: str, data: bytes) -> dict[str, Any]:
    from kemu.wire.structs import message_struct

    stream = io.BytesIO(data)
    body: dict[str, Any] = message_struct(_known(api_key), version, direction)._parsereport(stream, {}, "(body)")
    if stream.tell() != len(data):
        raise DecodeError("trailing bytes after body")
    return body


def _known(api_key: int) -> Api:
    api = get_api(api_key)
    if api is None:
        raise KeyError(f"no API with key {api_key}")
    return api
