"""A crash in the middle of a cleaning round, and recovery with Kafka's `.cleaned` / `.swap` rules: before
the swap the old segments win, after it the cleaned one does; no record is lost, none resurrected."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kemu.clock import VirtualClock
from kemu.log.swap import recover_interrupted_swaps

from .cleaner_support import CompactedPartition


class Crash(Exception):
    pass


def crash_at(part: CompactedPartition, step: str) -> None:
    def on_step(name: str) -> None:
        if name == step:
            raise Crash(name)

    part.cleaner.cleaner.on_step = on_step


def build(part: CompactedPartition) -> None:
    part.put_many([("a", "aborted")], producer_id=5, transactional=True)
    part.end_txn(5, commit=False)
    for r in range(3):
        for k in "abc":
            part.put(k, f"{k}{r}")
        part.put("t", None if r == 2 else "x")
        part.roll()


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith((".cleaned", ".swap", ".deleted")))


def test_crash_before_the_swap_rolls_back(log_dir: Path, clock: VirtualClock) -> None:
    part = CompactedPartition(log_dir, clock)
    build(part)
    before = part.read_uncommitted()
    crash_at(part, "cleaned")
    with pytest.raises(Crash):
        part.clean()
    assert leftovers(log_dir) == ["00000000000000000000.index.cleaned", "00000000000000000000.log.cleaned",
                                  "00000000000000000000.timeindex.cleaned", "00000000000000000000.txnindex.cleaned"]
    part.reopen()
    assert leftovers(log_dir) == []
    assert part.read_uncommitted() == before
    assert part.cleaner.checkpoint("topic", 0) is None
    # The next round does the work the crashed one could not.
    [result] = part.clean()
    assert part.latest(part.read_uncommitted()) == {"a": "a2", "b": "b2", "c": "c2", "t": None}
    assert result.end_offset == part.log.log_end_offset


def test_crash_after_the_swap_rename_finishes_the_swap(log_dir: Path, clock: VirtualClock) -> None:
    clean = CompactedPartition(log_dir.parent / "reference" / "topic-0", VirtualClock(clock.now_ms()))
    build(clean)
    clean.clean()
    part = CompactedPartition(log_dir, clock)
    build(part)
    crash_at(part, "swap")
    with pytest.raises(Crash):
        part.clean()
    assert "00000000000000000000.log.swap" in leftovers(log_dir)
    assert (log_dir / "00000000000000000000.log").exists()  # the old segment, not yet deleted
    part.reopen()
    assert leftovers(log_dir) == []
    assert part.read_uncommitted() == clean.read_uncommitted()
    assert part.read_committed() == clean.read_committed()
    assert [s.base_offset for s in part.log.segments] == [s.base_offset for s in clean.log.segments]


def test_swap_files_at_or_above_a_cleaned_file_are_not_trusted(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    directory.mkdir()
    for name in ("00000000000000000000.log", "00000000000000000100.log.swap", "00000000000000000050.log.cleaned",
                 "00000000000000000010.log.deleted"):
        (directory / name).write_bytes(b"")
    recover_interrupted_swaps(directory)
    assert sorted(p.name for p in directory.iterdir()) == ["00000000000000000000.log"]


def test_kill_9_in_the_middle_of_a_round(log_dir: Path, tmp_path: Path) -> None:
    """A real process killed by SIGKILL while the cleaner is between the `.swap` rename and deleting the old
    segments; the next open finishes the swap."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        from pathlib import Path
        from kemu.clock import VirtualClock
        sys.path.insert(0, {str(Path(__file__).parents[2])!r})
        from tests.log.cleaner_support import CompactedPartition
        from tests.log.test_cleaner_crash import build
        part = CompactedPartition(Path({str(log_dir)!r}), VirtualClock(1_700_000_000_000))
        build(part)
        def on_step(name):
            if name == "swap":
                os.kill(os.getpid(), signal.SIGKILL)
        part.cleaner.cleaner.on_step = on_step
        part.clean()
    """)
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ}, capture_output=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    assert "00000000000000000000.log.swap" in leftovers(log_dir)
    part = CompactedPartition(log_dir, VirtualClock(1_700_000_000_000))
    assert leftovers(log_dir) == []
    assert part.latest(part.read_uncommitted()) == {"a": "a2", "b": "b2", "c": "c2", "t": None}
    assert "aborted" not in {v for _, _, v in part.read_uncommitted()}
    assert len(part.read_uncommitted()) == 4
