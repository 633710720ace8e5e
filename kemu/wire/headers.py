"""Request headers v0-v2 and response headers v0-v1.

The client id stays a classic (int16-length) nullable string even in the flexible header v2: Kafka kept
it so that any broker can read the client id before it knows whether the request is flexible.
"""

from __future__ import annotations

from construct import Construct, Int16sb, Int32sb

from kemu.wire.primitives import KString
from kemu.wire.schema import F, Field
from kemu.wire.structs import KStruct

_CLIENT_ID = F("client_id", "string", "1+", nullable="1+")
_API_KEY = F("request_api_key", "int16")
_API_VERSION = F("request_api_version", "int16")
_CORRELATION = F("correlation_id", "int32")


def _request_header(version: int) -> KStruct:
    fields: list[tuple[Field, Construct]] = [(_API_KEY, Int16sb), (_API_VERSION, Int16sb), (_CORRELATION, Int32sb)]
    if version >= 1:
        fields.append((_CLIENT_ID, KString(compact=False, nullable=True)))
    return KStruct(fields, {} if version >= 2 else None, [])


def _response_header(version: int) -> KStruct:
    return KStruct([(_CORRELATION, Int32sb)], {} if version >= 1 else None, [])


REQUEST_HEADERS = {v: _request_header(v) for v in (0, 1, 2)}
RESPONSE_HEADERS = {v: _response_header(v) for v in (0, 1)}
