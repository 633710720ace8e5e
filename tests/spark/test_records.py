"""The sink's checks of a DataFrame's columns, as Spark's Kafka sink makes them, and the record each row becomes
(pyspark's types only: no session)."""

from __future__ import annotations

import pytest
from pyspark.sql import Row
from pyspark.sql.types import ArrayType, BinaryType, DataType, IntegerType, StringType, StructField, StructType

from kemu.spark.records import RecordColumns


def _schema(**columns: DataType) -> StructType:
    return StructType([StructField(name, kind) for name, kind in columns.items()])


HEADERS = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def test_the_columns_spark_kafka_sink_takes() -> None:
    with pytest.raises(ValueError, match="required attribute 'value'"):
        RecordColumns(_schema(key=StringType()), "t")
    with pytest.raises(ValueError, match="topic option required"):
        RecordColumns(_schema(value=StringType()), None)
    with pytest.raises(ValueError, match="value attribute type"):
        RecordColumns(_schema(value=IntegerType()), "t")
    columns = RecordColumns(_schema(Topic=StringType(), key=StringType(), value=BinaryType(),
                                    partition=IntegerType(), headers=HEADERS), None)
    row = Row(Topic="orders", key="k", value=bytearray(b"v"), partition=2,
              headers=[Row(key="trace", value=b"t"), Row(key="empty", value=None)])
    assert columns.record(row) == {"topic": "orders", "key": b"k", "value": b"v", "partition": 2,
                                   "headers": [("trace", b"t"), ("empty", None)]}
    # The topic option wins over the column, as in Spark.
    assert RecordColumns(_schema(topic=StringType(), value=StringType()), "fixed").record(
        Row(topic="other", value="v")) == {"topic": "fixed", "key": None, "value": b"v"}
