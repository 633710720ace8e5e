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


def test_an_answer_without_its_records_keeps_every_other_field() -> None:
    from benchmarks.fetch_shape import answer_fields

    partition = {"partition_index": 0, "error_code": 0, "high_watermark": 9, "last_stable_offset": 9,
                 "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
                 "records": b"\x00" * 70}
    body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0,
            "responses": [{"topic": "t", "partitions": [partition]}], "node_endpoints": []}
    fields = answer_fields(body)
    assert fields == {"throttle_time_ms": 0, "error_code": 0, "session_id": 0,
                      "partitions": [{key: value for key, value in partition.items() if key != "records"}]}
