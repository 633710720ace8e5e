"""Crash safety of the cleaner's segment replacement, with Kafka's file names (UnifiedLog.replaceSegments and
LogLoader's recovery).

A cleaned segment is written as `<base>.log.cleaned` (with `.index.cleaned`, `.timeindex.cleaned` and, when
it keeps aborted transactions, `.txnindex.cleaned`). Replacing the old segments then takes three renames:

1. the new files `.cleaned` → `.swap`: from here the new segment is complete and wins;
2. each old segment's files → `.deleted`, then removed;
3. the new files `.swap` → their final names.

At start-up, before the segments are read, `recover_interrupted_swaps` finishes or rolls back what a
`kill -9` interrupted: `.cleaned` files are an unfinished rewrite and go (the old segments are intact),
`.deleted` files go, and a `.swap` segment replaces every plain segment whose base offset lies in the
range it covers, then takes its final name. As Kafka does (KAFKA-6264), a `.swap` file at or above the
lowest `.cleaned` offset is not trusted and goes too.
"""

from __future__ import annotations

import os
from pathlib import Path

from kemu.log.segment import LOG_SUFFIX, SEGMENT_SUFFIXES, parse_segment_file_name
from kemu.wire.records import HEADER_SIZE, BatchHeader

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETED_SUFFIX = ".deleted"


def _base_of(name: str, suffix: str) -> tuple[int, str] | None:
    return parse_segment_file_name(name.removesuffix(suffix))


def next_offset_of_log_file(path: Path, base_offset: int) -> int:
    """The offset after the last whole batch in a segment's log file (its base offset when it has none)."""
    next_offset = base_offset
    size = path.stat().st_size
    fd = os.open(path, os.O_RDONLY)
    try:
        position = 0
        while position + HEADER_SIZE <= size:
            header = BatchHeader.parse(os.pread(fd, HEADER_SIZE, position))
            if header.batch_length <= 0 or position + header.size > size:
                break
            next_offset = header.next_offset
            position += header.size
    finally:
        os.close(fd)
    return next_offset


def recover_interrupted_swaps(directory: Path) -> None:
    """Finish or roll back a segment replacement cut short by a crash (see the module documentation)."""
    if not directory.is_dir():
        return
    min_cleaned: int | None = None
    swaps: list[tuple[int, str, Path]] = []
    for path in list(directory.iterdir()):
        name = path.name
        if name.endswith(DELETED_SUFFIX):
            path.unlink(missing_ok=True)
        elif name.endswith(CLEANED_SUFFIX):
            parsed = _base_of(name, CLEANED_SUFFIX)
            if parsed is not None:
                min_cleaned = parsed[0] if min_cleaned is None else min(min_cleaned, parsed[0])
            path.unlink(missing_ok=True)
        elif name.endswith(SWAP_SUFFIX):
            parsed = _base_of(name, SWAP_SUFFIX)
            if parsed is not None:
                swaps.append((parsed[0], parsed[1], path))
    valid = []
    for base, suffix, path in swaps:
        if min_cleaned is not None and base >= min_cleaned:
            path.unlink(missing_ok=True)
        else:
            valid.append((base, suffix, path))
    swap_logs = [(base, path) for base, suffix, path in valid if suffix == LOG_SUFFIX]
    if not swap_logs:
        for _, _, path in valid:
            path.unlink(missing_ok=True)  # index files of a swap whose log is gone: nothing to finish
        return
    low = min(base for base, _ in swap_logs)
    high = max(next_offset_of_log_file(path, base) for base, path in swap_logs)
    for path in list(directory.iterdir()):
        parsed = parse_segment_file_name(path.name)
        if parsed is not None and parsed[1] in SEGMENT_SUFFIXES and low <= parsed[0] < max(high, low + 1):
            path.unlink()  # an old segment the swap replaces, whose deletion the crash interrupted
    for _, _, path in valid:
        os.replace(path, path.with_name(path.name.removesuffix(SWAP_SUFFIX)))
