"""The exactly-once sink's parts and markers: what counts as written already, and a batch replayed with its parts
on other task numbers (what Spark's Kafka source does after a restart) written once, against an in-process
kemu (the writer's task side, without a SparkSession)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError
from confluent_kafka import TopicPartition as ClientPartition
from pyspark.sql.types import BinaryType, StructField, StructType

from kemu.spark.sink import ExactlyOnceStreamWriter, Marker, already_written, digest_record
from kemu.testing import Broker

SCHEMA = StructType([StructField("key", BinaryType()), StructField("value", BinaryType())])
QUERY = "query-1"


def test_a_marker_keeps_its_parts_through_the_offset_metadata() -> None:
    parts = [("run-a", "0f" * 16), ("run-b", "e1" * 16)]
    assert Marker.parse(4, Marker.metadata(parts)) == Marker(4, tuple(parts))
    assert Marker.parse(4, "") == Marker(4) == Marker.parse(4, None)


def test_what_counts_as_written_already() -> None:
    # Batch 3: task 0 of run a wrote part P.
    markers = {0: Marker(4, (("a", "P"),)), 1: Marker(3, (("a", "Q"),))}
    # Another run with P, on any task number: the batch is being replayed.
    assert already_written(markers, 3, 1, "b", "P")
    assert already_written(markers, 3, 0, "b", "P")
    # The same run: another task with the same bytes is a twin, not a replay; the same task number is an
    # earlier attempt of it.
    assert not already_written(markers, 3, 1, "a", "P")
    assert already_written(markers, 3, 0, "a", "P")
    # A part nobody wrote for this batch; a digest recorded for the batch before does not count.
    assert not already_written(markers, 3, 1, "b", "R")
    assert not already_written(markers, 3, 1, "b", "Q")
    # A marker past the batch: the query committed it. One of the batch with no digests (an older sink's)
    # counts for its own task number only.
    assert already_written({0: Marker(5)}, 3, 1, "b", "R")
    assert already_written({0: Marker(4)}, 3, 0, "b", "R")
    assert not already_written({0: Marker(4)}, 3, 1, "b", "R")


def _digest(**record: object) -> str:
    digest = hashlib.sha256()
    digest_record(digest, {"topic": "t", **record})
    return digest.hexdigest()


def test_a_digest_tells_apart_what_a_consumer_would() -> None:
    assert _digest(key=None, value=b"v") != _digest(key=b"", value=b"v")
    assert _digest(key=b"ab", value=b"c") != _digest(key=b"a", value=b"bc")
    assert _digest(value=b"v", partition=1) != _digest(value=b"v")
    assert _digest(value=b"v", headers=[("h", b"1")]) != _digest(value=b"v", headers=[("h", None)])
    assert _digest(key=b"k", value=b"v") == _digest(key=b"k", value=b"v", headers=[])


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker() as running:
        running.create_topic("out", partitions=2)
        yield running


def _writer(broker: Broker) -> ExactlyOnceStreamWriter:
    """A writer as a query's start makes it on the driver: a run of its own."""
    return ExactlyOnceStreamWriter({"kafka.bootstrap.servers": broker.bootstrap_servers, "topic": "out"}, SCHEMA)


def _rows(*values: bytes) -> list[dict[str, bytes]]:
    return [{"key": value, "value": value} for value in values]


def _committed(broker: Broker) -> Counter[bytes]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "reader",
                         "isolation.level": "read_committed", "enable.partition.eof": True,
                         "enable.auto.commit": False})
    consumer.assign([ClientPartition("out", p, 0) for p in range(2)])
    values: Counter[bytes] = Counter()
    at_end: set[int] = set()
    try:
        while len(at_end) < 2:
            for message in consumer.consume(100, timeout=1.0):
                error = message.error()
                if error is None:
                    values[message.value() or b""] += 1
                else:
                    assert error.code() == KafkaError._PARTITION_EOF, error
                    at_end.add(message.partition() or 0)
    finally:
        consumer.close()
    return values


def test_a_replay_with_the_parts_on_other_task_numbers_writes_each_once(broker: Broker) -> None:
    # Batch 0 done; in batch 1 task 0 commits the part of input partition 1 and the query dies before task 1
    # (input partition 0) commits.
    first = _writer(broker)
    assert first.write_part(_rows(b"a0"), QUERY, 0, 0).records == 1
    assert first.write_part(_rows(b"b0"), QUERY, 0, 1).records == 1
    assert first.write_part(_rows(b"b1", b"b2"), QUERY, 1, 0).records == 2
    # Restarted, the batch runs again with the parts the other way round: task 0 gets input partition 0's.
    second = _writer(broker)
    written = second.write_part(_rows(b"a1", b"a2"), QUERY, 1, 0)
    replayed = second.write_part(_rows(b"b1", b"b2"), QUERY, 1, 1)
    assert (written.records, written.replayed) == (2, False)
    assert (replayed.records, replayed.replayed) == (0, True)
    # Once more, after another crash, in either order: nothing new.
    third = _writer(broker)
    assert third.write_part(_rows(b"b1", b"b2"), QUERY, 1, 0).replayed
    assert third.write_part(_rows(b"a1", b"a2"), QUERY, 1, 1).replayed
    assert _committed(broker) == Counter([b"a0", b"b0", b"a1", b"a2", b"b1", b"b2"])
    # Task 0's marker kept both parts it committed for batch 1.
    assert len(second.markers(QUERY, 0)[0].parts) == 2


def test_twins_in_one_batch_are_both_written(broker: Broker) -> None:
    writer = _writer(broker)
    assert not writer.write_part(_rows(b"same"), QUERY, 0, 0).replayed
    assert not writer.write_part(_rows(b"same"), QUERY, 0, 1).replayed
    assert _committed(broker) == Counter({b"same": 2})
