"""Produce: every version, acks, Kafka's per-partition errors and their fields."""

from __future__ import annotations

import time
import uuid

import pytest

from kemu.admin.topics import auto_creation_request, create_topics
from kemu.wire import codec
from kemu.wire.compression import CompressionType
from kemu.wire.records import ATTRIBUTES_OFFSET, CRC_OFFSET, NewRecord, build_batch, crc_of
from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import (
    FETCH,
    PRODUCE,
    batch,
    fetch_body,
    fetch_partitions,
    produce,
    produce_body,
    topic_id,
    values_of,
)
from tests.handlers.harness import Broker, Connection

METADATA = 3


@pytest.mark.parametrize("version", range(3, 14))
def test_every_version_appends_and_answers(broker: Broker, conn: Connection, version: int) -> None:
    create_topic(conn, "t")
    topic = topic_id(broker, "t") if version >= 13 else "t"  # v13 names the topic by id, both ways
    first = produce(conn, topic, batch(b"a", b"b"), version=version)
    second = produce(conn, topic, batch(b"c"), version=version)
    assert (first["error_code"], first["base_offset"], second["base_offset"]) == (0, 0, 2)
    assert second["log_append_time_ms"] == -1
    assert second["log_start_offset"] == (0 if version >= 5 else -1)  # absent before v5: the default
    assert second["record_errors"] == [] and second["error_message"] is None
    assert broker.broker.partition("t", 0).log.log_end_offset == 3  # type: ignore[union-attr]


@pytest.mark.real_socket
@pytest.mark.parametrize("version", [0, 2])
def test_versions_kafka_4_removed_are_refused(broker: Broker, conn: Connection, version: int) -> None:
    conn.send(PRODUCE, version, produce_body({("t", 0): batch(b"a")}))
    assert conn.closed_by_peer()


def test_api_versions_advertises_v0_to_13_as_kafka_4_does(conn: Connection) -> None:
    # KAFKA-18659: v0-2 are refused (above), yet advertised, as Kafka 4's broker listener does.
    body = conn.request(18, 4, {"client_software_name": "kemu-tests", "client_software_version": "1"})
    [produce_range] = [(k["min_version"], k["max_version"]) for k in body["api_keys"] if k["api_key"] == PRODUCE]
    assert produce_range == (0, 13)


def test_v13_an_unknown_topic_id_is_unknown_topic_id(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", partitions=2)
    known, missing, other = topic_id(broker, "t"), uuid.UUID(int=1), uuid.UUID(int=2)
    body = conn.request(PRODUCE, 13, produce_body({(missing, 0): batch(b"x"), (known, 1): batch(b"a"),
                                                   (other, 3): batch(b"y"), (known, 7): batch(b"b")}, version=13))
    answers = {(t["topic_id"], p["index"]): (p["error_code"], p["base_offset"], p["log_start_offset"])
               for t in body["responses"] for p in t["partition_responses"]}
    # Each id its own entry; a known id's missing partition is UNKNOWN_TOPIC_OR_PARTITION, as by name.
    assert answers == {(missing, 0): (100, -1, -1), (known, 1): (0, 0, 0), (other, 3): (100, -1, -1),
                       (known, 7): (3, -1, -1)}
    assert [t["topic_id"] for t in body["responses"]] == [missing, known, other]
    assert values_of(fetch_partitions(conn.request(FETCH, 13, fetch_body([(known, 1, 0)], version=13)), 13)[0][1][
        "records"]) == [b"a"]


def test_v12_is_v11_on_the_wire(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    body = conn.request(PRODUCE, 12, produce_body({("t", 0): batch(b"a"), ("gone", 0): batch(b"b")}, version=12))
    assert [(t["name"], [p["error_code"] for p in t["partition_responses"]]) for t in body["responses"]] == [
        ("t", [0]), ("gone", [3])]


def test_log_append_time_is_stamped(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", configs={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    response = produce(conn, "t", batch(b"a"))
    assert before <= response["log_append_time_ms"] <= int(time.time() * 1000)


def test_unknown_topic_and_partition_are_not_created(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    body = conn.request(PRODUCE, 11, produce_body({("nope", 0): batch(b"a"), ("t", 5): batch(b"b"),
                                                   ("t", 0): batch(b"c")}))
    answers = {(t["name"], p["index"]): p for t in body["responses"] for p in t["partition_responses"]}
    for key in (("nope", 0), ("t", 5)):
        assert answers[key] == {"index": key[1], "error_code": 3, "base_offset": -1, "log_append_time_ms": -1,
                                "log_start_offset": -1, "record_errors": [], "error_message": None,
                                "current_leader": {"leader_id": -1, "leader_epoch": -1}}
    assert answers[("t", 0)]["error_code"] == 0
    assert "nope" not in broker.broker.topics


def test_invalid_acks(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    body = conn.request(PRODUCE, 9, produce_body({("t", 0): batch(b"a"), ("nope", 0): batch(b"b")}, acks=2))
    codes = {t["name"]: t["partition_responses"][0]["error_code"] for t in body["responses"]}
    assert codes == {"t": 21, "nope": 3}
    assert broker.broker.partition("t", 0).log.log_end_offset == 0  # type: ignore[union-attr]


@pytest.mark.real_socket
def test_acks_zero_gets_no_response_but_appends(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    conn.send(PRODUCE, 11, produce_body({("t", 0): batch(b"a")}, acks=0), correlation_id=41)
    conn.send(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False}, correlation_id=42)
    correlation_id, _ = codec.decode_response(METADATA, 12, conn.receive_frame())
    assert correlation_id == 42
    assert broker.broker.partition("t", 0).log.log_end_offset == 1  # type: ignore[union-attr]


@pytest.mark.real_socket
def test_acks_zero_error_closes_the_connection(broker: Broker, conn: Connection) -> None:
    conn.send(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False}, correlation_id=1)
    conn.send(PRODUCE, 11, produce_body({("nope", 0): batch(b"a")}, acks=0), correlation_id=2)
    assert codec.decode_response(METADATA, 12, conn.receive_frame())[0] == 1  # earlier answers still go out
    assert conn.closed_by_peer()


def test_internal_topics_are_refused_to_clients(broker: Broker, conn: Connection) -> None:
    broker.call(lambda: create_topics(broker.broker, [auto_creation_request(broker.broker, "__transaction_state")]))
    response = produce(conn, "__transaction_state", batch(b"a"))
    assert (response["error_code"], response["log_start_offset"]) == (17, -1)


def test_transactional_records_need_a_transactional_id(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", partitions=2)
    txn = batch(b"a", producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    body = conn.request(PRODUCE, 11, produce_body({("t", 0): batch(b"plain"), ("t", 1): txn}))
    partitions = body["responses"][0]["partition_responses"]
    # No message: Kafka's ApiError.fromThrowable drops one that is only the error's default.
    assert [(p["index"], p["error_code"], p["error_message"]) for p in partitions] == [(0, 53, None), (1, 53, None)]
    assert broker.broker.partition("t", 0).log.log_end_offset == 0  # type: ignore[union-attr]


@pytest.mark.parametrize(("version", "code"), [(6, 76), (7, 0)])
def test_zstd_needs_v7(broker: Broker, conn: Connection, version: int, code: int) -> None:
    create_topic(conn, "t")
    response = produce(conn, "t", batch(b"a", compression=CompressionType.ZSTD), version=version)
    assert response["error_code"] == code


@pytest.mark.parametrize(("records", "code"), [
    (batch(b"a") + batch(b"b"), 87),  # two batches
    (b"", 87),  # none
    (None, 87),
])
def test_validate_records(broker: Broker, conn: Connection, records: bytes | None, code: int) -> None:
    create_topic(conn, "t")
    body = conn.request(PRODUCE, 11, produce_body({("t", 0): records}))
    response = body["responses"][0]["partition_responses"][0]
    assert (response["error_code"], response["base_offset"], response["log_start_offset"]) == (code, -1, -1)


def test_corrupt_batch(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    data = bytearray(batch(b"abc"))
    data[-1] ^= 0xFF
    response = produce(conn, "t", bytes(data))
    assert (response["error_code"], response["log_start_offset"]) == (2, -1)


def test_message_too_large(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", configs={"max.message.bytes": "1000"})
    response = produce(conn, "t", batch(b"x" * 2000))
    assert (response["error_code"], response["base_offset"], response["log_start_offset"]) == (10, -1, -1)


def test_record_errors_on_a_compacted_topic(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", configs={"cleanup.policy": "compact"})
    data = build_batch([NewRecord(b"v", key=b"k", timestamp=1), NewRecord(b"v", key=None, timestamp=1)])
    response = produce(conn, "t", data)
    assert response["error_code"] == 87
    assert response["log_start_offset"] == 0
    assert response["record_errors"] == [
        {"batch_index": 1, "batch_index_error_message": "Compacted topic cannot accept message without key in "
                                                       "topic partition t-0"}]  # no full stop, as Kafka's
    assert response["error_message"] is not None and "RecordError(batchIndex=1" in response["error_message"]


def test_min_insync_replicas_with_acks_all(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", configs={"min.insync.replicas": "2"})
    # One replica: Kafka's effective min ISR is the replica count, so acks=all is taken.
    assert produce(conn, "t", batch(b"a"), acks=-1)["error_code"] == 0

    def two_replicas_one_in_sync() -> None:
        partition = broker.broker.partition("t", 0)
        assert partition is not None
        partition.replicas = [partition.leader_id, partition.leader_id + 1]
        partition.isr = [partition.leader_id]

    broker.call(two_replicas_one_in_sync)
    refused = produce(conn, "t", batch(b"a"), acks=-1)
    assert (refused["error_code"], refused["log_start_offset"]) == (19, 0)
    assert produce(conn, "t", batch(b"a"), acks=1)["error_code"] == 0


def test_idempotent_duplicate_and_gap(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    produce(conn, "t", batch(b"other"))
    first = batch(b"a", b"b", producer_id=1000, producer_epoch=0, base_sequence=0, timestamp=1_700_000_000_500)
    assert produce(conn, "t", first)["base_offset"] == 1
    retry = produce(conn, "t", first)
    assert (retry["error_code"], retry["base_offset"], retry["log_append_time_ms"]) == (0, 1, 1_700_000_000_501)
    gap = produce(conn, "t", batch(b"c", producer_id=1000, producer_epoch=0, base_sequence=5))
    assert (gap["error_code"], gap["base_offset"], gap["log_start_offset"]) == (45, -1, 0)
    assert broker.broker.partition("t", 0).log.log_end_offset == 3  # type: ignore[union-attr]


def test_a_partition_named_twice_answers_once_with_the_last_records(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    body = produce_body({("t", 0): batch(b"first")})
    body["topic_data"].append({"name": "t", "partition_data": [{"index": 0, "records": batch(b"second")}]})
    answer = conn.request(PRODUCE, 11, body)
    assert [(t["name"], len(t["partition_responses"])) for t in answer["responses"]] == [("t", 1)]
    fetched = conn.request(FETCH, 12, fetch_body([("t", 0, 0)]))
    assert values_of(fetch_partitions(fetched)[0][1]["records"]) == [b"second"]


def test_transactional_batches_are_verified_with_the_coordinator(broker: Broker, conn: Connection) -> None:
    """KIP-890: a transactional batch for a partition never added to the transaction is refused."""
    create_topic(conn, "t")
    init = broker.call(lambda: broker.coordinators.txn.coordinator.init_producer_id("tx", 60_000))
    records = batch(b"a", producer_id=init.producer_id, producer_epoch=init.producer_epoch, base_sequence=0,
                    transactional=True)
    answers = {}
    for version in (10, 11):
        body = conn.request(PRODUCE, version, produce_body({("t", 0): records}, transactional_id="tx"))
        answer = body["responses"][0]["partition_responses"][0]
        answers[version] = (answer["error_code"], answer["base_offset"], answer["log_start_offset"],
                            answer["error_message"])
    assert answers == {10: (48, -1, -1, "Partition was not added to the transaction"), 11: (120, -1, -1, None)}
    assert broker.broker.partition("t", 0).log.log_end_offset == 0  # type: ignore[union-attr]


def test_transactional_batches_of_two_producers(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", partitions=2)
    body = conn.request(PRODUCE, 11, produce_body({
        ("t", 0): batch(b"a", producer_id=1, producer_epoch=0, base_sequence=0, transactional=True),
        ("t", 1): batch(b"b", producer_id=2, producer_epoch=0, base_sequence=0, transactional=True),
    }, transactional_id="tx"))
    answers = [(p["error_code"], p["error_message"]) for p in body["responses"][0]["partition_responses"]]
    assert answers == [(49, "Transactional records contained more than one producer ID")] * 2


@pytest.mark.parametrize(("version", "code", "log_start_offset"), [(3, -1, -1), (6, -1, -1), (7, -1, 0), (11, -1, 0)])
def test_a_codec_id_beyond_zstd(broker: Broker, conn: Connection, version: int, code: int,
                                log_start_offset: int) -> None:
    """Bits 0-2 of 5-7: before v7 the zstd check fails the whole request (Kafka's IllegalArgumentException,
    the other partition too), from v7 the append fails that partition alone; UNKNOWN_SERVER_ERROR, no message."""
    create_topic(conn, "t", partitions=2)
    broken = bytearray(batch(b"a"))
    broken[ATTRIBUTES_OFFSET + 1] |= 7
    broken[CRC_OFFSET:CRC_OFFSET + 4] = crc_of(broken).to_bytes(4, "big")
    body = conn.request(PRODUCE, version, produce_body({("t", 0): bytes(broken), ("t", 1): batch(b"b")}))
    first, second = body["responses"][0]["partition_responses"]
    assert (first["error_code"], first["log_start_offset"], first["error_message"]) == (code, log_start_offset, None)
    assert second["error_code"] == (-1 if version < 7 else 0)
