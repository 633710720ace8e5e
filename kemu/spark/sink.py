"""The sinks of "kemu-kafka": an exactly-once streaming sink, and a plain batch writer.

Spark's own Kafka sink is at-least-once: a query that dies while a batch is being written is restarted from its
checkpoint, the batch runs again and its records are written a second time. Here every task writes its part of
a micro-batch in one Kafka transaction and, in that same transaction, records what it wrote as the offset of a
sink group of its own (sendOffsetsToTransaction): offset = batch id + 1, metadata = the part's digest (SHA-256 of
its records) with the run that wrote it. The transactional id, and the group, are made of the query id (kept in
the checkpoint, so it survives restarts) and the task's partition, so two attempts of one task (a retry, a
speculative copy, a zombie) share it: the later one fences the earlier and aborts what it left open.

Which part a task gets is not tied to its partition number across restarts: Spark numbers a batch's tasks in
the order of the batch's offsets, and its Kafka source gives a batch planned afresh the order of a hash map and
the same batch replayed from the checkpoint the sorted order, so task 0 may write partition 1's records in one
run and partition 0's in the next. So a task writes its rows into the transaction first, digesting them, and
then looks at what every task of the query (every sink group of its prefix) recorded for this batch: a part
with its digest written by another run, or by its own task number in this run (an earlier attempt), is a replay,
and the transaction is aborted; otherwise it is committed, with the digests its task number recorded for this
batch before (they stay findable). Readers of the output must read read_committed. It needs nothing of kemu: it
works against any Kafka. What it cannot tell apart: two tasks of one batch with byte-identical parts, one of
which had committed when the query died (the replay writes that part once, not twice).

Failure injection, for tests of a pipeline's recovery: `injectFailure.batchId` with `injectFailure.partition`
makes that task of that batch fail after `injectFailure.afterRecords` records (flushed, in the open
transaction), or, with `injectFailure.afterCommit=true`, right after its transaction committed.
"""

from __future__ import annotations

import hashlib
import itertools
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka import TopicPartition as ClientPartition
from confluent_kafka.admin import AdminClient
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
_PART_DIGITS = 32  # of a part's SHA-256, in its marker


class InjectedFailure(RuntimeError):
    """The failure a test asked for with the injectFailure.* options."""


@dataclass
class SinkCommit(WriterCommitMessage):
    task: int
    batch_id: int
    records: int
    replayed: bool  # the part was written already (this batch ran before): its transaction was aborted


def transactional_id(prefix: str, query_id: str, task: int) -> str:
    return f"{prefix}-{query_id}-{task}"


@dataclass(frozen=True)
class Marker:
    """What one task number of a query recorded in its sink group: the batch id + 1 it committed last and, for
    that batch, the parts it wrote, as (run, digest) pairs (none from a sink that recorded no digests)."""

    offset: int
    parts: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, offset: int, metadata: str | None) -> Marker:
        parts = []
        for entry in filter(None, (metadata or "").split(",")):
            run, _, digest = entry.partition(":")
            if digest:
                parts.append((run, digest))
        return cls(offset, tuple(parts))

    @staticmethod
    def metadata(parts: Iterable[tuple[str, str]]) -> str:
        return ",".join(f"{run}:{digest}" for run, digest in parts)


def already_written(markers: Mapping[int, Marker], batch_id: int, task: int, run: str, digest: str) -> bool:
    """Whether the part `digest` of batch `batch_id`, which task `task` of run `run` is about to commit, was
    committed before: by any task of another run, or by this task number in this run (an earlier attempt). A
    marker past the batch means the query has committed the batch already; one of the batch without digests
    (an older sink's) counts for its own task number."""
    for number_, marker in markers.items():
        if marker.offset > batch_id + 1:
            return True
        if marker.offset != batch_id + 1:
            continue
        if not marker.parts and number_ == task:
            return True
        if any(d == digest and (r != run or number_ == task) for r, d in marker.parts):
            return True
    return False


def _field(digest: Any, value: bytes | None) -> None:
    if value is None:
        digest.update(b"\xff\xff\xff\xff")
    else:
        digest.update(len(value).to_bytes(4, "big"))
        digest.update(value)


def digest_record(digest: Any, record: Mapping[str, Any]) -> None:
    """Adds a record (Producer.produce's keyword arguments) to a part's digest: topic, partition, key, value,
    headers, each length-prefixed."""
    _field(digest, str(record["topic"]).encode("utf-8"))
    _field(digest, None if record.get("partition") is None else str(record["partition"]).encode("ascii"))
    _field(digest, record.get("key"))
    _field(digest, record.get("value"))
    headers = record.get("headers") or []
    digest.update(len(headers).to_bytes(4, "big"))
    for name, value in headers:
        _field(digest, str(name).encode("utf-8"))
        _field(digest, value)


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
        # Made on the driver when the query starts, and pickled to every task: the same for all tasks of a
        # run, another one after a restart.
        self.run = uuid.uuid4().hex[:8]
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
        return self.write_part(iterator, query_id, int(batch), context.partitionId())

    def markers(self, query_id: str, task: int) -> dict[int, Marker]:
        """What every task number of the query has recorded: its sink groups, found by their prefix."""
        group_prefix = transactional_id(self.prefix, query_id, 0)[:-1]
        admin_config: dict[str, str | int | float | bool] = dict(self.producer_config)
        # Held while its future is answered: a client dropped at once answers an empty list.
        admin = AdminClient(admin_config)
        listed = admin.list_consumer_groups().result(self.timeout_s)
        if listed.errors:
            # A broker that did not answer may coordinate a group of this query: not knowing it, no decision.
            raise listed.errors[0]
        numbers = {task}
        for group in listed.valid or []:
            suffix = group.group_id.removeprefix(group_prefix)
            if group.group_id.startswith(group_prefix) and suffix.isdigit():
                numbers.add(int(suffix))
        found: dict[int, Marker] = {}
        for number_ in sorted(numbers):
            consumer = Consumer({**self.consumer_config, "group.id": transactional_id(self.prefix, query_id, number_),
                                 "enable.auto.commit": False})
            try:
                [committed] = consumer.committed([ClientPartition(self.marker_topic, 0)], timeout=self.timeout_s)
            finally:
                consumer.close()
            found[number_] = Marker.parse(committed.offset, committed.metadata)
        return found

    def write_part(self, rows: Iterable[Any], query_id: str, batch_id: int, task: int) -> SinkCommit:
        """Task `task`'s part of batch `batch_id` of query `query_id`: written once, whichever task number
        wrote it before."""
        remaining = iter(rows)
        first = next(remaining, None)
        if first is None:
            # Nothing to write, and a replay of this part has nothing either: no transaction needed.
            return SinkCommit(task, batch_id, 0, replayed=False)
        txn_id = transactional_id(self.prefix, query_id, task)
        producer = Producer({**self.producer_config, "transactional.id": txn_id})
        # Fences every earlier producer of this id and aborts whatever it left open, before any marker is read.
        producer.init_transactions(self.timeout_s)
        producer.begin_transaction()
        digest = hashlib.sha256()
        written = 0
        for row in itertools.chain([first], remaining):
            record = self.columns.record(row)
            digest_record(digest, record)
            _produce(producer, record)
            written += 1
            producer.poll(0)
            if self._injected(batch_id, task) and self.fail_after_records == written:
                producer.flush(self.timeout_s)
                raise InjectedFailure(f"injected: batch {batch_id} task {task} dies after {written} records")
        part = digest.hexdigest()[:_PART_DIGITS]
        markers = self.markers(query_id, task)
        if already_written(markers, batch_id, task, self.run, part):
            producer.abort_transaction(self.timeout_s)
            return SinkCommit(task, batch_id, 0, replayed=True)
        own = markers[task]
        parts = [*(own.parts if own.offset == batch_id + 1 else ()), (self.run, part)]
        marker = Consumer({**self.consumer_config, "group.id": txn_id, "enable.auto.commit": False})
        try:
            producer.send_offsets_to_transaction(
                [ClientPartition(self.marker_topic, 0, batch_id + 1, metadata=Marker.metadata(parts))],
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
