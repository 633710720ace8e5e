"""Every request decoder, for every (API, version) the broker serves, either decodes or raises the codec's
own DecodeError on arbitrary bytes and on mutations of well-formed requests — never another exception,
never unbounded work (issue 16, item 3).

Well-formed bodies come from kio (generated from Kafka's own specs), as in test_kio_oracle; versions kio
lacks start from kemu's own encoding of a default body. Mutations are those a fuzzer's first tier makes:
flipped bytes, truncation, a length or count overwritten with an extreme value, a run of bytes inserted
or repeated. KEMU_FUZZ_EXAMPLES raises the examples per case (CI: the default).
"""

from __future__ import annotations

import io
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.serial import entity_writer

from kemu.handlers import all_handlers
from kemu.wire import codec
from tests.wire.test_kio_oracle import _kio_schema

EXAMPLES = int(os.environ.get("KEMU_FUZZ_EXAMPLES", "5"))
SERVED = sorted((handler.key, version) for handler in all_handlers().values()
                for version in range(handler.min_version, handler.max_version + 1))
EXTREMES = [b"\x7f\xff\xff\xff", b"\xff\xff\xff\xff", b"\x80\x00\x00\x00", b"\xff\xff\xff\xff\xff\xff\xff\x7f",
            b"\x00\x00", b"\x7f\xff", b"\xff"]


def header_of(key: int, version: int) -> bytes:
    """The request header alone: encode_request writes it first, then the (default) body."""
    whole = codec.encode_request(key, version, 42, {})
    return whole[:len(whole) - len(codec.encode_body(key, version, "request", {}))]


def decodes_or_refuses(frame: bytes) -> None:
    try:
        codec.decode_request(frame, allow_trailing=True)
    except codec.DecodeError:
        pass


@st.composite
def mutated(draw: st.DrawFn, body: bytes) -> bytes:
    data = bytearray(body)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "extreme", "insert", "repeat"]))
        at = draw(st.integers(0, len(data)))
        if kind == "flip" and data:
            at = min(at, len(data) - 1)
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[at:]
        elif kind == "extreme":
            data[at:at + 4] = draw(st.sampled_from(EXTREMES))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "repeat" and data:
            start = draw(st.integers(0, len(data) - 1))
            data[at:at] = data[start:start + draw(st.integers(1, 32))] * draw(st.integers(1, 64))
    return bytes(data)


@pytest.mark.parametrize(("key", "version"), SERVED)
def test_arbitrary_bytes_decode_or_raise_the_codecs_error(key: int, version: int) -> None:
    header = header_of(key, version)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.binary(max_size=512))
    def check(body: bytes) -> None:
        decodes_or_refuses(header + body)

    check()


@pytest.mark.parametrize(("key", "version"), SERVED)
def test_mutated_well_formed_requests_decode_or_raise_the_codecs_error(key: int, version: int) -> None:
    header = header_of(key, version)
    schema = _kio_schema(key, version, "request")
    if schema is None:
        bodies: st.SearchStrategy[bytes] = st.just(codec.encode_body(key, version, "request", {}))
    else:
        write = entity_writer(schema)

        def written(entity: object) -> bytes:
            buf = io.BytesIO()
            write(buf, entity)
            return buf.getvalue()

        bodies = st.from_type(schema).map(written)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(bodies.flatmap(mutated))
    def check(body: bytes) -> None:
        decodes_or_refuses(header + body)

    check()


def test_a_mutation_that_breaks_nothing_still_decodes() -> None:
    # The property is not vacuous: the well-formed starting point decodes, and a lie in a count is caught.
    frame = codec.encode_request(3, 1, 7, {"topics": [{"name": "a"}]})
    assert codec.decode_request(frame).body["topics"][0]["name"] == "a"
    lying = frame[:-7] + struct.pack(">i", 2**31 - 1) + frame[-3:]
    with pytest.raises(codec.DecodeError):
        codec.decode_request(lying)
