"""What the retention and compaction differential tests share: the broker settings that make Kafka's
housekeeping run often enough to be waited for, batches that roll segments, and waiting for a log to change."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from compat_tests.differential.data_wire import BASE_TIME, EARLIEST, fetch, list_offsets
from compat_tests.differential.targets import Target
from compat_tests.polling import wait_for
from kemu.wire.records import NewRecord, build_batch

HOUSEKEEPING_SETTINGS = {
    # Kafka checks retention every 5 minutes and rests its cleaner 15 s when no log is due: too slow to wait
    # for. One pair_with() of these serves both retention and compaction tests (one Kafka start).
    "log.retention.check.interval.ms": "500",
    "log.cleaner.backoff.ms": "200",
    "log.initial.task.delay.ms": "0",  # else Kafka's first retention check is 30 s after it starts
}
SEGMENT_BYTES = 1024 * 1024  # the smallest segment.bytes a client may set
BIG_VALUE = 400 * 1024  # two such records fill a segment, a third rolls it
ROLL_EVERY_APPEND = {"segment.ms": "3600000"}
"""A segment rolls once the first timestamp it holds is segment.ms old: with CreateTime records of 2023
(BASE_TIME), every append rolls one, and no test has to wait for the clock."""


def now_ms() -> int:
    return int(time.time() * 1000)


def big_batch(index: int, timestamp: int) -> bytes:
    return build_batch([NewRecord(bytes([65 + index % 26]) * BIG_VALUE, key=b"big-%d" % index, timestamp=timestamp)])


def keyed_batch(pairs: list[tuple[bytes, bytes | None]], first: int) -> bytes:
    return build_batch([NewRecord(value, key=key, timestamp=BASE_TIME + first + i)
                        for i, (key, value) in enumerate(pairs)])


def read_log(target: Target, name: str) -> dict[str, Any]:
    """Partition 0 from its log start to its high watermark, fetch after fetch (a fetch reads one segment):
    the last fetch's partition fields, with the batches of all of them."""
    while True:
        start = list_offsets(target, {(name, 0): EARLIEST})[(name, 0)]["offset"]
        part = _read_from(target, name, start)
        if part["log_start_offset"] == start:  # else retention moved it while this read went on: again
            return part


def _read_from(target: Target, name: str, offset: int) -> dict[str, Any]:
    batches: dict[str, Any] = {}
    while True:
        part: dict[str, Any] = fetch(target, [(name, 0, offset)])["topics"][name]["0"]
        batches.update(part["batches"])
        if part["error_code"] or not part["batches"]:
            break
        last = max(part["batches"].items(), key=lambda item: int(item[0]))
        offset = int(last[0]) + last[1]["last_offset_delta"] + 1
        if offset >= part["high_watermark"]:
            break
    part = {key: value for key, value in part.items() if key not in ("batches", "records_bytes")}
    part["batches"] = batches
    return part


def wait_for_log(target: Target, name: str, changed: Callable[[dict[str, Any]], bool], what: str,
                 timeout_s: float = 60.0) -> dict[str, Any]:
    """Read partition 0 whole (read_log) until `changed(what was read)` holds, the same twice; that reading."""
    def look() -> dict[str, Any] | None:
        # Read twice: a cleaner swapping segments in between two fetches of one reading mixes two logs.
        observed = read_log(target, name)
        return observed if changed(observed) and read_log(target, name) == observed else None

    found: dict[str, Any] = wait_for(look, what=f"{target.name}: {what}", timeout=timeout_s)
    return found
