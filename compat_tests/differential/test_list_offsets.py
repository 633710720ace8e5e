"""ListOffsets, Kafka against kemu: by timestamp, latest, earliest, max timestamp, earliest local, latest tiered,
earliest pending upload (each refused below the version that brought it), in both isolation levels with a
transaction left open, at old and new versions; unknown topics and partitions; and Fetch read_committed
against the same open transaction."""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.data_txn import open_transaction
from compat_tests.differential.data_wire import (
    BASE_TIME,
    EARLIEST,
    EARLIEST_LOCAL,
    LATEST,
    LIST_OFFSETS_VERSION,
    MAX_TIMESTAMP,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    compare,
    create_topic,
    fetch,
    list_offsets,
    produce_one,
    unique_topic,
)
from compat_tests.differential.targets import Pair, Target
from kemu.wire.compression import CompressionType
from kemu.wire.records import NewRecord, build_batch

# Out of order on purpose: the largest timestamp is neither the first nor the last record's.
TIMESTAMPS = [[10, 30, 20], [25], [40, 5, 40]]
QUERIES = {"latest": LATEST, "earliest": EARLIEST, "max_timestamp": MAX_TIMESTAMP, "earliest_local": EARLIEST_LOCAL,
           "before_all": BASE_TIME, "at_5": BASE_TIME + 5, "at_21": BASE_TIME + 21, "at_30": BASE_TIME + 30,
           "at_40": BASE_TIME + 40, "after_all": BASE_TIME + 41, "ancient": 0, "minus_9": -9}
# KIP-1005's latest tiered offset (v9) and KIP-1023's earliest offset pending upload (v11): -1 without remote storage.
QUERIES |= {"latest_tiered": -5, "earliest_pending_upload": -6}
OPEN_TRANSACTION_PARTITION = 1
EMPTY_PARTITION = 2


def filled(target: Target, name: str) -> dict[str, Any]:
    """Partition 0: the batches of TIMESTAMPS. Partition 1: the same, then a transaction left open.
    Partition 2: nothing."""
    create_topic(target, name, partitions=3)
    for partition in (0, OPEN_TRANSACTION_PARTITION):
        for stamps in TIMESTAMPS:
            records = [NewRecord(b"at-%d" % stamp, timestamp=BASE_TIME + stamp) for stamp in stamps]
            produce_one(target, name, build_batch(records), partition=partition)
    return open_transaction(target, unique_topic("lo-open"), name, OPEN_TRANSACTION_PARTITION, 2,
                            first_timestamp=BASE_TIME + 50)


def queries(name: str, timestamp: int) -> dict[tuple[str, int], int]:
    return {(name, partition): timestamp for partition in range(3)}


@pytest.mark.parametrize("version", [1, 2, 4, 6, 7, 8, 9, 10, 11])
def test_list_offsets(pair: Pair, version: int) -> None:
    name = unique_topic(f"lo-v{version}")

    def observe(target: Target) -> dict[str, Any]:
        transaction = filled(target, name)
        answers: dict[str, Any] = {"transaction": transaction}
        for isolation in (READ_UNCOMMITTED, READ_COMMITTED) if version >= 2 else (READ_UNCOMMITTED,):
            for query, timestamp in QUERIES.items():
                found = list_offsets(target, queries(name, timestamp), version=version, isolation_level=isolation)
                answers[f"{isolation}/{query}"] = {str(p): found[(name, p)] for p in range(3)}
        return answers

    compare(pair, f"produce_fetch.list_offsets.v{version}", observe)


def test_list_offsets_unknown(pair: Pair) -> None:
    name = unique_topic("lo-unknown")

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name)
        asked = {(name, 0): LATEST, (name, 3): LATEST, (name + "-absent", 0): LATEST, (name, -1): EARLIEST}
        return {f"v{version}": {f"{topic}/{partition}": answer for (topic, partition), answer
                                in list_offsets(target, asked, version=version).items()}
                for version in (1, 5, LIST_OFFSETS_VERSION)}

    compare(pair, "produce_fetch.list_offsets.unknown", observe)


@pytest.mark.parametrize("version", [4, 11, 17])
def test_fetch_isolation_levels(pair: Pair, version: int) -> None:
    """An open transaction: read_uncommitted reads it, read_committed stops at the last stable offset."""
    name = unique_topic(f"lo-fetch-iso-v{version}")

    def observe(target: Target) -> dict[str, Any]:
        filled(target, name)
        return {f"{isolation}/{offset}": fetch(target, [(name, p, offset) for p in range(3)], version=version,
                                               isolation_level=isolation)
                for isolation in (READ_UNCOMMITTED, READ_COMMITTED) for offset in (0, 4, 7, 8)}

    compare(pair, f"produce_fetch.fetch_isolation.v{version}", observe)


@pytest.mark.parametrize("timestamp_type", ["CreateTime", "LogAppendTime"])
@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_list_offsets_by_time_in_batches(pair: Pair, codec: str, timestamp_type: str) -> None:
    """Lookups landing inside a (compressed) batch, and the max timestamp's offset, under both timestamp types
    (LogAppendTime: every record of a batch has the batch's append time)."""
    name = unique_topic(f"lo-batches-{codec}-{timestamp_type}")
    compression = CompressionType[codec.upper()]

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name, configs={"message.timestamp.type": timestamp_type})
        for stamps in TIMESTAMPS:
            records = [NewRecord(b"at-%d" % stamp, timestamp=BASE_TIME + stamp) for stamp in stamps]
            produce_one(target, name, build_batch(records, compression=compression))
        # Under LogAppendTime, which batch holds the max timestamp depends on whether the appends fell in one
        # millisecond: not asked there.
        return {query: list_offsets(target, {(name, 0): timestamp})[(name, 0)]
                for query, timestamp in QUERIES.items()
                if not (timestamp_type == "LogAppendTime" and timestamp == MAX_TIMESTAMP)}

    compare(pair, f"produce_fetch.list_offsets.batches.{codec}.{timestamp_type}", observe)


def test_leader_epochs(pair: Pair) -> None:
    """A current leader epoch older or newer than the leader's (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH), in
    ListOffsets and Fetch; and a Fetch whose last fetched epoch diverges from the log."""
    name = unique_topic("lo-epochs")

    def observe(target: Target) -> dict[str, Any]:
        filled(target, name)
        observed: dict[str, Any] = {}
        for epoch in (-1, 0, 1, 7):
            observed[f"list/{epoch}"] = list_offsets(target, {(name, 0): LATEST},
                                                     current_leader_epoch=epoch)[(name, 0)]
            observed[f"fetch/{epoch}"] = fetch(target, [(name, 0, 0)], current_leader_epoch=epoch)
        for last in (0, 3):
            observed[f"diverging/{last}"] = fetch(target, [(name, 0, 5)], last_fetched_epoch=last)
        return observed

    compare(pair, "produce_fetch.leader_epochs", observe)
