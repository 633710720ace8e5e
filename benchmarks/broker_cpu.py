"""The broker's own CPU per record, with no client library in the way (issue 35, goal 1).

    python3 -m benchmarks.broker_cpu [--brokers kemu,kafka,kfake,tansu,mock] [--batches 200] [--json PATH]

`benchmarks.run`'s throughput rows are bound by confluent-kafka on most rows: its CPU is near a core while
the broker's is not. What is left to compare there is how much work each broker does for the same records.
This measures that alone: one raw socket, already-encoded requests sent one at a time, and each broker
process's CPU time (schedstat of all its threads) over the requests, divided by the records they carried.

- produce: the same uncompressed batch (`--records-per-batch` records of `--size` bytes, the shape
  librdkafka sends at linger.ms=5) appended `--batches` times with Produce v9, acks=-1, to a 1-partition topic;
- fetch: everything produced, read back from offset 0 with Fetch v12 (librdkafka's sizes: 1 MiB per
  partition, 50 MiB per answer, max_wait 0), answer after answer.

Each row is the median of `--repeats` passes, each on a new topic. The sender's own CPU is not counted:
it is this process. Markdown to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import sys
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.brokers import RunningBroker
from benchmarks.kafka_probe import read_exactly
from kemu.wire import codec
from kemu.wire.records import NewRecord, build_batch

PRODUCE, PRODUCE_VERSION = 0, 9
FETCH, FETCH_VERSION = 1, 12
LIST_OFFSETS, LIST_OFFSETS_VERSION = 2, 7
RETRIABLE = {3, 5, 6}  # UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER: a new topic


class Connection:
    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=30)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def call(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        self.correlation_id += 1
        frame = codec.encode_request(api_key, version, self.correlation_id, body, client_id="broker-cpu")
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        (size,) = struct.unpack(">i", read_exactly(self.sock, 4))
        _, answer = codec.decode_response(api_key, version, read_exactly(self.sock, size))
        return answer


def produce_body(topic: str, batch: bytes) -> dict[str, Any]:
    return {"transactional_id": None, "acks": -1, "timeout_ms": 30_000,
            "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]}


def fetch_body(topic: str, offset: int) -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 52_428_800, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                        "fetch_offset": offset, "last_fetched_epoch": -1,
                                                        "log_start_offset": -1, "partition_max_bytes": 1_048_576}]}],
            "forgotten_topics_data": [], "rack_id": ""}


def earliest_offset(connection: Connection, topic: str) -> int:
    answer = connection.call(LIST_OFFSETS, LIST_OFFSETS_VERSION, {
        "replica_id": -1, "isolation_level": 0,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                   "timestamp": -2}]}]})
    offset: int = answer["topics"][0]["partitions"][0]["offset"]
    return offset


def produce_error(answer: dict[str, Any]) -> int:
    code: int = answer["responses"][0]["partition_responses"][0]["error_code"]
    return code


def next_offset(records: bytes) -> int | None:
    """The offset after the last whole batch of a Fetch answer's records; None when there is none."""
    position, after = 0, None
    while position + 61 <= len(records):
        base, length = struct.unpack_from(">qi", records, position)
        if position + 12 + length > len(records):
            break
        (delta,) = struct.unpack_from(">i", records, position + 23)
        after = base + delta + 1
        position += 12 + length
    return after


def one_pass(broker: RunningBroker, topic: str, batch: bytes, batches: int, records_per_batch: int) -> dict[str, float]:
    broker.create_topic(topic, 1)
    connection = Connection(broker.host, broker.port)
    try:
        deadline = time.monotonic() + 30
        while (code := produce_error(connection.call(PRODUCE, PRODUCE_VERSION, produce_body(topic, batch)))) != 0:
            if code not in RETRIABLE or time.monotonic() > deadline:
                raise RuntimeError(f"{broker.definition.label}: Produce answered error {code}")
            time.sleep(0.05)
        started = broker.on_cpu_seconds()
        for _ in range(batches):
            if (code := produce_error(connection.call(PRODUCE, PRODUCE_VERSION, produce_body(topic, batch)))) != 0:
                raise RuntimeError(f"{broker.definition.label}: Produce answered error {code}")
        produced = broker.on_cpu_seconds() - started
        end, answers = (batches + 1) * records_per_batch, 0
        offset = start = earliest_offset(connection, topic)  # the mock keeps only a partition's newest 5 MiB
        started = broker.on_cpu_seconds()
        while offset < end:
            answer = connection.call(FETCH, FETCH_VERSION, fetch_body(topic, offset))
            if not answer["responses"] or not answer["responses"][0]["partitions"]:
                raise RuntimeError(f"{broker.definition.label}: Fetch at {offset} answered no partition: {answer}")
            partition = answer["responses"][0]["partitions"][0]
            if partition["error_code"]:
                raise RuntimeError(f"{broker.definition.label}: Fetch at {offset} answered {partition['error_code']}")
            after = next_offset(bytes(partition["records"] or b""))
            if after is None:
                raise RuntimeError(f"{broker.definition.label}: no whole batch at offset {offset}")
            offset, answers = after, answers + 1
        fetched = broker.on_cpu_seconds() - started
    finally:
        connection.close()
    records = batches * records_per_batch
    return {"produce_us_per_record": 1e6 * produced / records,
            "fetch_us_per_record": 1e6 * fetched / (end - start), "fetch_answers": float(answers)}


def measure(definition: Any, args: argparse.Namespace, batch: bytes) -> dict[str, Any]:
    if definition.unavailable is not None:
        return {"broker": definition.label, "unavailable": definition.unavailable}
    with RunningBroker(definition) as broker:
        broker.start()
        passes = []
        for repeat in range(args.repeats):
            passes.append(one_pass(broker, f"broker-cpu-{repeat}", batch, args.batches, args.records_per_batch))
            print(f"[{definition.label}] {repeat + 1}/{args.repeats}: {passes[-1]}", file=sys.stderr)
    return {"broker": definition.label,
            **{key: statistics.median(one[key] for one in passes) for key in passes[0]},
            **{f"{key}_range": [min(one[key] for one in passes), max(one[key] for one in passes)] for key in passes[0]}}


def table(results: Sequence[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [f"broker CPU per record, µs ({args.records_per_batch} × {args.size} B per batch, {args.batches} "
             f"batches, median of {args.repeats})", "",
             "| broker | produce | fetch | kemu/broker produce | kemu/broker fetch |", "|---|---:|---:|---:|---:|"]
    kemu = next((one for one in results if one["broker"] == "kemu" and "unavailable" not in one), None)
    for one in results:
        if "unavailable" in one:
            lines.append(f"| {one['broker']} | n/a ({one['unavailable']}) | | | |")
            continue
        ratios = ["—", "—"]
        if kemu is not None:
            ratios = [f"{kemu[key] / one[key]:.2f}×" if one[key] else "—"
                      for key in ("produce_us_per_record", "fetch_us_per_record")]
        cells = [f"{one[key]:.3f} ({one[key + '_range'][0]:.3f}-{one[key + '_range'][1]:.3f})"
                 for key in ("produce_us_per_record", "fetch_us_per_record")]
        lines.append(f"| {one['broker']} | {cells[0]} | {cells[1]} | {ratios[0]} | {ratios[1]} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", default="kemu,kafka,kfake,tansu,mock")
    parser.add_argument("--size", type=int, default=100, help="record value bytes")
    parser.add_argument("--records-per-batch", type=int, default=3400)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    from benchmarks.peers import definitions

    batch = bytes(build_batch([NewRecord(value=b"v" * args.size) for _ in range(args.records_per_batch)],
                              base_offset=0))
    load = os.getloadavg()[0]
    results = []
    for definition in definitions(args.brokers.split(",")):
        try:
            results.append(measure(definition, args, batch))
        except (OSError, RuntimeError, LookupError) as failed:  # one broker's failure, not the run's
            results.append({"broker": definition.label, "unavailable": f"FAILED: {failed}"})
    print(table(results, args))
    print(f"\nload average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
