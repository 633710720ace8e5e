"""A Fetch's big reads of segment files are regions of them (kemu.wire.file_region): the file's bytes, on one
descriptor per segment file that outlives whatever happens to the segment until the last region lets go."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kemu.clock import VirtualClock
from kemu.log import LogConfig, PartitionLog
from kemu.log.segment import REGION_MIN_BYTES
from kemu.wire.file_region import FileRegion, RegionTruncatedError
from kemu.wire.records import RecordBatch

from .cleaner_support import CompactedPartition
from .conftest import START_MS, OpenLog, batch

ROLLED = LogConfig(segment_bytes=300_000)


def _rolled_log(open_log: OpenLog, batches: int = 12) -> PartitionLog:
    log = open_log(ROLLED)
    for n in range(batches):
        log.append(batch(1, value_size=50_000, timestamp=START_MS + n), leader_epoch=0)
    assert len(log.segments) > 1
    return log


def _first_file(log: PartitionLog) -> bytes:
    return log.segments[0].log_path.read_bytes()


def test_a_big_read_of_a_rolled_segment_is_a_region_of_its_bytes(open_log: OpenLog) -> None:
    log = _rolled_log(open_log)
    records = log.read(0, 1 << 20).records
    assert isinstance(records, FileRegion)
    assert bytes(records) == _first_file(log)[:len(records)]
    assert len(records) > REGION_MIN_BYTES


def test_a_short_read_from_the_file_is_bytes_and_cached_bytes_stay_views(open_log: OpenLog) -> None:
    log = open_log(ROLLED)
    for n in range(40):
        log.append(batch(1, value_size=100, timestamp=START_MS + n), leader_epoch=0)
    log.roll()
    log.append(batch(1, value_size=100), leader_epoch=0)
    short = log.read(0, REGION_MIN_BYTES - 1).records
    assert isinstance(short, bytes) and short == _first_file(log)[:len(short)]
    cached = log.read(40, 1 << 20).records
    assert isinstance(cached, memoryview)


def test_an_active_segments_evicted_bytes_are_a_region(open_log: OpenLog) -> None:
    log = open_log(LogConfig(segment_bytes=1 << 30))
    for n in range(30):  # 1.5 MB: past the active segment's 1 MiB cache
        log.append(batch(1, value_size=50_000, timestamp=START_MS + n), leader_epoch=0)
    assert len(log.segments) == 1
    records = log.read(0, 200_000).records
    assert isinstance(records, FileRegion)
    assert bytes(records) == _first_file(log)[:len(records)]


def test_regions_of_one_segment_share_one_descriptor_closed_with_the_last(open_log: OpenLog) -> None:
    log = _rolled_log(open_log)
    before = len(os.listdir("/proc/self/fd"))
    regions = [log.read(0, 1 << 20).records for _ in range(50)]
    assert all(isinstance(region, FileRegion) for region in regions)
    files = {id(region.file) for region in regions if isinstance(region, FileRegion)}
    assert len(files) == 1
    assert len(os.listdir("/proc/self/fd")) == before + 1
    shared = regions[0].file if isinstance(regions[0], FileRegion) else None
    assert shared is not None
    del regions
    assert not shared.closed  # still ours here
    del shared
    assert len(os.listdir("/proc/self/fd")) == before


def test_parsing_readers_still_get_bytes(open_log: OpenLog) -> None:
    log = _rolled_log(open_log)
    batches = log.batches()
    assert [b.header.base_offset for b in batches] == list(range(12))
    assert all(isinstance(b, RecordBatch) for b in batches)
    assert log.offset_for_timestamp(START_MS + 3) is not None


def test_a_region_outlives_its_segment_deleted_by_retention(open_log: OpenLog) -> None:
    log = _rolled_log(open_log)
    original = _first_file(log)
    records = log.read(0, 1 << 20).records
    assert isinstance(records, FileRegion)
    log.delete_records(11)
    assert log.delete_old_segments() >= 1
    assert not (log.directory / f"{0:020d}.log").exists()
    assert bytes(records) == original[:len(records)]


@pytest.mark.parametrize("gone", ["delete", "close"])
def test_a_region_outlives_its_log_deleted_or_closed(open_log: OpenLog, gone: str) -> None:
    log = _rolled_log(open_log)
    original = _first_file(log)
    records = log.read(0, 1 << 20).records
    getattr(log, gone)()
    assert isinstance(records, FileRegion)
    assert bytes(records) == original[:len(records)]


def test_a_region_outlives_compaction_swapping_its_segment(log_dir: Path, clock: VirtualClock) -> None:
    partition = CompactedPartition(log_dir, clock)
    for round_ in range(400):
        partition.put(f"k{round_ % 4}", "v" * 100 + str(round_))
    partition.roll()
    partition.put("k0", "last")
    records = partition.log.read(0, 1 << 20).records
    assert isinstance(records, FileRegion)
    original = bytes(records)
    first = partition.log.segments[0].log_path
    inode = first.stat().st_ino
    assert partition.clean()
    assert partition.log.segments[0].log_path.stat().st_ino != inode  # the cleaned copy replaced it
    assert bytes(records) == original


def test_a_region_of_a_truncated_file_cannot_be_read(open_log: OpenLog) -> None:
    log = _rolled_log(open_log)
    records = log.read(0, 1 << 20).records
    assert isinstance(records, FileRegion)
    log.truncate_to(1)
    with pytest.raises(RegionTruncatedError):
        bytes(records)
