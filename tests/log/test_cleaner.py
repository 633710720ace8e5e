"""The log cleaner on logs built in the test: latest value per key, the dirty-range bounds, tombstones and
their delete horizon, the on-disk files, and the dynamic topic configs it reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kemu.clock import VirtualClock
from kemu.log.compaction import group_segments_by_size
from kemu.log.log_cleaner import CLEANER_OFFSET_CHECKPOINT
from kemu.wire.records import DELETE_HORIZON_MASK

from .cleaner_support import COMPACT, CompactedPartition


def filled(part: CompactedPartition, rounds: int = 4, keys: int = 5) -> dict[str, str | None]:
    """`rounds` segments, each overwriting every key; returns the latest value per key."""
    for r in range(rounds):
        for k in range(keys):
            part.put(f"k{k}", f"v{r}-{k}")
        part.roll()
    return {f"k{k}": f"v{rounds - 1}-{k}" for k in range(keys)}


def test_one_value_per_key_remains_at_its_original_offset(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    want = filled(part)
    before = part.read_uncommitted()
    end = part.log.log_end_offset
    [result] = part.clean()
    after = part.read_uncommitted()
    assert part.latest(after) == want
    assert [key for _, key, _ in after] == sorted(want)  # one record per key
    assert set(after) <= set(before)  # offsets, keys and values as written
    assert part.log.log_end_offset == end and part.log.log_start_offset == 0
    assert result.end_offset == 20 and result.stats.messages_written == 5
    assert result.stats.segments_before == 5 and result.stats.segments_after == 2
    assert result.stats.log_bytes_after < result.stats.log_bytes_before
    # The same, read through a fresh open of the files.
    part.reopen()
    assert part.read_uncommitted() == after


def test_checkpoint_file_is_kafkas_format_and_the_next_round_starts_there(log_dir: Path,
                                                                          clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    filled(part, rounds=2)
    part.clean()
    assert (log_dir.parent / CLEANER_OFFSET_CHECKPOINT).read_text() == "0\n1\ntopic 0 10\n"
    assert part.clean() == []  # nothing dirty
    part.put("k0", "new")
    part.roll()
    [again] = part.clean()
    assert (again.first_dirty_offset, again.end_offset) == (10, 11)
    assert part.latest(part.read_uncommitted())["k0"] == "new"
    assert sum(1 for _, key, _ in part.read_uncommitted() if key == "k0") == 1


def test_active_segment_is_never_cleaned(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    for i in range(10):
        part.put("same", str(i))
    assert part.clean() == []
    assert len(part.read_uncommitted()) == 10


def test_no_files_are_left_but_kafkas(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    filled(part)
    part.clean()
    names = sorted(p.name for p in log_dir.iterdir())
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted", ".tmp"))]
    logs = [n for n in names if n.endswith(".log")]
    assert logs == ["00000000000000000000.log", "00000000000000000020.log"]


def test_tombstone_gets_a_delete_horizon_then_goes_after_delete_retention(log_dir: Path,
                                                                         clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    written_at = clock.now_ms()
    part.put("gone", "value")
    part.put("kept", "value")
    tombstone = part.put("gone", None)
    part.roll()
    part.clean()
    [stored] = [b for b in part.log.batches() if b.header.base_offset == tombstone]
    assert stored.header.attributes & DELETE_HORIZON_MASK
    assert stored.header.base_timestamp == written_at + COMPACT.delete_retention_ms
    assert stored.header.max_timestamp == written_at
    assert [r.timestamp for r in stored.records()] == [written_at]  # record timestamps unchanged
    assert part.latest(part.read_uncommitted()) == {"gone": None, "kept": "value"}

    clock.advance(COMPACT.delete_retention_ms - 1)
    part.put("other", "x")
    part.roll()
    part.clean()
    assert "gone" in part.latest(part.read_uncommitted())  # the horizon is not reached yet

    clock.advance(2)
    part.put("other", "y")
    part.roll()
    part.clean()
    assert part.latest(part.read_uncommitted()) == {"kept": "value", "other": "y"}


def test_dirty_ratio_and_dynamic_config(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock, dataclasses.replace(COMPACT, min_cleanable_dirty_ratio=0.99))
    filled(part, rounds=3)
    part.clean()
    part.put("k0", "late")
    part.roll()
    # The dirty part is one small segment out of the whole: under the ratio, the cleaner thread skips it.
    assert part.cleaner.clean_filthiest([part.log]) is None
    part.log.update_config(dataclasses.replace(COMPACT, min_cleanable_dirty_ratio=0.01))
    result = part.cleaner.clean_filthiest([part.log])
    assert result is not None and result.end_offset == part.log.log_end_offset


def test_max_compaction_lag_forces_a_round_below_the_ratio(log_dir: Path, clock: VirtualClock) -> None:
    config = dataclasses.replace(COMPACT, min_cleanable_dirty_ratio=0.99, max_compaction_lag_ms=60_000)
    part = CompactedPartition(log_dir, clock, config)
    filled(part, rounds=3)
    part.clean()
    part.put("k1", "late")
    part.roll()
    assert part.cleaner.clean_filthiest([part.log]) is None
    clock.advance(61_000)
    assert part.cleaner.clean_filthiest([part.log]) is not None


def test_min_compaction_lag_keeps_recent_segments_dirty(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock, dataclasses.replace(COMPACT, min_compaction_lag_ms=10_000))
    filled(part, rounds=2)
    clock.advance(20_000)
    filled(part, rounds=2)
    [result] = part.clean()
    assert result.end_offset == 10  # the two recent segments are newer than the lag
    assert len(part.read_uncommitted()) == 5 + 10


def test_segments_are_grouped_by_size(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    filled(part, rounds=6)
    sizes = [s.size for s in part.log.segments[:-1]]
    groups = group_segments_by_size(part.log.segments[:-1], sizes[0] * 2, 1 << 20, part.log.log_end_offset)
    assert [len(g) for g in groups] == [2, 2, 2]
    whole = group_segments_by_size(part.log.segments[:-1], 1 << 20, 1 << 20, part.log.log_end_offset)
    assert [len(g) for g in whole] == [6]


def test_offset_map_that_fills_up_cleans_in_several_rounds(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    want = filled(part, rounds=3, keys=6)
    part.cleaner.cleaner.offset_map.capacity = 4
    first = part.clean()
    assert first[0].end_offset == 4
    while part.clean():
        pass
    assert part.latest(part.read_uncommitted()) == want
    assert len(part.read_uncommitted()) == 6


def test_a_log_the_cleaner_cannot_read_is_marked_uncleanable(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    filled(part, rounds=2)
    first = part.log.segments[0]
    # A record length far past its batch: the records no longer decode (the header and CRC are not checked
    # here, as a torn write inside an old segment would look to the cleaner).
    with open(first.log_path, "r+b") as damaged:
        damaged.seek(61)
        damaged.write(b"\x7e")
    before = sorted(p.name for p in log_dir.iterdir())
    assert part.clean() == []
    assert part.cleaner.uncleanable == {("topic", 0)}
    assert sorted(p.name for p in log_dir.iterdir()) == before  # no .cleaned left behind, nothing replaced
    assert part.cleaner.clean_filthiest([part.log]) is None  # skipped from now on, no error each run
