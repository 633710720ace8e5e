"""The leader epoch cache: which leader epoch started at which offset (Kafka's LeaderEpochFileCache).

Persisted as `leader-epoch-checkpoint` in the partition directory. ListOffsets and Fetch report epochs
from it, and OffsetForLeaderEpoch (which Java consumers use to validate their position) asks it for the
end offset of an epoch.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from kemu.log.checkpoint import CorruptCheckpointError, read_checkpoint, write_checkpoint

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class EpochEntry(NamedTuple):  # not a frozen dataclass: cheaper to define at start-up and to make
    epoch: int
    start_offset: int


class LeaderEpochCache:
    def __init__(self, directory: Path, *, fsync: bool = False, empty: bool = False) -> None:
        """`empty`: the directory was just made, so there is no checkpoint to read."""
        self._path = directory / LEADER_EPOCH_CHECKPOINT
        self._fsync = fsync
        self._entries: list[EpochEntry] = []
        if empty:
            return
        try:
            rows = read_checkpoint(self._path, 2)
        except CorruptCheckpointError:
            rows = None  # rebuilt from the batches recovery replays
        for epoch, start in rows or ():
            self._entries.append(EpochEntry(int(epoch), int(start)))

    @property
    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._entries)

    @property
    def latest_epoch(self) -> int | None:
        return self._entries[-1].epoch if self._entries else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        return self._entries[0] if self._entries else None

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that `epoch` starts at `start_offset` (called for every appended or recovered batch)."""
        if epoch < 0:
            return
        if self._entries:
            latest = self._entries[-1]
            if latest.epoch == epoch and latest.start_offset <= start_offset:
                return
        # An entry that conflicts (same or newer epoch, or starting at/after this offset) is stale.
        self._entries = [e for e in self._entries if e.epoch < epoch and e.start_offset < start_offset]
        self._entries.append(EpochEntry(epoch, start_offset))
        self._flush()

    def epoch_for_offset(self, offset: int) -> int | None:
        found: int | None = None
        for entry in self._entries:
            if entry.start_offset > offset:
                break
            found = entry.epoch
        return found

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) as OffsetForLeaderEpoch answers: the start of the next higher epoch, or the
        log end offset for the latest epoch; (-1, -1) when the epoch is unknown and newer than all."""
        if requested_epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self._entries and self._entries[-1].epoch == requested_epoch:
            return requested_epoch, log_end_offset
        higher = next((e for e in self._entries if e.epoch > requested_epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        floor = None
        for entry in self._entries:
            if entry.epoch <= requested_epoch:
                floor = entry
        if floor is None:
            return requested_epoch, higher.start_offset
        return floor.epoch, higher.start_offset

    def truncate_from_end(self, end_offset: int) -> None:
        """Forget epochs starting at or after `end_offset` (log truncation)."""
        if end_offset >= 0 and self._entries and self._entries[-1].start_offset >= end_offset:
            self._entries = [e for e in self._entries if e.start_offset < end_offset]
            self._flush()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at `start_offset`: the epoch in force there starts there."""
        removed = [e for e in self._entries if e.start_offset <= start_offset]
        if not removed:
            return
        kept = [e for e in self._entries if e.start_offset > start_offset]
        self._entries = [EpochEntry(removed[-1].epoch, start_offset), *kept]
        self._flush()

    def clear(self) -> None:
        self._entries = []
        self._flush()

    def _flush(self) -> None:
        write_checkpoint(self._path, [(e.epoch, e.start_offset) for e in self._entries], fsync=self._fsync)
