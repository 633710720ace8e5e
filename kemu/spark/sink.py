"""The sinks of "kemu-kafka": an exactly-once streaming sink, and a plain batch writer.

Spark's own Kafka sink is at-least-once: a query that dies while a batch is being written is restarted from its
checkpoint, the batch runs again and its records are written a second time. Here every task writes its part of
a micro-batch in one Kafka transaction and, in that same transaction, commits the batch id as the offset of a
sink group of its own (sendOffsetsToTransaction; committed offset = batch id + 1). A replayed batch finds its
batch id already committed and writes nothing; a half-written batch was never committed, and the next attempt,
with the same transactional id, fences the old producer and aborts what it wrote. The transactional id is
derived from the query id (kept in the checkpoint, so it survives restarts) and the task's partition, so two
attempts of one task (a retry, a speculative copy, a zombie) share it and only one can commit. Readers of the
output must read read_committed. It needs nothing of kemu: it works against any Kafka.

Failure injection, for tests of a pipeline's recovery: `injectFailure.batchId` with `injectFailure.partition`
makes that task of that batch fail after `injectFailure.afterRecords` records (flushed, in the open
transaction), or, with `injectFailure.afterCommit=true`, right after its transaction committed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka import TopicPartition as ClientPartition
from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kemu.spark.options import consumer_config, flag, number, option, producer_config
from kemu.spark.records import RecordColumns

DEFAULT_PREFIX = "kemu-spark"
TIMEOUT_S = 60.0
# Spark's local properties for the micro-batch a task belongs to (MicroBatchExecution, StreamExecution).
BATCH_ID_PROPERTY = "streaming.sql.batchId"
QUERY_ID_PROPERTY = "sql.streaming.queryId"


class InjectedFailure(RuntimeError):
    """The failure a test asked for with the injectFailure.* options."""


@dataclass
class SinkCommit(WriterCommitMessage):
    task: int
    batch_id: int
    records: int
    replayed: bool  # the batch id was already committed for this task: nothing was written


def transactional_id(prefix: str, query_id: str, task: int) -> str:
    return f"{prefix}-{query_id}-{task}"


def _produce(producer: Producer, record: dict[str, Any]) -> None:
    while True:
        try:
            producer.produce(**record)
            return
        except BufferError:
            producer.poll(0.1)  # the local queue is full: let deliveries drain it


class ExactlyOnceStreamWriter(DataSourceStreamWriter):
    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.options = dict(options)
        topic = option(options, "topic")
        self.columns = RecordColumns(schema, topic)
        marker_topic = topic or option(options, "markerTopic")
        if marker_topic is None:
            raise ValueError("the exactly-once sink records each batch on partition 0 of the 'topic' option's "
                             "topic; rows that carry their own topic need the 'markerTopic' option instead")
        self.marker_topic = marker_topic
        self.prefix = option(options, "transactionalIdPrefix") or DEFAULT_PREFIX
        self.timeout_s = TIMEOUT_S
        self.producer_config = producer_config(options)
        self.consumer_config = consumer_config(options)
        self.fail_batch = number(options, "injectFailure.batchId")
        self.fail_partition = number(options, "injectFailure.partition", 0)
        self.fail_after_records = number(options, "injectFailure.afterRecords")
        self.fail_after_commit = flag(options, "injectFailure.afterCommit", False)

    def _injected(self, batch_id: int, task: int) -> bool:
        return self.fail_batch == batch_id and self.fail_partition == task

    def write(self, iterator: Iterator[Any]) -> SinkCommit:
        context = TaskContext.get()
        batch = context.getLocalProperty(BATCH_ID_PROPERTY) if context is not None else None
        query_id = context.getLocalProperty(QUERY_ID_PROPERTY) if context is not None else None
        if context is None or batch is None or query_id is None:
            raise RuntimeError("the exactly-once Kafka sink writes streaming queries only (no micro-batch id)")
        batch_id, task = int(batch), context.partitionId()
        rows = iter(iterator)
        first = next(rows, None)
        if first is None:
            # Nothing to write, and a replay of this batch has nothing either: no transaction needed.
            return SinkCommit(task, batch_id, 0, replayed=False)
        txn_id = transactional_id(self.prefix, query_id, task)
        producer = Producer({**self.producer_config, "transactional.id": txn_id})
        # Fences every earlier producer of this id and aborts whatever it left open, before the marker is read.
        producer.init_transactions(self.timeout_s)
        marker = Consumer({**self.consumer_config, "group.id": txn_id, "enable.auto.commit": False})
        try:
            [committed] = marker.committed([ClientPartition(self.marker_topic, 0)], timeout=self.timeout_s)
            if committed.offset > batch_id:
                for _ in rows:
                    pass
                return SinkCommit(task, batch_id, 0, replayed=True)
            producer.begin_transaction()
            written = 0
            for row in itertools.chain([first], rows):
                _produce(producer, self.columns.record(row))
                written += 1
                producer.poll(0)
                if self._injected(batch_id, task) and self.fail_after_records == written:
                    producer.flush(self.timeout_s)
                    raise InjectedFailure(f"injected: batch {batch_id} task {task} dies after {written} records")
            producer.send_offsets_to_transaction([ClientPartition(self.marker_topic, 0, batch_id + 1)],
                                                 marker.consumer_group_metadata(), self.timeout_s)
            producer.commit_transaction(self.timeout_s)
        finally:
            marker.close()
        if self._injected(batch_id, task) and self.fail_after_commit:
            raise InjectedFailure(f"injected: batch {batch_id} task {task} dies after committing {written} records")
        return SinkCommit(task, batch_id, written, replayed=False)


@dataclass
class BatchCommit(WriterCommitMessage):
    records: int


class BatchWriter(DataSourceWriter):
    """`df.write.format("kemu-kafka")`: an idempotent producer per task, at least once like Spark's own."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.columns = RecordColumns(schema, option(options, "topic"))
        self.producer_config = producer_config(options)

    def write(self, iterator: Iterator[Any]) -> BatchCommit:
        producer = Producer({**self.producer_config, "enable.idempotence": True})
        failures: list[KafkaException] = []

        def delivered(error: Any, _message: Any) -> None:
            if error is not None:
                failures.append(KafkaException(error))

        written = 0
        for row in iterator:
            _produce(producer, {**self.columns.record(row), "on_delivery": delivered})
            written += 1
            producer.poll(0)
        remaining = producer.flush(TIMEOUT_S)
        if failures:
            raise failures[0]
        if remaining:
            raise TimeoutError(f"{remaining} records were not delivered within {TIMEOUT_S} s")
        return BatchCommit(written)
