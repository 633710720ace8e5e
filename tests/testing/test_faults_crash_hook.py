"""The transaction coordinator's crash-point hook on its own: called at each point of marker writing, in
order, with the transactional id; a hook that returns changes nothing."""

from __future__ import annotations

import pytest

from compat_tests.polling import wait_for
from kemu.coordinators.crash_points import CrashPoint
from kemu.testing import Broker
from kemu.txn.state import TxnState
from kemu.wire.records import NewRecord, build_batch


@pytest.mark.parametrize(("partitions", "points"), [
    (3, [CrashPoint.AFTER_PREPARE, CrashPoint.PARTIAL_MARKERS, CrashPoint.BEFORE_COMPLETE]),
    (1, [CrashPoint.AFTER_PREPARE, CrashPoint.BEFORE_COMPLETE]),
])
def test_the_hook_sees_each_point_in_order(partitions: int, points: list[CrashPoint]) -> None:
    with Broker() as broker:
        broker.create_topic("t", partitions=partitions)
        seen: list[tuple[CrashPoint, str, int]] = []

        def run() -> None:
            service = broker.coordinators.txn
            coordinator = service.coordinator

            def hook(point: CrashPoint, transactional_id: str) -> None:
                markers = sum(1 for index in range(partitions)
                              for batch in broker.core.partition("t", index).log.batches()  # type: ignore[union-attr]
                              if batch.header.is_control)
                seen.append((point, transactional_id, markers))

            service.crash_hook = hook
            init = coordinator.init_producer_id("tx", 60_000)
            coordinator.add_partitions("tx", init.producer_id, init.producer_epoch,
                                       [("t", index) for index in range(partitions)])
            for index in range(partitions):
                partition = broker.core.partition("t", index)
                assert partition is not None
                partition.append(build_batch([NewRecord(value=b"v", timestamp=broker.clock.now_ms())],
                                             producer_id=init.producer_id, producer_epoch=init.producer_epoch,
                                             base_sequence=0, transactional=True))
            coordinator.end_txn("tx", init.producer_id, init.producer_epoch, commit=True)

        broker.call(run)
        wait_for(lambda: broker.call(lambda: broker.coordinators.txn.coordinator.txns["tx"].state)
                 is TxnState.COMPLETE_COMMIT, what="the commit to complete", timeout=10.0)
        assert [point for point, _, _ in seen] == points
        assert {tid for _, tid, _ in seen} == {"tx"}
        # How many markers were on disk at each point: none, one (of three), all.
        assert [count for _, _, count in seen] == ([0, 1, 3] if partitions == 3 else [0, 1])
