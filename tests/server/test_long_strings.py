"""Strings longer than Kafka's own records can hold (32767 bytes, a classic string's int16 length) are refused
as Kafka's generated readers refuse them: the connection is closed before anything exists, so a group id that
GroupMetadataKey cannot encode never becomes a group that breaks ListGroups for every client, and a transactional
id that TransactionLogKey cannot encode never reaches the coordinator."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kemu.broker.config import BrokerConfig
from kemu.wire import codec
from kemu.wire.codec import DecodeError
from tests.server.broker_thread import BrokerThread

LONGEST = 0x7FFF


def join_group(group: str) -> dict[str, Any]:
    return {"group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}], "reason": None}


def init_producer_id(transactional_id: str) -> dict[str, Any]:
    return {"transactional_id": transactional_id, "transaction_timeout_ms": 60000, "producer_id": -1,
            "producer_epoch": -1}


@pytest.mark.parametrize("decode", [codec.decode_request, codec.decode_request_with_construct])
def test_both_decoders_refuse_a_compact_string_over_32767_bytes(decode: Any) -> None:
    fits = codec.encode_request(11, 9, 1, join_group("g" * LONGEST))
    assert decode(fits)[2]["group_id"] == "g" * LONGEST
    with pytest.raises(DecodeError):
        decode(codec.encode_request(11, 9, 1, join_group("g" * (LONGEST + 1))))


@pytest.fixture
def served() -> Iterator[BrokerThread]:
    with BrokerThread(BrokerConfig(port=0)) as broker:
        yield broker


@pytest.mark.parametrize(("api_key", "version", "body"), [
    (11, 9, join_group("g" * (LONGEST + 1))),
    (22, 5, init_producer_id("t" * (LONGEST + 1))),
])
def test_the_connection_is_closed_and_nothing_is_made(served: BrokerThread, api_key: int, version: int,
                                                      body: dict[str, Any]) -> None:
    with served.connect() as conn:
        conn.send(api_key, version, body)
        assert conn.closed_by_peer()
    with served.connect() as other:
        for list_version in (0, 1, 2, 5):
            listed = other.request(16, list_version, {"states_filter": [], "types_filter": []})
            assert listed["error_code"] == 0 and listed["groups"] == []
        listed = other.request(66, 1, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1})
        assert listed["error_code"] == 0 and listed["transaction_states"] == []


@pytest.mark.parametrize("version", [1, 2])
def test_an_answer_quoting_a_long_name_is_the_requests_error_response(served: BrokerThread, version: int) -> None:
    # "No such topic as <32760 bytes>" cannot be written (a classic string, or a compact one Kafka's writers
    # refuse alike): Kafka's handleError answers UNKNOWN_SERVER_ERROR instead, and the connection serves on.
    topic = "t" * (LONGEST - 7)
    with served.connect() as conn:
        answer = conn.request(43, version, {"election_type": 0, "timeout_ms": 30000,
                                            "topic_partitions": [{"topic": topic, "partitions": [0]}]})
        assert answer["error_code"] == -1
        assert answer["replica_election_results"] == [
            {"topic": topic, "partition_result": [{"partition_id": 0, "error_code": -1, "error_message": None}]}]
        short = conn.request(43, version, {"election_type": 0, "timeout_ms": 30000,
                                           "topic_partitions": [{"topic": "t", "partitions": [0]}]})
        assert short["replica_election_results"][0]["partition_result"][0]["error_message"] == "No such topic as t"
