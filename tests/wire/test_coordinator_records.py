"""Coordinator records: the framing and layouts Kafka writes to __consumer_offsets and __transaction_state.

kio does not carry these schemas, so the expected bytes here are spelled out field by field from Kafka's
record specs with `struct`, independently of the codec; every declared version also round-trips.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kemu.wire.coordinator_records import (
    CONSUMER_OFFSETS,
    RECORDS,
    TRANSACTION_STATE,
    CoordinatorRecordError,
    DecodedKey,
    DecodedValue,
    UnknownRecordType,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from kemu.wire.schema import Field


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def uvarint(v: int) -> bytes:
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def string(s: str | None) -> bytes:
    return i16(-1) if s is None else i16(len(s.encode())) + s.encode()


def compact_string(s: str | None) -> bytes:
    return uvarint(0) if s is None else uvarint(len(s.encode()) + 1) + s.encode()


def raw_bytes(b: bytes) -> bytes:
    return i32(len(b)) + b


NO_TAGS = uvarint(0)


# --- Known layouts -----------------------------------------------------------------------------------------

KNOWN_KEYS: list[tuple[str, str, int, dict[str, Any], bytes]] = [
    (CONSUMER_OFFSETS, "OffsetCommit", 1, {"group": "g", "topic": "t", "partition": 3},
     i16(1) + string("g") + string("t") + i32(3)),
    (CONSUMER_OFFSETS, "OffsetCommit", 0, {"group": "grp", "topic": "orders", "partition": 0},
     i16(0) + string("grp") + string("orders") + i32(0)),
    (CONSUMER_OFFSETS, "GroupMetadata", 2, {"group": "grp"}, i16(2) + string("grp")),
    (CONSUMER_OFFSETS, "ConsumerGroupMetadata", 3, {"group_id": "grp"}, i16(3) + string("grp")),
    (CONSUMER_OFFSETS, "ConsumerGroupCurrentMemberAssignment", 8, {"group_id": "grp", "member_id": "m"},
     i16(8) + string("grp") + string("m")),
    (TRANSACTION_STATE, "TransactionLog", 0, {"transactional_id": "txn-1"}, i16(0) + string("txn-1")),
]


@pytest.mark.parametrize(("topic", "record_type", "version", "fields", "expected"), KNOWN_KEYS)
def test_key_layout(topic: str, record_type: str, version: int, fields: dict[str, Any], expected: bytes) -> None:
    assert encode_key(record_type, version, fields) == expected
    assert decode_key(expected, topic) == DecodedKey(record_type, version, fields)


TOPIC_ID = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")

KNOWN_VALUES: list[tuple[str, int, dict[str, Any], bytes]] = [
    # What Kafka writes for a commit without an expire timestamp.
    ("OffsetCommit", 3,
     {"offset": 42, "leader_epoch": 7, "metadata": "", "commit_timestamp": 1_700_000_000_000},
     i16(3) + i64(42) + i32(7) + string("") + i64(1_700_000_000_000)),
    # ... and with one (v1 is the only version that has it).
    ("OffsetCommit", 1,
     {"offset": 5, "metadata": "m", "commit_timestamp": 10, "expire_timestamp": 20},
     i16(1) + i64(5) + string("m") + i64(10) + i64(20)),
    ("OffsetCommit", 4,
     {"offset": 5, "leader_epoch": -1, "metadata": "meta", "commit_timestamp": 10},
     i16(4) + i64(5) + i32(-1) + compact_string("meta") + i64(10) + NO_TAGS),
    ("GroupMetadata", 3,
     {"protocol_type": "consumer", "generation": 1, "protocol": "range", "leader": "m1",
      "current_state_timestamp": 1_000,
      "members": [{"member_id": "m1", "group_instance_id": None, "client_id": "c", "client_host": "/127.0.0.1",
                   "rebalance_timeout": 300_000, "session_timeout": 45_000, "subscription": b"\x00\x01",
                   "assignment": b""}]},
     i16(3) + string("consumer") + i32(1) + string("range") + string("m1") + i64(1_000) + i32(1)
     + string("m1") + string(None) + string("c") + string("/127.0.0.1") + i32(300_000) + i32(45_000)
     + raw_bytes(b"\x00\x01") + raw_bytes(b"")),
    # An empty group after its last member left: no protocol, no leader.
    ("GroupMetadata", 0,
     {"protocol_type": "", "generation": 2, "protocol": None, "leader": None, "members": []},
     i16(0) + string("") + i32(2) + string(None) + string(None) + i32(0)),
    ("TransactionLog", 0,
     {"producer_id": 1000, "producer_epoch": 3, "transaction_timeout_ms": 60_000, "transaction_status": 1,
      "transaction_partitions": [{"topic": "t", "partition_ids": [0, 2]}],
      "transaction_last_update_timestamp_ms": 20, "transaction_start_timestamp_ms": 10},
     i16(0) + i64(1000) + i16(3) + i32(60_000) + i8(1) + i32(1) + string("t") + i32(2) + i32(0) + i32(2)
     + i64(20) + i64(10)),
    ("TransactionLog", 0,
     {"producer_id": 1000, "producer_epoch": 0, "transaction_timeout_ms": 60_000, "transaction_status": 0,
      "transaction_partitions": None, "transaction_last_update_timestamp_ms": 20,
      "transaction_start_timestamp_ms": -1},
     i16(0) + i64(1000) + i16(0) + i32(60_000) + i8(0) + i32(-1) + i64(20) + i64(-1)),
    # Flexible: tagged fields only when they differ from their defaults, in tag order.
    ("TransactionLog", 1,
     {"producer_id": 1000, "previous_producer_id": 5, "producer_epoch": 1, "transaction_timeout_ms": 100,
      "transaction_status": 4, "transaction_partitions": [], "transaction_last_update_timestamp_ms": 2,
      "transaction_start_timestamp_ms": 1, "client_transaction_version": 2},
     i16(1) + i64(1000) + i16(1) + i32(100) + i8(4) + uvarint(1) + i64(2) + i64(1)
     + uvarint(2) + uvarint(0) + uvarint(8) + i64(5) + uvarint(2) + uvarint(2) + i16(2)),
    ("ConsumerGroupCurrentMemberAssignment", 0,
     {"member_epoch": 4, "previous_member_epoch": 3, "state": 0,
      "assigned_partitions": [{"topic_id": TOPIC_ID, "partitions": [1]}], "partitions_pending_revocation": []},
     i16(0) + i32(4) + i32(3) + i8(0) + uvarint(2) + TOPIC_ID.bytes + uvarint(2) + i32(1) + NO_TAGS
     + uvarint(1) + NO_TAGS),
    # A classic-protocol member: the tagged nullable struct carries a varint "present" marker, and is written
    # even when every field in it is at its default.
    ("ConsumerGroupMemberMetadata", 0,
     {"instance_id": None, "rack_id": "r1", "client_id": "c", "client_host": "h", "subscribed_topic_names": ["t"],
      "subscribed_topic_regex": None, "rebalance_timeout_ms": -1, "server_assignor": None,
      "classic_member_metadata": {"session_timeout_ms": 0, "supported_protocols": []}},
     i16(0) + compact_string(None) + compact_string("r1") + compact_string("c") + compact_string("h")
     + uvarint(2) + compact_string("t") + compact_string(None) + i32(-1) + compact_string(None)
     + uvarint(1) + uvarint(0) + uvarint(7) + uvarint(1) + i32(0) + uvarint(1) + NO_TAGS),
    ("ConsumerGroupMemberMetadata", 0,
     {"instance_id": "i", "rack_id": None, "client_id": "c", "client_host": "h", "subscribed_topic_names": [],
      "subscribed_topic_regex": "^t.*", "rebalance_timeout_ms": 5_000, "server_assignor": "uniform",
      "classic_member_metadata": None},
     i16(0) + compact_string("i") + compact_string(None) + compact_string("c") + compact_string("h")
     + uvarint(1) + compact_string("^t.*") + i32(5_000) + compact_string("uniform") + NO_TAGS),
]


@pytest.mark.parametrize(("record_type", "version", "fields", "expected"), KNOWN_VALUES)
def test_value_layout(record_type: str, version: int, fields: dict[str, Any], expected: bytes) -> None:
    assert encode_value(record_type, version, fields) == expected
    decoded = decode_value(record_type, expected)
    assert decoded.version == version
    for name, value in fields.items():
        assert decoded.fields[name] == value, name


# --- Every declared version round-trips --------------------------------------------------------------------

_INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


def _primitive(type_name: str) -> st.SearchStrategy[Any]:
    if type_name in _INTS:
        bits = _INTS[type_name]
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if type_name == "uint16":  # a streams member's endpoint port
        return st.integers(0, (1 << 16) - 1)
    if type_name == "string":
        return _TEXT
    if type_name == "bytes":
        return st.binary(max_size=16)
    if type_name == "uuid":
        return st.uuids()
    raise AssertionError(f"no strategy for {type_name}")


def _field_values(field: Field, version: int) -> st.SearchStrategy[Any]:
    # A field absent from this version decodes to its default, so that is what the round trip must give.
    if version not in field.versions:
        return st.builds(field.default_value)
    if field.type == "{}":
        values: st.SearchStrategy[Any] = _struct_values(field.fields, version)
    elif field.type == "[]":
        values = st.lists(_struct_values(field.fields, version), max_size=3)
    elif field.is_array:
        values = st.lists(_primitive(field.element), max_size=3)
    else:
        values = _primitive(field.type)
    return st.none() | values if version in field.nullable else values


def _struct_values(fields: tuple[Field, ...], version: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({f.name: _field_values(f, version) for f in fields})


def _versions(low: int, high: int | None) -> range:
    assert high is not None
    return range(low, high + 1)


KEY_CASES = [(name, v) for name, s in RECORDS.items() for v in _versions(s.key_versions.low, s.key_versions.high)]
VALUE_CASES = [(name, v) for name, s in RECORDS.items()
               for v in _versions(s.value_versions.low, s.value_versions.high)]


@pytest.mark.parametrize(("record_type", "version"), KEY_CASES)
def test_key_round_trip(record_type: str, version: int) -> None:
    schema = RECORDS[record_type]

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_struct_values(schema.key, version))
    def check(fields: dict[str, Any]) -> None:
        data = encode_key(record_type, version, fields)
        assert decode_key(data, schema.topic) == DecodedKey(record_type, version, fields)

    check()


@pytest.mark.parametrize(("record_type", "version"), VALUE_CASES)
def test_value_round_trip(record_type: str, version: int) -> None:
    schema = RECORDS[record_type]

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_struct_values(schema.value, version))
    def check(fields: dict[str, Any]) -> None:
        data = encode_value(record_type, version, fields)
        assert decode_value(record_type, data) == DecodedValue(version, fields)
        assert encode_value(record_type, version, decode_value(record_type, data).fields) == data

    check()


# --- Reading what other brokers wrote (KIP-915) ------------------------------------------------------------

def test_the_topic_decides_what_a_version_0_key_is() -> None:
    data = encode_key("TransactionLog", 0, {"transactional_id": "x"})
    assert decode_key(data, TRANSACTION_STATE).record_type == "TransactionLog"
    with pytest.raises(CoordinatorRecordError):
        decode_key(data, CONSUMER_OFFSETS)


@pytest.mark.parametrize(("topic", "version"), [(CONSUMER_OFFSETS, 9), (CONSUMER_OFFSETS, 42),
                                                (TRANSACTION_STATE, 1), (CONSUMER_OFFSETS, -1)])
def test_unknown_key_versions_are_reported_for_skipping(topic: str, version: int) -> None:
    with pytest.raises(UnknownRecordType) as raised:
        decode_key(i16(version) + string("g"), topic)
    assert (raised.value.topic, raised.value.version) == (topic, version)


def test_a_newer_value_version_is_read_with_the_newest_known_layout() -> None:
    # An OffsetCommitValue v5 from a newer broker: v4's fields plus a tagged field this reader does not know.
    unknown_tag = uvarint(1) + uvarint(9) + uvarint(3) + b"abc"
    data = i16(5) + i64(7) + i32(2) + compact_string("") + i64(99) + unknown_tag
    decoded = decode_value("OffsetCommit", data)
    assert decoded.version == 5
    assert decoded.fields["offset"] == 7
    assert decoded.fields["leader_epoch"] == 2
    assert decoded.fields["commit_timestamp"] == 99


def test_versions_a_schema_lacks_are_refused() -> None:
    with pytest.raises(CoordinatorRecordError):
        encode_value("OffsetCommit", 5, {})
    with pytest.raises(CoordinatorRecordError):
        encode_key("GroupMetadata", 0, {"group": "g"})
    with pytest.raises(CoordinatorRecordError):
        decode_value("OffsetCommit", i16(-1) + i64(0))


@pytest.mark.parametrize("data", [b"", b"\x00", i16(1) + string("g") + string("t") + i32(0) + b"\x00",
                                  i16(1) + string("g")])
def test_malformed_keys_are_refused(data: bytes) -> None:
    with pytest.raises(CoordinatorRecordError):
        decode_key(data, CONSUMER_OFFSETS)


def test_a_null_marker_inside_a_tag_reads_as_null() -> None:
    # Kafka marks a tagged nullable struct with an unsigned varint, 0 meaning null (not the int8 -1 it uses
    # outside tags); its own writer emits that only for structs with a non-null default, but it reads it always.
    data = (i16(0) + compact_string(None) + compact_string(None) + compact_string("c") + compact_string("h")
            + uvarint(1) + compact_string(None) + i32(-1) + compact_string(None)
            + uvarint(1) + uvarint(0) + uvarint(1) + uvarint(0))
    assert decode_value("ConsumerGroupMemberMetadata", data).fields["classic_member_metadata"] is None
