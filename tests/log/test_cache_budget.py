"""The cache of recent batches, bounded across the active segments of one log directory (CacheBudget): the
oldest batches go first whichever partition holds them, and what was evicted still reads back, from the file."""

from __future__ import annotations

from pathlib import Path

from kemu.clock import VirtualClock
from kemu.log import LogConfig, PartitionLog
from kemu.log.cache_budget import CacheBudget
from kemu.log.log_dir import LogDir
from kemu.wire.records import iter_batches

from .conftest import batch


def open_logs(tmp_path: Path, clock: VirtualClock, budget: CacheBudget, count: int) -> list[PartitionLog]:
    return [PartitionLog.open(tmp_path / f"t-{i}", "t", i, LogConfig(), clock, cache_budget=budget)
            for i in range(count)]


def cached(log: PartitionLog) -> int:
    return sum(segment._cached_bytes for segment in log.segments)


def stored(log: PartitionLog) -> list[bytes]:
    return [bytes(b.records()[0].value or b"") for b in iter_batches(bytes(log.read(0, 1 << 24).records))]


def test_the_partitions_of_one_directory_cache_no_more_than_its_budget_together(
        tmp_path: Path, clock: VirtualClock) -> None:
    one = len(batch(1, value_size=100))
    budget = CacheBudget(limit=40 * one)
    logs = open_logs(tmp_path, clock, budget, 10)
    for _ in range(20):  # 200 batches, far under each segment's own bound
        for log in logs:
            log.append(batch(1, value_size=100))
    assert budget.used == sum(cached(log) for log in logs) <= 40 * one
    assert [cached(log) for log in logs] == [4 * one] * 10  # the newest 4 of each: the oldest went first
    for log in logs:  # evicted batches read back from the segment file
        assert stored(log) == [b"A" * 100] * 20


def test_the_oldest_batches_go_first_whichever_partition_holds_them(tmp_path: Path, clock: VirtualClock) -> None:
    one = len(batch(1, value_size=100))
    budget = CacheBudget(limit=3 * one)
    quiet, busy = open_logs(tmp_path, clock, budget, 2)
    quiet.append(batch(1, value_size=100))
    for _ in range(2):
        busy.append(batch(1, value_size=100))
    assert (cached(quiet), cached(busy)) == (one, 2 * one)
    busy.append(batch(1, value_size=100))
    assert (cached(quiet), cached(busy)) == (0, 3 * one)


def test_closing_truncating_and_rolling_give_the_bytes_back(tmp_path: Path, clock: VirtualClock) -> None:
    one = len(batch(1, value_size=100))
    budget = CacheBudget(limit=100 * one)
    first, second, third = open_logs(tmp_path, clock, budget, 3)
    for log in (first, second, third):
        for _ in range(5):
            log.append(batch(1, value_size=100))
    assert budget.used == 15 * one
    first.close()
    assert budget.used == 10 * one
    second.truncate_to(2)
    assert budget.used == 7 * one == cached(second) + cached(third)
    third.roll()
    assert budget.used == 2 * one == cached(second)
    for _ in range(300):  # stale entries (of the closed, truncated and rolled caches) do not pile up
        second.append(batch(1, value_size=100))
    assert budget.used == cached(second) == 100 * one
    assert len(budget._order) <= 3 * 100 + 1024
    assert stored(second)[:2] == [b"A" * 100] * 2 and len(stored(second)) == 302


def test_a_log_directory_gives_its_partitions_one_budget(tmp_path: Path, clock: VirtualClock) -> None:
    directory = LogDir(tmp_path, clock)
    logs = [directory.open("t", i, LogConfig()) for i in range(3)]
    for log in logs:
        log.append(batch(1, value_size=100))
    assert {id(log.cache_budget) for log in logs} == {id(directory.cache_budget)}
    assert directory.cache_budget.used == sum(cached(log) for log in logs) > 0


def test_what_a_segment_drops_by_itself_leaves_no_pile_of_entries(tmp_path: Path, clock: VirtualClock) -> None:
    one = len(batch(1, value_size=100))
    budget = CacheBudget(limit=1 << 30)
    log = PartitionLog.open(tmp_path / "t-0", "t", 0, LogConfig(), clock, cache_bytes=3 * one, cache_budget=budget)
    other = PartitionLog.open(tmp_path / "t-1", "t", 1, LogConfig(), clock, cache_budget=budget)
    other.append(batch(1, value_size=100))
    for _ in range(5000):  # each append past the third drops the segment's oldest by its own bound
        log.append(batch(1, value_size=100))
    assert budget.used == cached(log) + cached(other) == 4 * one
    assert len(budget._order) <= 4 + 2 * 4 + 1024
    budget.limit = 2 * one  # the budget's turn after the compaction still takes the oldest: the other's
    log.append(batch(1, value_size=100))
    assert (cached(other), cached(log)) == (0, 2 * one)
    assert len(stored(log)) == 5001
