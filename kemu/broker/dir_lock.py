"""The `.lock` file Kafka holds in each of its log directories, so that two brokers never serve one directory.

An exclusive `flock` on `<data dir>/.lock`, taken when the broker opens its directory and held until it
closes it (or is killed: the OS drops the lock with the process's descriptors, which `release` stands in for
when the handle simulates a kill). A second broker, in this process or another, fails with Kafka's message.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO

LOCK_FILE = ".lock"


class DataDirLocked(RuntimeError):
    """Another broker holds the directory (Kafka's KafkaException from LogManager.lockLogDirs)."""


class DirLock:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # A file object, not a bare descriptor: a broker whose construction failed after taking the lock
        # drops it when the object is collected.
        self._file: IO[bytes] | None = None

    def acquire(self) -> DirLock:
        self.directory.mkdir(parents=True, exist_ok=True)
        file = (self.directory / LOCK_FILE).open("ab")
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.close()
            raise DataDirLocked(f"Failed to acquire lock on file {LOCK_FILE} in {self.directory}. A Kafka instance "
                                "in another process or thread is using this directory.") from None
        self._file = file
        return self

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing the descriptor drops the flock
            self._file = None

    @property
    def held(self) -> bool:
        return self._file is not None
