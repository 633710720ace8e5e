"""The declarative language the API declarations in `kemu.wire.apis` are written in.

A declaration mirrors one of Kafka's JSON message specs: fields in wire order, each with the versions it
exists in, the versions it may be null in, and (for tagged fields) its tag. Names are Kafka's field names in
snake_case. The structures for each (API, version, direction) are built from it by `kemu.wire.structs`.

Type names follow Kafka's: int8 int16 int32 int64 uint16 uint32 float64 bool string bytes records uuid,
"[]T" for an array of a primitive T, "[]" for an array of structs (with `fields`), and "{}" for a single
nested struct (with `fields`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")

PRIMITIVES = frozenset(
    {"int8", "int16", "int32", "int64", "uint16", "uint32", "float64", "bool", "string", "bytes",
     "records", "uuid"}
)

ZERO_UUID = uuid.UUID(int=0)

_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range; `high` None means open-ended ("3+"), `low` > `high` means none."""

    low: int
    high: int | None

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none":
            return NONE
        text = text.strip()
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        if "-" in text:
            lo, hi = text.split("-")
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        return self.low <= version and (self.high is None or version <= self.high)


NONE = Versions(1, 0)


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message declaration (made by `F`): its Kafka name in snake_case, type, versions, and the
    fields of a struct type."""

    name: str
    type: str
    versions: Versions
    nullable: Versions
    tag: int | None
    tagged: Versions
    default: Any
    fields: tuple[Field, ...]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element(self) -> str:
        """The element type of an array ("" for an array of structs)."""
        return self.type[2:]

    @property
    def is_struct(self) -> bool:
        return self.type in ("[]", "{}")

    def default_value(self) -> Any:
        """A fresh default, as Kafka's generated code would construct it."""
        if self.default is not _MISSING:
            return self.default
        if self.type == "{}":
            return {f.name: f.default_value() for f in self.fields}
        if self.is_array:
            return []
        return _ZERO[self.type]


_ZERO: dict[str, Any] = {
    "int8": 0, "int16": 0, "int32": 0, "int64": 0, "uint16": 0, "uint32": 0, "float64": 0.0,
    "bool": False, "string": "", "bytes": b"", "records": None, "uuid": ZERO_UUID,
}

_ABSENT: Any = object()  # a key a message being encoded does not have


def is_default(field: Field, value: Any) -> bool:
    if field.type == "{}" and isinstance(value, dict):
        if field.default is None:
            # A nullable struct whose default is null: Kafka writes any present struct, even an empty one.
            return False
        return all(is_default(f, value.get(f.name, _ABSENT)) for f in field.fields)
    if value is _ABSENT:
        return True
    return bool(value == field.default_value())


def F(
    name: str,
    type: str,
    versions: str = "0+",
    *,
    nullable: str | None = None,
    tag: int | None = None,
    tagged: str | None = None,
    default: Any = _MISSING,
    fields: Sequence[Field] = (),
) -> Field:
    """Declare a field. `default` is Kafka's declared default (None for "null"); omitted, the type's zero."""
    if type in ("[]", "{}") and not fields:
        raise ValueError(f"{name}: a struct type needs fields")
    if type not in ("[]", "{}") and fields:
        raise ValueError(f"{name}: only struct types take fields")
    base = type[2:] if type.startswith("[]") else type
    if base and base != "{}" and base not in PRIMITIVES:
        raise ValueError(f"{name}: unknown type {type!r}")
    if tag is not None and tagged is None:
        tagged = versions
    return Field(name, type, Versions.parse(versions), Versions.parse(nullable), tag,
                 Versions.parse(tagged), default, tuple(fields))


# A NamedTuple, not a frozen dataclass: every start-up imports this module, and a dataclass definition
# compiles its generated methods (~0.5 ms on a slow machine). Field and Versions stay dataclasses: a Field
# is told apart from a tuple of fields (kemu.handlers.error_responses), and `version in Versions` is no
# tuple's `in`.
class Api(NamedTuple):
    """One Kafka API: its key, name, valid and flexible versions, and both message bodies."""

    key: int
    name: str
    versions: Versions
    flexible: Versions
    request: tuple[Field, ...]
    response: tuple[Field, ...]
    # A few APIs declare different flexible ranges per direction; both default to `flexible`.
    response_flexible: Versions | None = None
    notes: str = ""

    def __repr__(self) -> str:
        return f"<Api {self.key} {self.name} {self.versions.low}-{self.versions.high}>"

    @property
    def min_version(self) -> int:
        return self.versions.low

    @property
    def max_version(self) -> int:
        assert self.versions.high is not None
        return self.versions.high

    def flexible_for(self, version: int, direction: str) -> bool:
        if direction == "response" and self.response_flexible is not None:
            return version in self.response_flexible
        return version in self.flexible


def per_message(cache: dict[tuple[Any, ...], tuple[Api, T]], api: Api, version: int, direction: str,
                make: Callable[[tuple[Field, ...], int, bool], T], *variant: Any) -> T:
    """What `make(fields, version, flexible)` builds for one message (API, version, direction), built once
    and kept in `cache`. Keyed by the Api object's identity: hashing a frozen Api walks its whole field tree,
    which every request and response would pay for. The entry keeps the Api alive, so its id cannot be
    reused by another."""
    key = (id(api), version, direction, *variant)
    found = cache.get(key)
    if found is not None and found[0] is api:
        return found[1]
    if version not in api.versions:
        raise ValueError(f"{api.name} has no version {version}")
    fields = api.request if direction == "request" else api.response
    made = make(fields, version, api.flexible_for(version, direction))
    cache[key] = (api, made)
    return made


def api(
    key: int,
    name: str,
    versions: str,
    flexible: str,
    request: Iterable[Field],
    response: Iterable[Field],
    *,
    response_flexible: str | None = None,
) -> Api:
    return Api(key, name, Versions.parse(versions), Versions.parse(flexible), tuple(request),
               tuple(response), Versions.parse(response_flexible) if response_flexible else None)
