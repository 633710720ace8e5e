"""Error responses built from an API's response schema, as Kafka's `getErrorResponse` builds most of them.

Kafka's generated response classes start with every field at its declared default; `getErrorResponse`
then sets the error code and echoes what identifies each entry of the request (topic names, partition
indexes, group ids) so the client can match the errors to what it asked. A handler module declares only
that echo:

    error_response = error_responder(KEY, topics=each("topics", name="name",
                                                      partitions=each("partitions", partition_index="partition_index")))

and the rest follows from the schema: every field gets its default, every `error_code` of the top level and
of each echoed entry the error, every `error_message` there the message. The declaration is checked
against the request and response schemas when the module is imported. That check is why a typed handler
(kemu.wire.messages) that answers with its error response may `cast` it to its API's response TypedDict: the
answer is a `dict[str, Any]` to mypy, but only the response's own fields can be in it.

APIs whose `getErrorResponse` does more than this (Produce answering nothing for acks=0, entries merged by
key) keep a hand-written one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from kemu.wire.apis import get_api

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
from kemu.wire.errors import ErrorCode
from kemu.wire.schema import Field, Versions

ErrorResponder = Callable[["Incoming[Any]", ErrorCode, "str | None"], dict[str, Any]]


class _Item:
    def __repr__(self) -> str:
        return "ITEM"


ITEM: Final = _Item()
"""Echo the request entry itself: the request's array holds bare values (group ids, partition indexes)."""


@dataclass(frozen=True, slots=True)
class Fixed:
    """A value Kafka's getErrorResponse sets that is not the field's schema default (-1 for "no node")."""

    value: Any


@dataclass(frozen=True, slots=True)
class Each:
    """One response entry per entry of the request array `source`, in the versions `versions`."""

    source: str
    versions: Versions
    fields: Mapping[str, Spec]


Spec = str | _Item | Fixed | Each
"""What a response field gets: a request field's value (its name), the request entry itself (ITEM), a fixed
value, or one entry per request entry (Each); a field not named gets its default."""


def each(source: str, /, *, versions: str = "0+", **fields: Spec) -> Each:
    """`versions` limits the echo where Kafka's answer leaves the array empty in some versions."""
    return Each(source, Versions.parse(versions), fields)


def error_responder(api_key: int, **fields: Spec) -> ErrorResponder:
    api = get_api(api_key)
    if api is None:
        raise KeyError(f"no API with key {api_key}")
    _check(api.name, api.response, api.request, fields)

    def error_response(request: Incoming[Any], code: ErrorCode, message: str | None) -> dict[str, Any]:
        return _struct(request.api.response, request.body, fields, request.version, code, message)

    return error_response


def _struct(declared: tuple[Field, ...], source: Any, fields: Mapping[str, Spec], version: int,
            code: ErrorCode, message: str | None) -> dict[str, Any]:
    built: dict[str, Any] = {}
    for field in declared:
        spec = fields.get(field.name)
        if spec is None:
            if field.name == "error_code":
                built[field.name] = int(code)
            elif field.name == "error_message":
                built[field.name] = message
            else:
                built[field.name] = field.default_value()
        elif isinstance(spec, Fixed):
            built[field.name] = spec.value
        elif isinstance(spec, _Item):
            built[field.name] = source
        elif isinstance(spec, str):
            built[field.name] = source[spec]
        elif version in spec.versions:
            # A null request array (Metadata's "all topics", OffsetFetch's "all partitions") names nothing.
            built[field.name] = [_struct(field.fields, entry, spec.fields, version, code, message)
                                 for entry in source[spec.source] or ()]
        else:
            built[field.name] = field.default_value()
    return built


def _check(where: str, response: tuple[Field, ...], request: tuple[Field, ...] | Field,
           fields: Mapping[str, Spec]) -> None:
    """`request` is the fields of the request entry echoed, or the array field itself when its entries are
    bare values."""
    declared = {field.name: field for field in response}
    given = {field.name: field for field in request} if isinstance(request, tuple) else {}
    for name, spec in fields.items():
        target = declared.get(name)
        if target is None:
            raise ValueError(f"{where}: the response has no field {name!r}")
        if isinstance(spec, _Item):
            if isinstance(request, tuple):
                raise ValueError(f"{where}.{name}: ITEM needs a request array of bare values")
        elif isinstance(spec, str):
            if spec not in given:
                raise ValueError(f"{where}.{name}: the request has no field {spec!r}")
        elif isinstance(spec, Each):
            source = given.get(spec.source)
            if target.type != "[]":
                raise ValueError(f"{where}.{name}: each() needs a response array of structs")
            if source is None or not source.is_array:
                raise ValueError(f"{where}.{name}: the request has no array {spec.source!r}")
            _check(f"{where}.{name}", target.fields, source.fields if source.is_struct else source, spec.fields)
