"""Byte layouts, written out by hand from the specs, for the versions the kio oracle has no schema for:
CreateTopics v0-1 and DeleteTopics v0."""

from __future__ import annotations

import struct

from kemu.wire.codec import decode_body, encode_body


def string(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def array(*items: bytes) -> bytes:
    return struct.pack(">i", len(items)) + b"".join(items)


CREATE_V0_TOPIC = (string("t") + struct.pack(">ih", 3, 1)
                   + array(struct.pack(">i", 0) + array(struct.pack(">i", 1)))
                   + array(string("retention.ms") + string("1000"), string("x") + struct.pack(">h", -1)))


def test_create_topics_v0_v1_requests() -> None:
    v0 = array(CREATE_V0_TOPIC) + struct.pack(">i", 5000)
    body = decode_body(19, 0, "request", v0)
    [topic] = body["topics"]
    assert (topic["name"], topic["num_partitions"], topic["replication_factor"]) == ("t", 3, 1)
    assert topic["assignments"] == [{"partition_index": 0, "broker_ids": [1]}]
    assert topic["configs"] == [{"name": "retention.ms", "value": "1000"}, {"name": "x", "value": None}]
    assert (body["timeout_ms"], body["validate_only"]) == (5000, False)
    assert encode_body(19, 0, "request", body) == v0
    v1 = v0 + b"\x01"
    assert decode_body(19, 1, "request", v1)["validate_only"] is True
    assert encode_body(19, 1, "request", decode_body(19, 1, "request", v1)) == v1


def test_create_topics_v0_v1_responses() -> None:
    v0 = array(string("t") + struct.pack(">h", 36))
    assert encode_body(19, 0, "response", {"topics": [{"name": "t", "error_code": 36, "error_message": "x"}]}) == v0
    v1 = array(string("t") + struct.pack(">h", 36) + string("exists"), string("u") + struct.pack(">hh", 0, -1))
    body = decode_body(19, 1, "response", v1)
    assert [(t["name"], t["error_code"], t["error_message"]) for t in body["topics"]] == [
        ("t", 36, "exists"), ("u", 0, None)]
    assert encode_body(19, 1, "response", body) == v1


def test_delete_topics_v0() -> None:
    request = array(string("a"), string("b")) + struct.pack(">i", 1000)
    body = decode_body(20, 0, "request", request)
    assert (body["topic_names"], body["timeout_ms"]) == (["a", "b"], 1000)
    assert encode_body(20, 0, "request", body) == request
    response = array(string("a") + struct.pack(">h", 0), string("b") + struct.pack(">h", 3))
    assert encode_body(20, 0, "response", decode_body(20, 0, "response", response)) == response
