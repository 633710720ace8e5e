"""kemu serve's RSS while slow consumers owe it big Fetch answers (the reproduction behind OwedAnswers and
the sendfile answers of kemu.wire.file_region).

    python3 -m benchmarks.owed_fetch_rss [--partitions 500] [--batches 300] [--connections 500] [--seconds 15]

One topic of `--partitions` partitions, each given `--batches` batches of 10 records × 100 B (one Produce
per round, every partition in it), so most of it is in segment files: the cache budget keeps the newest 64
MiB. Then `--connections` raw sockets each send one Fetch v12 for 50 partitions from offset 0 (1 MiB per
partition, 50 MiB per answer: librdkafka's sizes) and read nothing. The broker's RSS is sampled every 0.5 s
for `--seconds`; its open descriptors at the end, and the size of the answers (their prefixes, read last).
Markdown to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import sys
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.broker_cpu import Connection
from benchmarks.brokers import RunningBroker, kemu_definition
from kemu.wire import codec
from kemu.wire.records import NewRecord, build_batch

PRODUCE, FETCH = 0, 1
PER_FETCH = 50


def produce_round(topic: str, partitions: int, batch: bytes) -> dict[str, Any]:
    return {"transactional_id": None, "acks": 1, "timeout_ms": 30_000,
            "topic_data": [{"name": topic, "partition_data": [{"index": p, "records": batch}
                                                              for p in range(partitions)]}]}


def fetch_frame(topic: str, first: int, partitions: int, correlation_id: int) -> bytes:
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 52_428_800, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [
                {"partition": (first + i) % partitions, "current_leader_epoch": -1, "fetch_offset": 0,
                 "last_fetched_epoch": -1, "log_start_offset": -1, "partition_max_bytes": 1_048_576}
                for i in range(PER_FETCH)]}],
            "forgotten_topics_data": [], "rack_id": ""}
    payload = codec.encode_request(FETCH, 12, correlation_id, body, client_id="owed-fetch-rss")
    return struct.pack(">i", len(payload)) + payload


def run(args: argparse.Namespace) -> dict[str, Any]:
    batch = bytes(build_batch([NewRecord(value=b"v" * 100) for _ in range(10)], base_offset=0))
    with RunningBroker(kemu_definition()) as broker:
        broker.start()
        broker.create_topic("owed", args.partitions)
        producer = Connection(broker.host, broker.port)
        for n in range(args.batches):
            answer = producer.call(PRODUCE, 9, produce_round("owed", args.partitions, batch))
            errors = {p["error_code"] for t in answer["responses"] for p in t["partition_responses"]}
            if errors != {0}:
                raise RuntimeError(f"Produce round {n} answered {errors}")
        producer.close()
        before = broker.rss_kib() / 1024
        print(f"produced; RSS {before:.0f} MiB", file=sys.stderr)
        sockets = []
        for i in range(args.connections):
            sock = socket.create_connection((broker.host, broker.port))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # as a consumer that stopped reading
            sock.sendall(fetch_frame("owed", i * PER_FETCH, args.partitions, i + 1))
            sockets.append(sock)
        samples = []
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            samples.append(broker.rss_kib() / 1024)
            time.sleep(0.5)
        descriptors = len(os.listdir(f"/proc/{broker.pid}/fd"))
        owed = 0
        for sock in sockets:  # only now their answers' size prefixes: what each answer holds, in memory or not
            sock.settimeout(30)
            owed += struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
            sock.close()
    return {"before": before, "peak": max(samples), "last": samples[-1], "descriptors": descriptors,
            "owed_mib": owed / (1 << 20)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=500)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--connections", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    result = run(args)
    print(f"{args.connections} connections × one Fetch of {PER_FETCH} partitions read nothing "
          f"({args.partitions} partitions × {args.batches} batches of 10 × 100 B)\n\n"
          "| RSS after producing, MiB | peak RSS over the fetches, MiB | RSS at the end, MiB | open descriptors | "
          "answers owed, MiB |\n|---:|---:|---:|---:|---:|\n"
          f"| {result['before']:.0f} | {result['peak']:.0f} | {result['last']:.0f} | {result['descriptors']} | "
          f"{result['owed_mib']:.0f} |")
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} before, "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
