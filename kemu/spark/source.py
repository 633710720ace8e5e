"""The Spark Python data source "kemu-kafka": Kafka read and written through confluent-kafka, for pipelines
where Spark's own connector jars cannot be had, and for an exactly-once sink that Spark's own does not offer.

    spark.dataSource.register(KafkaDataSource)
    spark.readStream.format("kemu-kafka").options(**spark_kafka_options(broker)).option("subscribe", "orders")

Reads take Spark's Kafka source options where they apply (subscribe, subscribePattern, assign, startingOffsets,
endingOffsets, startingTimestamp, startingOffsetsByTimestamp, endingTimestamp, endingOffsetsByTimestamp,
includeHeaders, maxOffsetsPerTrigger, failOnDataLoss, kafkaConsumer.pollTimeoutMs, kafka.* for the client) and
give Spark's Kafka rows. A stream's offsets are the per-partition offsets, as Spark's Kafka source keeps them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from kemu.spark import offsets
from kemu.spark.options import FORMAT, flag, number
from kemu.spark.planner import OffsetPlanner
from kemu.spark.reader import OffsetRange, read_range, schema
from kemu.spark.sink import BatchWriter, ExactlyOnceStreamWriter


class KafkaDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        return schema(flag(self.options, "includeHeaders", False))

    def reader(self, schema: StructType) -> DataSourceReader:
        return BatchReader(self.options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return StreamReader(self.options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return BatchWriter(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        return ExactlyOnceStreamWriter(self.options, schema)


def _pieces(start: Mapping[offsets.TopicPartition, int], end: Mapping[offsets.TopicPartition, int]) -> list[
        InputPartition]:
    return [OffsetRange(topic, partition, begin, until) for (topic, partition), begin, until
            in offsets.ranges(start, end)]


class BatchReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)
        self.include_headers = flag(options, "includeHeaders", False)
        self.planner = OffsetPlanner(options)
        self.selection = offsets.selection(options)
        self.start_spec = offsets.starting(options, streaming=False)
        self.end_spec = offsets.ending(options)

    def partitions(self) -> Sequence[InputPartition]:
        tps = self.planner.partitions(self.selection)
        return _pieces(self.planner.resolve(self.start_spec, tps), self.planner.resolve(self.end_spec, tps,
                                                                                        ending=True))

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        yield from read_range(self.options, partition, self.include_headers)


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are `{"topic": {"partition": next offset}}`. Partitions that appear later (a new topic matching
    the pattern, partitions added) are read from their earliest offset, as Spark's Kafka source does."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)
        self.include_headers = flag(options, "includeHeaders", False)
        self.fail_on_data_loss = flag(options, "failOnDataLoss", True)
        self.max_offsets = number(options, "maxOffsetsPerTrigger")
        self.planner = OffsetPlanner(options)
        self.selection = offsets.selection(options)
        self.start_spec = offsets.starting(options, streaming=True)
        self.available_now: offsets.Offsets | None = None
        self.last_seen: offsets.Offsets | None = None

    def initialOffset(self) -> dict[str, dict[str, int]]:
        tps = self.planner.partitions(self.selection)
        return offsets.render_offsets(self.planner.resolve(self.start_spec, tps))

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_offsets) if self.max_offsets is not None else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        # availableNow reads up to what is there now (the last stable offset under read_committed) and stops.
        self.available_now = self.planner.latest(self.planner.partitions(self.selection))

    def latestOffset(self, start: dict[str, dict[str, int]], limit: ReadLimit) -> dict[str, dict[str, int]]:
        begin = offsets.read_offsets(start)
        if self.available_now is not None:
            latest = dict(self.available_now)
        else:
            latest = self.planner.latest(self.planner.partitions(self.selection))
        self.last_seen = latest
        new = [tp for tp in latest if tp not in begin]
        begin.update(self.planner.earliest(new))
        end = {tp: max(offset, begin[tp]) for tp, offset in latest.items()}
        if isinstance(limit, ReadMaxRows):
            end = offsets.rate_limit(limit.max_rows, begin, end)
        return offsets.render_offsets(end)

    def reportLatestOffset(self) -> dict[str, dict[str, int]] | None:
        return offsets.render_offsets(self.last_seen) if self.last_seen is not None else None

    def partitions(self, start: dict[str, dict[str, int]], end: dict[str, dict[str, int]]) -> Sequence[
            InputPartition]:
        begin = offsets.read_offsets(start)
        until = offsets.read_offsets(end)
        begin.update(self.planner.earliest(tp for tp in until if tp not in begin))
        log_start = self.planner.earliest(tp for tp in until if begin[tp] < until[tp])
        lost = {tp: (begin[tp], first) for tp, first in log_start.items() if first > begin[tp]}
        if lost and self.fail_on_data_loss:
            raise RuntimeError(f"offsets were deleted before they were read (partition: (next, log start)): {lost};"
                               " set failOnDataLoss=false to skip them")
        begin.update({tp: first for tp, (_, first) in lost.items()})
        return _pieces(begin, until)

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        yield from read_range(self.options, partition, self.include_headers)
