"""Idempotent producer state across `kill -9`: the broker rebuilds each partition's producer state from the
last snapshot beside its segments plus a replay of the batches after it, so after a restart a retried batch
is still recognised (acknowledged with its first offsets, not written twice), a sequence gap is still
OUT_OF_ORDER_SEQUENCE_NUMBER, an older epoch INVALID_PRODUCER_EPOCH, and DescribeProducers shows the same
producer. Batches go over the wire as a client sends them (Produce v9), with explicit sequences."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch
from tests.server.kafka_socket import KafkaSocket

PRODUCE, INIT_PRODUCER_ID, DESCRIBE_PRODUCERS = 0, 22, 61
BATCHES, RECORDS_PER_BATCH = 40, 5
START_MS = int(time.time() * 1000)


def produce(server: KemuServeProcess, topic: str, pid: int, epoch: int, sequence: int) -> dict[str, Any]:
    # Timestamps grow with the sequence, so that segments roll by age (segment.ms) as batches arrive.
    records = build_batch([NewRecord(value=b"r%d" % (sequence + i), timestamp=START_MS + sequence + i)
                           for i in range(RECORDS_PER_BATCH)],
                          producer_id=pid, producer_epoch=epoch, base_sequence=sequence)
    with KafkaSocket((server.host, server.port)) as conn:
        body = conn.request(PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": records}]}]})
    [partition] = body["responses"][0]["partition_responses"]
    return partition


def test_producer_state_survives_kill_9(fresh_kemu_server: KemuServeProcess, topic_name: str) -> None:
    server = fresh_kemu_server
    admin = AdminClient({"bootstrap.servers": server.bootstrap})
    # Segments roll by age on almost every append, and each roll takes a producer snapshot; what follows the
    # last snapshot is replayed at start-up.
    admin.create_topics([NewTopic(topic_name, 1, config={"segment.ms": "1"})])[topic_name].result(15)
    with KafkaSocket((server.host, server.port)) as conn:
        init = conn.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": 60000})
    pid, epoch = init["producer_id"], init["producer_epoch"]
    offsets = []
    for n in range(BATCHES):
        answer = produce(server, topic_name, pid, epoch, n * RECORDS_PER_BATCH)
        assert answer["error_code"] == 0, answer
        offsets.append(answer["base_offset"])
    assert offsets == [n * RECORDS_PER_BATCH for n in range(BATCHES)]
    assert len(list((server.data_dir / f"{topic_name}-0").glob("*.snapshot"))) >= 1

    server.kill()
    server.start()

    def answered_after_restart() -> dict[str, Any]:
        return produce(server, topic_name, pid, epoch, (BATCHES - 1) * RECORDS_PER_BATCH)

    retried = wait_for(answered_after_restart, what="the restarted broker's answer")
    # The last batch, retried: its first offset again, nothing written.
    assert (retried["error_code"], retried["base_offset"]) == (0, offsets[-1])
    # Skipping a batch is still a gap.
    gap = produce(server, topic_name, pid, epoch, (BATCHES + 1) * RECORDS_PER_BATCH)
    assert gap["error_code"] == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    following = produce(server, topic_name, pid, epoch, BATCHES * RECORDS_PER_BATCH)
    assert (following["error_code"], following["base_offset"]) == (0, BATCHES * RECORDS_PER_BATCH)
    # A bumped epoch starts its sequences at 0 (KIP-360); the old epoch is then refused.
    bumped = produce(server, topic_name, pid, epoch + 1, 0)
    assert bumped["error_code"] == 0
    stale = produce(server, topic_name, pid, epoch, (BATCHES + 1) * RECORDS_PER_BATCH)
    assert stale["error_code"] == ErrorCode.INVALID_PRODUCER_EPOCH

    with KafkaSocket((server.host, server.port)) as conn:
        body = conn.request(DESCRIBE_PRODUCERS, 0, {"topics": [{"name": topic_name, "partition_indexes": [0]}]})
    [producer] = body["topics"][0]["partitions"][0]["active_producers"]
    assert (producer["producer_id"], producer["producer_epoch"]) == (pid, epoch + 1)
    assert producer["last_sequence"] == RECORDS_PER_BATCH - 1
    assert producer["current_txn_start_offset"] == -1
