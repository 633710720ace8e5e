"""benchmarks.fetch_shape counts the whole batches of a Fetch answer's records and leaves a cut one out."""

from __future__ import annotations

from benchmarks.fetch_shape import _batches
from kemu.wire.records import NewRecord, build_batch


def test_whole_batches_are_counted_and_a_cut_one_is_not() -> None:
    first = bytes(build_batch([NewRecord(value=b"a"), NewRecord(value=b"b")], base_offset=0))
    second = bytes(build_batch([NewRecord(value=b"c")], base_offset=2))
    assert _batches(first + second) == [(0, 2), (2, 1)]
    assert _batches(first + second[:-1]) == [(0, 2)]
    assert _batches(first[:40]) == []
