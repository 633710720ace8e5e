"""Compaction, Kafka against kemu: a compacted topic whose segments roll on every append, read once Kafka's
cleaner has cleaned it (and kemu's has): which records survive, in which batches, the tombstones kept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compat_tests.differential import data_wire as wire
from compat_tests.differential.data_housekeeping import HOUSEKEEPING_SETTINGS, read_log, wait_for_log
from compat_tests.differential.data_txn import end_transaction, open_transaction
from compat_tests.differential.targets import Pair, Target
from compat_tests.polling import wait_for
from kemu.wire.compression import CompressionType
from kemu.wire.records import NewRecord, build_batch

SEGMENT_MS = 1000
# Batches a segment.ms apart in CreateTime: each append rolls a segment, so all but the last can be cleaned.
BATCHES: list[list[tuple[bytes, bytes | None]]] = [
    [(b"k0", b"a0"), (b"k1", b"a1"), (b"k2", b"a2")],
    [(b"k0", b"b0")],
    [(b"k2", b"c2"), (b"k1", None)],
    [(b"k0", b"d0"), (b"k3", b"d3")],
    [(b"k3", b"e3")],
    [(b"k4", b"active")],
]


# A topic being filled keeps everything; the tests make it compacted once it is full.
FILLING = {"cleanup.policy": "delete", "retention.ms": "-1", "segment.ms": str(SEGMENT_MS),
           "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "0"}


def fill(target: Target, name: str, codec: str) -> int:
    """The batches, in a topic that becomes compacted once they are all in: a cleaner run between two
    appends would otherwise clean part of the log, and a later one the rest."""
    wire.create_topic(target, name, configs=FILLING)
    count = 0
    for index, pairs in enumerate(BATCHES):
        timestamp = time_of(index)
        records = [NewRecord(value, key=key, timestamp=timestamp + i, headers=[("i", b"%d" % index)])
                   for i, (key, value) in enumerate(pairs)]
        wire.produce_one(target, name, build_batch(records, compression=CompressionType[codec.upper()]))
        count += len(records)
    wire.alter_topic(target, name, {"cleanup.policy": "compact"})
    return count


def record_count(partition: dict[str, Any]) -> int:
    return sum(len(batch["records"]) for batch in partition["batches"].values())


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_read_after_compaction(pair_with: Callable[[dict[str, str]], Pair], codec: str) -> None:
    pair = pair_with(HOUSEKEEPING_SETTINGS)
    name = wire.unique_topic(f"compact-{codec}")

    def observe(target: Target) -> dict[str, Any]:
        produced = fill(target, name, codec)
        cleaned = wait_for_log(target, name, lambda part: record_count(part) < produced, "the cleaner")
        return {"cleaned": cleaned,
                "earliest": wire.list_offsets(target, {(name, 0): wire.EARLIEST})[(name, 0)],
                "latest": wire.list_offsets(target, {(name, 0): wire.LATEST})[(name, 0)],
                "max_timestamp": wire.list_offsets(target, {(name, 0): wire.MAX_TIMESTAMP})[(name, 0)],
                # After the first batch's time, before the second's, whose record the cleaner removed.
                "by_time": wire.list_offsets(target, {(name, 0): wire.BASE_TIME + 5 * SEGMENT_MS})[(name, 0)],
                "from_a_removed_offset": wire.fetch(target, [(name, 0, 1)]),
                "consumer": wire.consume(target, name)}

    # A recompressed (cleaned) zstd batch is the codec library's own bytes: sizes are left out for it.
    wire.compare(pair, f"produce_fetch.compaction.{codec}", observe,
                 (lambda observed: observed) if codec == "none" else wire.without_sizes)


def test_read_after_compacting_transactions(pair_with: Callable[[dict[str, str]], Pair]) -> None:
    """An aborted and a committed transaction between plain batches: the cleaner drops the aborted records
    (keeping the markers for now) and compacts the committed ones with the rest."""
    pair = pair_with(HOUSEKEEPING_SETTINGS)
    name = wire.unique_topic("compact-txn")

    def transaction(target: Target, index: int, pairs: list[tuple[bytes, bytes | None]], commit: bool) -> Any:
        transactional_id = f"{name}-txn-{index}"
        records = [NewRecord(value, key=key, timestamp=time_of(index) + i) for i, (key, value) in enumerate(pairs)]
        opened = open_transaction(target, transactional_id, name, 0, len(records), records=records)
        ended = end_transaction(target, transactional_id, opened, commit=commit)

        def marked() -> bool:
            part = wire.fetch(target, [(name, 0, 0)])["topics"][name]["0"]
            return bool(part["last_stable_offset"] == part["high_watermark"])

        wait_for(marked, what=f"{target.name}: the transaction's marker")
        return {"opened": opened, "ended": ended}

    def observe(target: Target) -> dict[str, Any]:
        wire.create_topic(target, name, configs=FILLING)
        steps = [wire.produce_one(target, name, plain(0, [(b"k0", b"a0"), (b"k1", b"a1")])),
                 transaction(target, 1, [(b"k0", b"aborted"), (b"k2", b"aborted")], commit=False),
                 transaction(target, 2, [(b"k1", b"committed"), (b"k3", b"committed")], commit=True),
                 wire.produce_one(target, name, plain(3, [(b"k0", b"b0")])),
                 wire.produce_one(target, name, plain(4, [(b"k9", b"active")]))]
        before = read_log(target, name)
        wire.alter_topic(target, name, {"cleanup.policy": "compact"})
        produced = sum(len(batch["records"]) for batch in before["batches"].values())
        cleaned = wait_for_log(target, name, lambda part: sum(len(b["records"]) for b in part["batches"].values())
                               < produced, "the cleaner")
        return {"steps": steps, "before": before, "cleaned": cleaned,
                "read_committed": wire.consume(target, name, isolation="read_committed"),
                "read_uncommitted": wire.consume(target, name)}

    wire.compare(pair, "produce_fetch.compaction.transactions", observe)


def time_of(index: int) -> int:
    """The CreateTime of the index-th batch: a segment.ms and more after the one before, so each rolls one."""
    return wire.BASE_TIME + index * 10 * SEGMENT_MS


def plain(index: int, pairs: list[tuple[bytes, bytes | None]]) -> bytes:
    return build_batch([NewRecord(value, key=key, timestamp=time_of(index) + i)
                        for i, (key, value) in enumerate(pairs)])
