"""Spark's own Kafka sink (`df.write.format("kafka")`, its Java producer) on kemu and on the reference Kafka: the
sink's columns (topic, key, value, headers, partition) land where they say, read back by Spark's own source, the
same on both brokers; and kemu's "kemu-kafka" batch sink, given the same frame, writes the same records."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructField, StructType

from compat_tests.spark.spark_kafka_data import KafkaRow, Topics, on_both, rows
from kemu.spark import spark_kafka_options

SINK_SCHEMA = StructType([
    StructField("topic", StringType()),
    StructField("key", BinaryType()),
    StructField("value", BinaryType()),
    StructField("headers", ArrayType(StructType([StructField("key", StringType()),
                                                 StructField("value", BinaryType())]))),
    StructField("partition", IntegerType()),
])


def written(spark: SparkSession, topics: Topics, fmt: str, role: str) -> list[KafkaRow]:
    """Write 12 records to `role` through `fmt`'s batch sink, half of them with their partition given, and read
    the topic back with Spark's own source: (role, partition, offset, key, value, headers)."""
    name = topics.name(role)
    data = [(name, b"k-%d" % n, b"v-%d" % n, [("n", b"%d" % n), ("n", None)] if n % 3 else [],
             n % 2 if n < 6 else None) for n in range(12)]
    frame = spark.createDataFrame(data, SINK_SCHEMA).coalesce(1)  # one task: the order of the offsets is the rows'
    frame.write.format(fmt).options(**spark_kafka_options(topics.bootstrap)).mode("append").save()
    back = (spark.read.format("kafka").options(**spark_kafka_options(topics.bootstrap)).option("subscribe", name)
            .option("includeHeaders", "true").load())
    return rows(topics, back, with_headers=True)


def test_spark_sink_writes_where_its_columns_say(spark_kafka: SparkSession, brokers: dict[str, str]) -> None:
    def scenario(topics: Topics) -> dict[str, list[KafkaRow]]:
        topics.create("spark-sink", "kemu-sink")
        spark_rows = written(spark_kafka, topics, "kafka", "spark-sink")
        assert len(spark_rows) == 12
        by_value = {row[4]: row for row in spark_rows}
        for n in range(12):
            role, partition, _, key, _, headers = by_value[b"v-%d" % n]
            assert key == b"k-%d" % n
            assert headers == ((("n", b"%d" % n), ("n", None)) if n % 3 else ())
            if n < 6:
                assert partition == n % 2  # the partition column, where it is set
        # Within a partition, the single task's records keep their order.
        for partition in (0, 1):
            values = [row[4] for row in spark_rows if row[1] == partition]
            assert values == sorted(values, key=lambda v: int(v.split(b"-")[1]))
        kemu_rows = written(spark_kafka, topics, "kemu-kafka", "kemu-sink")
        # kemu's sink places records by the same columns; where no partition is given each producer chooses
        # its own (Spark's Java one and confluent-kafka's differ there), so those compare without it, and
        # offsets, which follow from where the others went, are left out.
        def placed(found: list[KafkaRow]) -> list[tuple[object, ...]]:
            return sorted((r[1], *r[3:]) for r in found if int(r[4].split(b"-")[1]) < 6)

        assert placed(kemu_rows) == placed(spark_rows)
        assert sorted(r[3:] for r in kemu_rows) == sorted(r[3:] for r in spark_rows)
        return {"spark": spark_rows}

    on_both(brokers, scenario)
