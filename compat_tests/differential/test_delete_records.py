"""DeleteRecords, Kafka against kemu: below, at and above the high watermark, -1 (to the high watermark), back
below the start, inside a batch, unknown topics and partitions; then ListOffsets and Fetch around the new
log start offset."""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.data_txn import open_transaction
from compat_tests.differential.data_wire import (
    BASE_TIME,
    EARLIEST,
    EARLIEST_LOCAL,
    LATEST,
    READ_COMMITTED,
    compare,
    create_topic,
    delete_records,
    fetch,
    list_offsets,
    produce_one,
    unique_topic,
)
from compat_tests.differential.targets import Pair, Target
from kemu.wire.records import NewRecord, build_batch


def filled(target: Target, name: str, partitions: int = 1) -> None:
    """Batches of 3, 1 and 2 records (offsets 0-5) in each partition."""
    create_topic(target, name, partitions=partitions)
    for partition in range(partitions):
        for first, count in ((0, 3), (3, 1), (4, 2)):
            records = [NewRecord(b"r%d" % (first + i), timestamp=BASE_TIME + first + i) for i in range(count)]
            produce_one(target, name, build_batch(records), partition=partition)


def around(target: Target, name: str, partition: int = 0) -> dict[str, Any]:
    """What a consumer sees of the partition: its offsets by ListOffsets, and fetches from 0 to past the end."""
    found = list_offsets(target, {(name, partition): EARLIEST})[(name, partition)]
    return {"earliest": found,
            "latest": list_offsets(target, {(name, partition): LATEST})[(name, partition)],
            "earliest_local": list_offsets(target, {(name, partition): EARLIEST_LOCAL})[(name, partition)],
            "by_time": list_offsets(target, {(name, partition): BASE_TIME})[(name, partition)],
            "fetch": {str(offset): fetch(target, [(name, partition, offset)]) for offset in range(0, 8)}}


# Each step: the offset to delete to; the observation is taken after every step.
STEPS = {
    "below_hw": [2],
    "inside_batch": [1, 2, 3],
    "at_hw": [6],
    "above_hw": [7, 100],
    "to_hw": [-1],
    "back_below_start": [4, 2, 4],
    "zero": [0],
    "minus_2": [-2],
}


@pytest.mark.parametrize("case", sorted(STEPS))
def test_delete_records(pair: Pair, case: str) -> None:
    name = unique_topic(f"dr-{case}")

    def observe(target: Target) -> dict[str, Any]:
        filled(target, name)
        steps = []
        for offset in STEPS[case]:
            steps.append({"offset": offset, "answer": delete_records(target, {(name, 0): offset}),
                          "after": around(target, name)})
        return {"steps": steps}

    compare(pair, f"produce_fetch.delete_records.{case}", observe)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_delete_records_unknown_and_many(pair: Pair, version: int) -> None:
    name = unique_topic(f"dr-many-v{version}")

    def observe(target: Target) -> dict[str, Any]:
        filled(target, name, partitions=2)
        return delete_records(target, {(name, 0): 3, (name, 1): -1, (name, 4): 1, (name + "-absent", 0): 1},
                              version=version)

    compare(pair, f"produce_fetch.delete_records.many.v{version}", observe)


def test_delete_records_past_an_open_transaction(pair: Pair) -> None:
    """The high watermark bounds the deletion, not the last stable offset."""
    name = unique_topic("dr-open-txn")

    def observe(target: Target) -> dict[str, Any]:
        filled(target, name)
        open_transaction(target, unique_topic("dr-txn"), name, 0, 2)
        answers = {str(offset): delete_records(target, {(name, 0): offset}) for offset in (7, 8, 9)}
        committed = list_offsets(target, {(name, 0): EARLIEST}, isolation_level=READ_COMMITTED)[(name, 0)]
        return {"answers": answers, "earliest_read_committed": committed,
                "fetch": fetch(target, [(name, 0, 8)], isolation_level=READ_COMMITTED)}

    compare(pair, "produce_fetch.delete_records.open_transaction", observe)


@pytest.mark.parametrize("policy", ["compact", "compact,delete"])
def test_delete_records_by_cleanup_policy(pair: Pair, policy: str) -> None:
    """DeleteRecords needs the delete policy: a compacted-only topic refuses it."""
    name = unique_topic("dr-policy")

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name, configs={"cleanup.policy": policy})
        produce_one(target, name, build_batch([NewRecord(b"v", key=b"k", timestamp=BASE_TIME)] * 3))
        return {"answer": delete_records(target, {(name, 0): 2}), "after": around(target, name)}

    compare(pair, f"produce_fetch.delete_records.policy.{policy}", observe)
