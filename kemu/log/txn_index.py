"""A segment's aborted-transaction index, `<base offset>.txnindex`, in Kafka's on-disk format.

Each entry is Kafka's AbortedTxn: version int16 (0), producer id int64, first offset int64, last offset
int64 (the ABORT marker's offset), last stable offset int64. The partition log writes the index of
the active segment as markers arrive; the cleaner writes the index of each segment it rewrites, keeping
only the aborted transactions whose markers it kept.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_ENTRY = struct.Struct(">hqqqq")
_VERSION = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def encode_txn_index(entries: Iterable[AbortedTxn]) -> bytes:
    return b"".join(_ENTRY.pack(_VERSION, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
                    for e in entries)


def decode_txn_index(data: bytes) -> list[AbortedTxn]:
    """The entries of an index file; a torn last entry (a crash mid-write) is left out."""
    whole = len(data) - len(data) % _ENTRY.size
    out = []
    for pos in range(0, whole, _ENTRY.size):
        _, producer_id, first, last, stable = _ENTRY.unpack_from(data, pos)
        out.append(AbortedTxn(producer_id, first, last, stable))
    return out


def write_txn_index(path: Path, entries: Iterable[AbortedTxn]) -> None:
    """Replace the file atomically (a crash leaves the old or the new index, never half of one)."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(encode_txn_index(entries))
    os.replace(temporary, path)


class AbortedTxnIndex:
    """A partition's aborted transactions, by the base offset of the segment whose `.txnindex` holds them
    (Kafka keeps one TransactionIndex per LogSegment; here one map beside the segments, in the same files)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._entries: dict[int, list[AbortedTxn]] = {}

    def _path(self, segment_base: int) -> Path:
        return self.directory / f"{segment_base:020d}.txnindex"

    def add(self, segment_base: int, entry: AbortedTxn, *, persist: bool) -> None:
        self._entries.setdefault(segment_base, []).append(entry)
        if persist:
            self.write(segment_base)

    def write(self, segment_base: int) -> None:
        write_txn_index(self._path(segment_base), self._entries.get(segment_base, []))

    def read_all(self, live: set[int]) -> None:
        """Load every segment's index from disk, deleting those whose segment is gone."""
        self._entries.clear()
        for path in self.directory.glob("*.txnindex"):
            try:
                base = int(path.stem)
            except ValueError:
                continue
            if base not in live:
                path.unlink(missing_ok=True)
                continue
            self._entries[base] = decode_txn_index(path.read_bytes())

    def keep_segments(self, live: set[int]) -> None:
        """Forget the indexes of deleted segments (their files went with them)."""
        for base in [b for b in self._entries if b not in live]:
            del self._entries[base]

    def truncate(self, start: int, end: int) -> set[int]:
        """Drop the entries whose ABORT marker is at or above `start` or the log end `end` (they are replayed
        again); returns the segments whose index changed."""
        touched = set()
        for base, entries in self._entries.items():
            kept = [e for e in entries if e.last_offset < start and e.last_offset < end]
            if len(kept) != len(entries):
                self._entries[base] = kept
                touched.add(base)
        return touched

    def collect(self, start_segment: int, fetch_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound_offset), as Kafka's LocalLog collects
        them: from the segment holding `fetch_offset` (`start_segment`) on, each segment's index in the order
        the aborts were written (not by first offset: a transaction aborted later may have started earlier),
        stopping after the first entry whose last stable offset reaches the bound."""
        out = []
        for base in sorted(b for b in self._entries if b >= start_segment):
            for entry in self._entries[base]:
                if entry.last_offset >= fetch_offset and entry.first_offset < upper_bound_offset:
                    out.append(entry)
                if entry.last_stable_offset >= upper_bound_offset:
                    return out
        return out
