"""The transcript: the fields that matter pulled out of request and response bodies (topics and partitions,
producer id/epoch/sequence from batch headers, transactional ids, groups, offsets, errors by name), the
bounded ring, the readable render and the JSON form, and a served broker recording what it served."""

from __future__ import annotations

import json
import uuid

import pytest

from kemu.testing import Broker
from kemu.testing.faults import Fault
from kemu.testing.transcript import Transcript, summarize_request, summarize_response
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch
from tests.server.kafka_socket import KafkaSocket

PRODUCE = 0
FIND_COORDINATOR = 10
METADATA = 3
ADD_PARTITIONS_TO_TXN = 24


def batch(pid: int = -1, epoch: int = -1, sequence: int = -1, count: int = 1, base_offset: int = 0,
          transactional: bool = False) -> bytes:
    return build_batch([NewRecord(value=b"x", timestamp=1) for _ in range(count)], base_offset=base_offset,
                       producer_id=pid, producer_epoch=epoch, base_sequence=sequence, transactional=transactional)


def test_a_produce_request_names_partitions_and_the_producer_from_the_batch_header() -> None:
    body = {"transactional_id": "tx", "acks": -1, "timeout_ms": 1, "topic_data": [
        {"name": "orders", "partition_data": [{"index": 2, "records": batch(7, 1, 40, count=3, transactional=True)}]}]}
    summary = summarize_request(PRODUCE, body)
    assert summary.transactional_ids == {"tx"} and summary.topics == {"orders"}
    [note] = summary.partitions
    assert (note.topic, note.partition) == ("orders", 2)
    assert dict(note.fields) == {"producer_id": 7, "producer_epoch": 1, "base_sequence": 40, "transactional": True,
                                 "batches": 1, "records": 3}
    assert ("transactional_id", "tx") in summary.fields and ("acks", -1) in summary.fields


def test_a_fetch_response_names_offsets_errors_and_aborted_transactions() -> None:
    topic_id = uuid.uuid4()
    body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
        {"topic_id": topic_id, "partitions": [
            {"partition_index": 0, "error_code": 0, "high_watermark": 9, "last_stable_offset": 5,
             "log_start_offset": 0, "aborted_transactions": [{"producer_id": 1, "first_offset": 2}],
             "records": batch(count=2, base_offset=3)},
            {"partition_index": 1, "error_code": ErrorCode.OFFSET_OUT_OF_RANGE.value, "high_watermark": -1,
             "last_stable_offset": -1, "log_start_offset": -1, "aborted_transactions": None, "records": b""}]}]}
    summary = summarize_response(body, lambda found: "orders" if found == topic_id else None)
    assert summary.error == "NONE" and summary.errors == ("OFFSET_OUT_OF_RANGE",)
    first, second = summary.partitions
    assert first.topic == "orders" and dict(first.fields) == {
        "high_watermark": 9, "last_stable_offset": 5, "log_start_offset": 0, "batches": 1, "records": 2,
        "offsets": "3..4", "aborted_transactions": 1}
    assert second.error == "OFFSET_OUT_OF_RANGE"
    # Without a way to name it, a topic id still shows.
    assert summarize_response(body).partitions[0].topic == str(topic_id)


def test_nested_transactions_groups_and_coordinator_keys() -> None:
    add_v4 = {"transactions": [{"transactional_id": "a", "producer_id": 1, "producer_epoch": 0, "verify_only": False,
                                "topics": [{"name": "t", "partitions": [0, 1]}]}]}
    summary = summarize_request(ADD_PARTITIONS_TO_TXN, add_v4)
    assert summary.transactional_ids == {"a"}
    assert [(n.topic, n.partition) for n in summary.partitions] == [("t", 0), ("t", 1)]
    assert summarize_request(FIND_COORDINATOR, {"key": "tx", "key_type": 1}).transactional_ids == {"tx"}
    assert summarize_request(FIND_COORDINATOR, {"key_type": 0, "coordinator_keys": ["g1", "g2"]}).groups == {"g1", "g2"}
    offset_fetch_v8 = {"groups": [{"group_id": "g", "topics": None}], "require_stable": False}
    assert summarize_request(9, offset_fetch_v8).groups == {"g"}
    response = summarize_response({"error_code": 9999})
    assert response.error == "ERROR_9999" and response.errors == ("ERROR_9999",)


def test_the_ring_is_bounded_and_says_what_it_dropped() -> None:
    with Broker() as broker:
        small = Transcript(3)
        broker.call(broker.hooks.observe, small.observe)
        with KafkaSocket(("127.0.0.1", broker.port)) as conn:
            for _ in range(5):
                conn.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})
        assert [entry.seq for entry in small.entries] == [3, 4, 5]
        # The handle's own keeps 2,000 by default; a test may shrink it, keeping the newest.
        assert broker.transcript.capacity == 2000 and len(broker.transcript) == 5
        broker.transcript.capacity = 2
        assert [entry.seq for entry in broker.transcript.entries] == [4, 5]
        with pytest.raises(ValueError):
            broker.transcript.capacity = 0
        assert small.render().splitlines()[0] == "(2 earlier exchanges not kept)"
        assert len(small.render(last=1).splitlines()) == 2
        small.clear()
        assert small.render() == "(no requests)"


def test_a_served_broker_records_what_the_client_asked_and_got() -> None:
    with Broker() as broker:
        broker.create_topic("orders")
        broker.faults.add(Fault(api="Produce", error="NOT_LEADER_OR_FOLLOWER"))
        with KafkaSocket(("127.0.0.1", broker.port), client_id="my-app") as conn:
            conn.request(METADATA, 12, {"topics": [{"name": "missing", "topic_id": uuid.UUID(int=0)}],
                                        "allow_auto_topic_creation": False})
            for _ in range(2):
                conn.request(PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
                    {"name": "orders", "partition_data": [{"index": 0, "records": batch(5, 0, 0)}]}]})
        metadata, refused, written = broker.transcript.entries
        assert (metadata.api, metadata.version, metadata.client_id) == ("Metadata", 12, "my-app")
        assert metadata.errors == ("UNKNOWN_TOPIC_OR_PARTITION",)
        assert refused.fault == "error NOT_LEADER_OR_FOLLOWER" and refused.errors == ("NOT_LEADER_OR_FOLLOWER",)
        assert written.errors == () and written.response is not None
        assert dict(written.response.partitions[0].fields)["base_offset"] == 0
        text = broker.transcript.render()
        assert "my-app Metadata v12  [missing]" in text
        assert "-> [missing UNKNOWN_TOPIC_OR_PARTITION]" in text
        assert "Produce v9  acks=-1 [orders-0 producer_id=5 producer_epoch=0 base_sequence=0" in text
        assert "-> [orders-0 NOT_LEADER_OR_FOLLOWER]  [fault: error NOT_LEADER_OR_FOLLOWER]" in text
        assert "-> [orders-0 base_offset=0 log_start_offset=0]" in text
        # The JSON form is JSON.
        lines = [json.loads(json.dumps(entry.to_json())) for entry in broker.transcript.entries]
        assert lines[1]["api"] == "Produce" and lines[1]["response"]["errors"] == ["NOT_LEADER_OR_FOLLOWER"]
        assert lines[1]["request"]["partitions"][0] == {"topic": "orders", "partition": 0, "producer_id": 5,
                                                        "producer_epoch": 0, "base_sequence": 0, "batches": 1,
                                                        "records": 1}


def test_dropped_exchanges_and_the_transcript_across_restart() -> None:
    with Broker() as broker:
        broker.faults.add(Fault(api="Metadata", drop="after"))
        with KafkaSocket(("127.0.0.1", broker.port)) as conn:
            conn.send(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})
            assert conn.closed_by_peer()
        broker.restart()
        with KafkaSocket(("127.0.0.1", broker.port)) as conn:
            conn.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})
        dropped, after_restart = broker.transcript.entries
        assert not dropped.sent and dropped.closed and after_restart.sent
        assert "(not sent) ok  [fault: response dropped]  [connection closed]" in broker.transcript.render()
        assert after_restart.seq == dropped.seq + 1


def test_a_sink_gets_every_entry() -> None:
    got = []
    with Broker() as broker:
        broker.transcript.sink = got.append
        with KafkaSocket(("127.0.0.1", broker.port)) as conn:
            conn.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})
    assert [entry.api for entry in got] == ["Metadata"]
