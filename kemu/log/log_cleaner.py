"""The cleaner's manager for one data directory (Kafka's LogCleaner thread and LogCleanerManager).

`clean_filthiest` is one iteration of Kafka's cleaner thread: among the compacted logs it picks the one
with the highest dirty ratio above its `min.cleanable.dirty.ratio`, or one whose dirty data is older than
`max.compaction.lag.ms`, cleans it, and records where it stopped in `cleaner-offset-checkpoint` (Kafka's
checkpoint file in the data directory: version, count, then `topic partition offset` lines). Configs are
read from each log when it is considered, so a topic config changed on a live topic applies at once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kemu.clock import Clock
from kemu.log.checkpoint import CorruptCheckpointError, read_checkpoint, write_checkpoint
from kemu.log.compaction import (
    Cleaner,
    CleanerStats,
    CleanerStep,
    LogToClean,
    cleanable_offsets,
    max_compaction_delay,
)
from kemu.log.offset_map import OffsetMap, capacity_for
from kemu.log.partition_log import PartitionLog
from kemu.wire.records import RecordsError

logger = logging.getLogger(__name__)

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"


@dataclass(frozen=True, slots=True)
class CleanResult:
    topic: str
    partition: int
    first_dirty_offset: int
    end_offset: int
    """The new checkpoint: the first offset the next round starts from."""
    stats: CleanerStats


class LogCleaner:
    def __init__(self, data_dir: Path, clock: Clock, *, map_capacity: int | None = None,
                 on_step: CleanerStep | None = None) -> None:
        self.data_dir = data_dir
        self.clock = clock
        self.cleaner = Cleaner(OffsetMap(map_capacity or capacity_for()), on_step)
        self._path = data_dir / CLEANER_OFFSET_CHECKPOINT
        self._checkpoints = self._read()
        self.uncleanable: set[tuple[str, int]] = set()

    def _read(self) -> dict[tuple[str, int], int]:
        try:
            rows = read_checkpoint(self._path, 3)
        except CorruptCheckpointError:
            rows = None  # Kafka starts those logs over from their start; so does this
        return {(topic, int(partition)): int(offset) for topic, partition, offset in rows or ()}

    def _write(self) -> None:
        write_checkpoint(self._path, [(t, p, o) for (t, p), o in sorted(self._checkpoints.items())])

    def checkpoint(self, topic: str, partition: int) -> int | None:
        return self._checkpoints.get((topic, partition))

    def forget(self, live: Iterable[tuple[str, int]]) -> None:
        """Drop the checkpoints of partitions that no longer exist (deleted topics)."""
        keep = set(live)
        gone = [key for key in self._checkpoints if key not in keep]
        for key in gone:
            del self._checkpoints[key]
        if gone:
            self._write()

    def _candidates(self, sources: Iterable[PartitionLog], now_ms: int) -> list[LogToClean]:
        out = []
        for log in sources:
            key = (log.topic, log.partition)
            if log.is_closed or not log.config.compact or key in self.uncleanable:
                continue
            offsets = cleanable_offsets(log, self._checkpoints.get(key), now_ms)
            if offsets.force_update_checkpoint:
                self._checkpoints[key] = offsets.first_dirty_offset
                self._write()
            delay = max_compaction_delay(log, offsets.first_dirty_offset, now_ms)
            candidate = LogToClean(log, offsets.first_dirty_offset, offsets.first_uncleanable_dirty_offset,
                                   delay > 0)
            if candidate.total_bytes > 0:
                out.append(candidate)
        return out

    def clean_filthiest(self, sources: Iterable[PartitionLog]) -> CleanResult | None:
        """One iteration of Kafka's cleaner thread; None when no log is due."""
        now = self.clock.now_ms()
        due = [c for c in self._candidates(sources, now)
               if (c.need_compaction_now and c.cleanable_bytes > 0)
               or c.cleanable_ratio > c.source.config.min_cleanable_dirty_ratio]
        if not due:
            return None
        return self._clean(max(due, key=lambda c: c.cleanable_ratio), now)

    def clean_all(self, sources: Iterable[PartitionLog]) -> list[CleanResult]:
        """Clean every compacted log that has anything cleanable, whatever its dirty ratio (a test's way of
        making the cleaner run now); the uncleanable bound (open transactions, active segment, minimum
        compaction lag) still holds."""
        now = self.clock.now_ms()
        done = [self._clean(c, now) for c in self._candidates(sources, now) if c.cleanable_bytes > 0]
        return [result for result in done if result is not None]

    def _clean(self, candidate: LogToClean, now_ms: int) -> CleanResult | None:
        log = candidate.source
        key = (log.topic, log.partition)
        try:
            end_offset, stats = self.cleaner.clean(candidate, now_ms)
        except (RecordsError, OSError) as exc:
            # Kafka's markPartitionUncleanable: a log the cleaner cannot read is left as it is until restart,
            # instead of failing the same way on every run.
            logger.error("%s-%d is uncleanable: %s", log.topic, log.partition, exc)
            self.uncleanable.add(key)
            return None
        # An empty offset map reports offset 0 (Kafka would checkpoint that); the checkpoint never goes back.
        end_offset = max(end_offset, candidate.first_dirty_offset)
        self._checkpoints[key] = end_offset
        self._write()
        return CleanResult(log.topic, log.partition, candidate.first_dirty_offset, end_offset, stats)
