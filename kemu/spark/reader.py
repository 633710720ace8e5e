"""The executor's side of a read: one partition's [from, until) range through a consumer, as Spark's Kafka rows.

Under read_committed the consumer skips aborted records and transaction markers, so the offsets it hands out have
gaps; the range is done when a record at or past `until` arrives or the consumer reports the partition's end
(the last stable offset) at or past `until`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as ClientPartition
from pyspark.sql.datasource import InputPartition

from kemu.spark.options import consumer_config, number

SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
          "timestampType int")
HEADERS = "headers array<struct<key: string, value: binary>>"
DEFAULT_POLL_TIMEOUT_MS = 120_000
_BATCH = 500
# librdkafka's timestamp types (not available, create time, log append time) as the Java client numbers them.
_TIMESTAMP_TYPES = {0: -1, 1: 0, 2: 1}


def schema(include_headers: bool) -> str:
    return f"{SCHEMA}, {HEADERS}" if include_headers else SCHEMA


@dataclass(frozen=True)
class OffsetRange(InputPartition):
    """One Spark task's share of a read: a partition's offsets [start, until)."""

    topic: str
    partition: int
    start: int
    until: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", (self.topic, self.partition, self.start, self.until))


def row(message: Message, include_headers: bool) -> tuple[Any, ...]:
    kind, stamp = message.timestamp()
    fields: tuple[Any, ...] = (
        message.key(), message.value(), message.topic(), message.partition(), message.offset(),
        datetime.fromtimestamp(stamp / 1000, tz=UTC) if kind else None, _TIMESTAMP_TYPES.get(kind, -1),
    )
    if include_headers:
        fields += ([(header[0], header[1]) for header in (message.headers() or [])],)
    return fields


def read_range(options: Mapping[str, str], piece: InputPartition, include_headers: bool) -> Iterator[tuple[Any, ...]]:
    """Spark's rows for `piece`; TimeoutError when no record or end arrives within kafkaConsumer.pollTimeoutMs."""
    if not isinstance(piece, OffsetRange):
        raise TypeError(f"not a range of Kafka offsets: {piece!r}")
    if piece.start >= piece.until:
        return
    timeout_s = (number(options, "kafkaConsumer.pollTimeoutMs") or DEFAULT_POLL_TIMEOUT_MS) / 1000
    consumer = Consumer({**consumer_config(options), "group.id": "kemu-spark-reader", "enable.auto.commit": False,
                         "enable.partition.eof": True})
    try:
        consumer.assign([ClientPartition(piece.topic, piece.partition, piece.start)])
        deadline = time.monotonic() + timeout_s
        while True:
            messages = consumer.consume(_BATCH, timeout=1.0)
            if not messages and time.monotonic() > deadline:
                raise TimeoutError(f"no record of {piece.topic}-{piece.partition} between offsets {piece.start} "
                                   f"and {piece.until} arrived within {timeout_s} s")
            for message in messages:
                error = message.error()
                if error is not None and error.code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(error)
                offset = message.offset()
                if offset is None:
                    continue
                if offset >= piece.until:
                    return
                if error is None:
                    yield row(message, include_headers)
                    if offset >= piece.until - 1:
                        return
            if messages:
                deadline = time.monotonic() + timeout_s
    finally:
        consumer.close()
