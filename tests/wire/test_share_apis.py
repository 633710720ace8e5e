"""The share-group APIs (KIP-932: keys 76-79), declared but not yet served: realistic messages at every
version survive kemu's encode → decode, and kio (generated from Kafka's specs) reads kemu's bytes and writes
back the very same bytes."""

from __future__ import annotations

import io
import uuid
from typing import Any

import pytest
from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader, entity_writer

from kemu.wire.apis import get_api
from kemu.wire.codec import decode_body, encode_body

TOPIC = uuid.UUID("8f14e45f-ceea-467f-a0e6-2a1f1b9e5a11")
LEADER = {"leader_id": 1, "leader_epoch": 7}
NODE = {"node_id": 2, "host": "broker-2", "port": 9093, "rack": "r2"}
# One v2 record batch's worth of opaque bytes: the codec never looks inside a records field.
RECORDS = bytes(range(61)) + b"payload"

HEARTBEAT_REQUEST = {"group_id": "orders", "member_id": "m-1", "member_epoch": 0, "rack_id": "r1",
                     "subscribed_topic_names": ["orders", "refunds"]}
HEARTBEAT_RESPONSE = {"error_code": 0, "error_message": None, "member_id": "m-1", "member_epoch": 3,
                      "heartbeat_interval_ms": 5000,
                      "assignment": {"topic_partitions": [{"topic_id": TOPIC, "partitions": [0, 2]}]}}
DESCRIBE_REQUEST = {"group_ids": ["orders"], "include_authorized_operations": True}
DESCRIBE_RESPONSE = {"groups": [{
    "error_code": 0, "error_message": None, "group_id": "orders", "group_state": "Stable", "group_epoch": 3,
    "assignment_epoch": 3, "assignor_name": "simple",
    "members": [{"member_id": "m-1", "rack_id": None, "member_epoch": 3, "client_id": "c", "client_host": "/10.0.0.1",
                 "subscribed_topic_names": ["orders"],
                 "assignment": {"topic_partitions": [{"topic_id": TOPIC, "topic_name": "orders",
                                                      "partitions": [0, 1]}]}}],
    "authorized_operations": -2147483648,
}]}
ACKS = [{"first_offset": 0, "last_offset": 4, "acknowledge_types": [1]},
        {"first_offset": 5, "last_offset": 7, "acknowledge_types": [1, 0, 3]}]


def _fetch_request(version: int) -> dict[str, Any]:
    body = {"group_id": "orders", "member_id": "m-1", "share_session_epoch": 1, "max_wait_ms": 500,
            "min_bytes": 1, "max_bytes": 52428800, "max_records": 500, "batch_size": 500,
            "topics": [{"topic_id": TOPIC, "partitions": [{"partition_index": 0, "acknowledgement_batches": ACKS}]}],
            "forgotten_topics_data": [{"topic_id": TOPIC, "partitions": [3]}]}
    if version >= 2:
        body |= {"share_acquire_mode": 1, "is_renew_ack": False}
    return body


def _fetch_response(version: int) -> dict[str, Any]:
    return {"error_code": 0, "error_message": None, "acquisition_lock_timeout_ms": 30000,
            "responses": [{"topic_id": TOPIC, "partitions": [{
                "partition_index": 0, "error_code": 0, "error_message": None, "acknowledge_error_code": 121,
                "acknowledge_error_message": "Member is not the owner of batch record",
                "current_leader": LEADER, "records": RECORDS,
                "acquired_records": [{"first_offset": 8, "last_offset": 12, "delivery_count": 2}],
            }]}],
            "node_endpoints": [NODE]}


def _acknowledge_request(version: int) -> dict[str, Any]:
    body = {"group_id": "orders", "member_id": "m-1", "share_session_epoch": 2,
            "topics": [{"topic_id": TOPIC, "partitions": [{"partition_index": 0, "acknowledgement_batches": ACKS}]}]}
    if version >= 2:
        body["is_renew_ack"] = True
    return body


def _acknowledge_response(version: int) -> dict[str, Any]:
    body = {"error_code": 0, "error_message": None,
            "responses": [{"topic_id": TOPIC, "partitions": [{"partition_index": 0, "error_code": 0,
                                                               "error_message": None, "current_leader": LEADER}]}],
            "node_endpoints": [NODE]}
    if version >= 2:
        body["acquisition_lock_timeout_ms"] = 15000
    return body


CASES = [
    (76, 1, "request", HEARTBEAT_REQUEST), (76, 1, "response", HEARTBEAT_RESPONSE),
    (77, 1, "request", DESCRIBE_REQUEST), (77, 1, "response", DESCRIBE_RESPONSE),
    *[(78, v, "request", _fetch_request(v)) for v in (1, 2)],
    *[(78, v, "response", _fetch_response(v)) for v in (1, 2)],
    *[(79, v, "request", _acknowledge_request(v)) for v in (1, 2)],
    *[(79, v, "response", _acknowledge_response(v)) for v in (1, 2)],
]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, memoryview | bytearray):
        return bytes(value)
    return value


def test_the_declared_ranges_are_kafka_4_3s() -> None:
    ranges = {key: (api.min_version, api.max_version) for key in (76, 77, 78, 79) if (api := get_api(key))}
    assert ranges == {76: (1, 1), 77: (1, 1), 78: (1, 2), 79: (1, 2)}


@pytest.mark.parametrize(("key", "version", "direction", "body"), CASES,
                         ids=[f"{k}-v{v}-{d}" for k, v, d, _ in CASES])
def test_round_trips_and_matches_kio(key: int, version: int, direction: str, body: dict[str, Any]) -> None:
    assert_round_trips(key, version, direction, body)


def _subset(decoded: Any, like: Any) -> Any:
    """`decoded` cut down to the fields `like` has (the decoder fills in the fields a version lacks)."""
    if isinstance(like, dict):
        return {k: _subset(decoded[k], v) for k, v in like.items()}
    if isinstance(like, list):
        return [_subset(d, v) for d, v in zip(decoded, like, strict=True)]
    return decoded


def assert_round_trips(key: int, version: int, direction: str, body: dict[str, Any]) -> None:
    """kemu's encode → decode gives `body` back, and kio reads kemu's bytes and writes back the same bytes."""
    ours = encode_body(key, version, direction, body)
    decoded = _plain(decode_body(key, version, direction, ours))
    assert _subset(decoded, body) == body
    schema = (load_request_schema if direction == "request" else load_response_schema)(key, version)
    entity, size = entity_reader(schema)(ours, 0)
    assert size == len(ours)
    out = io.BytesIO()
    entity_writer(schema)(out, entity)
    assert out.getvalue() == ours


def test_v1_leaves_out_what_v2_added() -> None:
    v1 = encode_body(78, 1, "request", _fetch_request(1))
    v2 = encode_body(78, 2, "request", _fetch_request(2))
    assert len(v2) == len(v1) + 2  # share_acquire_mode (int8) and is_renew_ack (bool)
    # ShareAcknowledge's lock timeout is ignorable: v1 drops it (4 bytes) rather than refusing the response.
    ack = _acknowledge_response(2)
    assert len(encode_body(79, 2, "response", ack)) == len(encode_body(79, 1, "response", ack)) + 4


def test_records_absent_from_a_fetched_partition_encode_as_empty() -> None:
    body = _fetch_response(1)
    del body["responses"][0]["partitions"][0]["records"]
    decoded = decode_body(78, 1, "response", encode_body(78, 1, "response", body))
    assert bytes(decoded["responses"][0]["partitions"][0]["records"]) == b""
