"""What the tests of kemu's test powers share: the control batches a partition holds, a transaction opened
straight on the coordinator, and a client's commit run on a thread while the test crashes and restarts the
broker under it. The compat tests use these too."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from kemu.testing import Broker


def markers(broker: Broker, topic: str, partitions: int) -> list[int]:
    """COMMIT/ABORT markers per partition, read straight from the core (the broker may be dead)."""
    counts = []
    for index in range(partitions):
        partition = broker.core.partition(topic, index)
        assert partition is not None
        counts.append(sum(1 for batch in partition.log.batches() if batch.header.is_control))
    return counts


def begin_on_coordinator(broker: Broker, transactional_id: str, timeout_ms: int,
                         partitions: list[tuple[str, int]]) -> None:
    """A transaction begun with no client: an id, its producer and partitions added (on the broker's thread)."""
    def begin() -> None:
        coordinator = broker.coordinators.txn.coordinator
        init = coordinator.init_producer_id(transactional_id, timeout_ms)
        coordinator.add_partitions(transactional_id, init.producer_id, init.producer_epoch, partitions)

    broker.call(begin)


@dataclass
class InBackground:
    """A blocking client call (a commit that must wait out a crash) on a thread of its own; `outcome` holds
    None once it returned, or what it raised, so the test's thread asserts on it."""

    call: Callable[[], object]
    outcome: list[BaseException | None] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self) -> InBackground:
        def run() -> None:
            try:
                self.call()
                self.outcome.append(None)
            except BaseException as exc:  # reported in the test's thread
                self.outcome.append(exc)

        self.thread = threading.Thread(target=run)
        self.thread.start()
        return self

    def join(self, timeout: float) -> list[BaseException | None]:
        assert self.thread is not None
        self.thread.join(timeout)
        return self.outcome
