"""Versions kio no longer carries (Kafka 4 dropped them) are still spoken by old clients, so kemu keeps them.

With no oracle for them, each is checked by a realistic message that must survive encode → decode, and a
few against byte layouts written out by hand from the protocol guide.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pytest
from kio.index import load_request_schema, load_response_schema

from kemu.wire.apis import get_api
from kemu.wire.codec import decode_body, decode_request, encode_body, encode_request
from kemu.wire.schema import Api


def _message_set_v1(offset: int, timestamp: int, key: bytes, value: bytes) -> bytes:
    """One magic-1 message in a legacy message set, as a pre-0.11 producer sends it."""
    body = struct.pack(">bbq", 1, 0, timestamp)
    body += struct.pack(">i", len(key)) + key + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


LEGACY_RECORDS = _message_set_v1(0, 1_700_000_000_000, b"user-42", b'{"clicked": true}')

PRODUCE_REQUEST = {
    "acks": -1,
    "timeout_ms": 30_000,
    "topic_data": [
        {"name": "clicks", "partition_data": [
            {"index": 0, "records": LEGACY_RECORDS},
            {"index": 1, "records": None},
        ]},
    ],
}
PRODUCE_RESPONSE_V0 = {
    "responses": [
        {"name": "clicks", "partition_responses": [
            {"index": 0, "error_code": 0, "base_offset": 1234},
            {"index": 1, "error_code": 6, "base_offset": -1},
        ]},
    ],
}
PRODUCE_RESPONSE_V1 = {**PRODUCE_RESPONSE_V0, "throttle_time_ms": 17}
PRODUCE_RESPONSE_V2 = {
    "responses": [
        {"name": "clicks", "partition_responses": [
            {"index": 0, "error_code": 0, "base_offset": 1234, "log_append_time_ms": 1_700_000_000_123},
        ]},
    ],
    "throttle_time_ms": 0,
}

FETCH_REQUEST_V0 = {
    "replica_id": -1,
    "max_wait_ms": 500,
    "min_bytes": 1,
    "topics": [
        {"topic": "clicks", "partitions": [
            {"partition": 0, "fetch_offset": 1200, "partition_max_bytes": 1_048_576},
            {"partition": 3, "fetch_offset": 0, "partition_max_bytes": 65_536},
        ]},
    ],
}
FETCH_REQUEST_V3 = {**FETCH_REQUEST_V0, "max_bytes": 52_428_800}
FETCH_RESPONSE_V0 = {
    "responses": [
        {"topic": "clicks", "partitions": [
            {"partition_index": 0, "error_code": 0, "high_watermark": 1235, "records": LEGACY_RECORDS},
            {"partition_index": 3, "error_code": 1, "high_watermark": -1, "records": None},
        ]},
    ],
}
FETCH_RESPONSE_V1 = {**FETCH_RESPONSE_V0, "throttle_time_ms": 250}

LIST_OFFSETS_REQUEST_V0 = {
    "replica_id": -1,
    "topics": [
        {"name": "clicks", "partitions": [
            {"partition_index": 0, "timestamp": -1, "max_num_offsets": 1},
            {"partition_index": 1, "timestamp": -2, "max_num_offsets": 5},
        ]},
    ],
}
LIST_OFFSETS_RESPONSE_V0 = {
    "topics": [
        {"name": "clicks", "partitions": [
            {"partition_index": 0, "error_code": 0, "old_style_offsets": [1235]},
            {"partition_index": 1, "error_code": 0, "old_style_offsets": [0]},
        ]},
    ],
}

OFFSET_COMMIT_REQUEST_V0 = {
    "group_id": "billing",
    "topics": [
        {"name": "clicks", "partitions": [
            {"partition_index": 0, "committed_offset": 1235, "committed_metadata": "host-a"},
            {"partition_index": 1, "committed_offset": 7, "committed_metadata": None},
        ]},
    ],
}
OFFSET_COMMIT_REQUEST_V1 = {
    "group_id": "billing",
    "generation_id_or_member_epoch": 3,
    "member_id": "consumer-1-5f0c",
    "topics": [
        {"name": "clicks", "partitions": [
            {"partition_index": 0, "committed_offset": 1235, "commit_timestamp": 1_700_000_000_500,
             "committed_metadata": ""},
        ]},
    ],
}
OFFSET_COMMIT_RESPONSE = {
    "topics": [
        {"name": "clicks", "partitions": [
            {"partition_index": 0, "error_code": 0},
            {"partition_index": 1, "error_code": 22},
        ]},
    ],
}

OFFSET_FETCH_REQUEST_V0 = {
    "group_id": "billing",
    "topics": [{"name": "clicks", "partition_indexes": [0, 1, 2]}],
}
OFFSET_FETCH_RESPONSE_V0 = {
    "topics": [
        {"name": "clicks", "partitions": [
            {"partition_index": 0, "committed_offset": 1235, "metadata": "host-a", "error_code": 0},
            {"partition_index": 1, "committed_offset": -1, "metadata": None, "error_code": 0},
        ]},
    ],
}

OLD_VERSION_CASES: dict[tuple[int, int, str], dict[str, Any]] = {
    (0, 0, "request"): PRODUCE_REQUEST,
    (0, 0, "response"): PRODUCE_RESPONSE_V0,
    (0, 1, "request"): PRODUCE_REQUEST,
    (0, 1, "response"): PRODUCE_RESPONSE_V1,
    (0, 2, "request"): PRODUCE_REQUEST,
    (0, 2, "response"): PRODUCE_RESPONSE_V2,
    (1, 0, "request"): FETCH_REQUEST_V0,
    (1, 0, "response"): FETCH_RESPONSE_V0,
    (1, 1, "request"): FETCH_REQUEST_V0,
    (1, 1, "response"): FETCH_RESPONSE_V1,
    (1, 2, "request"): FETCH_REQUEST_V0,
    (1, 2, "response"): FETCH_RESPONSE_V1,
    (1, 3, "request"): FETCH_REQUEST_V3,
    (1, 3, "response"): FETCH_RESPONSE_V1,
    (2, 0, "request"): LIST_OFFSETS_REQUEST_V0,
    (2, 0, "response"): LIST_OFFSETS_RESPONSE_V0,
    (8, 0, "request"): OFFSET_COMMIT_REQUEST_V0,
    (8, 0, "response"): OFFSET_COMMIT_RESPONSE,
    (8, 1, "request"): OFFSET_COMMIT_REQUEST_V1,
    (8, 1, "response"): OFFSET_COMMIT_RESPONSE,
    (9, 0, "request"): OFFSET_FETCH_REQUEST_V0,
    (9, 0, "response"): OFFSET_FETCH_RESPONSE_V0,
}

MY_KEYS = (0, 1, 2, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)


def _api(key: int) -> Api:
    api = get_api(key)
    assert api is not None, key
    return api


def _kio_has(key: int, version: int, direction: str) -> bool:
    loader = load_request_schema if direction == "request" else load_response_schema
    try:
        loader(key, version)
    except Exception:
        return False
    return True


def _restricted(decoded: Any, given: Any) -> Any:
    """`decoded` cut down to the keys `given` names, so a message compares with what was written."""
    if isinstance(given, dict):
        return {name: _restricted(decoded[name], value) for name, value in given.items()}
    if isinstance(given, list) and given and isinstance(given[0], dict):
        return [_restricted(d, g) for d, g in zip(decoded, given, strict=True)]
    return decoded


def test_every_version_kio_lacks_has_a_case() -> None:
    lacking = {
        (key, version, direction)
        for key in MY_KEYS
        for version in range(_api(key).min_version, _api(key).max_version + 1)
        for direction in ("request", "response")
        if not _kio_has(key, version, direction)
    }
    assert lacking == set(OLD_VERSION_CASES)


@pytest.mark.parametrize(("key", "version", "direction"), sorted(OLD_VERSION_CASES))
def test_old_version_round_trips(key: int, version: int, direction: str) -> None:
    message = OLD_VERSION_CASES[(key, version, direction)]
    data = encode_body(key, version, direction, message)
    decoded = decode_body(key, version, direction, data)
    assert _restricted(decoded, message) == message
    # Fields this version lacks come back as Kafka's defaults, so handlers can read any version alike.
    api = _api(key)
    fields = api.request if direction == "request" else api.response
    for field in fields:
        if version not in field.versions:
            assert decoded[field.name] == field.default_value(), field.name
    assert encode_body(key, version, direction, decoded) == data


def _str(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def test_produce_v0_request_layout() -> None:
    expected = (
        struct.pack(">hi", -1, 30_000)                      # acks, timeout_ms
        + struct.pack(">i", 1) + _str("clicks")             # topic_data[1], name
        + struct.pack(">i", 2)                              # partition_data[2]
        + struct.pack(">ii", 0, len(LEGACY_RECORDS)) + LEGACY_RECORDS
        + struct.pack(">ii", 1, -1)                         # null records
    )
    assert encode_body(0, 0, "request", PRODUCE_REQUEST) == expected
    assert decode_body(0, 0, "request", expected)["transactional_id"] is None


def test_produce_v2_response_layout() -> None:
    expected = (
        struct.pack(">i", 1) + _str("clicks")
        + struct.pack(">i", 1)
        + struct.pack(">ihqq", 0, 0, 1234, 1_700_000_000_123)   # index, error, base offset, append time
        + struct.pack(">i", 0)                                  # throttle_time_ms, after the topics
    )
    assert encode_body(0, 2, "response", PRODUCE_RESPONSE_V2) == expected


def test_list_offsets_v0_layout() -> None:
    request = (
        struct.pack(">i", -1)
        + struct.pack(">i", 1) + _str("clicks")
        + struct.pack(">i", 2)
        + struct.pack(">iqi", 0, -1, 1)
        + struct.pack(">iqi", 1, -2, 5)
    )
    assert encode_body(2, 0, "request", LIST_OFFSETS_REQUEST_V0) == request
    response = (
        struct.pack(">i", 1) + _str("clicks")
        + struct.pack(">i", 2)
        + struct.pack(">ihiq", 0, 0, 1, 1235)
        + struct.pack(">ihiq", 1, 0, 1, 0)
    )
    assert encode_body(2, 0, "response", LIST_OFFSETS_RESPONSE_V0) == response
    decoded = decode_body(2, 0, "response", response)
    assert decoded["topics"][0]["partitions"][0]["old_style_offsets"] == [1235]
    # v0 has no single offset; the field reads as Kafka's default.
    assert decoded["topics"][0]["partitions"][0]["offset"] == -1


def test_offset_commit_v1_layout() -> None:
    expected = (
        _str("billing") + struct.pack(">i", 3) + _str("consumer-1-5f0c")
        + struct.pack(">i", 1) + _str("clicks")
        + struct.pack(">i", 1)
        + struct.pack(">iqq", 0, 1235, 1_700_000_000_500)       # commit_timestamp exists in v1 only
        + _str("")
    )
    assert encode_body(8, 1, "request", OFFSET_COMMIT_REQUEST_V1) == expected


def test_fetch_v0_request_frame_through_the_header() -> None:
    frame = encode_request(1, 0, 99, FETCH_REQUEST_V0, client_id="legacy-consumer")
    request = decode_request(frame)
    assert (request.header.api_key, request.header.api_version) == (1, 0)
    assert request.header.client_id == "legacy-consumer"
    assert _restricted(request.body, FETCH_REQUEST_V0) == FETCH_REQUEST_V0
    # Fields introduced later read as their declared defaults (e.g. v3 max_bytes, v7 session epoch).
    assert request.body["max_bytes"] == 0x7FFFFFFF
    assert request.body["session_epoch"] == -1
    assert request.body["isolation_level"] == 0
