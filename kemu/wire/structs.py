"""Builds the construct structure of one (API, version, direction) from its declaration.

Decoded messages are plain dicts keyed by snake_case field names. A decoded dict carries every field the
API declares in any version — those absent from the version read get their defaults — so handler code
reads the same keys whatever version a client speaks, much as Kafka's generated MessageData objects do.
When encoding, a missing key takes the field's default, so handlers write only what they mean.
"""

from __future__ import annotations

import io
from typing import Any

from construct import Construct, ConstructError, stream_read, stream_write

from kemu.wire.primitives import (
    FIXED,
    KafkaEncodeError,
    KArray,
    KBytes,
    KRecords,
    KString,
    NullableStruct,
    encode_uvarint,
    read_uvarint,
)
from kemu.wire.schema import _ABSENT, Api, Field, is_default, per_message


class KStruct(Construct):
    """Fields in order, then (in flexible versions) the tagged-field section.

    Unknown tags are skipped, as the protocol requires of a reader that does not know them.
    """

    def __init__(
        self,
        fields: list[tuple[Field, Construct]],
        tagged: dict[int, tuple[Field, Construct]] | None,
        absent: list[Field],
    ) -> None:
        super().__init__()
        self.fields = fields
        self.tagged = tagged
        self.absent = absent
        self.tag_order = sorted(tagged.items()) if tagged else []

    def _parse(self, stream: Any, context: Any, path: str) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for field, sub in self.fields:
            obj[field.name] = sub._parsereport(stream, context, path)
        if self.tagged is not None:
            last = -1
            for _ in range(read_uvarint(stream, path)):
                tag = read_uvarint(stream, path)
                if tag <= last:
                    raise ConstructError(f"tagged fields out of order ({tag} after {last})", path=path)
                last = tag
                size = read_uvarint(stream, path)
                data = stream_read(stream, size, path)
                known = self.tagged.get(tag)
                if known is not None:
                    inner = io.BytesIO(data)
                    obj[known[0].name] = known[1]._parsereport(inner, context, path)
                    if inner.tell() != size:
                        raise ConstructError(f"tagged field {tag} has trailing bytes", path=path)
            for field, _ in self.tag_order_fields():
                if field.name not in obj:
                    obj[field.name] = field.default_value()
        for field in self.absent:
            obj[field.name] = field.default_value()
        return obj

    def tag_order_fields(self) -> list[tuple[Field, Construct]]:
        return [entry for _, entry in self.tag_order]

    def _build(self, obj: dict[str, Any], stream: Any, context: Any, path: str) -> Any:
        if not isinstance(obj, dict):
            raise KafkaEncodeError(f"expected a dict, got {type(obj).__name__}", path=path)
        for field, sub in self.fields:
            value = obj.get(field.name, _ABSENT)
            if value is _ABSENT:
                value = field.default_value()
            sub._build(value, stream, context, f"{path} -> {field.name}")
        if self.tagged is not None:
            present: list[tuple[int, bytes]] = []
            for tag, (field, sub) in self.tag_order:
                value = obj.get(field.name, _ABSENT)
                if is_default(field, value):
                    continue
                inner = io.BytesIO()
                sub._build(value, inner, context, f"{path} -> {field.name}")
                present.append((tag, inner.getvalue()))
            out = bytearray(encode_uvarint(len(present)))
            for tag, data in present:
                out += encode_uvarint(tag)
                out += encode_uvarint(len(data))
                out += data
            stream_write(stream, bytes(out), len(out), path)
        return obj


def struct_for(fields: tuple[Field, ...], version: int, flexible: bool) -> KStruct:
    regular: list[tuple[Field, Construct]] = []
    tagged: dict[int, tuple[Field, Construct]] = {}
    absent: list[Field] = []
    for field in fields:
        if version not in field.versions:
            absent.append(field)
            continue
        if field.tag is not None and version in field.tagged:
            if not flexible:
                raise ValueError(f"{field.name}: tagged field in a non-flexible version {version}")
            tagged[field.tag] = (field, _field_construct(field, version, flexible, in_tag=True))
        else:
            regular.append((field, _field_construct(field, version, flexible)))
    return KStruct(regular, tagged if flexible else None, absent)


def _field_construct(field: Field, version: int, flexible: bool, in_tag: bool = False) -> Construct:
    nullable = version in field.nullable
    if field.type == "{}":
        inner = struct_for(field.fields, version, flexible)
        return NullableStruct(inner, varint_marker=in_tag) if nullable else inner
    if field.is_array:
        if field.type == "[]":
            element: Construct = struct_for(field.fields, version, flexible)
        else:
            element = _primitive(field.element, flexible, nullable=False)
        return KArray(element, compact=flexible, nullable=nullable)
    return _primitive(field.type, flexible, nullable)


def _primitive(type_name: str, flexible: bool, nullable: bool) -> Construct:
    if type_name == "string":
        return KString(compact=flexible, nullable=nullable)
    if type_name == "records":
        return KRecords(compact=flexible, nullable=nullable)
    if type_name == "bytes":
        return KBytes(compact=flexible, nullable=nullable)
    return FIXED[type_name]


_STRUCTS: dict[tuple[Any, ...], tuple[Api, KStruct]] = {}


def message_struct(api: Api, version: int, direction: str) -> KStruct:
    """The structure of one message, built once per (API, version, direction) and reused."""
    return per_message(_STRUCTS, api, version, direction, struct_for)
