"""A streaming pipeline read_committed from a topic holding plain records, committed and aborted transactions and
one left open, through the "kemu-kafka" source and its exactly-once sink, killed in the middle of a batch and
restarted from its checkpoint: the output holds each committed input, transformed, exactly once.

The kills are the sink's injected failures: a task that dies after writing part of its records (they stay in
the broker, in a transaction nobody commits) and a task that dies right after committing (its batch is then
replayed and must be recognised)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as ClientPartition
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.spark.support import TIMEOUT_S, duplicates, new_pipeline, read_topic, transformed
from kemu.spark.sink import transactional_id


def _dies(query: StreamingQuery) -> str:
    with pytest.raises(StreamingQueryException) as failure:
        query.awaitTermination(TIMEOUT_S * 2)
    return str(failure.value)


def _sink_marker(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        [committed] = consumer.committed([ClientPartition(topic, 0)], timeout=TIMEOUT_S)
        return int(committed.offset)
    finally:
        consumer.close()


def test_killed_mid_batch_and_restarted_writes_each_committed_input_once(
        kemu_spark: SparkSession, kemu_server: KemuServeProcess, tmp_path: Path) -> None:
    pipeline = new_pipeline(kemu_spark, kemu_server.bootstrap, "eos", tmp_path)
    data, bootstrap, output = pipeline.data, pipeline.bootstrap, pipeline.output
    # 1. Task 0 of batch 1 writes two records into its transaction and dies: the query dies with it. (20 plain
    #    records come first, so with 12 offsets a trigger batches 0 and 1 carry plain records on each partition.)
    first = pipeline.run(**{"injectFailure.batchId": 1, "injectFailure.partition": 0,
                            "injectFailure.afterRecords": 2})
    query_id = first.id
    assert "batch 1 task 0 dies after 2 records" in _dies(first)
    # The two records are in the log, but only inside a transaction nobody commits.
    assert len(read_topic(bootstrap, output, read_committed=False)) >= 2
    # 2. Restarted from the checkpoint, batch 1 runs again; this time task 0 commits it and dies just after.
    second = pipeline.run(**{"injectFailure.batchId": 1, "injectFailure.partition": 0,
                             "injectFailure.afterCommit": "true"})
    assert second.id == query_id  # the query id lives in the checkpoint
    assert "batch 1 task 0 dies after committing" in _dies(second)
    assert _sink_marker(bootstrap, transactional_id("kemu-spark", query_id, 0), output) == 2
    # 3. Restarted again: batch 1 is replayed once more (its task 0 must write nothing), then the rest.
    third = pipeline.run()
    third.processAllAvailable()
    third.stop()

    output_values = read_topic(bootstrap, output)
    everything_written = read_topic(bootstrap, output, read_committed=False)
    assert duplicates(output_values) == 0
    assert Counter(output_values) == transformed(data.visible)
    # Written but never committed: the killed task's records (and nothing aborted or open of the input).
    assert len(everything_written) > len(output_values)
    print(f"\npipeline figures: input records {data.total} (plain {len(data.plain)}, in committed transactions "
          f"{len(data.committed)}, aborted {len(data.aborted)}, left open {len(data.open)}, behind the open one "
          f"{len(data.after_open)}); output records {len(output_values)} (expected {len(data.visible)}), "
          f"duplicates {duplicates(output_values)}, records of killed attempts left aborted "
          f"{len(everything_written) - len(output_values)}")
    data.abort_open()


def test_available_now_ends_at_the_last_stable_offset_and_survives_a_kill(
        kemu_spark: SparkSession, kemu_server: KemuServeProcess, tmp_path: Path) -> None:
    pipeline = new_pipeline(kemu_spark, kemu_server.bootstrap, "now", tmp_path)
    data, bootstrap, output = pipeline.data, pipeline.bootstrap, pipeline.output
    first = pipeline.run(available_now=True, **{"injectFailure.batchId": 1, "injectFailure.partition": 1,
                                                 "injectFailure.afterRecords": 3})
    assert "batch 1 task 1 dies after 3 records" in _dies(first)
    # availableNow stops by itself, at the input's last stable offset: the open transaction and what follows
    # it are not read.
    second = pipeline.run(available_now=True)
    assert second.awaitTermination(TIMEOUT_S * 2)
    assert second.exception() is None
    output_values = read_topic(bootstrap, output)
    assert duplicates(output_values) == 0
    assert Counter(output_values) == transformed(data.visible)
    # Once the open transaction is aborted the records behind it become readable: the next availableNow run
    # picks up exactly those.
    data.abort_open()
    third = pipeline.run(available_now=True)
    assert third.awaitTermination(TIMEOUT_S * 2)
    output_values = read_topic(bootstrap, output)
    assert duplicates(output_values) == 0
    assert Counter(output_values) == transformed(data.visible + data.after_open)
