"""The leader epoch cache follows Kafka's LeaderEpochFileCache."""

from __future__ import annotations

from pathlib import Path

from kemu.log import LeaderEpochCache


def entries(cache: LeaderEpochCache) -> list[tuple[int, int]]:
    return [(e.epoch, e.start_offset) for e in cache.entries]


def test_assign_keeps_the_first_offset_of_each_epoch(tmp_path: Path) -> None:
    cache = LeaderEpochCache(tmp_path)
    cache.assign(0, 0)
    cache.assign(0, 5)
    cache.assign(2, 10)
    cache.assign(-1, 11)  # batches without an epoch do not count
    assert entries(cache) == [(0, 0), (2, 10)]
    cache.assign(1, 4)  # an older epoch starting earlier replaces what conflicts with it
    assert entries(cache) == [(0, 0), (1, 4)]
    assert entries(LeaderEpochCache(tmp_path)) == [(0, 0), (1, 4)]


def test_end_offset_for_epoch(tmp_path: Path) -> None:
    cache = LeaderEpochCache(tmp_path)
    for epoch, start in [(1, 0), (3, 10), (6, 20)]:
        cache.assign(epoch, start)
    assert cache.end_offset_for(6, 25) == (6, 25)
    assert cache.end_offset_for(3, 25) == (3, 20)
    assert cache.end_offset_for(4, 25) == (3, 20)
    assert cache.end_offset_for(0, 25) == (0, 0)
    assert cache.end_offset_for(7, 25) == (-1, -1)
    assert cache.end_offset_for(-1, 25) == (-1, -1)
    assert cache.epoch_for_offset(15) == 3 and cache.epoch_for_offset(-1) is None


def test_truncation(tmp_path: Path) -> None:
    cache = LeaderEpochCache(tmp_path)
    for epoch, start in [(1, 0), (3, 10), (6, 20)]:
        cache.assign(epoch, start)
    cache.truncate_from_start(12)
    assert entries(cache) == [(3, 12), (6, 20)]
    cache.truncate_from_end(20)
    assert entries(cache) == [(3, 12)]
    assert entries(LeaderEpochCache(tmp_path)) == [(3, 12)]
