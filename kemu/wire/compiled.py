"""Specialised decoders and encoders, generated once per (fields, version, direction) from the same Field trees
the construct structures (`kemu.wire.structs`) are built from.

Construct interprets its tree for every message: a method call, a stream read and a path string per field,
~15 us for a one-record Produce and ~70 us for an ApiVersions response. The functions generated here do the
same work as straight-line Python: consecutive fixed-width fields are one `struct.Struct.unpack_from` or
`pack`, varints are read inline, nested structs are inline loops, and the output goes into one bytearray.

They are a fast path only. They accept exactly what the construct structures accept and produce exactly
what they produce (same dicts, same defaults, same bytes, record batches as views of the frame, big byte
strings spliced), and on anything else — a short frame, a bad count, a value they cannot write — they raise,
and the caller runs construct, whose errors and messages stay the reference. `tests/wire/test_compiled.py`
checks both against each other for every API, version and direction.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from kemu.wire.buffers import SPLICE_MIN_BYTES, Buffer, Part, encode_uvarint
from kemu.wire.schema import _ABSENT, _MISSING, Api, Field, is_default, per_message

Spliced = list[tuple[int, Part]]
Decoder = Callable[[Buffer, int, int], tuple[dict[str, Any], int, int]]
"""(buffer, position, element budget left) -> (message, position after it, budget left)."""
Encoder = Callable[[dict[str, Any], bytearray, "Spliced | None"], None]
"""(message, output, where to note spliced byte strings, or None to copy them all in)."""


class Unfit(Exception):
    """The fast path cannot take this input; construct decides what it is."""


class BudgetSpent(Unfit):
    """More array elements than the budget: construct, counting the same elements in the same order after
    the same checks, would stop at the same array."""


_FIXED = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I",
          "float64": "d", "bool": "?", "uuid": "16s"}
_SIZES = {code: struct.calcsize(">" + code) for code in _FIXED.values()}
_IMMUTABLE = (int, float, str, bytes, bool, type(None), uuid.UUID)
_H = struct.Struct(">h")
_I = struct.Struct(">i")
_NULL_NARROW = repr(_H.pack(-1))  # a classic null string's length
_NULL_WIDE = repr(_I.pack(-1))  # a classic null byte string's or array's length


def _uvarint_rest(buf: Buffer, pos: int, first: int) -> tuple[int, int]:
    """The rest of a varint whose first byte (with its continuation bit) has been read; 10 bytes at most,
    as `primitives.read_uvarint`."""
    result = first & 0x7F
    shift = 7
    for _ in range(9):
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise Unfit("varint is too long")


def _read_tags(buf: Buffer, pos: int, count: int, obj: dict[str, Any], budget: int,
               known: dict[int, tuple[str, Decoder]]) -> tuple[int, int]:
    """The tagged-field section after its count: known tags decoded into `obj`, unknown ones skipped."""
    last = -1
    end = len(buf)
    for _ in range(count):
        tag = buf[pos]
        pos += 1
        if tag > 0x7F:
            tag, pos = _uvarint_rest(buf, pos, tag)
        if tag <= last:
            raise Unfit("tagged fields out of order")
        last = tag
        size = buf[pos]
        pos += 1
        if size > 0x7F:
            size, pos = _uvarint_rest(buf, pos, size)
        stop = pos + size
        if stop > end:
            raise Unfit("short tagged field")
        entry = known.get(tag)
        if entry is not None:
            # Decoded from its own slice, as construct decodes it from a stream of its own: a count is
            # checked against the bytes of the field, not of the frame.
            value, used, budget = entry[1](buf[pos:stop], 0, budget)
            if used != size:
                raise Unfit("tagged field has trailing bytes")
            obj[entry[0]] = value
        pos = stop
    return pos, budget


def _write_tags(out: bytearray, present: list[tuple[int, bytearray]]) -> None:
    out += encode_uvarint(len(present))
    for tag, data in present:
        out += encode_uvarint(tag)
        out += encode_uvarint(len(data))
        out += data


def _uuid_bytes(value: Any) -> bytes:
    data = value.bytes
    if not isinstance(data, bytes) or len(data) != 16:
        raise Unfit("not a UUID")
    return data


def _uuid(data: bytes) -> uuid.UUID:
    return uuid.UUID(bytes=data)


def _uvarint_bytes(value: int) -> bytes:
    return encode_uvarint(value)


class _Source:
    """Python source under construction, with the constants it refers to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {
            "Unfit": Unfit, "BudgetSpent": BudgetSpent, "_uvr": _uvarint_rest, "_read_tags": _read_tags,
            "_write_tags": _write_tags,
            "_uuid": _uuid, "_uuid_bytes": _uuid_bytes, "_uvb": _uvarint_bytes, "_ABSENT": _ABSENT,
            "_unpack_from": struct.unpack_from, "_pack": struct.pack, "_H": _H.pack, "_I": _I.pack,
            "_h_from": _H.unpack_from, "_i_from": _I.unpack_from,
            "_SPLICE": SPLICE_MIN_BYTES,
        }
        self.count = 0

    def var(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, value: Any) -> str:
        name = self.var("_k")
        self.names[name] = value
        return name

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def compile(self, name: str) -> Any:
        code = "\n".join(self.lines)
        exec(compile(code, f"<kemu.wire.compiled {name}>", "exec"), self.names)  # noqa: S102 - our own source
        return self.names[name]


def _layout(fields: tuple[Field, ...], version: int, flexible: bool) -> tuple[list[Field], list[Field], list[Field]]:
    """(regular fields in order, tagged fields in tag order, fields absent from this version), as
    `structs.struct_for` splits them."""
    regular: list[Field] = []
    tagged: list[Field] = []
    absent: list[Field] = []
    for field in fields:
        if version not in field.versions:
            absent.append(field)
        elif field.tag is not None and version in field.tagged:
            if not flexible:
                raise ValueError(f"{field.name}: tagged field in a non-flexible version {version}")
            tagged.append(field)
        else:
            regular.append(field)
    tagged.sort(key=lambda f: f.tag if f.tag is not None else -1)
    return regular, tagged if flexible else [], absent


def _runs(fields: list[Field]) -> list[list[Field] | Field]:
    """The fields in order, consecutive fixed-width ones gathered into lists: one `struct` call each."""
    runs: list[list[Field] | Field] = []
    for field in fields:
        if field.type not in _FIXED:
            runs.append(field)
        elif runs and isinstance(runs[-1], list):
            runs[-1].append(field)
        else:
            runs.append([field])
    return runs


def _default_expr(src: _Source, field: Field) -> str:
    """An expression for `field.default_value()`: the very object when that is always the same one, a fresh
    one otherwise, as construct's decoder gives."""
    if field.default is not _MISSING:
        return src.const(field.default)
    if field.is_array:
        return "[]"
    if field.type == "{}":
        return src.const(field.default_value) + "()"
    return src.const(field.default_value())


# ---------------------------------------------------------------------------------------------- decoding


class _DecoderSource:
    def __init__(self, views: bool) -> None:
        self.src = _Source()
        self.views = views  # `records` as views of the buffer (a request frame) rather than bytes

    def uvarint(self, indent: int, target: str) -> None:
        emit = self.src.emit
        emit(indent, f"{target} = buf[pos]")
        emit(indent, "pos += 1")
        emit(indent, f"if {target} > 0x7F:")
        # Two bytes inline (a record batch's length, a long string's): below 16384 no call is needed.
        emit(indent + 1, "if buf[pos] < 0x80:")
        emit(indent + 2, f"{target} = ({target} & 0x7F) | (buf[pos] << 7)")
        emit(indent + 2, "pos += 1")
        emit(indent + 1, "else:")
        emit(indent + 2, f"{target}, pos = _uvr(buf, pos, {target})")

    def length(self, indent: int, target: str, compact: bool, wide: bool) -> None:
        if compact:
            self.uvarint(indent, target)
            self.src.emit(indent, f"{target} -= 1")
        else:
            self.src.emit(indent, f"{target} = {'_i_from' if wide else '_h_from'}(buf, pos)[0]")
            self.src.emit(indent, f"pos += {4 if wide else 2}")

    def null(self, indent: int, target: str, nullable: bool) -> None:
        if nullable:
            self.src.emit(indent, f"{target} = None")
        else:
            self.src.emit(indent, "raise Unfit('null where the field is not nullable')")

    def primitive(self, indent: int, target: str, type_name: str, flexible: bool, nullable: bool,
                  views: bool) -> None:
        emit = self.src.emit
        code = _FIXED.get(type_name)
        if code is not None:
            emit(indent, f"{target} = {self.src.const(struct.Struct('>' + code).unpack_from)}(buf, pos)[0]")
            emit(indent, f"pos += {_SIZES[code]}")
            if type_name == "uuid":
                emit(indent, f"{target} = _uuid({target})")
            return
        n = self.src.var("n")
        self.length(indent, n, flexible, wide=type_name != "string")
        emit(indent, f"if {n} < 0:")
        self.null(indent + 1, target, nullable)
        if type_name == "string" and flexible:
            # Kafka's generated readers refuse a compact string longer than a classic one can be ("string
            # field ... had invalid length"), and the broker closes the connection: no group id, transactional
            # id or topic name longer than its own records can hold gets in.
            emit(indent, f"elif {n} > 0x7FFF:")
            emit(indent + 1, "raise Unfit('a string longer than 32767 bytes')")
        emit(indent, "else:")
        stop = self.src.var("e")
        emit(indent + 1, f"{stop} = pos + {n}")
        emit(indent + 1, f"if {stop} > end:")
        emit(indent + 2, "raise Unfit('short')")
        if type_name == "string":
            emit(indent + 1, f"{target} = str(buf[pos:{stop}], 'utf-8')")
        elif type_name == "records" and views:
            emit(indent + 1, f"{target} = buf[pos:{stop}]")
        else:
            emit(indent + 1, f"{target} = bytes(buf[pos:{stop}])")
        emit(indent + 1, f"pos = {stop}")

    def field(self, indent: int, target: str, field: Field, version: int, flexible: bool, in_tag: bool,
              views: bool) -> None:
        emit = self.src.emit
        nullable = version in field.nullable
        if field.type == "{}":
            if nullable:
                if in_tag:
                    marker = self.src.var("m")
                    self.uvarint(indent, marker)
                    emit(indent, f"if {marker} == 0:")
                else:
                    emit(indent, "pos += 1")
                    emit(indent, "if buf[pos - 1] > 0x7F:")
                emit(indent + 1, f"{target} = None")
                emit(indent, "else:")
                self.struct(indent + 1, target, field.fields, version, flexible, views)
            else:
                self.struct(indent, target, field.fields, version, flexible, views)
            return
        if not field.is_array:
            self.primitive(indent, target, field.type, flexible, nullable, views)
            return
        n = self.src.var("n")
        self.length(indent, n, flexible, wide=True)
        emit(indent, f"if {n} < 0:")
        self.null(indent + 1, target, nullable)
        emit(indent, "else:")
        # As primitives.KArray: no more elements than bytes left, and each one spends the element budget.
        emit(indent + 1, f"if {n} > end - pos:")
        emit(indent + 2, "raise Unfit('count past the end')")
        emit(indent + 1, f"budget -= {n}")
        emit(indent + 1, "if budget < 0:")
        emit(indent + 2, "raise BudgetSpent()")
        code = _FIXED.get(field.element)
        if code is not None and field.element != "uuid":
            emit(indent + 1, f"{target} = list(_unpack_from('>%d{code}' % {n}, buf, pos))")
            emit(indent + 1, f"pos += {n} * {_SIZES[code]}")
            return
        emit(indent + 1, f"{target} = []")
        item = self.src.var("x")
        emit(indent + 1, f"for _ in range({n}):")
        if field.type == "[]":
            self.struct(indent + 2, item, field.fields, version, flexible, views)
        else:
            self.primitive(indent + 2, item, field.element, flexible, False, views)
        emit(indent + 2, f"{target}.append({item})")

    def struct(self, indent: int, target: str, fields: tuple[Field, ...], version: int, flexible: bool,
               views: bool) -> None:
        emit = self.src.emit
        regular, tagged, absent = _layout(fields, version, flexible)
        values: list[tuple[Field, str]] = []
        for run in _runs(regular):
            if isinstance(run, list):
                names = [self.src.var() for _ in run]
                fmt = ">" + "".join(_FIXED[f.type] for f in run)
                unpack = self.src.const(struct.Struct(fmt).unpack_from)
                emit(indent, f"{', '.join(names)}, = {unpack}(buf, pos)")
                emit(indent, f"pos += {struct.calcsize(fmt)}")
                for f, name in zip(run, names, strict=True):
                    if f.type == "uuid":
                        emit(indent, f"{name} = _uuid({name})")
                    values.append((f, name))
            else:
                name = self.src.var()
                self.field(indent, name, run, version, flexible, False, views)
                values.append((run, name))
        head = ", ".join(f"{f.name!r}: {name}" for f, name in values)
        tag_defaults = ", ".join(f"{f.name!r}: {_default_expr(self.src, f)}" for f in tagged)
        absent_defaults = ", ".join(f"{f.name!r}: {_default_expr(self.src, f)}" for f in absent)
        if not flexible:
            emit(indent, f"{target} = {{{_join(head, absent_defaults)}}}")
            return
        count = self.src.var("t")
        self.uvarint(indent, count)
        emit(indent, f"if {count} == 0:")
        emit(indent + 1, f"{target} = {{{_join(head, tag_defaults, absent_defaults)}}}")
        emit(indent, "else:")
        # Construct's order of keys: the regular fields, the tags read, the other tags, the absent fields.
        emit(indent + 1, f"{target} = {{{head}}}")
        known = {f.tag: (f.name, self.tag_decoder(f, version, flexible)) for f in tagged}
        emit(indent + 1, f"pos, budget = _read_tags(buf, pos, {count}, {target}, budget, {self.src.const(known)})")
        for f in tagged:
            emit(indent + 1, f"if {f.name!r} not in {target}:")
            emit(indent + 2, f"{target}[{f.name!r}] = {_default_expr(self.src, f)}")
        for f in absent:
            emit(indent + 1, f"{target}[{f.name!r}] = {_default_expr(self.src, f)}")

    def tag_decoder(self, field: Field, version: int, flexible: bool) -> Decoder:
        # Construct reads a tagged field from a stream of its own bytes: records in it are copies.
        inner = _DecoderSource(views=False)
        name = "_decode_tag"
        inner.src.emit(0, f"def {name}(buf, pos, budget):")
        inner.src.emit(1, "end = len(buf)")
        inner.field(1, "v", field, version, flexible, True, False)
        inner.src.emit(1, "return v, pos, budget")
        decoder: Decoder = inner.src.compile(name)
        return decoder


def _join(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def decoder(fields: tuple[Field, ...], version: int, flexible: bool, views: bool) -> Decoder:
    """A function decoding one message of `fields` at `version` from a buffer at a position."""
    gen = _DecoderSource(views)
    gen.src.emit(0, "def _decode(buf, pos, budget):")
    gen.src.emit(1, "end = len(buf)")
    gen.struct(1, "v", fields, version, flexible, views)
    gen.src.emit(1, "return v, pos, budget")
    made: Decoder = gen.src.compile("_decode")
    return made


# ---------------------------------------------------------------------------------------------- encoding


class _EncoderSource:
    def __init__(self, splice: bool, refuse_long_compact: bool = False) -> None:
        self.refuse_long_compact = refuse_long_compact  # a response's: as Kafka's writers (StringTooLong)
        self.src = _Source()
        self.splice = splice  # big byte strings noted in `spl` (a response to send in parts)

    def uvarint(self, indent: int, value: str) -> None:
        self.src.emit(indent, f"if {value} < 0x80:")
        self.src.emit(indent + 1, f"out.append({value})")
        self.src.emit(indent, "else:")
        self.src.emit(indent + 1, f"out += _uvb({value})")

    def length(self, indent: int, value: str, compact: bool, wide: bool) -> None:
        if compact:
            self.src.emit(indent, f"{value} += 1")
            self.uvarint(indent, value)
        else:
            self.src.emit(indent, f"out += {'_I' if wide else '_H'}({value})")

    def null(self, indent: int, compact: bool, wide: bool, nullable: bool) -> None:
        if not nullable:
            self.src.emit(indent, "raise Unfit('None where not nullable')")
        elif compact:
            self.src.emit(indent, "out.append(0)")
        else:
            self.src.emit(indent, f"out += {_NULL_WIDE if wide else _NULL_NARROW}")

    def primitive(self, indent: int, value: str, type_name: str, flexible: bool, nullable: bool) -> None:
        emit = self.src.emit
        code = _FIXED.get(type_name)
        if code is not None:
            if type_name == "uuid":
                emit(indent, f"out += _uuid_bytes({value})")
            else:
                emit(indent, f"out += {self.src.const(struct.Struct('>' + code).pack)}({value})")
            return
        wide = type_name != "string"
        emit(indent, f"if {value} is None:")
        self.null(indent + 1, flexible, wide, nullable)
        emit(indent, "else:")
        n = self.src.var("n")
        if type_name == "string":
            data = self.src.var("d")
            emit(indent + 1, f"{data} = {value}.encode('utf-8')")
            emit(indent + 1, f"{n} = len({data})")
            # A classic string's int16 length: struct refuses more than 32767 bytes, as construct does; in a
            # response a compact one too (construct then raises StringTooLong).
            if flexible and self.refuse_long_compact:
                emit(indent + 1, f"if {n} > 0x7FFF:")
                emit(indent + 2, "raise Unfit('a string longer than 32767 bytes')")
            self.length(indent + 1, n, flexible, wide=False)
            emit(indent + 1, f"out += {data}")
            return
        emit(indent + 1, f"if isinstance({value}, memoryview) and ({value}.format != 'B' or {value}.ndim != 1):")
        emit(indent + 2, f"{value} = {value}.cast('B')")
        emit(indent + 1, f"{n} = len({value})")
        self.length(indent + 1, n, flexible, wide=True)
        if self.splice:
            # As primitives.KBytes into a SpliceStream: sent from where it lies, noted with its position.
            emit(indent + 1, f"if spl is not None and len({value}) >= _SPLICE and not isinstance({value}, bytearray):")
            emit(indent + 2, f"spl.append((len(out), {value}))")
            emit(indent + 1, "else:")
            emit(indent + 2, f"out += {value}")
        else:
            emit(indent + 1, f"out += {value}")

    def field(self, indent: int, value: str, field: Field, version: int, flexible: bool, in_tag: bool) -> None:
        emit = self.src.emit
        nullable = version in field.nullable
        if field.type == "{}":
            if nullable:
                emit(indent, f"if {value} is None:")
                emit(indent + 1, f"out.append({0 if in_tag else 0xFF})")
                emit(indent, "else:")
                emit(indent + 1, "out.append(1)")
                self.struct(indent + 1, value, field.fields, version, flexible)
            else:
                self.struct(indent, value, field.fields, version, flexible)
            return
        if not field.is_array:
            self.primitive(indent, value, field.type, flexible, nullable)
            return
        emit(indent, f"if {value} is None:")
        self.null(indent + 1, flexible, True, nullable)
        emit(indent, "else:")
        n = self.src.var("n")
        emit(indent + 1, f"{n} = len({value})")
        self.length(indent + 1, n, flexible, wide=True)
        code = _FIXED.get(field.element)
        if code is not None and field.element != "uuid":
            # One pack for all: struct takes or refuses each item as the one-item pack would.
            emit(indent + 1, f"out += _pack('>%d{code}' % len({value}), *{value})")
            return
        item = self.src.var("x")
        emit(indent + 1, f"for {item} in {value}:")
        if field.type == "[]":
            self.struct(indent + 2, item, field.fields, version, flexible)
        else:
            self.primitive(indent + 2, item, field.element, flexible, False)

    def struct(self, indent: int, value: str, fields: tuple[Field, ...], version: int, flexible: bool) -> None:
        emit = self.src.emit
        regular, tagged, _ = _layout(fields, version, flexible)
        emit(indent, f"if not isinstance({value}, dict):")
        emit(indent + 1, "raise Unfit('not a dict')")
        get = self.src.var("g")
        emit(indent, f"{get} = {value}.get")
        for run in _runs(regular):
            if isinstance(run, list):
                names = [self.fetch(indent, get, f) for f in run]
                args = [f"_uuid_bytes({n})" if f.type == "uuid" else n for f, n in zip(run, names, strict=True)]
                pack = self.src.const(struct.Struct(">" + "".join(_FIXED[f.type] for f in run)).pack)
                emit(indent, f"out += {pack}({', '.join(args)})")
            else:
                name = self.fetch(indent, get, run)
                self.field(indent, name, run, version, flexible, False)
        if not flexible:
            return
        if not tagged:
            emit(indent, "out.append(0)")
            return
        present = self.src.var("p")
        emit(indent, f"{present} = []")
        for f in tagged:
            name = self.src.var("t")
            emit(indent, f"{name} = {get}({f.name!r}, _ABSENT)")
            emit(indent, f"if {name} is not _ABSENT and not {self.src.const(is_default)}({self.src.const(f)}, {name}):")
            encode = self.src.const(self.tag_encoder(f, version, flexible))
            emit(indent + 1, f"{present}.append(({f.tag}, {encode}({name})))")
        emit(indent, f"if {present}:")
        emit(indent + 1, f"_write_tags(out, {present})")
        emit(indent, "else:")
        emit(indent + 1, "out.append(0)")

    def fetch(self, indent: int, get: str, field: Field) -> str:
        """The field's value from the dict, or its default when the key is missing."""
        name = self.src.var()
        if field.default is not _MISSING and isinstance(field.default, _IMMUTABLE):
            self.src.emit(indent, f"{name} = {get}({field.name!r}, {self.src.const(field.default)})")
        elif field.default is _MISSING and field.is_array:
            self.src.emit(indent, f"{name} = {get}({field.name!r}, ())")  # written as the empty list is
        elif field.default is _MISSING and field.type in _ZERO_IMMUTABLE:
            self.src.emit(indent, f"{name} = {get}({field.name!r}, {self.src.const(field.default_value())})")
        else:
            self.src.emit(indent, f"{name} = {get}({field.name!r}, _ABSENT)")
            self.src.emit(indent, f"if {name} is _ABSENT:")
            self.src.emit(indent + 1, f"{name} = {self.src.const(field.default_value)}()")
        return name

    def tag_encoder(self, field: Field, version: int, flexible: bool) -> Callable[[Any], bytearray]:
        # Construct writes a tagged field into a stream of its own, never spliced.
        inner = _EncoderSource(splice=False, refuse_long_compact=self.refuse_long_compact)
        inner.src.emit(0, "def _encode_tag(v):")
        inner.src.emit(1, "out = bytearray()")
        inner.field(1, "v", field, version, flexible, True)
        inner.src.emit(1, "return out")
        made: Callable[[Any], bytearray] = inner.src.compile("_encode_tag")
        return made


_ZERO_IMMUTABLE = frozenset(_FIXED) | {"string", "bytes", "records"}


def encoder(fields: tuple[Field, ...], version: int, flexible: bool, response: bool = False) -> Encoder:
    """A function appending one message of `fields` at `version` to a bytearray (`response`: refusing compact
    strings over 32767 bytes, as Kafka's writers refuse them)."""
    gen = _EncoderSource(splice=True, refuse_long_compact=response)
    gen.src.emit(0, "def _encode(v, out, spl):")
    gen.struct(1, "v", fields, version, flexible)
    made: Encoder = gen.src.compile("_encode")
    return made


def read_request_header(buf: Buffer, header_version: int) -> tuple[str | None, int]:
    """(client id, position of the body) of a request header whose first 8 bytes have been read: the
    client id a classic nullable string in every header version, then (v2) tagged fields, none known."""
    if header_version == 0:
        return None, 8
    n = _H.unpack_from(buf, 8)[0]
    if n < 0:
        client_id, pos = None, 10
    else:
        pos = 10 + n
        if pos > len(buf):
            raise Unfit("short client id")
        client_id = str(buf[10:pos], "utf-8")
    if header_version >= 2:
        pos = skip_tags(buf, pos)
    return client_id, pos


def write_request_header(out: bytearray, header_version: int, client_id: str | None) -> None:
    """What follows api key, version and correlation id in a request header (`read_request_header`)."""
    if header_version == 0:
        return
    if client_id is None:
        out += _H.pack(-1)
    else:
        data = client_id.encode("utf-8")
        out += _H.pack(len(data))  # refuses more than 32767 bytes, as construct does
        out += data
    if header_version >= 2:
        out.append(0)


def skip_tags(buf: Buffer, pos: int) -> int:
    """Past a tagged-field section none of whose tags is known (a response header v1's)."""
    count = buf[pos]
    pos += 1
    if count > 0x7F:
        count, pos = _uvarint_rest(buf, pos, count)
    if count:
        pos, _ = _read_tags(buf, pos, count, {}, 0, {})
    return pos


_DECODERS: dict[tuple[Any, ...], tuple[Api, Decoder]] = {}
_ENCODERS: dict[tuple[Any, ...], tuple[Api, Encoder]] = {}


def message_decoder(api: Api, version: int, direction: str, views: bool) -> Decoder:
    # A version the API lacks raises ValueError, as construct's path says so.
    return per_message(_DECODERS, api, version, direction,
                       lambda fields, v, flexible: decoder(fields, v, flexible, views), views)


def message_encoder(api: Api, version: int, direction: str) -> Encoder:
    return per_message(_ENCODERS, api, version, direction,
                       lambda fields, v, flexible: encoder(fields, v, flexible, direction == "response"))
