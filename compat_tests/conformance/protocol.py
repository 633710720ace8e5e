"""The Kafka protocol read from Kafka's own message specs (kafka_message_specs.json beside this file, made from
/work/shared/kafka-protocol/messages by write_bundle; or the folder $KEMU_KAFKA_PROTOCOL names), for the
conformance corpus: requests encoded and responses decoded without kemu's codec,
so what the corpus holds is what went over the wire, and a field kemu's declarations lack or get wrong shows.

Bodies are dicts keyed by the specs' field names in snake_case (`ThrottleTimeMs` -> `throttle_time_ms`, as the
normalisation and kemu name them). A request body may leave fields out: they go out as the spec's defaults. A
decoded body holds every field of its version, tagged fields only when they were sent (a broker that sends a
tagged field Kafka leaves out differs), and `_unknown_tags` for tags the spec does not name. UUIDs are
Kafka's text form (URL-safe base64, unpadded); bytes are hex; `records` fields are record batches (records.py).
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from compat_tests.conformance import records as record_batches

SPEC_DIR_ENV = "KEMU_KAFKA_PROTOCOL"
DEFAULT_SPEC_DIR = Path("/work/shared/kafka-protocol/messages")
BUNDLE = Path(__file__).with_name("kafka_message_specs.json")
BUNDLE_ABOUT = ("Apache Kafka 4.3.0's message specs (clients/src/main/resources/common/message, Apache License 2.0), "
                "comments and about texts dropped; written by compat_tests.conformance.protocol.write_bundle")
API_VERSIONS_KEY = 18
UNSUPPORTED_VERSION = 35
_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)
_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_FIXED = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H", "uint32": ">I",
          "float64": ">d"}


class ProtocolError(ValueError):
    """Bytes that are not a message of the API and version they should be."""


def snake(name: str) -> str:
    return _SNAKE.sub("_", name).lower()


@dataclass(frozen=True)
class Versions:
    low: int
    high: int  # inclusive; a large number for "N+"

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), 1 << 15)
        low, _, high = text.partition("-")
        return cls(int(low), int(high or low))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    default: str | None
    fields: tuple[Field, ...]
    flexible_override: Versions | None  # RequestHeader's ClientId: never compact


@dataclass(frozen=True)
class Message:
    name: str
    api_key: int | None
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...]


def spec_dir() -> Path:
    return Path(os.environ.get(SPEC_DIR_ENV) or DEFAULT_SPEC_DIR)


def _parse_fields(raw: list[dict[str, Any]], structs: dict[str, list[dict[str, Any]]]) -> tuple[Field, ...]:
    fields = []
    for item in raw:
        element = item["type"].removeprefix("[]")
        nested = item.get("fields") or structs.get(element) or []
        fields.append(Field(
            name=snake(item["name"]), type=item["type"], versions=Versions.parse(item.get("versions")),
            nullable=Versions.parse(item.get("nullableVersions")),
            tagged=Versions.parse(item.get("taggedVersions")), tag=item.get("tag"),
            default=None if item.get("default") is None else str(item["default"]),
            fields=_parse_fields(nested, structs),
            flexible_override=(Versions.parse(item["flexibleVersions"]) if "flexibleVersions" in item else None)))
    return tuple(fields)


def _collect_structs(raw: list[dict[str, Any]], into: dict[str, list[dict[str, Any]]]) -> None:
    for item in raw:
        if item.get("fields"):
            into.setdefault(item["type"].removeprefix("[]"), item["fields"])
            _collect_structs(item["fields"], into)


def _strip(raw: Any) -> Any:
    if isinstance(raw, dict):
        return {key: _strip(value) for key, value in raw.items() if key != "about"}
    if isinstance(raw, list):
        return [_strip(item) for item in raw]
    return raw


def read_spec_dir(directory: Path) -> dict[str, Any]:
    """Every message spec of a folder of Kafka's (comments and `about` texts dropped), by file stem."""
    return {path.stem: _strip(json.loads(_COMMENT.sub("", path.read_text(encoding="utf-8"))))
            for path in sorted(directory.glob("*.json"))
            if path.stem.endswith(("Request", "Response", "Header"))}


def write_bundle(directory: Path | None = None) -> Path:
    """Refresh BUNDLE from Kafka's spec folder, so a machine without that folder (CI) reads the same specs."""
    specs = read_spec_dir(directory or spec_dir())
    BUNDLE.write_text(json.dumps({"about": BUNDLE_ABOUT, "specs": specs}, indent=None, separators=(",", ":"))
                      + "\n", encoding="utf-8")
    return BUNDLE


@cache
def _specs() -> dict[str, Any]:
    configured = os.environ.get(SPEC_DIR_ENV)
    if configured:
        return read_spec_dir(Path(configured))
    return dict(json.loads(BUNDLE.read_text(encoding="utf-8"))["specs"])


@cache
def load(file_name: str) -> Message:
    raw = _specs()[file_name]
    structs: dict[str, list[dict[str, Any]]] = {}
    for common in raw.get("commonStructs", []):
        structs[common["name"]] = common["fields"]
        _collect_structs(common["fields"], structs)
    _collect_structs(raw.get("fields", []), structs)
    return Message(raw["name"], raw.get("apiKey"), Versions.parse(raw.get("validVersions")),
                   Versions.parse(raw.get("flexibleVersions")), _parse_fields(raw.get("fields", []), structs))


@cache
def api_names() -> dict[int, str]:
    """API key -> the spec's name without `Request` (`FindCoordinator`), for every request spec."""
    names = {}
    for stem in sorted(_specs()):
        if stem.endswith("Request") and stem != "RequestHeader":
            message = load(stem)
            if message.api_key is not None:
                names[message.api_key] = stem.removesuffix("Request")
    return names


def request_spec(api_key: int) -> Message:
    return load(f"{api_names()[api_key]}Request")


def response_spec(api_key: int) -> Message:
    return load(f"{api_names()[api_key]}Response")


def clamp(message: Message, version: int) -> int:
    return min(max(version, message.valid.low), message.valid.high)


# --- primitives ------------------------------------------------------------------------------------------

_uvarint = record_batches.uvarint


class Reader(record_batches.Cursor):
    def fixed(self, kind: str) -> Any:
        fmt = _FIXED[kind]
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def rest(self) -> int:
        return len(self.data) - self.at


def _uuid_text(raw: bytes) -> str:
    import base64
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _uuid_bytes(text: str) -> bytes:
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- encoding --------------------------------------------------------------------------------------------

def _default(field: Field, version: int) -> Any:
    if field.type.startswith("[]"):
        return []
    if field.fields:
        return {}
    text = field.default
    if text == "null":
        return None
    if field.type == "bool":
        return text == "true"
    if field.type in _FIXED:
        if text is None:
            return 0
        return float(text) if field.type == "float64" else int(text, 0)
    if field.type == "uuid":
        return "AAAAAAAAAAAAAAAAAAAAAA"
    if field.type in ("bytes", "records"):
        return None if version in field.nullable else ""
    return text or ""


# A length or count as written: the true one (-1 for null) by default; the fuzzer's structure-aware mode
# (compat_tests/fuzz/structured.py) passes one that lies, so a frame is well formed but for one prefix.
Lengths = Callable[[str, int], int]


def true_length(_kind: str, length: int) -> int:
    return length


def _prefix(kind: str, length: int, flexible: bool, lengths: Lengths) -> bytes:
    """The length (or count) prefix of a string, bytes or array; `length` -1 for null."""
    written = lengths(kind, length)
    if flexible:
        return _uvarint(written + 1) if written >= -1 else _uvarint(2**32 + written)  # a wrapped huge count
    if kind == "string":
        return struct.pack(">h", max(-2**15, min(written, 2**15 - 1)))
    return struct.pack(">i", max(-2**31, min(written, 2**31 - 1)))


def _encode_value(field: Field, kind: str, value: Any, version: int, flexible: bool,
                  lengths: Lengths = true_length) -> bytes:
    if kind.startswith("[]"):
        element = kind[2:]
        if value is None:
            return _prefix("array", -1, flexible, lengths)
        return _prefix("array", len(value), flexible, lengths) + b"".join(
            _encode_value(field, element, item, version, flexible, lengths) for item in value)
    if field.fields and kind not in _FIXED:
        nullable = kind == field.type and version in field.nullable  # a nullable struct, not an array's element
        if value is None:
            return struct.pack(">b", -1)
        prefix = struct.pack(">b", 1) if nullable else b""
        return prefix + _encode_struct(field.fields, value, version, flexible, lengths)
    if kind in _FIXED:
        return struct.pack(_FIXED[kind], value)
    if kind == "bool":
        return b"\x01" if value else b"\x00"
    if kind == "uuid":
        return _uuid_bytes(value)
    if kind == "string":
        raw = None if value is None else str(value).encode("utf-8")
    elif kind == "records":
        raw = None if value is None else record_batches.encode(value)
    else:
        raw = None if value is None else bytes.fromhex(value)
    text = "string" if kind == "string" else "bytes"
    if raw is None:
        return _prefix(text, -1, flexible, lengths)
    return _prefix(text, len(raw), flexible, lengths) + raw


def _encode_struct(fields: tuple[Field, ...], body: dict[str, Any], version: int, flexible: bool,
                   lengths: Lengths = true_length) -> bytes:
    out = bytearray()
    tagged: list[tuple[int, bytes]] = []
    for field in fields:
        if version not in field.versions:
            continue
        field_flexible = flexible if field.flexible_override is None else version in field.flexible_override
        if field.tag is not None and flexible and version in field.tagged:
            if field.name in body:
                tagged.append((field.tag, _encode_value(field, field.type, body[field.name], version, True,
                                                        lengths)))
            continue
        value = body[field.name] if field.name in body else _default(field, version)
        out += _encode_value(field, field.type, value, version, field_flexible, lengths)
    if flexible:
        # Tags the spec does not name (`_unknown_tags`: tag -> hex), as a client of a newer Kafka may send.
        tagged += [(int(tag), bytes.fromhex(raw)) for tag, raw in body.get("_unknown_tags", {}).items()]
        out += _uvarint(max(0, lengths("tags", len(tagged))))
        for tag, raw in sorted(tagged):
            out += _uvarint(tag) + _uvarint(max(0, lengths("tag", len(raw)))) + raw
    return bytes(out)


def request_flexible(api_key: int, version: int) -> bool:
    spec = request_spec(api_key)
    return clamp(spec, version) in spec.flexible


def encode_request(api_key: int, version: int, correlation_id: int, client_id: str | None,
                   body: dict[str, Any], lengths: Lengths = true_length) -> bytes:
    """A request frame without its size prefix. A version outside the spec's range (an ApiVersions v127)
    is sent with that number in the header and the body of the nearest version the spec has."""
    header = load("RequestHeader")
    if api_key not in api_names():  # an API no Kafka has: a bare v1 header, as a client of a newer Kafka might send
        return _encode_struct(header.fields, {"request_api_key": api_key, "request_api_version": version,
                                              "correlation_id": correlation_id, "client_id": client_id}, 1, False)
    spec = request_spec(api_key)
    body_version = clamp(spec, version)
    flexible = body_version in spec.flexible
    header_body = {"request_api_key": api_key, "request_api_version": version, "correlation_id": correlation_id,
                   "client_id": client_id}
    return (_encode_struct(header.fields, header_body, 2 if flexible else 1, flexible)
            + _encode_struct(spec.fields, body, body_version, flexible, lengths))


# --- decoding --------------------------------------------------------------------------------------------

def _decode_value(field: Field, kind: str, reader: Reader, version: int, flexible: bool) -> Any:
    if kind.startswith("[]"):
        count = reader.uvarint() - 1 if flexible else reader.fixed("int32")
        if count < 0:
            return None
        if count > reader.rest():
            raise ProtocolError(f"{field.name}: {count} elements in {reader.rest()} bytes")
        return [_decode_value(field, kind[2:], reader, version, flexible) for _ in range(count)]
    if field.fields and kind not in _FIXED:
        if kind == field.type and version in field.nullable and reader.fixed("int8") < 0:
            return None
        return _decode_struct(field.fields, reader, version, flexible)
    if kind in _FIXED:
        return reader.fixed(kind)
    if kind == "bool":
        return reader.take(1) != b"\x00"
    if kind == "uuid":
        return _uuid_text(reader.take(16))
    if flexible:
        size = reader.uvarint() - 1
    else:
        size = reader.fixed("int16" if kind == "string" else "int32")
    if size < 0:
        return None
    raw = reader.take(size)
    if kind == "string":
        return raw.decode("utf-8")
    if kind == "records":
        return record_batches.decode(raw)
    return raw.hex()


def _decode_struct(fields: tuple[Field, ...], reader: Reader, version: int, flexible: bool) -> dict[str, Any]:
    body: dict[str, Any] = {}
    by_tag = {field.tag: field for field in fields
              if field.tag is not None and flexible and version in field.tagged and version in field.versions}
    for field in fields:
        if version not in field.versions or field.tag in by_tag and by_tag.get(field.tag) is field:
            continue
        body[field.name] = _decode_value(field, field.type, reader, version, flexible)
    if flexible:
        unknown = {}
        for _ in range(reader.uvarint()):
            tag, size = reader.uvarint(), reader.uvarint()
            raw = Reader(reader.take(size))
            if tag in by_tag:
                body[by_tag[tag].name] = _decode_value(by_tag[tag], by_tag[tag].type, raw, version, True)
            else:
                unknown[str(tag)] = raw.data.hex()
        if unknown:
            body["_unknown_tags"] = unknown
    return body


def decode_response(api_key: int, version: int, frame: bytes) -> tuple[int, dict[str, Any]]:
    """(correlation id, body) of a response frame without its size prefix. ApiVersions answers a version it
    does not serve with a v0 body (and its response header is never flexible); an answer to a version outside
    the spec (only kemu serves it) is read as the nearest version the spec has."""
    spec = response_spec(api_key)
    unsupported = frame[4:6] == struct.pack(">h", UNSUPPORTED_VERSION)
    if api_key == API_VERSIONS_KEY and (version not in spec.valid or unsupported):
        version = 0  # as Kafka's clients read it: an UNSUPPORTED_VERSION answer is always v0
    version = clamp(spec, version)
    flexible = version in spec.flexible
    reader = Reader(frame)
    correlation_id = reader.fixed("int32")
    if flexible and api_key != API_VERSIONS_KEY:
        for _ in range(reader.uvarint()):
            reader.uvarint()
            reader.take(reader.uvarint())
    body = _decode_struct(spec.fields, reader, version, flexible)
    if reader.rest():
        body["_trailing_bytes"] = reader.data[reader.at:].hex()
    return correlation_id, body
