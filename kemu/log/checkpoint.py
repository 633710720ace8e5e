"""Kafka's checkpoint text files (leader-epoch-checkpoint, log-start-offset-checkpoint, ...).

Format: a version line, an entry-count line, then one space-separated entry per line. Written to a
temporary file and renamed over the old one, so a crash leaves either the old or the new checkpoint.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

CHECKPOINT_VERSION = 0


class CorruptCheckpointError(ValueError):
    pass


def write_checkpoint(path: Path, entries: Sequence[tuple[object, ...]], *, fsync: bool = False) -> None:
    lines = [str(CHECKPOINT_VERSION), str(len(entries))]
    lines.extend(" ".join(str(part) for part in entry) for entry in entries)
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
        if fsync:
            out.flush()
            os.fsync(out.fileno())
    os.replace(temporary, path)


def read_checkpoint(path: Path, fields_per_entry: int) -> list[list[str]] | None:
    """The entries of a checkpoint, or None when the file does not exist. Raises CorruptCheckpointError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    lines = text.splitlines()
    if len(lines) < 2:
        raise CorruptCheckpointError(f"{path}: missing version or entry count")
    if lines[0].strip() != str(CHECKPOINT_VERSION):
        raise CorruptCheckpointError(f"{path}: unrecognised checkpoint version {lines[0].strip()!r}")
    try:
        expected = int(lines[1])
    except ValueError:
        raise CorruptCheckpointError(f"{path}: malformed entry count {lines[1]!r}") from None
    entries = [line.split() for line in lines[2:] if line.strip()]
    if len(entries) != expected or any(len(entry) != fields_per_entry for entry in entries):
        raise CorruptCheckpointError(f"{path}: expected {expected} entries of {fields_per_entry} fields")
    return entries
