"""A segment's aborted-transaction index, `<base offset>.txnindex`, in Kafka's on-disk format.

Each entry is Kafka's AbortedTxn: version int16 (0), producer id int64, first offset int64, last offset
int64 (the ABORT marker's offset), last stable offset int64. The transactions layer writes the index of
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
