"""CPU per call of the wire codec on the messages the data path sends most: what the broker spends decoding
a request and encoding its response, without sockets, Trio or handlers.

    python3 -m benchmarks.codec [--seconds 0.3] [--repeats 5]

Each row is the best of `--repeats` timings by `time.process_time` (CPU time, honest on a shared machine),
each of as many calls as fill `--seconds`. The messages: a Produce v9 request of one 100-byte record, a Fetch
v12 request of one partition, a Fetch v12 response with one small batch and one 64 KiB batch (the big one
spliced, not copied), Metadata v9 request and response (one topic, one partition, one broker), the
ApiVersions v3 request and its response listing every API kemu serves.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from kemu.wire import codec
from kemu.wire.apis import all_apis
from kemu.wire.records import NewRecord, build_batch

PRODUCE, FETCH, METADATA, API_VERSIONS = 0, 1, 3, 18


def _produce_request() -> bytes:
    batch = build_batch([NewRecord(b"x" * 100)])
    return codec.encode_request(PRODUCE, 9, 1, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}, client_id="bench")


def _fetch_request() -> bytes:
    return codec.encode_request(FETCH, 12, 1, {
        "replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 52428800, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": "t", "partitions": [
            {"partition": 0, "fetch_offset": 10, "partition_max_bytes": 1048576}]}],
        "forgotten_topics_data": [], "rack_id": ""}, client_id="bench")


def _fetch_response() -> dict[str, Any]:
    small = build_batch([NewRecord(b"s" * 100)], base_offset=0)
    big = memoryview(build_batch([NewRecord(b"b" * 65536)], base_offset=1))
    partitions = [{"partition_index": i, "error_code": 0, "high_watermark": 2, "last_stable_offset": 2,
                   "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
                   "records": data} for i, data in enumerate((small, big))]
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0,
            "responses": [{"topic": "t", "partitions": partitions}]}


def _metadata_request() -> bytes:
    return codec.encode_request(METADATA, 9, 1, {
        "topics": [{"name": "t"}], "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False}, client_id="bench")


def _metadata_response() -> dict[str, Any]:
    return {"throttle_time_ms": 0, "brokers": [{"node_id": 0, "host": "127.0.0.1", "port": 9092, "rack": None}],
            "cluster_id": "kemu-cluster", "controller_id": 0,
            "topics": [{"error_code": 0, "name": "t", "is_internal": False, "topic_authorized_operations": -2147483648,
                        "partitions": [{"error_code": 0, "partition_index": 0, "leader_id": 0, "leader_epoch": 0,
                                        "replica_nodes": [0], "isr_nodes": [0], "offline_replicas": []}]}]}


def _api_versions_request() -> bytes:
    return codec.encode_request(API_VERSIONS, 3, 1, {"client_software_name": "bench",
                                                     "client_software_version": "1.0"}, client_id="bench")


def _api_versions_response() -> dict[str, Any]:
    return {"error_code": 0, "throttle_time_ms": 0,
            "api_keys": [{"api_key": api.key, "min_version": api.min_version, "max_version": api.max_version}
                         for api in all_apis().values()]}


def cases() -> dict[str, Callable[[], object]]:
    apis = all_apis()
    produce, fetch, metadata = _produce_request(), _fetch_request(), _metadata_request()
    versions = _api_versions_request()
    fetch_response, metadata_response = _fetch_response(), _metadata_response()
    versions_response = _api_versions_response()
    return {
        "decode Produce v9 request (1 × 100 B record)": lambda: codec.decode_request(produce),
        "decode Fetch v12 request (1 partition)": lambda: codec.decode_request(fetch),
        "encode Fetch v12 response (100 B + 64 KiB batches)":
            lambda: codec.encode_response_parts(apis[FETCH], 12, 1, fetch_response),
        "decode Metadata v9 request (1 topic)": lambda: codec.decode_request(metadata),
        "encode Metadata v9 response (1 topic)":
            lambda: codec.encode_response_parts(apis[METADATA], 9, 1, metadata_response),
        "decode ApiVersions v3 request": lambda: codec.decode_request(versions),
        "encode ApiVersions v3 response (all APIs)":
            lambda: codec.encode_response_parts(apis[API_VERSIONS], 3, 1, versions_response),
    }


def cpu_per_call(call: Callable[[], object], seconds: float, repeats: int) -> float:
    """Microseconds of CPU per call, the best of `repeats` runs."""
    count = 1
    while True:  # calibrate: enough calls to fill `seconds`
        started = time.process_time()
        for _ in range(count):
            call()
        spent = time.process_time() - started
        if spent >= seconds / 4:
            break
        count *= 4
    count = max(1, int(count * seconds / spent))
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(count):
            call()
        best = min(best, (time.process_time() - started) / count)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.3, help="CPU seconds per timing")
    parser.add_argument("--repeats", type=int, default=5, help="timings per message; the best is printed")
    args = parser.parse_args()
    print("| message | µs CPU per call |\n|---|---:|")
    for name, call in cases().items():
        print(f"| {name} | {cpu_per_call(call, args.seconds, args.repeats):.1f} |", flush=True)


if __name__ == "__main__":
    main()
