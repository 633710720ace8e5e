"""Issue 35, goal 6: a topic of 10,000 partitions consumed by 100 members of one group, the time from the first
subscribe to a stable assignment, with the classic protocol and with KIP-848, kemu against Kafka.

    python3 -m benchmarks.group_assignment                       # kemu,kafka x classic,consumer, 10,000 x 100
    python3 -m benchmarks.group_assignment --partitions 1000 --members 10 --brokers kemu --repeats 1
    python3 -m benchmarks.group_assignment --protocols consumer --json groups.json

Every member is a confluent-kafka consumer of one group subscribing to the topic; the members are spread over
`--workers` processes (each polls its members round robin, `poll(0)`, and reports every assignment change
with the time its rebalance callback ran). The assignors are each protocol's defaults: classic members use
librdkafka's `range,roundrobin` (so range, eager: Java's default list [range, cooperative-sticky] settles on
range too; `--classic-assignor cooperative-sticky` for the incremental one), KIP-848 members leave
`group.remote.assignor` unset, so the broker's default runs (`uniform` in Kafka 4.3 and in kemu).

The assignment is stable when every partition is held by exactly one member, every member holds some, the
members' counts differ by at most one (what range, roundrobin, cooperative-sticky and uniform all give one
topic subscribed by every member) and nothing changed for `--settle-s`; the time to stable is the moment of
the last change, not that plus the settle window. Beside it: the rebalance callbacks members saw, the
broker's CPU seconds (every thread's, schedstat) from the first subscribe to that last change, its RSS then,
and the broker's own view of the group (DescribeGroups) once stable.

The classic protocol's `group.initial.rebalance.delay.ms` (Kafka's default 3000; Kafka's shipped
server.properties, which the reference Kafka of benchmarks/peers.py follows, 0; `kemu serve` Kafka's default
3000) is set to `--initial-delay-ms` (default 0) on kemu and Kafka alike, and printed beside the figures.
Each (broker, protocol) gets a fresh broker and topic; its repeats are new groups on it (the first of
Kafka's runs a cold JVM). Markdown to stdout, progress to stderr, `--json PATH` for everything.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.brokers import BrokerDefinition, RunningBroker, on_cpu_seconds

TOPIC = "group-assignment"
PROTOCOLS = ("classic", "consumer")
DEFAULT_BROKERS = ("kemu", "kafka")
# Brokers whose command takes Kafka's `--override NAME=VALUE` (kafka.Kafka's and `kemu serve`'s).
OVERRIDABLE = ("kemu", "kafka")
TOPIC_TIMEOUT_S = 300.0
CREATE_STEP = 5000


# --- the stability tracker --------------------------------------------------------------------------------


class StabilityTracker:
    """Each member's partitions as its callbacks last left them, and whether they make a stable assignment."""

    def __init__(self, partitions: int, members: int, settle_s: float, *, balanced: bool = True) -> None:
        self.partitions, self.members, self.settle_s, self.balanced = partitions, members, settle_s, balanced
        self.owned: dict[int, frozenset[int]] = {}
        self.last_change: float | None = None
        self.changes = 0

    def update(self, member: int, at: float, partitions: Iterable[int]) -> bool:
        """Record `member`'s whole assignment as of `at`; whether it differs from what it held before."""
        now_owned = frozenset(partitions)
        if self.owned.get(member, frozenset()) == now_owned:
            return False
        self.owned[member] = now_owned
        self.changes += 1
        # Events from several processes arrive out of order: the last change is the latest time seen.
        self.last_change = at if self.last_change is None else max(self.last_change, at)
        return True

    def problems(self) -> list[str]:
        """Why the assignment is not a complete one now (empty: every criterion holds)."""
        found: list[str] = []
        holders: dict[int, int] = {}
        for parts in self.owned.values():
            for partition in parts:
                holders[partition] = holders.get(partition, 0) + 1
        shared = sum(1 for count in holders.values() if count > 1)
        if shared:
            found.append(f"{shared} partitions held by more than one member")
        missing = sum(1 for partition in range(self.partitions) if partition not in holders)
        if missing:
            found.append(f"{missing} partitions held by no member")
        unknown = sorted(p for p in holders if not 0 <= p < self.partitions)
        if unknown:
            found.append(f"{len(unknown)} partitions beyond the topic's (first {unknown[0]})")
        counts = [len(self.owned.get(member, frozenset())) for member in range(self.members)]
        idle = sum(1 for count in counts if count == 0)
        if idle and self.members <= self.partitions:
            found.append(f"{idle} members hold nothing")
        if self.balanced and counts and max(counts) - min(counts) > 1:
            found.append(f"unbalanced: {min(counts)} to {max(counts)} partitions per member")
        return found

    def stable_at(self, now: float) -> float | None:
        """The time of the last change if the assignment is complete and has not changed for the settle window."""
        if self.last_change is None or now - self.last_change < self.settle_s:
            return None
        return self.last_change if not self.problems() else None


# --- the members: worker processes ------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerSpec:
    bootstrap: str
    group: str
    topic: str
    first_member: int
    members: int
    protocol: str
    classic_assignor: str | None
    incremental: bool


def consumer_config(spec: WorkerSpec, member: int) -> dict[str, Any]:
    config: dict[str, Any] = {"bootstrap.servers": spec.bootstrap, "group.id": spec.group,
                              "client.id": f"member-{member}", "enable.auto.commit": False, "log_level": 3,
                              "group.protocol": spec.protocol}
    if spec.protocol == "classic" and spec.classic_assignor is not None:
        config["partition.assignment.strategy"] = spec.classic_assignor
    return config


def is_incremental(protocol: str, classic_assignor: str | None) -> bool:
    """Whether members get and give up partitions a few at a time (KIP-848, cooperative-sticky) or all at once."""
    return protocol == "consumer" or (classic_assignor or "").split(",")[0].strip() == "cooperative-sticky"


def _run_members(spec: WorkerSpec, events: Any, go: Any, stop: Any) -> None:
    """A worker process: make its members, subscribe them when `go` is set, poll each on a thread of its own
    until `stop`, and put ("subscribed", t), ("change", member, t, kind, partitions) and at the end ("done",
    stats) on `events`. A thread per member, not one polling all in turn: a rebalance callback waits for its
    client's own threads (assign() is handed to librdkafka's main thread, busy with a 10,000-partition
    Metadata), and in turn it would hold every later member's callback back, spreading one generation's
    assignments over seconds that are the worker's, not the broker's."""
    import threading

    from confluent_kafka import Consumer, TopicPartition

    longest_callback = [0.0]
    errors: list[str] = []

    def changed(member: int, consumer: Consumer, kind: str, partitions: list[TopicPartition]) -> None:
        at = time.monotonic()
        try:
            if kind == "assign":
                (consumer.incremental_assign if spec.incremental else consumer.assign)(partitions)
            elif spec.incremental:
                consumer.incremental_unassign(partitions)
            else:
                consumer.unassign()
            held = [tp.partition for tp in consumer.assignment() if tp.topic == spec.topic]
        except Exception as error:  # noqa: BLE001 -- librdkafka raises KafkaError itself, e.g. while closing
            if not stop.is_set():
                errors.append(f"member {member} {kind}: {error}")
            return
        events.put(("change", member, at, kind, held))
        longest_callback[0] = max(longest_callback[0], time.monotonic() - at)

    def run(member: int, consumer: Consumer) -> None:
        consumer.subscribe([spec.topic],
                           on_assign=lambda c, parts: changed(member, c, "assign", parts),
                           on_revoke=lambda c, parts: changed(member, c, "revoke", parts),
                           on_lost=lambda c, parts: changed(member, c, "lost", parts))
        while not stop.is_set():
            message = consumer.poll(0.1)
            if message is not None and message.error() is not None and len(errors) < 10:
                errors.append(f"member {member}: {message.error()}")
        try:
            consumer.close()
        except Exception as error:  # noqa: BLE001 -- as above: reported, not fatal
            errors.append(f"member {member} close: {error}")

    indices = range(spec.first_member, spec.first_member + spec.members)
    consumers = {member: Consumer(consumer_config(spec, member)) for member in indices}
    threads = [threading.Thread(target=run, args=item, daemon=True) for item in consumers.items()]
    events.put(("ready",))
    go.wait()
    events.put(("subscribed", time.monotonic()))
    for thread in threads:
        thread.start()
    stop.wait()
    cpu = time.process_time()
    for thread in threads:
        thread.join(60)
    events.put(("done", {"longest_callback_s": longest_callback[0], "cpu_s": cpu, "errors": errors[:10]}))


# --- one run ----------------------------------------------------------------------------------------------


@dataclass
class RunResult:
    broker: str
    protocol: str
    partitions: int
    members: int
    stable_s: float | None  # first subscribe to the last assignment change; None: never stable
    assign_calls: int
    revoke_calls: int
    lost_calls: int
    most_assign_calls: int  # by any one member
    changes: int
    broker_cpu_s: float
    rss_mib: float
    load_average: float
    group_state: str
    described_members: int
    problems: list[str] = field(default_factory=list)
    workers: list[dict[str, Any]] = field(default_factory=list)
    # Every callback: seconds since the first subscribe, member, assign/revoke/lost, partitions held after it.
    timeline: list[tuple[float, int, str, int]] = field(default_factory=list)


class CpuSampler:
    """The broker's CPU seconds over time, so the CPU up to a moment seen only afterwards can be read."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[tuple[float, float]] = []

    def sample(self) -> None:
        self.samples.append((time.monotonic(), on_cpu_seconds(self.pid)))

    def at(self, moment: float) -> float:
        """CPU seconds at the first sample at or after `moment` (the last sample if none is)."""
        for taken, cpu in self.samples:
            if taken >= moment:
                return cpu
        return self.samples[-1][1]


def run_once(broker: RunningBroker, protocol: str, args: argparse.Namespace, group: str,
             progress: Callable[[str], None]) -> RunResult:
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    events: Any = context.Queue()
    go, stop = context.Event(), context.Event()
    incremental = is_incremental(protocol, args.classic_assignor)
    shares = split(args.members, args.workers)
    workers = []
    first = 0
    for share in shares:
        spec = WorkerSpec(broker.bootstrap, group, TOPIC, first, share, protocol, args.classic_assignor, incremental)
        workers.append(context.Process(target=_run_members, args=(spec, events, go, stop), daemon=True))
        first += share
    for worker in workers:
        worker.start()
    tracker = StabilityTracker(args.partitions, args.members, args.settle_s)
    calls: dict[str, dict[int, int]] = {"assign": {}, "revoke": {}, "lost": {}}
    sampler = CpuSampler(broker.pid)
    stats: list[dict[str, Any]] = []
    stable: float | None = None
    problems: list[str] = []
    timeline: list[tuple[float, int, str, int]] = []
    try:
        _wait_for(events, "ready", len(workers), time.monotonic() + 120)
        sampler.sample()
        go.set()
        subscribed: list[float] = []
        deadline = time.monotonic() + args.timeout
        next_sample = next_report = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= next_sample:
                sampler.sample()
                next_sample = now + 0.1
            if subscribed and now >= next_report:
                progress(f"  {now - min(subscribed):6.1f} s: {tracker.changes} changes; "
                         + ("; ".join(tracker.problems()) or "complete, settling"))
                next_report = now + 5
            if (found := tracker.stable_at(now)) is not None:
                stable = found
                break
            if now > deadline:
                problems = tracker.problems() or ["still changing"]
                break
            try:
                event = events.get(timeout=0.05)
            except queue.Empty:
                continue
            if event[0] == "subscribed":
                subscribed.append(event[1])
            elif event[0] == "change":
                _, member, at, kind, held = event
                calls[kind][member] = calls[kind].get(member, 0) + 1
                tracker.update(member, at, held)
                timeline.append((at, member, kind, len(held)))
        start = min(subscribed) if subscribed else sampler.samples[0][0]
        cpu = sampler.at(stable if stable is not None else time.monotonic()) - sampler.samples[0][1]
        rss = broker.rss_kib() / 1024
        state, described = describe_group(broker.bootstrap, group)
        load = os.getloadavg()[0]
    finally:
        stop.set()
        stats = _collect_done(events, len(workers), time.monotonic() + 120)
        for worker in workers:
            worker.join(10)
            if worker.is_alive():
                worker.kill()
    return RunResult(
        broker=broker.definition.label, protocol=protocol, partitions=args.partitions, members=args.members,
        stable_s=None if stable is None else stable - start,
        assign_calls=sum(calls["assign"].values()), revoke_calls=sum(calls["revoke"].values()),
        lost_calls=sum(calls["lost"].values()), most_assign_calls=max(calls["assign"].values(), default=0),
        changes=tracker.changes, broker_cpu_s=cpu, rss_mib=rss, load_average=load, group_state=state,
        described_members=described, problems=problems, workers=stats,
        timeline=[(round(at - start, 4), member, kind, held) for at, member, kind, held in sorted(timeline)])


def split(members: int, workers: int) -> list[int]:
    """`members` over at most `workers` processes, as evenly as it goes, none empty."""
    count = max(1, min(workers, members))
    base, extra = divmod(members, count)
    return [base + (1 if index < extra else 0) for index in range(count)]


def _wait_for(events: Any, kind: str, count: int, deadline: float) -> None:
    seen = 0
    while seen < count:
        try:
            event = events.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise RuntimeError(f"{seen} of {count} workers said {kind!r} in time") from None
        if event[0] == kind:
            seen += 1


def _collect_done(events: Any, count: int, deadline: float) -> list[dict[str, Any]]:
    done: list[dict[str, Any]] = []
    while len(done) < count and time.monotonic() < deadline:
        try:
            event = events.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        if event[0] == "done":
            done.append(event[1])
    return done


def describe_group(bootstrap: str, group: str) -> tuple[str, int]:
    """The broker's own view once the members are stable: the group's state and how many members it has."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    try:
        described = admin.describe_consumer_groups([group], request_timeout=30)[group].result(timeout=40)
    except Exception as error:  # noqa: BLE001 -- reported beside the figure, not a reason to lose it
        return f"error: {error}", 0
    return str(described.state.name), len(described.members)


# --- brokers and the report -------------------------------------------------------------------------------


def with_initial_delay(definition: BrokerDefinition, delay_ms: int) -> BrokerDefinition:
    """The broker started with group.initial.rebalance.delay.ms set (kemu and Kafka; another broker as is)."""
    if definition.key not in OVERRIDABLE or definition.unavailable is not None:
        return definition
    made = definition.plan

    def plan() -> Any:
        launch = made()
        return replace(launch, command=[*launch.command, "--override", f"group.initial.rebalance.delay.ms={delay_ms}"])

    return replace(definition, plan=plan)


def measure(definition: BrokerDefinition, protocol: str, args: argparse.Namespace,
            progress: Callable[[str], None]) -> list[RunResult]:
    results: list[RunResult] = []
    with RunningBroker(definition) as broker:
        broker.start(timeout=120)
        created = time.monotonic()
        create_topic(broker, TOPIC, args.partitions)
        progress(f"{definition.label}: topic of {args.partitions} partitions in {time.monotonic() - created:.1f} s")
        with profiled(broker, args.profile, protocol, progress):
            for repeat in range(args.repeats):
                group = f"assignment-{protocol}-{repeat}-{time.monotonic_ns()}"
                progress(f"{definition.label} {protocol} run {repeat + 1}: {args.members} members")
                result = run_once(broker, protocol, args, group, progress)
                progress(f"{definition.label} {protocol} run {repeat + 1}: " + describe(result))
                results.append(result)
    return results


@contextlib.contextmanager
def profiled(broker: RunningBroker, path: str | None, protocol: str,
             progress: Callable[[str], None]) -> Iterator[None]:
    """py-spy on kemu over the runs (not the topic's creation): `PATH` with `.classic`/`.consumer` before
    its suffix, and the top functions by self time to stderr."""
    if path is None or broker.definition.key != "kemu":
        yield
        return
    from benchmarks.profiling import Profile, format_top

    target = Path(path)
    target = target.with_name(f"{target.stem}.{protocol}{target.suffix}")
    with Profile(broker.pid, target):
        yield
    progress(format_top(f"kemu {protocol}", target.read_text(encoding="utf-8")))


def create_topic(broker: RunningBroker, name: str, partitions: int, step: int = CREATE_STEP) -> None:
    """The topic made `step` partitions at a time: Kafka's controller refuses a request of more than 10,000
    records (a topic of 10,000 partitions is 10,001: POLICY_VIOLATION, "Unable to perform excessively large
    batch operation"), so it is created smaller and grown with CreatePartitions, on every broker alike."""
    broker.create_topic(name, min(partitions, step), timeout=TOPIC_TIMEOUT_S)
    if partitions <= step:
        return
    from confluent_kafka.admin import AdminClient, NewPartitions  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 3})
    for total in range(2 * step, partitions + step, step):
        count = min(total, partitions)
        admin.create_partitions([NewPartitions(name, count)], request_timeout=TOPIC_TIMEOUT_S)[name].result(
            TOPIC_TIMEOUT_S)
    deadline = time.monotonic() + TOPIC_TIMEOUT_S
    while time.monotonic() < deadline:
        topic = admin.list_topics(name, timeout=30).topics.get(name)
        if topic is not None and topic.error is None and len(topic.partitions) == partitions and all(
                p.error is None and p.leader >= 0 for p in topic.partitions.values()):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{broker.definition.label}: {name} has no leader for each of {partitions} partitions")


def describe(result: RunResult) -> str:
    if result.stable_s is None:
        return "never stable: " + "; ".join(result.problems)
    return (f"stable at {result.stable_s:.2f} s, {result.changes} changes, {result.assign_calls} assign / "
            f"{result.revoke_calls} revoke callbacks, broker CPU {result.broker_cpu_s:.2f} s, "
            f"RSS {result.rss_mib:.0f} MiB, group {result.group_state} with {result.described_members} members; "
            "workers' longest callback " + ", ".join(f"{w['longest_callback_s'] * 1000:.0f}" for w in result.workers)
            + " ms, CPU " + ", ".join(f"{w['cpu_s']:.1f}" for w in result.workers) + " s"
            + "".join(f"; errors {w['errors']}" for w in result.workers if w["errors"]))


def spread(values: Sequence[float], digits: int = 2) -> str:
    """`median (min–max)` of the runs' figures."""
    if not values:
        return "n/a"
    median = statistics.median(values)
    if len(values) == 1:
        return f"{median:.{digits}f}"
    return f"{median:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def table(rows: Sequence[tuple[str, str, list[RunResult] | str]], delay: str) -> str:
    lines = ["| broker | protocol | initial delay ms | time to stable s | runs s | assign / revoke callbacks | "
             "assignment changes | most rounds of a member | broker CPU s | RSS MiB | load |",
             "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for broker, protocol, results in rows:
        delay_cell = delay if protocol == "classic" else "—"
        if isinstance(results, str):
            lines.append(f"| {broker} | {protocol} | {delay_cell} | n/a: {results} | | | | | | | |")
            continue
        stable = [r.stable_s for r in results if r.stable_s is not None]
        runs = ", ".join("never" if r.stable_s is None else f"{r.stable_s:.2f}" for r in results)
        lines.append(
            f"| {broker} | {protocol} | {delay_cell} | {spread(stable)} | {runs} | "
            f"{spread([r.assign_calls for r in results], 0)} / {spread([r.revoke_calls for r in results], 0)} | "
            f"{spread([r.changes for r in results], 0)} | {spread([r.most_assign_calls for r in results], 0)} | "
            f"{spread([r.broker_cpu_s for r in results])} | {spread([r.rss_mib for r in results], 0)} | "
            f"{spread([r.load_average for r in results])} |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.group_assignment",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--brokers", default=",".join(DEFAULT_BROKERS), help="kemu,kafka (and kfake)")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS), help="classic,consumer")
    parser.add_argument("--partitions", type=positive, default=10_000)
    parser.add_argument("--members", type=positive, default=100)
    parser.add_argument("--workers", type=positive, default=4, help="processes the members are spread over")
    parser.add_argument("--repeats", type=positive, default=2, help="runs (new groups) per broker and protocol")
    parser.add_argument("--settle-s", type=float, default=2.0, help="no change for this long: stable")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a run may take to become stable")
    parser.add_argument("--initial-delay-ms", type=int, default=0,
                        help="group.initial.rebalance.delay.ms on kemu and Kafka (Kafka's shipped properties: 0)")
    parser.add_argument("--classic-assignor", default=None,
                        help="classic members' partition.assignment.strategy (default librdkafka's range,roundrobin)")
    parser.add_argument("--json", default=None, metavar="PATH")
    parser.add_argument("--profile", default=None, metavar="PATH", help="py-spy of kemu over the runs")
    return parser


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive count")
    return value


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.brokers = [key.strip() for key in args.brokers.split(",") if key.strip()]
    args.protocols = [name.strip() for name in args.protocols.split(",") if name.strip()]
    unknown = [name for name in args.protocols if name not in PROTOCOLS]
    if unknown:
        parser.error(f"unknown protocols {unknown}: choose from {','.join(PROTOCOLS)}")
    if args.settle_s <= 0:
        parser.error("--settle-s must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from benchmarks.peers import definitions

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    progress(f"load average before: {os.getloadavg()[0]:.2f}")
    rows: list[tuple[str, str, list[RunResult] | str]] = []
    for definition in definitions(args.brokers, progress=progress):
        definition = with_initial_delay(definition, args.initial_delay_ms)
        for protocol in args.protocols:
            if definition.unavailable is not None:
                rows.append((definition.label, protocol, definition.unavailable))
                continue
            try:
                rows.append((definition.label, protocol, measure(definition, protocol, args, progress)))
            except Exception as error:  # noqa: BLE001 -- one broker's failure is its row's, not the report's
                progress(f"{definition.label} {protocol}: {error}")
                rows.append((definition.label, protocol, str(error).splitlines()[0]))
    progress(f"load average after: {os.getloadavg()[0]:.2f}")
    assignor = args.classic_assignor or "range,roundrobin (librdkafka's default: range, eager)"
    print(table(rows, str(args.initial_delay_ms)))
    print(f"\n{args.partitions} partitions, {args.members} members over {len(split(args.members, args.workers))} "
          f"processes, settle window {args.settle_s:g} s. Classic: {assignor}; KIP-848: the broker's default "
          "assignor (uniform). Initial delay: group.initial.rebalance.delay.ms (classic groups only).")
    if args.json:
        document = {"arguments": {k: v for k, v in vars(args).items() if k not in ("json", "profile")},
                    "rows": [{"broker": b, "protocol": p,
                              "runs": r if isinstance(r, str) else [asdict(x) for x in r]} for b, p, r in rows]}
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(document, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
