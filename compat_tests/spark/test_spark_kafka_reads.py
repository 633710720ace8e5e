"""Spark's own Kafka source (`format("kafka")`, the spark-sql-kafka-0-10 connector and its Java client) with
the options a pipeline uses, against kemu and against the reference Kafka 4.3.

Every scenario is run on both brokers with the same writes. Its rows must be exactly the records the broker's
delivery reports placed (role, partition, offset, key, value, and where the scenario reads them, timestamp and
headers), chosen by the scenario's options: the same on both brokers, so kemu's answer equals Kafka's. Where
kemu's own "kemu-kafka" source takes the same options, its rows on kemu are compared too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import TopicPartition as ClientPartition
from confluent_kafka.admin import AdminClient
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession

from compat_tests.polling import wait_for
from compat_tests.spark.spark_kafka_data import (
    ABORTED,
    COMMITTED,
    OPEN,
    PLAIN,
    KafkaRow,
    Topics,
    expected,
    on_both,
    rows,
    with_millis,
)
from compat_tests.spark.support import TIMEOUT_S
from kemu.spark import spark_kafka_options

EVERY_FATE = frozenset({PLAIN, COMMITTED, ABORTED, OPEN})


def batch(spark: SparkSession, topics: Topics, fmt: str = "kafka", *, read_committed: bool = True,
          **options: str) -> DataFrame:
    return (spark.read.format(fmt).options(**spark_kafka_options(topics.bootstrap, read_committed=read_committed))
            .options(**options).load())


def spread(prefix: str, count: int) -> list[tuple[int, bytes]]:
    """`count` records alternating over partitions 0 and 1."""
    return [(n % 2, b"%s-%d" % (prefix.encode(), n)) for n in range(count)]


def test_batch_reads_see_committed_data_under_read_committed_and_everything_under_read_uncommitted(
        spark_kafka: SparkSession, brokers: dict[str, str]) -> None:
    def scenario(topics: Topics) -> dict[str, list[KafkaRow]]:
        topics.create("orders")
        topics.plain("orders", spread("plain", 8))
        topics.transactions("orders", count=4, per_transaction=4, leave_open=4)
        # Behind the open transaction: held back from read_committed by the last stable offset.
        topics.plain("orders", spread("after-open", 4))
        behind_open = {record.value for record in topics.sent if record.value.startswith(b"after-open")}
        subscribe = {"subscribe": topics.name("orders")}
        committed = rows(topics, batch(spark_kafka, topics, **subscribe))
        uncommitted = rows(topics, batch(spark_kafka, topics, read_committed=False, **subscribe))
        # kemu's own source, read_committed by default, over the same options.
        own = rows(topics, batch(spark_kafka, topics, "kemu-kafka", **subscribe))
        visible = [r for r in topics.of("orders") if r.value not in behind_open]
        assert committed == expected(visible)
        assert uncommitted == expected(topics.of("orders", fates=EVERY_FATE))
        assert own == committed
        topics.abort_open()
        after_abort = rows(topics, batch(spark_kafka, topics, **subscribe))
        assert after_abort == expected(topics.of("orders"))  # now up to the end, the open records aborted
        return {"committed": committed, "uncommitted": uncommitted, "after_abort": after_abort}

    on_both(brokers, scenario)


def test_assign_with_starting_and_ending_offsets_as_json(spark_kafka: SparkSession, brokers: dict[str, str]) -> None:
    def scenario(topics: Topics) -> list[KafkaRow]:
        topics.create("orders", "other")
        topics.plain("orders", spread("order", 20))
        topics.plain("other", spread("other", 4))
        name = topics.name("orders")
        options = {"assign": json.dumps({name: [0, 1]}),
                   # partition 0 from offset 3 to 7 (exclusive), partition 1 from the earliest to the latest
                   "startingOffsets": json.dumps({name: {"0": 3, "1": -2}}),
                   "endingOffsets": json.dumps({name: {"0": 7, "1": -1}})}
        got = rows(topics, batch(spark_kafka, topics, **options))
        want = [r for r in topics.of("orders") if r.partition == 1 or 3 <= r.offset < 7]
        assert got == expected(want)
        assert rows(topics, batch(spark_kafka, topics, "kemu-kafka", **options)) == got
        return got

    on_both(brokers, scenario)


def test_offsets_by_timestamp(spark_kafka: SparkSession, brokers: dict[str, str]) -> None:
    base = int(time.time() * 1000) - 60_000

    def scenario(topics: Topics) -> dict[str, list[KafkaRow]]:
        topics.create("events")
        records = spread("event", 20)
        topics.plain("events", records, timestamps=[base + 1000 * n for n in range(len(records))])
        name = topics.name("events")
        start, end = base + 4500, base + 15_000
        by_partition = {
            "startingOffsetsByTimestamp": json.dumps({name: {"0": start, "1": start}}),
            "endingOffsetsByTimestamp": json.dumps({name: {"0": end, "1": end}}),
        }
        got = rows(topics, with_millis(batch(spark_kafka, topics, subscribe=name, **by_partition)),
                   with_timestamps=True)
        sent = topics.of("events")
        assert got == expected([r for r in sent if start <= (r.timestamp_ms or 0) < end], with_timestamps=True)
        # startingTimestamp: one timestamp for every partition; the end stays the latest offset.
        from_timestamp = rows(topics, with_millis(batch(spark_kafka, topics, subscribe=name,
                                                        startingTimestamp=str(start))), with_timestamps=True)
        assert from_timestamp == expected([r for r in sent if (r.timestamp_ms or 0) >= start], with_timestamps=True)
        return {"by_partition": got, "starting_timestamp": from_timestamp}

    on_both(brokers, scenario)


def test_headers_are_read_in_order_with_duplicates_and_nulls(spark_kafka: SparkSession,
                                                             brokers: dict[str, str]) -> None:
    headers = [[("trace", b"a-%d" % n), ("trace", b"b-%d" % n), ("empty", b""), ("none", None)][: 1 + n % 4]
               for n in range(8)]

    def scenario(topics: Topics) -> list[KafkaRow]:
        topics.create("traced")
        topics.plain("traced", spread("traced", 8), headers=headers)
        got = rows(topics, batch(spark_kafka, topics, subscribe=topics.name("traced"), includeHeaders="true"),
                   with_headers=True)
        assert got == expected(topics.of("traced"), with_headers=True)
        assert any(len(h) == 4 and h[3] == ("none", None) for *_, h in got)
        own = rows(topics, batch(spark_kafka, topics, "kemu-kafka", subscribe=topics.name("traced"),
                                 includeHeaders="true"), with_headers=True)
        assert own == got
        return got

    on_both(brokers, scenario)


def test_min_partitions_splits_the_read_without_changing_its_rows(spark_kafka: SparkSession,
                                                                   brokers: dict[str, str]) -> None:
    def scenario(topics: Topics) -> list[KafkaRow]:
        topics.create("wide")
        topics.plain("wide", spread("wide", 40))
        frame = batch(spark_kafka, topics, subscribe=topics.name("wide"), minPartitions="6")
        assert frame.rdd.getNumPartitions() >= 6
        got = rows(topics, frame)
        assert got == expected(topics.of("wide"))
        return got

    on_both(brokers, scenario)


def test_subscribe_pattern_reads_the_matching_topics_only(spark_kafka: SparkSession,
                                                          brokers: dict[str, str]) -> None:
    def scenario(topics: Topics) -> list[KafkaRow]:
        # The roles differ only where the pattern must tell them apart: metrics-a and metrics-b match.
        topics.create("metrics-a", "metrics-b", "logs")
        for role in ("metrics-a", "metrics-b", "logs"):
            topics.plain(role, spread(role, 6))
        pattern = rf"spark-metrics-.-{topics.run}"
        got = rows(topics, batch(spark_kafka, topics, subscribePattern=pattern))
        assert got == expected(topics.of("metrics-a", "metrics-b"))
        assert rows(topics, batch(spark_kafka, topics, "kemu-kafka", subscribePattern=pattern)) == got
        return got

    on_both(brokers, scenario)


def memory_stream(spark: SparkSession, topics: Topics, table: str, checkpoint: str, *,
                  available_now: bool = False, **options: str) -> Any:
    reader = (spark.readStream.format("kafka").options(**spark_kafka_options(topics.bootstrap))
              .option("startingOffsets", "earliest").options(**options))
    writer = (reader.load().writeStream.format("memory").queryName(table)
              .option("checkpointLocation", checkpoint))
    return (writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime="500 milliseconds")
            ).start()


def batch_ends(query: Any) -> list[dict[str, Any]]:
    """Each micro-batch's end offsets, as its progress reports them."""
    return [json.loads(p["sources"][0]["endOffset"]) if isinstance(p["sources"][0]["endOffset"], str)
            else p["sources"][0]["endOffset"] for p in query.recentProgress if p["numInputRows"] > 0]


def test_max_offsets_per_trigger_with_available_now(spark_kafka: SparkSession, brokers: dict[str, str],
                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    def scenario(topics: Topics) -> dict[str, Any]:
        topics.create("stream")
        topics.plain("stream", spread("stream", 20))
        table = f"per_trigger_{topics.run}"
        query = memory_stream(spark_kafka, topics, table, str(tmp_path_factory.mktemp("checkpoint")),
                              available_now=True, subscribe=topics.name("stream"), maxOffsetsPerTrigger="6")
        query.awaitTermination(TIMEOUT_S * 2)
        got = rows(topics, spark_kafka.table(table))
        assert got == expected(topics.of("stream"))
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"] > 0]
        assert sum(sizes) == 20 and max(sizes) <= 6 and len(sizes) == 4, sizes
        ends = [{partition: offset for partition, offset in end[topics.name("stream")].items()}
                for end in batch_ends(query)]
        return {"rows": got, "batch_ends": ends}

    on_both(brokers, scenario)


def test_a_new_topic_matching_the_pattern_is_picked_up_mid_stream(spark_kafka: SparkSession,
                                                                  brokers: dict[str, str],
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    def scenario(topics: Topics) -> list[KafkaRow]:
        topics.create("feed-1")
        topics.plain("feed-1", spread("first", 6))
        table = f"pattern_{topics.run}"
        query = memory_stream(spark_kafka, topics, table, str(tmp_path_factory.mktemp("checkpoint")),
                              subscribePattern=rf"spark-feed-\d-{topics.run}",
                              **{"kafka.metadata.max.age.ms": "500"})
        try:
            def seen() -> list[KafkaRow]:
                return rows(topics, spark_kafka.table(table))

            wait_for(lambda: len(seen()) == 6, timeout=TIMEOUT_S, what="the first topic's records in the stream")
            topics.create("feed-2")
            topics.plain("feed-2", spread("second", 6))
            topics.plain("feed-1", spread("more", 2))
            wait_for(lambda: len(seen()) == 14, timeout=TIMEOUT_S, what="the new topic's records in the stream")
            got = seen()
        finally:
            query.stop()
        assert got == expected(topics.of("feed-1", "feed-2"))
        return got

    on_both(brokers, scenario)


def delete_records(bootstrap: str, topic: str, before: dict[int, int]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.delete_records([ClientPartition(topic, p, offset) for p, offset in before.items()])
    for future in futures.values():
        future.result(TIMEOUT_S)


def parquet_stream(spark: SparkSession, topics: Topics, folder: str, checkpoint: str, **options: str) -> Any:
    """An availableNow query writing Spark's Kafka rows to parquet files (a sink that recovers from its
    checkpoint, as the memory sink does not)."""
    reader = (spark.readStream.format("kafka").options(**spark_kafka_options(topics.bootstrap))
              .option("startingOffsets", "earliest").options(**options))
    return (reader.load().writeStream.format("parquet").option("path", folder)
            .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())


@pytest.mark.parametrize("fail_on_data_loss", [True, False])
def test_fail_on_data_loss_after_delete_records(spark_kafka: SparkSession, brokers: dict[str, str],
                                                tmp_path_factory: pytest.TempPathFactory,
                                                fail_on_data_loss: bool) -> None:
    def scenario(topics: Topics) -> dict[str, Any]:
        topics.create("lossy")
        topics.plain("lossy", spread("early", 8))  # offsets 0..3 on each partition
        folder, checkpoint = str(tmp_path_factory.mktemp("output")), str(tmp_path_factory.mktemp("checkpoint"))
        options = {"subscribe": topics.name("lossy"), "failOnDataLoss": str(fail_on_data_loss).lower()}
        parquet_stream(spark_kafka, topics, folder, checkpoint, **options).awaitTermination(TIMEOUT_S * 2)
        first = rows(topics, spark_kafka.read.parquet(folder))
        assert first == expected(topics.of("lossy"))
        # While the query is stopped, records it has not read yet are written and deleted: offsets 4..6 of
        # each partition are gone before the restart asks for offset 4.
        topics.plain("lossy", spread("lost", 6))
        delete_records(topics.bootstrap, topics.name("lossy"), {0: 7, 1: 7})
        kept = topics.plain("lossy", spread("late", 4))
        restarted = parquet_stream(spark_kafka, topics, folder, checkpoint, **options)
        if fail_on_data_loss:
            with pytest.raises(StreamingQueryException) as failure:
                restarted.awaitTermination(TIMEOUT_S * 2)
            message = str(failure.value)
            assert "failOnDataLoss" in message, message
            assert rows(topics, spark_kafka.read.parquet(folder)) == first  # nothing more was written
            return {"first": first, "failed": True}
        restarted.awaitTermination(TIMEOUT_S * 2)
        after = rows(topics, spark_kafka.read.parquet(folder))
        assert after == sorted(first + expected(kept))  # the lost offsets skipped, the rest once
        return {"first": first, "after": after}

    on_both(brokers, scenario)


@pytest.fixture(autouse=True)
def _no_query_left(spark_kafka: SparkSession) -> Iterator[None]:
    yield
    for query in spark_kafka.streams.active:
        query.stop()
