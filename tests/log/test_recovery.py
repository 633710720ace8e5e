"""Restart recovery: torn tails, garbage, lost or corrupt indexes, orphans, checkpoints — and a real kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from kemu.clock import SystemClock
from kemu.log import LogConfig, PartitionLog
from kemu.log.leader_epoch import LEADER_EPOCH_CHECKPOINT
from kemu.wire.records import iter_batches

from .conftest import OpenLog, batch

SMALL = LogConfig(segment_bytes=1500, index_interval_bytes=200)


def filled(open_log: OpenLog, batches: int = 40) -> PartitionLog:
    log = open_log(SMALL)
    for i in range(batches):
        log.append(batch(1 + i % 2, value_size=50))
    return log


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_clean_reopen_restores_everything(open_log: OpenLog, log_dir: Path) -> None:
    log = filled(open_log)
    log.append(batch(1), leader_epoch=5)
    end, data = log.log_end_offset, bytes(log.read(0, 1 << 24).records)
    log.close()
    before = snapshot(log_dir)
    again = open_log(SMALL)
    assert (again.log_start_offset, again.log_end_offset, again.high_watermark) == (0, end, end)
    assert bytes(again.read(0, 1 << 24).records) == data
    assert again.latest_epoch == 5
    assert snapshot(log_dir) == before
    assert again.append(batch(1)).base_offset == end


def test_torn_tail_is_cut_at_the_last_whole_batch(open_log: OpenLog, log_dir: Path) -> None:
    log = filled(open_log)
    end = log.log_end_offset
    last = log.segments[-1]
    last_batch_size = list(iter_batches(last.read_bytes(0, last.size)))[-1].size
    log.close()
    path = last.log_path
    os.truncate(path, path.stat().st_size - last_batch_size // 2)
    again = open_log(SMALL)
    assert again.log_end_offset < end
    assert path.stat().st_size == again.segments[-1].size
    assert all(b.is_valid() for b in iter_batches(again.read(0, 1 << 24).records))
    assert again.append(batch(1)).base_offset == again.log_end_offset - 1


def test_garbage_and_zero_tails_are_dropped(open_log: OpenLog, log_dir: Path) -> None:
    log = filled(open_log)
    end = log.log_end_offset
    path = log.segments[-1].log_path
    log.close()
    for junk in (b"\x00" * 4096, os.urandom(100)):
        with open(path, "ab") as out:
            out.write(junk)
        again = open_log(SMALL)
        assert again.log_end_offset == end
        again.close()


def test_a_corrupt_last_batch_is_dropped(open_log: OpenLog) -> None:
    log = filled(open_log)
    end = log.log_end_offset
    path = log.segments[-1].log_path
    log.close()
    with open(path, "r+b") as out:
        out.seek(-3, os.SEEK_END)
        out.write(b"\xff\xff\xff")
    again = open_log(SMALL)
    assert again.log_end_offset < end
    assert all(b.is_valid() for b in iter_batches(again.segments[-1].read_bytes(0, again.segments[-1].size)))


def test_missing_and_corrupt_indexes_are_rebuilt_identically(open_log: OpenLog, log_dir: Path) -> None:
    log = filled(open_log, 80)
    assert len(log.segments) >= 3
    log.close()
    before = snapshot(log_dir)
    old = [name for name in before if name.endswith((".index", ".timeindex"))]
    (log_dir / old[0]).unlink()
    (log_dir / old[1]).unlink()
    with open(log_dir / old[2], "ab") as out:
        out.write(b"\x01\x02\x03")  # not a whole entry
    again = open_log(SMALL)
    assert snapshot(log_dir) == before
    for offset in range(0, again.log_end_offset, 7):
        first = next(iter_batches(again.read(offset, 1).records))
        assert first.header.base_offset <= offset <= first.header.last_offset


def test_corruption_inside_an_older_segment_drops_what_follows(open_log: OpenLog, log_dir: Path) -> None:
    log = filled(open_log, 80)
    second = log.segments[1]
    log.close()
    data = bytearray(second.log_path.read_bytes())
    position, damaged_base = 0, None
    for stored in iter_batches(bytes(data)):
        if position <= 200 < position + stored.size:
            damaged_base = stored.header.base_offset
        position += stored.size
    data[200] ^= 0xFF
    second.log_path.write_bytes(data)
    second.offset_index.path.unlink()  # only an unreadable index makes kemu re-check an older segment
    again = open_log(SMALL)
    assert [s.base_offset for s in again.segments] == [0, second.base_offset]
    assert again.log_end_offset == damaged_base
    assert sorted(p.name for p in log_dir.glob("*.log")) == [f"{s.base_offset:020d}.log" for s in again.segments]


def test_orphans_and_leftovers_are_removed(open_log: OpenLog, log_dir: Path) -> None:
    log = filled(open_log, 5)
    log.close()
    (log_dir / f"{999:020d}.index").write_bytes(b"")
    (log_dir / f"{999:020d}.timeindex").write_bytes(b"")
    (log_dir / f"{0:020d}.log.deleted").write_bytes(b"x")
    (log_dir / "leader-epoch-checkpoint.tmp").write_text("junk")
    (log_dir / f"{77:020d}.snapshot").write_bytes(b"a snapshot past the log end")
    open_log(SMALL).close()
    names = {p.name for p in log_dir.iterdir()}
    assert f"{999:020d}.index" not in names and f"{999:020d}.timeindex" not in names
    assert f"{0:020d}.log.deleted" not in names and "leader-epoch-checkpoint.tmp" not in names
    assert f"{77:020d}.snapshot" not in names  # beyond the log end: a lost tail's, as Kafka drops it


def test_leader_epoch_checkpoint_is_kafka_text_and_rebuilt_from_the_tail(open_log: OpenLog, log_dir: Path) -> None:
    log = open_log()
    log.append(batch(2))
    log.append(batch(1), leader_epoch=3)
    log.close()
    assert (log_dir / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n2\n0 0\n3 2\n"
    (log_dir / LEADER_EPOCH_CHECKPOINT).unlink()
    again = open_log()
    assert [(e.epoch, e.start_offset) for e in again.epoch_cache.entries] == [(0, 0), (3, 2)]


def test_checkpointed_log_start_beyond_the_end_starts_afresh(open_log: OpenLog) -> None:
    log = filled(open_log, 5)
    log.close()
    again = open_log(SMALL, log_start_offset=100)
    assert (again.log_start_offset, again.log_end_offset, [s.base_offset for s in again.segments]) == (100, 100, [100])
    assert again.append(batch(1)).base_offset == 100


def test_kill_minus_nine_loses_no_acknowledged_append(tmp_path: Path) -> None:
    directory = tmp_path / "crash-0"
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from kemu.clock import SystemClock
        from kemu.log import LogConfig, PartitionLog
        from kemu.wire.records import NewRecord, build_batch
        log = PartitionLog.open(Path({str(directory)!r}), "crash", 0, LogConfig(segment_bytes=20_000), SystemClock())
        i = 0
        while True:
            result = log.append(build_batch([NewRecord(b"value-%d" % i, timestamp=-1)]))
            print(result.base_offset, flush=True)
            i += 1
        """
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    acknowledged = -1
    for line in process.stdout:
        acknowledged = int(line)
        if acknowledged >= 500:
            break
    process.send_signal(signal.SIGKILL)
    process.wait()
    log = PartitionLog.open(directory, "crash", 0, LogConfig(segment_bytes=20_000), SystemClock())
    assert log.log_end_offset > acknowledged
    values = [r.value for b in log.batches() for r in b.records()]
    assert values[: acknowledged + 1] == [b"value-%d" % i for i in range(acknowledged + 1)]
    assert len(log.segments) > 1
