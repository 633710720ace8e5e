"""Producer ids handed out in persisted blocks, so an id is never reused after a restart.

Kafka's controller hands brokers blocks of 1000 ids and records each block in its metadata log; kemu keeps
the end of the last block handed out in one small file in the data directory, written before any id of the
block is used.
"""

from __future__ import annotations

import os
from pathlib import Path

BLOCK_SIZE = 1000


class ProducerIdAllocator:
    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._next = 0
        self._block_end = 0
        if path is not None and path.exists():
            text = path.read_text().strip()
            self._next = self._block_end = int(text) if text else 0

    def next_id(self) -> int:
        if self._next >= self._block_end:
            self._block_end = self._next + BLOCK_SIZE
            self._persist()
        pid = self._next
        self._next += 1
        return pid

    def _persist(self) -> None:
        if self._path is None:
            return
        tmp = self._path.with_suffix(".tmp")
        tmp.write_text(f"{self._block_end}\n")
        os.replace(tmp, self._path)
