"""kemu for PySpark pipelines: a local SparkSession fixture, the options that point Spark's Kafka connector at a
broker, and a Spark Python data source for Kafka ("kemu-kafka") with an exactly-once streaming sink.

This room talks Kafka only through a client (confluent-kafka), so everything here works against any Kafka, not
only kemu. pyspark is imported lazily: `pip install 'kemu[spark]'` brings it (with pyarrow).

- `spark_kafka_options(broker)`: `kafka.bootstrap.servers` and `kafka.isolation.level=read_committed`, for
  `format("kafka")` and `format("kemu-kafka")` alike.
- `kemu.spark.source.KafkaDataSource`: the data source; `kemu.spark.session.local_session()` makes a session with
  it registered; the pytest fixture `kemu_spark` (`kemu.spark.plugin`) is that session, one per test session.
"""

from kemu.spark.options import FORMAT, spark_kafka_options

__all__ = ["FORMAT", "spark_kafka_options"]
