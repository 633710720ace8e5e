"""The same pipeline through Spark's own `format("kafka")` (the Java client inside the JVM), read_committed, with
its connector jars from compat_tests/maven/spark-kafka (through compat_tests/spark/conftest.py). Spark's sink is
at-least-once: killed in the middle of a batch and restarted, the batch's records already written are written
again, which is what the "kemu-kafka" sink is there to prevent."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.spark.support import PREFIX, TIMEOUT_S, duplicates, new_pipeline, read_topic

# Plain record n sits on partition n % 2 at offset n // 2; with 12 offsets a trigger, batch 1 reads offsets 6..11
# of partition 0, so plain-12 and plain-14 are written before plain-16 kills the task.
POISON = b"plain-16"


def test_spark_kafka_source_and_sink_read_committed_and_duplicate_after_a_crash(
        spark_kafka: SparkSession, kemu_server: KemuServeProcess, tmp_path: Path) -> None:
    pipeline = new_pipeline(spark_kafka, kemu_server.bootstrap, "spark-own", tmp_path)
    first = pipeline.run(fmt="kafka", poison=POISON)
    with pytest.raises(StreamingQueryException, match="poison record"):
        first.awaitTermination(TIMEOUT_S * 2)
    second = pipeline.run(fmt="kafka")
    second.processAllAvailable()
    second.stop()

    output_values = read_topic(pipeline.bootstrap, pipeline.output)
    # Everything committed arrived, nothing aborted or still open did, and the replayed batch came twice.
    assert set(output_values) == {PREFIX + v for v in pipeline.data.visible}
    assert duplicates(output_values) > 0
    pipeline.data.abort_open()
