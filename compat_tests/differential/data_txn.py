"""Raw transactional requests for the data-path differential tests: a transactional producer made ready, and
a transaction opened on a partition and left open (for the last stable offset and read_committed reads)."""

from __future__ import annotations

from typing import Any

from compat_tests.differential.data_wire import BASE_TIME, init_producer_id, produce
from compat_tests.differential.targets import Target
from compat_tests.polling import wait_for
from kemu.wire.records import NewRecord, build_batch

FIND_COORDINATOR, ADD_PARTITIONS_TO_TXN, END_TXN = 10, 24, 26
_NOT_YET = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


def transactional_id_ready(target: Target, transactional_id: str) -> dict[str, Any]:
    """InitProducerId for a transactional id, retried while the coordinator loads (a new __transaction_state,
    which Kafka creates on the first FindCoordinator for a transaction)."""
    def ready() -> dict[str, Any] | None:
        target.request(FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": [transactional_id]})
        answer = init_producer_id(target, transactional_id)
        return answer if answer["error_code"] not in _NOT_YET else None

    answer: dict[str, Any] = wait_for(ready, what=f"{target.name}: the transaction coordinator")
    return answer


def open_transaction(target: Target, transactional_id: str, topic: str, partition: int, count: int,
                     first_timestamp: int = BASE_TIME, records: list[NewRecord] | None = None) -> dict[str, Any]:
    """Begin a transaction on the partition with `count` records (or these) and leave it open; what each step
    answered ("init" holds the producer id and epoch)."""
    producer = transactional_id_ready(target, transactional_id)
    added = target.request(ADD_PARTITIONS_TO_TXN, 3, {
        "v3_and_below_transactional_id": transactional_id, "v3_and_below_producer_id": producer["producer_id"],
        "v3_and_below_producer_epoch": producer["producer_epoch"],
        "v3_and_below_topics": [{"name": topic, "partitions": [partition]}]})
    if records is None:
        records = [NewRecord(b"txn-%d" % i, timestamp=first_timestamp + i) for i in range(count)]
    data = build_batch(records, producer_id=producer["producer_id"], producer_epoch=producer["producer_epoch"],
                       base_sequence=0, transactional=True)
    answer = produce(target, {(topic, partition): data}, transactional_id=transactional_id)
    return {"init": producer, "add": added, "produce": answer}


def end_transaction(target: Target, transactional_id: str, opened: dict[str, Any], *, commit: bool) -> Any:
    """EndTxn for a transaction open_transaction() began (its markers are written after the answer)."""
    producer = opened["init"]
    answer = target.request(END_TXN, 3, {"transactional_id": transactional_id,
                                         "producer_id": producer["producer_id"],
                                         "producer_epoch": producer["producer_epoch"], "committed": commit})
    return answer
