"""A data directory holding partition logs, laid out as Kafka lays out a `log.dirs` entry.

    <data dir>/
        log-start-offset-checkpoint     topic partition offset, for logs whose start moved past their
                                        first segment (DeleteRecords, retention)
        <topic>-<partition>/
            00000000000000000000.log / .index / .timeindex
            leader-epoch-checkpoint
            partition.metadata          the topic id, so it survives restarts

Kafka writes the log start checkpoint every minute; kemu writes it whenever a log start offset moves,
before the segments below it are deleted, so a `kill -9` never resurrects deleted records.
"""

from __future__ import annotations

import base64
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kemu.clock import Clock
from kemu.log.cache_budget import CacheBudget
from kemu.log.checkpoint import CorruptCheckpointError, read_checkpoint, write_checkpoint
from kemu.log.config import LogConfig

if TYPE_CHECKING:
    from kemu.log.partition_log import PartitionLog

LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
PARTITION_METADATA = "partition.metadata"


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a partition directory; None for Kafka's `-delete`/`-future`/`-stray` dirs
    and anything else."""
    topic, dash, number = name.rpartition("-")
    if not dash or not topic or not number.isdigit() or "." in number:
        return None
    return topic, int(number)


def kafka_uuid_string(value: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def write_partition_metadata(directory: Path, topic_id: uuid.UUID) -> None:
    path = directory / PARTITION_METADATA
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(f"version: 0\ntopic_id: {kafka_uuid_string(topic_id)}\n", encoding="utf-8")
    temporary.replace(path)


def read_partition_metadata(directory: Path) -> uuid.UUID | None:
    try:
        lines = (directory / PARTITION_METADATA).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    fields = dict(line.split(": ", 1) for line in lines if ": " in line)
    if fields.get("version") != "0" or "topic_id" not in fields:
        return None
    try:
        return parse_kafka_uuid(fields["topic_id"].strip())
    except ValueError:
        return None


class LogDir:
    def __init__(self, path: Path, clock: Clock) -> None:
        self.path = path
        self.clock = clock
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self.cache_budget = CacheBudget()
        path.mkdir(parents=True, exist_ok=True)
        self._checkpointed_starts = self._read_start_checkpoint()

    def _read_start_checkpoint(self) -> dict[tuple[str, int], int]:
        try:
            rows = read_checkpoint(self.path / LOG_START_OFFSET_CHECKPOINT, 3)
        except CorruptCheckpointError:
            rows = None
        return {(topic, int(partition)): int(offset) for topic, partition, offset in rows or ()}

    def discover(self) -> list[tuple[str, int]]:
        """The (topic, partition) directories present on disk, without opening them."""
        found = []
        for child in sorted(self.path.iterdir()):
            parsed = parse_partition_dir_name(child.name) if child.is_dir() else None
            if parsed is not None:
                found.append(parsed)
        return found

    def open_all(self, config_for: Callable[[str], LogConfig]) -> dict[tuple[str, int], PartitionLog]:
        """Open and recover every partition on disk (the broker's start-up)."""
        for topic, partition in self.discover():
            self.open(topic, partition, config_for(topic))
        return dict(self._logs)

    def open(self, topic: str, partition: int, config: LogConfig, *, topic_id: uuid.UUID | None = None) -> PartitionLog:
        """The partition's log, created or recovered from disk if it is not open yet."""
        key = (topic, partition)
        log = self._logs.get(key)
        if log is not None:
            return log
        # Loaded with the first partition: a broker with none needs no partition log, segments or validator.
        from kemu.log.partition_log import PartitionLog

        directory = self.path / partition_dir_name(topic, partition)
        log = PartitionLog.open(
            directory, topic, partition, config, self.clock, log_start_offset=self._checkpointed_starts.get(key),
            cache_budget=self.cache_budget, on_log_start_offset_change=self._log_start_moved,
        )
        if topic_id is not None:
            try:
                write_partition_metadata(directory, topic_id)
            except OSError:
                log.close()  # not registered: nothing else would close its files
                raise
        self._logs[key] = log
        return log

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def topic_id(self, topic: str, partition: int) -> uuid.UUID | None:
        return read_partition_metadata(self.path / partition_dir_name(topic, partition))

    def __iter__(self) -> Iterator[PartitionLog]:
        return iter(list(self._logs.values()))

    def __len__(self) -> int:
        return len(self._logs)

    def delete(self, topic: str, partition: int) -> None:
        key = (topic, partition)
        log = self._logs.pop(key, None)
        if log is not None:
            log.delete()
        else:
            shutil.rmtree(self.path / partition_dir_name(topic, partition), ignore_errors=True)
        if self._checkpointed_starts.pop(key, None) is not None:
            self._write_start_checkpoint()

    def run_retention(self) -> int:
        """One pass of the periodic log maintenance: retention for every log, and `flush.ms`."""
        deleted = 0
        for log in self:
            if not log.is_closed:
                deleted += log.delete_old_segments()
                log.maybe_flush()
        return deleted

    def close(self) -> None:
        for log in self._logs.values():
            log.close()
        self._logs.clear()

    def _log_start_moved(self, log: PartitionLog) -> None:
        key = (log.topic, log.partition)
        first_base = log.segments[0].base_offset if log.segments else log.log_start_offset
        if log.log_start_offset > first_base:
            self._checkpointed_starts[key] = log.log_start_offset
        else:
            self._checkpointed_starts.pop(key, None)
        self._write_start_checkpoint()

    def _write_start_checkpoint(self) -> None:
        entries = [
            (topic, partition, offset) for (topic, partition), offset in sorted(self._checkpointed_starts.items())
        ]
        write_checkpoint(self.path / LOG_START_OFFSET_CHECKPOINT, entries)
