"""Error responses built from the response schema (kemu.handlers.error_responses), one test per shape Kafka's
getErrorResponse takes, then a few through a broker: a handler refusing a request with ApiError."""

from __future__ import annotations

import importlib
import uuid
from typing import Any

import pytest

from kemu.handlers import all_handlers
from kemu.handlers.error_responses import ITEM, Fixed, each, error_responder
from kemu.wire import codec
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode
from tests.handlers.harness import Connection

E = ErrorCode
NOT_REQUESTED = -2147483648  # Integer.MIN_VALUE: authorized operations nobody asked for


def request(key: int, version: int, body: dict[str, Any]) -> Request:
    """As the broker sees it: decoded, with every field the API declares in any version."""
    return codec.decode_request(codec.encode_request(key, version, 1, body))


def error_of(key: int, version: int, body: dict[str, Any], code: ErrorCode,
             message: str | None = None) -> dict[str, Any]:
    """The module's own error_response, checked to encode as the request's version."""
    error_response = importlib.import_module(all_handlers()[key]._module_name or "").error_response
    built: dict[str, Any] = error_response(request(key, version, body), code, message)
    codec.encode_response(all_handlers()[key].api, version, 1, built)
    return built


def test_top_level_error_only() -> None:
    heartbeat = {"group_id": "g", "generation_id": 3, "member_id": "m", "group_instance_id": None}
    assert error_of(12, 4, heartbeat, E.NOT_COORDINATOR) == {"throttle_time_ms": 0, "error_code": 16}


def test_metadata_v13_carries_the_error_at_the_top_too() -> None:
    # MetadataRequest.getErrorResponse: the error on every requested topic, and in v13's top-level error code.
    built = error_of(3, 13, {"topics": [{"name": "t"}], "allow_auto_topic_creation": False}, E.CORRUPT_MESSAGE)
    assert built["error_code"] == E.CORRUPT_MESSAGE
    assert [(t["name"], t["error_code"]) for t in built["topics"]] == [("t", E.CORRUPT_MESSAGE)]


def test_every_field_gets_its_schema_default() -> None:
    body = {"group_id": "g", "member_id": "m", "member_epoch": 0, "rebalance_timeout_ms": 1000,
            "subscribed_topic_names": ["t"]}
    assert error_of(68, 0, body, E.COORDINATOR_NOT_AVAILABLE, "gone") == {
        "throttle_time_ms": 0, "error_code": 15, "error_message": "gone", "member_id": None, "member_epoch": 0,
        "heartbeat_interval_ms": 0, "assignment": None}
    sync = {"group_id": "g", "generation_id": 1, "member_id": "m", "protocol_type": "consumer",
            "protocol_name": "range", "assignments": []}
    assert error_of(14, 5, sync, E.REBALANCE_IN_PROGRESS) == {
        "throttle_time_ms": 0, "error_code": 27, "protocol_type": None, "protocol_name": None, "assignment": b""}


def test_fixed_value_where_kafka_sets_one_that_is_not_the_default() -> None:
    # InitProducerIdRequest.getErrorResponse: NO_PRODUCER_ID (the schema's default) and NO_PRODUCER_EPOCH (not).
    body = {"transactional_id": "t", "transaction_timeout_ms": 60_000}
    assert error_of(22, 4, body, E.NOT_COORDINATOR) == {
        "throttle_time_ms": 0, "error_code": 16, "producer_id": -1, "producer_epoch": -1}


def test_one_entry_per_bare_value_of_the_request() -> None:
    assert error_of(15, 5, {"groups": ["a", "b"], "include_authorized_operations": True}, E.NOT_COORDINATOR) == {
        "throttle_time_ms": 0,
        "groups": [{"error_code": 16, "error_message": None, "group_id": group, "group_state": "", "protocol_type": "",
                    "protocol_data": "", "members": [], "authorized_operations": NOT_REQUESTED}
                   for group in ("a", "b")]}


def test_the_error_on_every_partition_named() -> None:
    body = {"group_id": "g", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5},
                                     {"partition_index": 2, "committed_offset": 7}]},
        {"name": "u", "partitions": [{"partition_index": 1, "committed_offset": 9}]}]}
    zero = uuid.UUID(int=0)  # the topic id, which v10 names topics by (absent before: the default)
    assert error_of(8, 9, body, E.NOT_COORDINATOR) == {"throttle_time_ms": 0, "topics": [
        {"name": "t", "topic_id": zero, "partitions": [{"partition_index": p, "error_code": 16} for p in (0, 2)]},
        {"name": "u", "topic_id": zero, "partitions": [{"partition_index": 1, "error_code": 16}]}]}


def test_entries_echoed_only_in_the_versions_kafka_echoes_them() -> None:
    # OffsetFetch: before v2 the one group's error is on every partition; v2-7 at the top; v8+ on every group.
    single = {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0, 3]}]}
    v1 = error_of(9, 1, single, E.NOT_COORDINATOR)
    assert v1["topics"] == [{"name": "t", "partitions": [
        {"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "", "error_code": 16}
        for p in (0, 3)]}]
    assert error_of(9, 7, {**single, "require_stable": False}, E.NOT_COORDINATOR)["topics"] == []
    groups = {"groups": [{"group_id": "g", "topics": None}, {"group_id": "h", "topics": []}], "require_stable": False}
    assert error_of(9, 8, groups, E.NOT_COORDINATOR)["groups"] == [
        {"group_id": "g", "topics": [], "error_code": 16}, {"group_id": "h", "topics": [], "error_code": 16}]


def test_a_null_request_array_names_nothing() -> None:
    every_topic = error_responder(9, topics=each("topics", name="name"))
    all_partitions = request(9, 7, {"group_id": "g", "topics": None, "require_stable": False})
    assert every_topic(all_partitions, E.NOT_COORDINATOR, None)["topics"] == []


def test_messages_and_fixed_values_on_every_entry() -> None:
    # FindCoordinator v4+: no node for every key, with Errors.message() whatever the exception said.
    body = {"key_type": 0, "coordinator_keys": ["a", "b"]}
    assert error_of(10, 4, body, E.INVALID_REQUEST, "bad")["coordinators"] == [
        {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": 42,
         "error_message": E.INVALID_REQUEST.message} for key in ("a", "b")]
    create = {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
              "timeout_ms": 1000, "validate_only": False}
    [topic] = error_of(19, 7, create, E.POLICY_VIOLATION, "no")["topics"]
    assert (topic["name"], topic["error_code"], topic["error_message"], topic["num_partitions"],
            topic["replication_factor"], topic["configs"]) == ("t", 44, "no", -1, -1, [])


def test_declarations_are_checked_against_both_schemas() -> None:
    with pytest.raises(ValueError, match="response has no field 'topic'"):
        error_responder(8, topic=each("topics"))
    with pytest.raises(ValueError, match="request has no array 'topic'"):
        error_responder(8, topics=each("topic"))
    with pytest.raises(ValueError, match="request has no field 'index'"):
        error_responder(8, topics=each("topics", name="name", partitions=each("partitions", partition_index="index")))
    with pytest.raises(ValueError, match="ITEM needs a request array of bare values"):
        error_responder(8, topics=each("topics", name=ITEM))
    with pytest.raises(ValueError, match="needs a response array of structs"):
        error_responder(9, error_code=each("groups"))
    with pytest.raises(KeyError):
        error_responder(999, error_code=Fixed(0))


# Through a broker: the handler raises ApiError and the dispatcher answers with the module's error_response.

@pytest.mark.real_socket
def test_find_coordinator_refused_answers_every_key_with_no_node(conn: Connection) -> None:
    batched = conn.request(10, 4, {"key_type": 7, "coordinator_keys": ["a", "b"]})
    assert [(c["key"], c["error_code"], c["node_id"], c["host"], c["port"], c["error_message"])
            for c in batched["coordinators"]] == [(k, 42, -1, "", -1, E.INVALID_REQUEST.message) for k in ("a", "b")]
    single = conn.request(10, 3, {"key": "a", "key_type": 7})
    assert (single["error_code"], single["node_id"], single["port"], single["error_message"]) == (
        42, -1, -1, E.INVALID_REQUEST.message)


def test_describe_configs_refused_answers_every_resource(conn: Connection) -> None:
    body = {"resources": [{"resource_type": 99, "resource_name": "x", "configuration_keys": None},
                          {"resource_type": 2, "resource_name": "t", "configuration_keys": None}]}
    results = conn.request(32, 4, body)["results"]
    assert [(r["resource_type"], r["resource_name"], r["error_code"], r["error_message"], r["configs"])
            for r in results] == [(99, "x", 42, E.INVALID_REQUEST.message, []),
                                  (2, "t", 42, E.INVALID_REQUEST.message, [])]


def test_init_producer_id_refused_answers_no_producer(conn: Connection) -> None:
    body = {"transactional_id": None, "transaction_timeout_ms": 60_000, "producer_id": -1, "producer_epoch": 3}
    assert conn.request(22, 4, body) == {"throttle_time_ms": 0, "error_code": 42, "producer_id": -1,
                                         "producer_epoch": -1}
