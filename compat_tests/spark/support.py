"""An input topic the way the pipeline tests need it, the pipeline itself, and reading a topic to its end."""

from __future__ import annotations

import collections
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as ClientPartition
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from compat_tests.polling import wait_for
from kemu.spark import spark_kafka_options

PARTITIONS = 2
TIMEOUT_S = 60.0
PREFIX = b"seen:"


def create_topics(bootstrap: str, *names: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(n, partitions, 1) for n in names]).values():
        future.result(TIMEOUT_S)


@dataclass
class InputTopic:
    """Plain records, committed and aborted transactions, one transaction left open, and plain records after
    it (held back from read_committed readers by the open transaction's last stable offset)."""

    bootstrap: str
    name: str
    plain: list[bytes] = field(default_factory=list)
    committed: list[bytes] = field(default_factory=list)
    aborted: list[bytes] = field(default_factory=list)
    open: list[bytes] = field(default_factory=list)
    after_open: list[bytes] = field(default_factory=list)
    open_producer: Producer | None = None

    @property
    def total(self) -> int:
        return sum(map(len, (self.plain, self.committed, self.aborted, self.open, self.after_open)))

    @property
    def visible(self) -> list[bytes]:
        """What a read_committed reader gets while the open transaction stays open."""
        return self.plain + self.committed

    def _send(self, producer: Producer, values: Iterable[bytes], into: list[bytes]) -> None:
        for n, value in enumerate(values):
            producer.produce(self.name, value, key=value, partition=n % PARTITIONS)
            into.append(value)
        producer.flush(TIMEOUT_S)

    def fill(self, plain: int = 20, transactions: int = 5, per_transaction: int = 6, open_records: int = 4,
             after_open: int = 6) -> InputTopic:
        """`plain` records first (so every early micro-batch has some), then `transactions` alternating
        committed and aborted, then the open one and the records behind it."""
        self._send(Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True}),
                   (b"plain-%d" % n for n in range(plain)), self.plain)
        txn = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": f"{self.name}-writer"})
        txn.init_transactions(TIMEOUT_S)
        for t in range(transactions):
            commit = t % 2 == 0
            txn.begin_transaction()
            self._send(txn, (b"txn-%d-%s-%d" % (t, b"committed" if commit else b"aborted", n)
                             for n in range(per_transaction)), self.committed if commit else self.aborted)
            (txn.commit_transaction if commit else txn.abort_transaction)(TIMEOUT_S)
        self.open_producer = Producer({"bootstrap.servers": self.bootstrap,
                                       "transactional.id": f"{self.name}-left-open",
                                       "transaction.timeout.ms": 900_000})
        self.open_producer.init_transactions(TIMEOUT_S)
        self.open_producer.begin_transaction()
        self._send(self.open_producer, (b"open-%d" % n for n in range(open_records)), self.open)
        self._send(Producer({"bootstrap.servers": self.bootstrap}), (b"after-open-%d" % n for n in range(after_open)),
                   self.after_open)
        return self

    def abort_open(self) -> None:
        assert self.open_producer is not None
        self.open_producer.abort_transaction(TIMEOUT_S)


def new_input(bootstrap: str, label: str) -> InputTopic:
    name = f"spark-{label}-in-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, name)
    return InputTopic(bootstrap, name).fill()


def read_topic(bootstrap: str, topic: str, *, read_committed: bool = True) -> list[bytes]:
    """Every value of `topic` up to its end (the last stable offset under read_committed)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "isolation.level": "read_committed" if read_committed else "read_uncommitted"})
    try:
        consumer.assign([ClientPartition(topic, p, 0) for p in range(PARTITIONS)])
        values: list[bytes] = []
        at_end: set[int] = set()

        def drained() -> bool:
            for message in consumer.consume(500, timeout=0.5):
                error = message.error()
                if error is None:
                    values.append(message.value() or b"")
                elif error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(message.partition() or 0)
                else:
                    raise KafkaException(error)
            return len(at_end) == PARTITIONS

        wait_for(drained, timeout=TIMEOUT_S, what=f"the end of every partition of {topic}")
        return values
    finally:
        consumer.close()


def duplicates(values: Iterable[bytes]) -> int:
    return sum(count - 1 for count in collections.Counter(values).values() if count > 1)


def transformed(values: Iterable[bytes]) -> collections.Counter[bytes]:
    return collections.Counter(PREFIX + v for v in values)


def source(spark: SparkSession, bootstrap: str, topic: str, fmt: str = "kemu-kafka", **options: str) -> DataFrame:
    reader = (spark.readStream.format(fmt).options(**spark_kafka_options(bootstrap)).option("subscribe", topic)
              .option("startingOffsets", "earliest").options(**options))
    return reader.load()


def transform(stream: DataFrame) -> DataFrame:
    """The pipeline's work: each record's value prefixed, its key kept."""
    return stream.select("key", F.concat(F.lit(PREFIX), F.col("value")).alias("value"))


def start(stream: DataFrame, bootstrap: str, topic: str, checkpoint: str, *, fmt: str = "kemu-kafka",
          available_now: bool = False, **options: Any) -> StreamingQuery:
    writer = (stream.writeStream.format(fmt).options(**spark_kafka_options(bootstrap)).option("topic", topic)
              .option("checkpointLocation", checkpoint).options(**{k: str(v) for k, v in options.items()}))
    if available_now:
        writer = writer.trigger(availableNow=True)
    return writer.start()


@dataclass
class Pipeline:
    """An input topic, an output topic and a checkpoint: the pipeline runs, dies and restarts on these."""

    spark: SparkSession
    bootstrap: str
    data: InputTopic
    output: str
    checkpoint: str

    def run(self, *, fmt: str = "kemu-kafka", per_trigger: int = 12, available_now: bool = False,
            poison: bytes | None = None, **options: Any) -> StreamingQuery:
        """Read, transform, write; a `poison` input value makes its task fail when it reaches that record."""
        stream = transform(source(self.spark, self.bootstrap, self.data.name, fmt=fmt,
                                  maxOffsetsPerTrigger=str(per_trigger)))
        if poison is not None:
            stream = stream.withColumn("value", F.when(F.col("value") == F.lit(PREFIX + poison),
                                                       F.raise_error(F.lit("poison record")))
                                       .otherwise(F.col("value")))
        return start(stream, self.bootstrap, self.output, self.checkpoint, fmt=fmt, available_now=available_now,
                     **options)


def new_pipeline(spark: SparkSession, bootstrap: str, label: str, tmp_path: Path) -> Pipeline:
    data = new_input(bootstrap, label)
    output = data.name.replace("-in-", "-out-")
    create_topics(bootstrap, output)
    return Pipeline(spark, bootstrap, data, output, str(tmp_path / "checkpoint"))
