"""How long one big request holds kemu's event loop (issue 34): a fresh `kemu serve`, a pinger sending
ApiVersions back to back on a connection of its own, and big requests one at a time from another connection.

    python3 -m benchmarks.event_loop_hold                       # 2,000 topics, one run
    python3 -m benchmarks.event_loop_hold --topics 10000 --runs 3 --json hold.json

For each request it prints the request's own round trip and the longest ApiVersions round trip of the pinger
while it ran, in ms: that ping waited for whatever held the loop. The goal is a longest ping under 100 ms for
every request, on a quiet machine; each run starts a fresh broker, and with several runs the table shows the
median and the spread (min-max). The requests: CreateTopics of all the topics (5,000 a request, the most
Kafka's controller takes), Metadata of all, DescribeConfigs and IncrementalAlterConfigs of all, ListOffsets and
DescribeLogDirs of all their partitions, a Produce of ~50 MiB over 50 partitions and the Fetch of it, a Fetch
of many small batches, and DeleteTopics of all (10,000 a request).

Each API is used once with a small request first: its first use loads its handler module, a one-time cost
of 10-50 ms that is not what is measured. Every request is encoded before the pinger's figures are taken and
every answer is read as bytes (decoded and checked after), so the benchmark's own Python does not compete with
the pinger for its process's GIL while a request runs; the broker is a process of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.brokers import RunningBroker, kemu_definition
from benchmarks.kafka_probe import read_exactly
from kemu.wire import codec
from kemu.wire.records import NewRecord, build_batch

SIZE = struct.Struct(">i")
API_VERSIONS = (18, 3)
BIG_PARTITIONS, BIG_BATCH_BYTES = 50, 1_000_000  # ~50 MiB in one Produce
SMALL_PARTITIONS, SMALL_ROUNDS = 20, 500  # 10,000 batches of 10 small records
SETTLE_S = 0.2  # between requests: the answer's check and the socket's buffers done with
# The most one request may change: Kafka's controller writes a request's records in a list of at most 10,000
# (a topic of one partition is 2: its TopicRecord and PartitionRecord; a deletion 1, its RemoveTopicRecord) and
# refuses, or fails the topics past it, so more topics than that are created and deleted a chunk at a time.
CREATE_CHUNK, DELETE_CHUNK = 5_000, 10_000


@dataclass
class Step:
    """One request: its round trip and the longest ping that overlapped it, in ms."""

    name: str
    request_ms: float
    longest_ping_ms: float
    pings: int


class Pinger:
    """ApiVersions round trips back to back on one connection, each kept as (sent, answered)."""

    def __init__(self, address: tuple[str, int]) -> None:
        self._sock = _connect(address)
        self._frame = _frame(*API_VERSIONS, {"client_software_name": "pinger", "client_software_version": "1"})
        self._stop = threading.Event()
        self.rounds: list[tuple[float, float]] = []
        self._thread = threading.Thread(target=self._run, name="pinger", daemon=True)

    def __enter__(self) -> Pinger:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self._sock.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            sent = time.perf_counter()
            self._sock.sendall(self._frame)
            (size,) = SIZE.unpack(read_exactly(self._sock, SIZE.size))
            read_exactly(self._sock, size)
            self.rounds.append((sent, time.perf_counter()))

    def longest_between(self, start: float, end: float) -> tuple[float, int]:
        """The longest round trip that overlapped [start, end] (one still waiting counts up to now), and how
        many overlapped."""
        overlapping = [answered - sent for sent, answered in list(self.rounds) if answered >= start and sent <= end]
        return max(overlapping, default=0.0), len(overlapping)


def _connect(address: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(address, timeout=300)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _frame(api_key: int, version: int, body: dict[str, Any], correlation_id: int = 1) -> bytes:
    payload = codec.encode_request(api_key, version, correlation_id, body, client_id="hold")
    return SIZE.pack(len(payload)) + payload


def _exchange(sock: socket.socket, frame: bytes) -> bytes:
    sock.sendall(frame)
    (size,) = SIZE.unpack(read_exactly(sock, SIZE.size))
    return read_exactly(sock, size)


def _batch(values: list[bytes]) -> bytes:
    return build_batch([NewRecord(value, timestamp=1_700_000_000_000 + i) for i, value in enumerate(values)])


def _produce(topic: str, batches: dict[int, bytes]) -> dict[str, Any]:
    return {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": topic, "partition_data": [{"index": p, "records": b} for p, b in batches.items()]}]}


def _fetch(topic: str, partitions: int, partition_max_bytes: int) -> dict[str, Any]:
    return {"max_wait_ms": 0, "min_bytes": 1, "max_bytes": 0x7FFFFFFF, "isolation_level": 0, "session_id": 0,
            "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
                {"partition": p, "fetch_offset": 0, "partition_max_bytes": partition_max_bytes}
                for p in range(partitions)]}], "forgotten_topics_data": [], "rack_id": ""}


def _errors(value: Any) -> list[int]:
    """Every non-zero error code anywhere in a decoded answer."""
    if isinstance(value, dict):
        found = [code for key, code in value.items() if key == "error_code" and code]
        return found + [code for child in value.values() for code in _errors(child)]
    if isinstance(value, list):
        return [code for child in value for code in _errors(child)]
    return []


class Requests:
    """The big requests of one run, encoded ahead, in the order they are sent."""

    def __init__(self, topics: int, prefix: str = "hold", record_bytes: int = 10_000) -> None:
        names = [f"{prefix}-{index:06d}" for index in range(topics)]
        big_topic, small_topic = f"{prefix}-big", f"{prefix}-small"
        every = names + [big_topic, small_topic]
        self.steps: list[tuple[str, tuple[int, int], bytes]] = []

        def add(name: str, api_key: int, version: int, body: dict[str, Any]) -> None:
            self.steps.append((name, (api_key, version), _frame(api_key, version, body)))

        for chunk in _chunks(names, CREATE_CHUNK):
            add(f"CreateTopics ({len(chunk)} topics)", 19, 7, {"topics": [
                {"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
                for name in chunk], "timeout_ms": 60000, "validate_only": False})
        add("Metadata (all topics)", 3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                             "include_topic_authorized_operations": False})
        add(f"DescribeConfigs ({topics} topics)", 32, 4, {"resources": [
            {"resource_type": 2, "resource_name": name, "configuration_keys": None} for name in names],
            "include_synonyms": False, "include_documentation": False})
        add(f"IncrementalAlterConfigs ({topics} topics)", 44, 1, {"resources": [
            {"resource_type": 2, "resource_name": name, "configs": [
                {"name": "retention.ms", "config_operation": 0, "value": "86400000"}]} for name in names],
            "validate_only": False})
        add(f"ListOffsets ({topics} partitions)", 2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": name, "partitions": [{"partition_index": 0, "timestamp": -1}]} for name in names]})
        add("DescribeLogDirs (all)", 35, 4, {"topics": None})
        big = _batch([os.urandom(record_bytes) for _ in range(BIG_BATCH_BYTES // 10_000)])
        add(f"Produce ({BIG_PARTITIONS * len(big) >> 20} MiB, {BIG_PARTITIONS} partitions)", 0, 9,
            _produce(big_topic, dict.fromkeys(range(BIG_PARTITIONS), big)))
        add(f"Fetch ({BIG_PARTITIONS * len(big) >> 20} MiB, {BIG_PARTITIONS} partitions)", 1, 12,
            _fetch(big_topic, BIG_PARTITIONS, 2 * BIG_BATCH_BYTES))
        small = _batch([b"v%d" % i for i in range(10)])
        self.small_produce = _frame(0, 9, _produce(small_topic, dict.fromkeys(range(SMALL_PARTITIONS), small)))
        add(f"Fetch ({SMALL_PARTITIONS * SMALL_ROUNDS} batches of 10 records)", 1, 12,
            _fetch(small_topic, SMALL_PARTITIONS, 50 * 1024 * 1024))
        for chunk in _chunks(every, DELETE_CHUNK):
            add(f"DeleteTopics ({len(chunk)} topics)", 20, 6, {"topics": [
                {"name": name, "topic_id": uuid.UUID(int=0)} for name in chunk], "timeout_ms": 60000})
        self.setup = _frame(19, 7, {"topics": [
            {"name": name, "num_partitions": count, "replication_factor": 1, "assignments": [], "configs": []}
            for name, count in ((big_topic, BIG_PARTITIONS), (small_topic, SMALL_PARTITIONS))],
            "timeout_ms": 60000, "validate_only": False})


def _chunks(names: list[str], size: int) -> list[list[str]]:
    return [names[start:start + size] for start in range(0, len(names), size)]


def run_once(topics: int, progress: Callable[[str], None]) -> tuple[float, list[Step]]:
    """One fresh broker: the longest ping while idle, then each big request's Step."""
    requests = Requests(topics)
    steps: list[Step] = []
    with RunningBroker(kemu_definition()) as broker:
        broker.start()
        address = (broker.host, broker.port)
        big = _connect(address)
        _exchange(big, requests.setup)
        # Each API once, small: its first use loads its handler module (10-50 ms, once per process).
        warm = Requests(1, "warm", record_bytes=1)
        _exchange(big, warm.setup)
        for _, _, frame in warm.steps:
            _exchange(big, frame)
        with Pinger(address) as pinger:
            time.sleep(1.0)
            idle, _ = pinger.longest_between(time.perf_counter() - 0.9, time.perf_counter())
            for name, (api_key, version), frame in requests.steps:
                if name.startswith("Fetch (") and "batches" in name:
                    for _ in range(SMALL_ROUNDS):  # not measured: one small Produce after another
                        _exchange(big, requests.small_produce)
                    time.sleep(SETTLE_S)
                start = time.perf_counter()
                answer = _exchange(big, frame)
                end = time.perf_counter()
                time.sleep(SETTLE_S)  # a round trip under way at `end` finishes before it is counted
                longest, pings = pinger.longest_between(start, end)
                _, body = codec.decode_response(api_key, version, answer)
                if errors := _errors(body):
                    raise RuntimeError(f"{name}: error codes {sorted(set(errors))[:5]} in the answer")
                step = Step(name, round((end - start) * 1000, 1), round(longest * 1000, 1), pings)
                progress(f"{step.name}: {step.request_ms} ms, longest ping {step.longest_ping_ms} ms")
                steps.append(step)
        big.close()
    return round(idle * 1000, 1), steps


def _spread(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def table(runs: list[list[Step]]) -> str:
    lines = ["| request | request ms | longest ping ms | pings |", "|---|---:|---:|---:|"]
    for index, first in enumerate(runs[0]):
        same = [run[index] for run in runs]
        lines.append(f"| {first.name} | {_spread([s.request_ms for s in same])} | "
                     f"{_spread([s.longest_ping_ms for s in same])} | {_spread([float(s.pings) for s in same])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.event_loop_hold", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=1, help="fresh brokers, one after the other")
    parser.add_argument("--json", type=Path, help="write every run's figures here too")
    args = parser.parse_args(argv)
    idles: list[float] = []
    runs: list[list[Step]] = []
    for run in range(args.runs):
        print(f"run {run + 1} of {args.runs}", file=sys.stderr)
        idle, steps = run_once(args.topics, lambda line: print("  " + line, file=sys.stderr))
        idles.append(idle)
        runs.append(steps)
    load = os.getloadavg()[0]
    print(f"{args.topics} topics, {args.runs} run(s); median (min-max) over runs; 1-minute load average "
          f"{load:.2f}; longest ping while idle {_spread(idles)} ms\n")
    print(table(runs))
    if args.json is not None:
        args.json.write_text(json.dumps({"topics": args.topics, "load_average": load, "idle_ping_ms": idles,
                                         "runs": [[asdict(step) for step in run] for run in runs]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
