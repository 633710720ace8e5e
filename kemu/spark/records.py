"""Spark's Kafka sink columns (topic, key, value, headers, partition) turned into what a producer sends."""

from __future__ import annotations

from typing import Any

from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructType

_TEXT_OR_BYTES = (StringType, BinaryType)


def _bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


class RecordColumns:
    """Checks a DataFrame's schema as Spark's Kafka sink does, then maps each row to a record."""

    def __init__(self, schema: StructType, topic: str | None) -> None:
        fields = {f.name.lower(): f for f in schema.fields}
        self._names = {name: field.name for name, field in fields.items()}
        self._topic = topic
        if "value" not in fields:
            raise ValueError("required attribute 'value' not found: the Kafka sink writes a 'value' column")
        if topic is None and "topic" not in fields:
            raise ValueError("topic option required when no 'topic' attribute is present")
        expected: dict[str, tuple[type, ...]] = {"value": _TEXT_OR_BYTES, "key": _TEXT_OR_BYTES,
                                                 "topic": (StringType,), "partition": (IntegerType,),
                                                 "headers": (ArrayType,)}
        for name, kinds in expected.items():
            if name in fields and not isinstance(fields[name].dataType, kinds):
                raise ValueError(f"{name} attribute type must be one of {[k.__name__ for k in kinds]}, "
                                 f"not {fields[name].dataType.simpleString()}")

    def _get(self, row: Any, name: str) -> Any:
        column = self._names.get(name)
        return None if column is None else row[column]

    def record(self, row: Any) -> dict[str, Any]:
        """Keyword arguments for Producer.produce; the topic option wins over a topic column, as in Spark."""
        topic = self._topic if self._topic is not None else self._get(row, "topic")
        if topic is None:
            raise ValueError("null topic present in the data: set the topic option or fill the topic column")
        record: dict[str, Any] = {"topic": topic, "value": _bytes(self._get(row, "value")),
                                  "key": _bytes(self._get(row, "key"))}
        headers = self._get(row, "headers")
        if headers:
            record["headers"] = [(header["key"], _bytes(header["value"])) for header in headers]
        partition = self._get(row, "partition")
        if partition is not None:
            record["partition"] = int(partition)
        return record
