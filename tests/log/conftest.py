"""Shared helpers for the log tests: a virtual clock, a fresh log directory, batch builders."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kemu.clock import VirtualClock
from kemu.log import LogConfig, PartitionLog
from kemu.wire.compression import CompressionType
from kemu.wire.records import NewRecord, build_batch

START_MS = 1_700_000_000_000


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(START_MS)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return tmp_path / "topic-0"


OpenLog = Callable[..., PartitionLog]


@pytest.fixture
def open_log(log_dir: Path, clock: VirtualClock) -> OpenLog:
    def make(config: LogConfig | None = None, **kwargs: object) -> PartitionLog:
        return PartitionLog.open(log_dir, "topic", 0, config or LogConfig(), clock, **kwargs)  # type: ignore[arg-type]

    return make


def batch(
    count: int = 1,
    *,
    timestamp: int = START_MS,
    value_size: int = 10,
    compression: CompressionType = CompressionType.NONE,
    keys: bool = True,
    **kwargs: object,
) -> bytes:
    """A client-style batch (base offset 0) of `count` records stamped `timestamp`, `timestamp + 1`, ..."""
    records = [
        NewRecord(value=bytes([65 + i % 26]) * value_size, key=b"k%d" % i if keys else None, timestamp=timestamp + i)
        for i in range(count)
    ]
    return build_batch(records, compression=compression, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _close_compacted_partitions() -> Iterator[None]:
    yield
    from .cleaner_support import OPENED

    while OPENED:
        OPENED.pop().close()
