"""Record bytes cross the codec without copies: a Produce request's batches decode as views of the frame,
and a Fetch response's records are handed back as the very buffers the handler gave, between encoded
pieces that join to exactly what a one-piece encoding gives (flexible and classic versions alike)."""

from __future__ import annotations

import pytest

from kemu.wire.apis import get_api
from kemu.wire.codec import decode_request, decode_response, encode_request, encode_response, encode_response_parts
from kemu.wire.records import NewRecord, build_batch


def _fetch_body(records: list[bytes | memoryview]) -> dict[str, object]:
    partitions = [{"partition_index": i, "error_code": 0, "high_watermark": 10, "last_stable_offset": 10,
                   "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
                   "records": data} for i, data in enumerate(records)]
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0,
            "responses": [{"topic": "t", "partitions": partitions}]}


@pytest.mark.parametrize("version", [4, 11, 12, 16])
def test_fetch_records_are_spliced_not_copied(version: int) -> None:
    big = memoryview(build_batch([NewRecord(value=b"v" * 3000)], base_offset=0))
    small = build_batch([NewRecord(value=b"s")], base_offset=1)
    body = _fetch_body([big, small, b"", big])
    api = get_api(1)
    assert api is not None
    parts = encode_response_parts(api, version, 7, body)
    assert sum(part is big for part in parts) == 2  # the big ones as they are; the small one copied in
    joined = b"".join(parts)
    assert joined == encode_response(api, version, 7, body)
    correlation_id, decoded = decode_response(1, version, joined)
    assert correlation_id == 7
    assert [p["records"] for p in decoded["responses"][0]["partitions"]] == [bytes(big), small, b"", bytes(big)]


@pytest.mark.parametrize("version", [3, 8, 9, 11])
def test_produce_records_decode_as_views_of_the_frame(version: int) -> None:
    batch = build_batch([NewRecord(value=b"x" * 500)], base_offset=0)
    frame = bytearray(encode_request(0, version, 3, {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}))
    request = decode_request(memoryview(frame))
    records = request.body["topic_data"][0]["partition_data"][0]["records"]
    assert isinstance(records, memoryview) and records.obj is frame
    assert records == batch
