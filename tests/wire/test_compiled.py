"""The generated codec (kemu.wire.compiled) against construct, its reference, for every API, version and
direction the schemas declare.

Bodies are drawn from each version's Field tree — nulls, empty and missing arrays, missing keys (defaults),
tagged fields set and unset, unicode strings, byte strings long enough to be spliced, memoryviews — and:
- the generated encoder itself writes exactly construct's bytes, and the generated decoder itself reads
  them back to exactly construct's dict (types included: a `records` view stays a view, bytes stay bytes);
- the public functions (which try the generated code first) give what construct alone gives, for those
  bodies, for truncated and mutated frames, under small element budgets, and for values that cannot be
  written (the same exception type and message).
KEMU_COMPILED_EXAMPLES raises the examples per case.
"""

from __future__ import annotations

import io
import os
import struct
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kemu.wire import codec, compiled, coordinator_records
from kemu.wire.apis import all_apis, get_api
from kemu.wire.coordinator_records import RECORDS
from kemu.wire.primitives import SPLICE_MIN_BYTES
from kemu.wire.schema import Api, Field
from kemu.wire.structs import struct_for
from tests.wire.test_decoder_fuzz import mutated

EXAMPLES = int(os.environ.get("KEMU_COMPILED_EXAMPLES", "5"))
CASES = [(api.key, version, direction)
         for api in sorted(all_apis().values(), key=lambda a: a.key)
         for version in range(api.min_version, api.max_version + 1)
         for direction in ("request", "response")]
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

_INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_BIG = st.integers(SPLICE_MIN_BYTES, SPLICE_MIN_BYTES + 300).map(lambda n: bytes(range(256)) * (n // 256) + b"r")


def _primitive(type_name: str) -> st.SearchStrategy[Any]:
    if type_name in _INTS:
        bits = _INTS[type_name]
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if type_name in ("uint16", "uint32"):
        return st.integers(0, (1 << int(type_name[4:])) - 1)
    if type_name == "float64":
        return st.floats(allow_nan=False)
    if type_name == "bool":
        return st.booleans()
    if type_name == "uuid":
        return st.uuids()
    if type_name == "string":
        return st.text(max_size=12)
    small = st.binary(max_size=24)
    return st.one_of(small, small.map(bytearray), small.map(memoryview), _BIG, _BIG.map(memoryview))


def _value(field: Field, version: int) -> st.SearchStrategy[Any]:
    if field.type == "{}":
        value = _struct(field.fields, version)
    elif field.type == "[]":
        value = st.lists(_struct(field.fields, version), max_size=3)
    elif field.is_array:
        value = st.lists(_primitive(field.element), max_size=4)
    else:
        value = _primitive(field.type)
    if version in field.nullable:
        return st.one_of(st.none(), value)
    if field.tag is not None:  # a tagged field at its default is left out of the tagged section
        return st.one_of(st.just(field.default_value()), value)
    return value


def _struct(fields: tuple[Field, ...], version: int) -> st.SearchStrategy[dict[str, Any]]:
    # Every key optional: a missing one is written as its default.
    return st.fixed_dictionaries({}, optional={f.name: st.deferred(lambda f=f: _value(f, version))
                                               for f in fields if version in f.versions})


def _body(key: int, version: int, direction: str) -> st.SearchStrategy[dict[str, Any]]:
    api = _api(key)
    return _struct(api.request if direction == "request" else api.response, version)


def _api(key: int) -> Api:
    api = get_api(key)
    assert api is not None
    return api


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (a view is not bytes, False is not 0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, codec.Request):
        return a.header == b.header and a.api is b.api and same(a.body, b.body)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", call()
    except Exception as exc:  # the exception is the outcome compared
        return type(exc).__name__, str(exc)


def same_outcome(fast: Callable[[], Any], reference: Callable[[], Any]) -> None:
    got, expected = outcome(fast), outcome(reference)
    assert got[0] == expected[0], (got, expected)
    assert same(got[1], expected[1]) if got[0] == "ok" else got[1] == expected[1], (got, expected)


def same_parts(parts: list[Any], reference: list[Any]) -> bool:
    """Buffers to send alike: the spliced ones the very objects construct splices, the rest equal bytes."""
    return len(parts) == len(reference) and all(
        a is b or (type(a) is type(b) and bytes(a) == bytes(b)) for a, b in zip(parts, reference, strict=True))


@pytest.mark.parametrize(("key", "version", "direction"), CASES)
def test_generated_code_writes_and_reads_what_construct_does(key: int, version: int, direction: str) -> None:
    api = _api(key)
    encode = compiled.message_encoder(api, version, direction)
    decode = compiled.message_decoder(api, version, direction, views=direction == "request")

    @SETTINGS
    @given(_body(key, version, direction))
    def check(body: dict[str, Any]) -> None:
        written = bytearray()
        encode(body, written, None)  # the generated code itself, no fallback
        expected = codec.encode_body_with_construct(key, version, direction, body)
        assert bytes(written) == expected
        frame = memoryview(bytearray(b"~" + expected)).cast("B")  # at an offset, in a view
        decoded, end, budget = decode(frame, 1, 10**6)
        assert end == len(frame)
        assert same(decoded, _decoded_with_construct(key, version, direction, frame))
        if direction == "response":
            parts = codec.encode_response_parts(api, version, 5, body)
            assert same_parts(parts, codec.encode_response_parts_with_construct(api, version, 5, body))
            whole = b"".join(parts)
            assert same(codec.decode_response(key, version, whole),
                        codec.decode_response_with_construct(key, version, whole))
        else:
            request = codec.encode_request(key, version, 5, body, client_id="ü")
            assert request == codec.encode_request_with_construct(key, version, 5, body, client_id="ü")
            assert same(codec.decode_request(request), codec.decode_request_with_construct(request))

    check()


def _decoded_with_construct(key: int, version: int, direction: str, frame: memoryview) -> dict[str, Any]:
    """The body at frame[1:] as construct decodes it: records as views of a request frame, else bytes."""
    if direction == "response":
        return codec.decode_body_with_construct(key, version, direction, bytes(frame[1:]))
    header = codec.encode_request_with_construct(key, version, 0, {}, client_id=None)
    header = header[:len(header) - len(codec.encode_body_with_construct(key, version, direction, {}))]
    whole = memoryview(bytearray(header) + frame[1:])
    return codec.decode_request_with_construct(whole).body


@pytest.mark.parametrize(("key", "version", "direction"), CASES)
def test_broken_frames_fail_as_construct_fails(key: int, version: int, direction: str) -> None:
    """Truncated, mutated, over budget: the same decoded message, or the same exception and message."""
    api = _api(key)

    @SETTINGS
    @given(_body(key, version, direction).map(lambda body: _frame(api, version, direction, body)).flatmap(mutated),
           st.one_of(st.just(codec.MAX_DECODED_ELEMENTS), st.integers(0, 6)), st.booleans())
    def check(frame: bytes, limit: int, trailing: bool) -> None:
        if direction == "request":
            same_outcome(lambda: codec.decode_request(frame, allow_trailing=trailing, element_limit=limit),
                         lambda: codec.decode_request_with_construct(frame, allow_trailing=trailing,
                                                                     element_limit=limit))
        else:
            same_outcome(lambda: codec.decode_response(key, version, frame),
                         lambda: codec.decode_response_with_construct(key, version, frame))
            same_outcome(lambda: codec.decode_body(key, version, direction, frame[4:]),
                         lambda: codec.decode_body_with_construct(key, version, direction, frame[4:]))

    check()


def _frame(api: Api, version: int, direction: str, body: dict[str, Any]) -> bytes:
    if direction == "request":
        return codec.encode_request_with_construct(api.key, version, 9, body)
    return b"".join(codec.encode_response_parts_with_construct(api, version, 9, body))


BAD_VALUES = [None, 1 << 70, -(1 << 70), 1.5, "s", b"b", [], {}, [None], [{}], "x" * 40_000, uuid.UUID(int=7),
              memoryview(b"abcd").cast("I"), bytearray(b"\x00" * 3000), {"bad": 1}, True]


@st.composite
def _spoiled(draw: st.DrawFn, body: dict[str, Any]) -> dict[str, Any]:
    """`body` with one value somewhere in it (or a key it lacks) replaced by one it may not hold."""
    slots: list[tuple[dict[str, Any] | list[Any], Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            slots.extend((value, k) for k in value)
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            slots.extend((value, i) for i in range(len(value)))
            for v in value:
                walk(v)

    walk(body)
    if slots:
        container, slot = draw(st.sampled_from(slots))
        container[slot] = BAD_VALUES[draw(st.integers(0, len(BAD_VALUES) - 1))]
    return body


@pytest.mark.parametrize(("key", "version", "direction"), CASES)
def test_values_that_cannot_be_written_fail_as_construct_fails(key: int, version: int, direction: str) -> None:
    api = _api(key)

    @SETTINGS
    @given(_body(key, version, direction).flatmap(_spoiled), st.sampled_from([5, -1, 1 << 40]),
           st.sampled_from(["kemu", None, "é" * 20_000]))
    def check(body: dict[str, Any], correlation_id: int, client_id: str | None) -> None:
        if direction == "response":
            got = outcome(lambda: codec.encode_response_parts(api, version, correlation_id, body))
            expected = outcome(lambda: codec.encode_response_parts_with_construct(api, version, correlation_id, body))
            assert got[0] == expected[0], (got, expected)
            assert same_parts(got[1], expected[1]) if got[0] == "ok" else got[1] == expected[1]
        else:
            same_outcome(lambda: codec.encode_request(key, version, correlation_id, body, client_id),
                         lambda: codec.encode_request_with_construct(key, version, correlation_id, body, client_id))
        same_outcome(lambda: codec.encode_body(key, version, direction, body),
                     lambda: codec.encode_body_with_construct(key, version, direction, body))

    check()


def _with_unknown_tags(frame: bytes, tags: bytes) -> bytes:
    """A flexible frame whose body ends in an empty tagged-field section, with `tags` there instead."""
    assert frame.endswith(b"\x00")
    return frame[:-1] + tags


@pytest.mark.parametrize("tags", [
    b"\x01\x63\x03abc",  # one unknown tag: skipped
    b"\x02\x05\x00\x63\x01z",  # two, in order
    b"\x02\x63\x00\x05\x00",  # out of order: refused
    b"\x01\x63\x09ab",  # longer than the frame
    b"\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01\x00",  # a tag of more than 10 varint bytes
    b"\x01\x00\x01\x00",  # Fetch v12's cluster_id (tag 0): a null string
    b"\x01\x00\x03\x02ab",  # cluster_id with a byte to spare in its field
    b"\x01\x00\x03\x03ab",  # cluster_id "ab"
])
def test_tagged_fields_in_a_request_are_read_as_construct_reads_them(tags: bytes) -> None:
    frame = codec.encode_request_with_construct(1, 12, 3, {"topics": [], "forgotten_topics_data": []})
    broken = _with_unknown_tags(frame, tags)
    same_outcome(lambda: codec.decode_request(broken), lambda: codec.decode_request_with_construct(broken))


def test_unknown_tags_in_request_and_response_headers_are_skipped() -> None:
    frame = codec.encode_request(18, 3, 3, {"client_software_name": "a", "client_software_version": "1"})
    header_end = 8 + 2 + 4  # key, version, correlation id; client id "kemu"
    assert frame[header_end] == 0
    tagged = frame[:header_end] + b"\x01\x07\x02hi" + frame[header_end + 1:]
    request = codec.decode_request(tagged)
    assert same(request, codec.decode_request_with_construct(tagged))
    assert request.body["client_software_name"] == "a"
    response = b"".join(codec.encode_response_parts(_api(3), 9, 4, {}))
    tagged = response[:4] + b"\x01\x07\x02hi" + response[5:]
    assert same(codec.decode_response(3, 9, tagged), codec.decode_response_with_construct(3, 9, tagged))


def test_the_element_budget_runs_out_where_constructs_does() -> None:
    body = {"topics": [{"name": f"t{i}"} for i in range(5)]}
    frame = codec.encode_request(3, 9, 1, body)
    for limit in range(8):
        same_outcome(lambda limit=limit: codec.decode_request(frame, element_limit=limit),
                     lambda limit=limit: codec.decode_request_with_construct(frame, element_limit=limit))
    with pytest.raises(codec.TooManyElements, match="more than 4 array elements"):
        codec.decode_request(frame, element_limit=4)
    assert len(codec.decode_request(frame, element_limit=5).body["topics"]) == 5


def test_a_too_short_or_unknown_request_fails_as_before() -> None:
    for frame in (b"", b"\x00\x03", struct.pack(">hhi", 999, 0, 1), struct.pack(">hhi", 3, 99, 1),
                  struct.pack(">hhih", 3, 9, 1, 5) + b"ab"):
        same_outcome(lambda frame=frame: codec.decode_request(frame),
                     lambda frame=frame: codec.decode_request_with_construct(frame))


RECORD_CASES = [(schema.name, part, version)
                for schema in RECORDS.values()
                for part, versions in (("key", schema.key_versions), ("value", schema.value_versions))
                for version in range(versions.low, (versions.high or versions.low) + 1)]


@pytest.mark.parametrize(("record_type", "part", "version"), RECORD_CASES)
def test_coordinator_records_are_written_and_read_as_construct_does(record_type: str, part: str,
                                                                    version: int) -> None:
    schema = RECORDS[record_type]
    fields = schema.key if part == "key" else schema.value
    flexible = part == "value" and version in schema.value_flexible
    reference = struct_for(fields, version, flexible)
    encode = coordinator_records.encode_key if part == "key" else coordinator_records.encode_value

    @SETTINGS
    @given(_struct(fields, version))
    def check(body: dict[str, Any]) -> None:
        stream = io.BytesIO()
        stream.write(struct.pack(">h", version))
        reference._build(body, stream, {}, "(reference)")
        written = encode(record_type, version, body)
        assert written == stream.getvalue()
        generated, end, _ = compiled.decoder(fields, version, flexible, views=False)(written, 2, 10**6)
        assert end == len(written)
        stream.seek(2)
        assert same(generated, reference._parsereport(stream, {}, "(reference)"))
        if part == "key":
            assert same(coordinator_records.decode_key(written, schema.topic).fields, generated)
        else:
            assert same(coordinator_records.decode_value(record_type, written).fields, generated)

    check()


def test_a_response_encoder_is_generated_the_first_time_it_is_asked_for_and_kept() -> None:
    # Not construct for a first response: a process that meets only well-formed messages never imports it.
    api = _api(61)._replace()  # an Api of its own: no other test has asked for its messages
    body = {"throttle_time_ms": 0, "topics": [{"name": "t", "partitions": [{"partition_index": 0}]}]}
    parts = codec.encode_response_parts(api, 0, 7, body)
    assert b"".join(parts) == b"".join(codec.encode_response_parts_with_construct(api, 0, 7, body))
    assert codec._RESPONSE_ENCODERS[(id(api), 0)][2] is compiled.message_encoder(api, 0, "response")


@pytest.mark.parametrize("version", [-1, 13, 99])
def test_a_version_the_api_lacks_fails_as_before(version: int) -> None:
    api = _api(3)  # Metadata: versions 0-12
    body: dict[str, Any] = {"topics": None}
    data = b"\x00\x00\x00\x01\xff\xff\xff\xff"
    frame = struct.pack(">hhih", 3, version, 1, -1) + b"\xff\xff\xff\xff"
    for _ in range(2):  # the second time too, when a response's encoder would be generated
        same_outcome(lambda: codec.encode_response_parts(api, version, 1, body),
                     lambda: codec.encode_response_parts_with_construct(api, version, 1, body))
        same_outcome(lambda: codec.encode_request(3, version, 1, body),
                     lambda: codec.encode_request_with_construct(3, version, 1, body))
        same_outcome(lambda: codec.encode_body(3, version, "request", body),
                     lambda: codec.encode_body_with_construct(3, version, "request", body))
        same_outcome(lambda: codec.decode_response(3, version, data),
                     lambda: codec.decode_response_with_construct(3, version, data))
        same_outcome(lambda: codec.decode_body(3, version, "request", data),
                     lambda: codec.decode_body_with_construct(3, version, "request", data))
        same_outcome(lambda: codec.decode_request(frame), lambda: codec.decode_request_with_construct(frame))


def test_lengths_of_three_varint_bytes_and_more_are_read_and_written_as_construct_does() -> None:
    records = bytes(range(256)) * 400  # 102,400 bytes: a three-byte compact length
    produce = {"acks": -1, "timeout_ms": 1, "topic_data": [
        {"name": "n" * 20_000, "partition_data": [{"index": 0, "records": records}]}]}
    frame = codec.encode_request(0, 9, 1, produce)
    assert frame == codec.encode_request_with_construct(0, 9, 1, produce)
    _, start = compiled.read_request_header(frame, 2)
    decoded, end, _ = compiled.message_decoder(_api(0), 9, "request", True)(memoryview(frame), start, 10**6)
    assert end == len(frame) and same(decoded, codec.decode_request_with_construct(frame).body)
    metadata = {"topics": [{"name": "é" * 9_000, "partitions": [{"replica_nodes": list(range(20_000))}]}]}
    written = bytearray()
    compiled.message_encoder(_api(3), 12, "response")(metadata, written, None)
    assert bytes(written) == codec.encode_body_with_construct(3, 12, "response", metadata)
    decoded, end, _ = compiled.message_decoder(_api(3), 12, "response", False)(bytes(written), 0, 10**6)
    assert end == len(written)
    assert same(decoded, codec.decode_body_with_construct(3, 12, "response", bytes(written)))


def test_a_tagged_string_over_32767_bytes_in_a_response_fails_as_construct_fails() -> None:
    # Fetch v16's node_endpoints is a tagged field: its compact strings are refused past 32767 bytes as the
    # response's own are (Kafka's writers throw), which hypothesis found only now and then.
    api = _api(1)
    body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [],
            "node_endpoints": [{"node_id": 1, "host": "h", "port": 1, "rack": "x" * 40_000}]}
    got = outcome(lambda: codec.encode_response_parts(api, 16, 1, body))
    expected = outcome(lambda: codec.encode_response_parts_with_construct(api, 16, 1, body))
    assert got == expected and got[0] != "ok", (got, expected)
