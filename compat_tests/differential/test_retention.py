"""Retention, Kafka against kemu: retention.bytes and retention.ms at topic level over segments that roll,
and the log start offset, ListOffsets and Fetch that result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compat_tests.differential import data_wire as wire
from compat_tests.differential.data_housekeeping import (
    HOUSEKEEPING_SETTINGS,
    ROLL_EVERY_APPEND,
    SEGMENT_BYTES,
    big_batch,
    keyed_batch,
    now_ms,
    wait_for_log,
)
from compat_tests.differential.targets import Pair, Target
from kemu.wire.records import NewRecord, build_batch

# Each case fills a topic that keeps everything, then sets the retention that applies: retention then sees the
# whole log in one pass, whenever Kafka's check happens to run (a check between two appends would otherwise
# show a log start offset on its way).

def by_bytes(target: Target, name: str) -> dict[str, str]:
    """Seven 400 KiB records in 1 MiB segments ([0,1] [2,3] [4,5] [6]); retention.bytes keeps about 1 MiB."""
    wire.create_topic(target, name, configs={"segment.bytes": str(SEGMENT_BYTES), "retention.ms": "-1"})
    for index in range(7):
        wire.produce_one(target, name, big_batch(index, now_ms()))
    return {"retention.bytes": "1100000"}


def by_time(target: Target, name: str) -> dict[str, str]:
    """Records of 2023, then of now: the first of now rolls the segment (its timestamp is segment.ms past the
    segment's first), and retention.ms of an hour drops the old segment."""
    wire.create_topic(target, name, configs={**ROLL_EVERY_APPEND, "retention.ms": "-1"})
    wire.produce_one(target, name, keyed_batch([(b"old-%d" % i, b"v") for i in range(2)], 0))
    wire.produce_one(target, name, keyed_batch([(b"old-2", b"v")], 2))
    for index in range(3):
        wire.produce_one(target, name, build_batch([NewRecord(b"v", key=b"new-%d" % index, timestamp=now_ms())]))
    return {"retention.ms": "3600000"}


def all_expired(target: Target, name: str) -> dict[str, str]:
    """Every record of 2023: the only segment, the active one, expires too (Kafka rolls a new one first)."""
    wire.create_topic(target, name, configs={"retention.ms": "-1"})
    for index in range(3):
        wire.produce_one(target, name, keyed_batch([(b"old-%d" % index, b"v")], index))
    return {"retention.ms": "3600000"}


CASES: dict[str, Callable[[Target, str], dict[str, str]]] = {
    "bytes": by_bytes, "time": by_time, "all_expired": all_expired}


@pytest.mark.parametrize("case", sorted(CASES))
def test_retention(pair_with: Callable[[dict[str, str]], Pair], case: str) -> None:
    pair = pair_with(HOUSEKEEPING_SETTINGS)
    name = wire.unique_topic(f"ret-{case}")

    def observe(target: Target) -> dict[str, Any]:
        wire.alter_topic(target, name, CASES[case](target, name))
        after = wait_for_log(target, name, lambda part: part["log_start_offset"] > 0, "retention to delete")
        start = after["log_start_offset"]
        return {"after": after,
                "earliest": wire.list_offsets(target, {(name, 0): wire.EARLIEST})[(name, 0)],
                "latest": wire.list_offsets(target, {(name, 0): wire.LATEST})[(name, 0)],
                "by_time": wire.list_offsets(target, {(name, 0): wire.BASE_TIME})[(name, 0)],
                "below_start": wire.fetch(target, [(name, 0, start - 1)]),
                "from_zero": wire.fetch(target, [(name, 0, 0)]),
                # One fetch reads one segment: what it returns ends where the log start's segment ends.
                "from_start": wire.fetch(target, [(name, 0, start)])}

    wire.compare(pair, f"produce_fetch.retention.{case}", observe)
