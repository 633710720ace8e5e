"""Building and reading the logs the cleaner tests clean: keyed writes, transactions, a consumer's
read_committed, and a cleaner over one partition."""

from __future__ import annotations

from pathlib import Path

from kemu.clock import VirtualClock
from kemu.log import AppendOrigin, LogConfig, PartitionLog
from kemu.log.log_cleaner import CleanResult, LogCleaner
from kemu.wire.records import (
    ControlRecordType,
    DecodedRecord,
    NewRecord,
    build_batch,
    build_end_txn_marker,
    decode_control_key,
)

COMPACT = LogConfig(cleanup_policy=("compact",), segment_bytes=1 << 20, delete_retention_ms=1000,
                    min_cleanable_dirty_ratio=0.5)


OPENED: list[CompactedPartition] = []
"""Closed after each test by tests/log/conftest.py: a log left open keeps its active segment's descriptor."""


class CompactedPartition:
    """A compacted partition log with producer state, and the cleaner of its data directory."""

    def __init__(self, directory: Path, clock: VirtualClock, config: LogConfig = COMPACT) -> None:
        OPENED.append(self)
        self.directory = directory
        self.clock = clock
        self.config = config
        self.log = PartitionLog.open(directory, "topic", 0, config, clock)
        self.cleaner = LogCleaner(directory.parent, clock)
        self._sequences: dict[int, int] = {}

    def put(self, key: str, value: str | None) -> int:
        record = NewRecord(key=key.encode(), value=None if value is None else value.encode(),
                           timestamp=self.clock.now_ms())
        return self.log.append(build_batch([record]), leader_epoch=0).base_offset

    def put_many(self, pairs: list[tuple[str, str | None]], *, producer_id: int, transactional: bool = False,
                 epoch: int = 0) -> int:
        """One producer batch (idempotent, or transactional) of `pairs`; returns its base offset."""
        sequence = self._sequences.get(producer_id, 0)
        records = [NewRecord(key=k.encode(), value=None if v is None else v.encode(), timestamp=self.clock.now_ms())
                   for k, v in pairs]
        data = build_batch(records, producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence,
                           transactional=transactional)
        self._sequences[producer_id] = sequence + len(pairs)
        return self.log.append(data, leader_epoch=0).base_offset

    def end_txn(self, producer_id: int, *, commit: bool, epoch: int = 0) -> int:
        marker = build_end_txn_marker(commit=commit, producer_id=producer_id, producer_epoch=epoch,
                                      coordinator_epoch=0, timestamp=self.clock.now_ms())
        return self.log.append(marker, leader_epoch=0, origin=AppendOrigin.COORDINATOR).base_offset

    def roll(self) -> None:
        self.log.roll()

    def clean(self) -> list[CleanResult]:
        return self.cleaner.clean_all([self.log])

    def reopen(self) -> None:
        """Open the partition afresh from its files, as a restarted broker does (the old one is dropped
        without a clean close, as after kill -9)."""
        for segment in self.log.segments:
            segment.close()
        self.log = PartitionLog.open(self.directory, "topic", 0, self.config, self.clock)
        self.cleaner = LogCleaner(self.directory.parent, self.clock)

    def close(self) -> None:
        if not self.log.is_closed:
            self.log.close()

    def batches(self) -> list[tuple[int, int, int, int]]:
        """(base offset, last offset, record count, producer id) of every stored batch."""
        return [(b.header.base_offset, b.header.last_offset, b.header.records_count, b.header.producer_id)
                for b in self.log.batches()]

    def read_uncommitted(self) -> list[tuple[int, str, str | None]]:
        return [_kv(r) for b in self.log.batches() if not b.header.is_control for r in b.records()]

    def read_committed(self) -> list[tuple[int, str, str | None]]:
        """What a Java consumer with isolation.level=read_committed gets from offset 0: it reads up to the
        last stable offset and drops a producer's transactional batches from the first offset of an
        aborted transaction the fetch listed until that producer's ABORT marker."""
        bound = self.log.last_stable_offset
        aborted = sorted(self.log.aborted_transactions(0, bound), key=lambda a: a.first_offset)
        hidden: set[int] = set()
        out = []
        for batch in self.log.batches(0, bound):
            header = batch.header
            while aborted and aborted[0].first_offset <= header.last_offset:
                hidden.add(aborted.pop(0).producer_id)
            if header.is_control:
                records = batch.records()
                if records and decode_control_key(records[0].key)[1] == ControlRecordType.ABORT:
                    hidden.discard(header.producer_id)
                continue
            if header.is_transactional and header.producer_id in hidden:
                continue
            out.extend(_kv(r) for r in batch.records() if r.offset < bound)
        return out

    def latest(self, records: list[tuple[int, str, str | None]]) -> dict[str, str | None]:
        return {key: value for _, key, value in records}


def _kv(record: DecodedRecord) -> tuple[int, str, str | None]:
    assert record.key is not None
    return record.offset, record.key.decode(), None if record.value is None else record.value.decode()
