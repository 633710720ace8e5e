"""The "kemu-kafka" source's batch and streaming reads with Spark's Kafka options, through confluent-kafka
against `kemu serve`: what each option selects, Spark's Kafka row schema, read_committed by default."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from confluent_kafka import Producer
from pyspark.sql import DataFrame, SparkSession

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.spark.support import TIMEOUT_S, InputTopic, create_topics, new_input
from kemu.spark import spark_kafka_options


@pytest.fixture(scope="module")
def data(kemu_server: KemuServeProcess) -> InputTopic:
    return new_input(kemu_server.bootstrap, "source")


def _read(spark: SparkSession, bootstrap: str, **options: str) -> DataFrame:
    return spark.read.format("kemu-kafka").options(**spark_kafka_options(bootstrap)).options(**options).load()


def _values(frame: DataFrame) -> list[bytes]:
    return sorted(bytes(r.value) for r in frame.collect())


def test_schema_and_read_committed_by_default(kemu_spark: SparkSession, kemu_server: KemuServeProcess,
                                              data: InputTopic) -> None:
    frame = _read(kemu_spark, kemu_server.bootstrap, subscribe=data.name)
    assert frame.schema.simpleString() == ("struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
                                           "timestamp:timestamp,timestampType:int>")
    rows = frame.collect()
    assert sorted(bytes(r.value) for r in rows) == sorted(data.visible)  # stops at the open transaction
    assert {r.topic for r in rows} == {data.name} and {r.partition for r in rows} == {0, 1}
    assert all(r.timestampType == 0 and r.key == r.value for r in rows)  # CreateTime, as the Java client numbers it
    # read_uncommitted, as asked for through kafka.*: aborted, open and everything behind it too.
    uncommitted = _read(kemu_spark, kemu_server.bootstrap, subscribe=data.name,
                        **{"kafka.isolation.level": "read_uncommitted"})
    assert _values(uncommitted) == sorted(data.visible + data.aborted + data.open + data.after_open)


def test_assign_pattern_offsets_timestamps_and_headers(kemu_spark: SparkSession, kemu_server: KemuServeProcess,
                                                       data: InputTopic) -> None:
    bootstrap = kemu_server.bootstrap
    on_partition_1 = sorted(v for n, v in enumerate(data.plain) if n % 2 == 1)
    assigned = _read(kemu_spark, bootstrap, assign=json.dumps({data.name: [1]}),
                     endingOffsets=json.dumps({data.name: {"1": len(on_partition_1)}}))
    assert _values(assigned) == on_partition_1
    # -2 is earliest; offsets 3 and 4 of partition 0 are plain-6 and plain-8.
    ranged = _read(kemu_spark, bootstrap, subscribePattern=data.name.replace("-in-", "-i.-"),
                   startingOffsets=json.dumps({data.name: {"0": 3, "1": -2}}),
                   endingOffsets=json.dumps({data.name: {"0": 5, "1": 0}}))
    assert _values(ranged) == [b"plain-6", b"plain-8"]

    topic = f"spark-headers-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, topic, partitions=1)
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, b"early", headers=[("trace", b"t-1")], timestamp=1_000_000)
    producer.produce(topic, b"late", headers=[("trace", b"t-2"), ("empty", None)], timestamp=2_000_000)
    producer.flush(TIMEOUT_S)
    late = _read(kemu_spark, bootstrap, subscribe=topic, startingTimestamp="1500000", includeHeaders="true").collect()
    assert [(bytes(r.value), [(h.key, h.value) for h in r.headers]) for r in late] == [
        (b"late", [("trace", b"t-2"), ("empty", None)])]
    assert late[0].timestamp.timestamp() == 2000.0


def test_a_stream_keeps_per_partition_offsets_and_honours_max_offsets_per_trigger(
        kemu_spark: SparkSession, kemu_server: KemuServeProcess, data: InputTopic) -> None:
    name = f"source_{uuid.uuid4().hex[:8]}"
    stream = (kemu_spark.readStream.format("kemu-kafka").options(**spark_kafka_options(kemu_server.bootstrap))
              .option("subscribe", data.name).option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", "16").load())
    query = stream.writeStream.format("memory").queryName(name).trigger(availableNow=True).start()
    started = time.monotonic()
    assert query.awaitTermination(TIMEOUT_S * 2), f"still running after {time.monotonic() - started:.0f} s"
    read = kemu_spark.sql(f"select value from {name}").collect()
    assert sorted(bytes(r.value) for r in read) == sorted(data.visible)
    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert len(batches) > 1
    for progress in batches:
        [source] = progress["sources"]
        # Spark shows the offsets as this source keeps them (JSON); the first batch has none to start from.
        start, end = json.loads(source["startOffset"] or "null") or {}, json.loads(source["endOffset"])
        assert set(end) == {data.name} and set(end[data.name]) == {"0", "1"}
        taken = sum(end[data.name][p] - start.get(data.name, {}).get(p, 0) for p in ("0", "1"))
        assert taken <= 16


def test_a_batch_write_takes_spark_kafka_sink_columns(kemu_spark: SparkSession, kemu_server: KemuServeProcess) -> None:
    bootstrap = kemu_server.bootstrap
    topic = f"spark-batch-write-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, topic)
    frame = kemu_spark.createDataFrame(
        [("k1", b"v1", 1, [("trace", b"t-1")]), (None, b"v2", 0, [])],
        "key string, value binary, partition int, headers array<struct<key: string, value: binary>>")
    # A Python data source is written in append (or overwrite) mode only; either way records are appended.
    frame.write.format("kemu-kafka").mode("append").options(**spark_kafka_options(bootstrap)).option("topic", topic) \
        .save()
    back = _read(kemu_spark, bootstrap, subscribe=topic, includeHeaders="true").collect()
    assert sorted((r.partition, r.key, bytes(r.value), [(h.key, h.value) for h in r.headers]) for r in back) == [
        (0, None, b"v2", []), (1, b"k1", b"v1", [("trace", b"t-1")])]
