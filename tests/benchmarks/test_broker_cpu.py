"""benchmarks.broker_cpu finds where the next Fetch starts from an answer's records, a cut batch left out."""

from __future__ import annotations

from benchmarks.broker_cpu import next_offset
from kemu.wire.records import NewRecord, build_batch


def test_the_next_fetch_starts_after_the_last_whole_batch() -> None:
    first = bytes(build_batch([NewRecord(value=b"a"), NewRecord(value=b"b")], base_offset=10))
    second = bytes(build_batch([NewRecord(value=b"c")] * 3, base_offset=12))
    assert next_offset(first + second) == 15
    assert next_offset(first + second[:-1]) == 12
    assert next_offset(first[:30]) is None
