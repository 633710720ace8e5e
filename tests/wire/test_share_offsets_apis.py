"""The share-group offset APIs (KIP-932: keys 90-92): realistic messages at every version survive kemu's
encode → decode, and kio (generated from Kafka's specs) reads kemu's bytes and writes back the very same
bytes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kemu.wire.apis import get_api
from kemu.wire.codec import decode_body, encode_body
from tests.wire.test_share_apis import _plain, assert_round_trips

TOPIC = uuid.UUID("8f14e45f-ceea-467f-a0e6-2a1f1b9e5a11")
ZERO = uuid.UUID(int=0)

DESCRIBE_REQUEST = {"groups": [{"group_id": "orders", "topics": [{"topic_name": "orders", "partitions": [0, 2]}]},
                               {"group_id": "refunds", "topics": None}]}


def _describe_response(version: int) -> dict[str, Any]:
    partition: dict[str, Any] = {"partition_index": 0, "start_offset": 42, "leader_epoch": 3, "error_code": 0,
                                 "error_message": None}
    denied: dict[str, Any] = {"partition_index": 1, "start_offset": -1, "leader_epoch": 0, "error_code": 29,
                              "error_message": "Topic authorization failed."}
    if version >= 1:
        partition["lag"], denied["lag"] = 7, -1
    return {"groups": [
        {"group_id": "orders", "error_code": 0, "error_message": None, "topics": [
            {"topic_name": "orders", "topic_id": TOPIC, "partitions": [partition]},
            {"topic_name": "secret", "topic_id": ZERO, "partitions": [denied]}]},
        {"group_id": "refunds", "error_code": 16, "error_message": "This is not the correct coordinator.",
         "topics": []}]}


ALTER_REQUEST = {"group_id": "orders", "topics": [{"topic_name": "orders", "partitions": [
    {"partition_index": 0, "start_offset": 10}, {"partition_index": 1, "start_offset": -1}]}]}
ALTER_RESPONSE = {"error_code": 0, "error_message": None, "responses": [
    {"topic_name": "nope", "topic_id": ZERO, "partitions": [
        {"partition_index": 0, "error_code": 3, "error_message": "This server does not host this topic-partition."}]},
    {"topic_name": "orders", "topic_id": TOPIC, "partitions": [
        {"partition_index": 0, "error_code": 0, "error_message": None}]}]}
DELETE_REQUEST = {"group_id": "orders", "topics": [{"topic_name": "orders"}, {"topic_name": "nope"}]}
DELETE_RESPONSE = {"error_code": 0, "error_message": None, "responses": [
    {"topic_name": "orders", "topic_id": TOPIC, "error_code": 0, "error_message": None},
    {"topic_name": "nope", "topic_id": ZERO, "error_code": 3,
     "error_message": "There is no offset information to delete."}]}
NON_EMPTY = {"error_code": 68, "error_message": "The group is not empty.", "responses": []}

CASES = [
    *[(90, v, "request", DESCRIBE_REQUEST) for v in (0, 1)],
    *[(90, v, "response", _describe_response(v)) for v in (0, 1)],
    (91, 0, "request", ALTER_REQUEST), (91, 0, "response", ALTER_RESPONSE), (91, 0, "response", NON_EMPTY),
    (92, 0, "request", DELETE_REQUEST), (92, 0, "response", DELETE_RESPONSE), (92, 0, "response", NON_EMPTY),
]


def test_the_declared_ranges_are_kafka_4_3s() -> None:
    ranges = {key: (api.min_version, api.max_version) for key in (90, 91, 92) if (api := get_api(key))}
    assert ranges == {90: (0, 1), 91: (0, 0), 92: (0, 0)}


@pytest.mark.parametrize(("key", "version", "direction", "body"), CASES,
                         ids=[f"{k}-v{v}-{d}-{i}" for i, (k, v, d, _) in enumerate(CASES)])
def test_round_trips_and_matches_kio(key: int, version: int, direction: str, body: dict[str, Any]) -> None:
    assert_round_trips(key, version, direction, body)


def test_v0_carries_no_lag() -> None:
    v0 = encode_body(90, 0, "response", _describe_response(1))
    assert len(encode_body(90, 1, "response", _describe_response(1))) - len(v0) == 2 * 8
    assert _plain(decode_body(90, 0, "response", v0))["groups"][0]["topics"][0]["partitions"][0]["lag"] == -1
