"""What the coordinator tests share: a journal that keeps what it is given, and the marker writer's part."""

from __future__ import annotations

from typing import Any

from kemu.txn.coordinator import TransactionCoordinator


class Journal(list[tuple[str, "dict[str, Any] | None"]]):
    def __call__(self, tid: str, value: dict[str, Any] | None) -> None:
        self.append((tid, value))


def complete(coord: TransactionCoordinator) -> None:
    """Write every queued job's markers, as the shell's marker writer does."""
    for job in coord.take_marker_jobs():
        coord.markers_written(job)
