"""The load benchmark with its consumers in consumer groups (`python3 -m benchmarks.load --groups N`, issue 35,
goal 5): producers as in benchmarks/load.py, one topic of `producers` partitions, producer i writing
partition i; the consumers split into N groups of consumers/N members, each member subscribing to the topic,
so every group reads every record and each member holds partitions/members of them.

End-to-end latency is produce() to a member of each group holding the record: each value carries the
producer's `time.monotonic_ns()` and the member reads the same clock on arrival. On Linux that clock
(CLOCK_MONOTONIC) is one clock for the whole machine, so the stamp holds across the worker processes and a
partition's producer and its members need not share one. Each record is seen once per group: a run of
10 groups measures 10 latencies per record, so latencies are counted in histograms of 1 % wide buckets,
not kept (18 million floats at the issue35 preset).

Before the producers start, the benchmark waits until every group is stable: each member has been given
partitions, and in each group those are disjoint and cover the topic, held for `_SETTLE_S`. Every member
reports its assignments and revocations (librdkafka's rebalance callbacks) on a queue; the time from the
first subscription to the first stable moment is reported, as is every rebalance during the measured
window (per group: the most assignments one member received in it).

After the producers' window each worker flushes its producers and says so; once all have, every member
reads until its position reaches the high watermark of each partition it holds, then keeps polling
(staying in its group: a member that left early would rebalance the others, which would read its
partitions again from the last commit) until every member has drained or `_DRAIN_S` passed.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.brokers import BrokerDefinition, RunningBroker
from benchmarks.load import collect, send_at_rate

TOPIC = "load-groups-bench"
_SETTLE_S = 2.0  # a stable assignment must hold this long: a member still joining rebalances the others
_STABLE_TIMEOUT_S = 180.0
_DRAIN_S = 60.0
_FLUSH_S = 60.0  # how long a producer's last flush() may take
_CLOSE_S = 30.0  # how long the members may take to close once told to
_BUCKET_BASE = 1.01  # histogram buckets 1 % wide: a percentile is off by under 1 %
_BUCKET_FLOOR_S = 1e-6


def bucket(seconds: float) -> int:
    """The histogram bucket of a latency: bucket b holds [floor * base**b, floor * base**(b + 1))."""
    if seconds <= _BUCKET_FLOOR_S:
        return 0
    return int(math.log(seconds / _BUCKET_FLOOR_S, _BUCKET_BASE))


def bucket_upper_s(index: int) -> float:
    return _BUCKET_FLOOR_S * _BUCKET_BASE ** (index + 1)


def merge(histograms: Iterable[Mapping[int, int]]) -> dict[int, int]:
    merged: dict[int, int] = {}
    for histogram in histograms:
        for index, count in list(histogram.items()):  # one step under the GIL: a late callback may add
            merged[index] = merged.get(index, 0) + count
    return merged


def histogram_percentile_ms(histogram: Mapping[int, int], fraction: float) -> float:
    """Nearest-rank percentile of a histogram, in ms: the upper bound of the bucket holding that rank (never
    below the exact figure, at most 1 % above it); nan when empty."""
    total = sum(histogram.values())
    if total == 0:
        return float("nan")
    rank = max(1, math.ceil(total * fraction))
    seen = 0
    for index in sorted(histogram):
        seen += histogram[index]
        if seen >= rank:
            return 1000 * bucket_upper_s(index)
    raise AssertionError("unreachable: the ranks add up to the total")


# An event a member or a worker puts on the shared queue: (kind, group, member, partitions, monotonic s).
# kinds: subscribed, assigned, revoked, drained (a member); produced (a worker, group = its index).
Event = tuple[str, int, int, tuple[int, ...], float]


@dataclass
class GroupWatch:
    """What the members have reported: each one's current partitions, and when each assignment came."""

    groups: int
    members: int
    partitions: int
    held: dict[tuple[int, int], frozenset[int]] = field(default_factory=dict)
    assigned_at: dict[tuple[int, int], list[float]] = field(default_factory=dict)
    first_subscribed: float = float("inf")
    drained: set[tuple[int, int]] = field(default_factory=set)
    produced: set[int] = field(default_factory=set)

    def apply(self, event: Event) -> None:
        kind, group, member, partitions, at = event
        key = (group, member)
        if kind == "subscribed":
            self.first_subscribed = min(self.first_subscribed, at)
        elif kind == "assigned":
            # Eager assignment: the callback names the member's whole new set.
            self.held[key] = frozenset(partitions)
            self.assigned_at.setdefault(key, []).append(at)
        elif kind == "revoked":
            self.held[key] = self.held.get(key, frozenset()) - frozenset(partitions)
        elif kind == "drained":
            self.drained.add(key)
        elif kind == "produced":
            self.produced.add(group)

    def stable(self) -> bool:
        """Every member of every group holds partitions, and each group's are disjoint and cover the topic."""
        everything = set(range(self.partitions))
        for group in range(self.groups):
            sets = [self.held.get((group, member), frozenset()) for member in range(self.members)]
            if any(not held for held in sets):
                return False
            if sum(len(held) for held in sets) != self.partitions or set().union(*sets) != everything:
                return False
        return True

    def rebalances(self, start: float, end: float) -> list[int]:
        """Per group, the rebalances between `start` and `end`: the most assignments one member got then
        (each rebalance gives every member of its group one)."""
        return [max((sum(1 for at in self.assigned_at.get((group, member), []) if start <= at <= end)
                     for member in range(self.members)), default=0)
                for group in range(self.groups)]


@dataclass
class GroupShare:
    """What one worker process runs, and what its clients saw."""

    producers: list[int]
    members: list[tuple[int, int]]  # (group, member)
    delivered: int = 0
    produce_histogram: dict[int, int] = field(default_factory=dict)
    e2e_histogram: dict[int, int] = field(default_factory=dict)
    consumed_per_group: dict[int, int] = field(default_factory=dict)
    delivery_errors: int = 0
    consumer_errors: int = 0
    setup_errors: int = 0
    cpu_seconds: float = 0.0  # the worker process's CPU time while its producers ran


@dataclass
class GroupLoadResult:
    broker: str
    producers: int
    groups: int
    members: int  # per group
    offered_per_s: float
    delivered_per_s: float
    delivered: int
    p50_ms: float
    p99_ms: float
    e2e_p50_ms: float
    e2e_p99_ms: float
    consumed_per_group: list[int]
    delivery_errors: int
    consumer_errors: int
    rebalances: list[int]  # per group, during the measured window
    stable_s: float  # first subscription to every group stable
    rss_mib: float  # the broker's peak RSS, sampled every 0.5 s from stability to the end of the drain
    broker_cpu_cores: float
    clients_cpu_cores: float
    broker_wait_cores: float
    setup_errors: int = 0  # librdkafka's errors before the window (the producers' and members' start)


def shares(producers: int, groups: int, members: int, processes: int) -> list[GroupShare]:
    """Producer i to worker i mod processes; member m of group g, the (g * members + m)-th consumer, likewise,
    so each worker holds a slice of every group."""
    every = [(g, m) for g in range(groups) for m in range(members)]
    return [GroupShare([i for i in range(producers) if i % processes == worker],
                       [key for index, key in enumerate(every) if index % processes == worker])
            for worker in range(processes)]


def measure_group_load(definition: BrokerDefinition, *, producers: int, consumers: int, groups: int, rate: int,
                       seconds: float, processes: int, own_session: bool = True,
                       progress: Any = None) -> GroupLoadResult:
    import multiprocessing

    if groups <= 0 or consumers % groups or not 0 < consumers // groups <= producers:
        raise ValueError(f"{consumers} consumers do not make {groups} groups of 1 to {producers} members")
    members = consumers // groups
    say = progress or (lambda line: None)
    broker = RunningBroker(definition, own_session=own_session)
    broker.start()
    try:
        broker.create_topic(TOPIC, producers)
        context = multiprocessing.get_context("spawn")
        go, drain, finish = context.Event(), context.Event(), context.Event()
        events, results = context.Queue(), context.Queue()
        workers = [context.Process(target=_run_group_share, daemon=True,
                                   args=(broker.bootstrap, share, worker, rate, seconds, go, drain, finish,
                                         events, results))
                   for worker, share in enumerate(shares(producers, groups, members, processes))]
        for process in workers:
            process.start()
        watch = GroupWatch(groups, members, producers)
        stable_at = _wait_stable(watch, events, workers)
        say(f"{definition.label}: groups stable {stable_at - watch.first_subscribed:.1f} s after the first "
            f"subscription")
        peak_rss = broker.rss_kib()
        cpu_before, wait_before = broker.cpu_seconds(), broker.runqueue_wait_seconds()
        go.set()
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            _pump(watch, events, 0.5)
            peak_rss = max(peak_rss, broker.rss_kib())
        window_end = time.monotonic()
        broker_cpu_cores = (broker.cpu_seconds() - cpu_before) / (window_end - started)
        broker_wait_cores = (broker.runqueue_wait_seconds() - wait_before) / (window_end - started)
        deadline = time.monotonic() + _FLUSH_S + 30
        while len(watch.produced) < processes and time.monotonic() < deadline:
            _pump(watch, events, 0.5)
            peak_rss = max(peak_rss, broker.rss_kib())
        drain.set()
        deadline = time.monotonic() + _DRAIN_S
        while len(watch.drained) < consumers and time.monotonic() < deadline:
            _pump(watch, events, 0.5)
            peak_rss = max(peak_rss, broker.rss_kib())
        say(f"{definition.label}: {len(watch.drained)} of {consumers} members drained")
        finish.set()
        # A worker blocks on putting its last events if nobody takes them.
        collected: list[GroupShare] = collect(results, workers, time.perf_counter() + _CLOSE_S + 60,
                                              lambda: _pump(watch, events, 0.0))
        for process in workers:
            process.join(10)
        produced = merge(share.produce_histogram for share in collected)
        seen = merge(share.e2e_histogram for share in collected)
        delivered = sum(share.delivered for share in collected)
        per_group = merge(share.consumed_per_group for share in collected)
        return GroupLoadResult(
            broker=definition.label, producers=producers, groups=groups, members=members,
            offered_per_s=producers * rate, delivered_per_s=delivered / seconds, delivered=delivered,
            p50_ms=histogram_percentile_ms(produced, 0.5), p99_ms=histogram_percentile_ms(produced, 0.99),
            e2e_p50_ms=histogram_percentile_ms(seen, 0.5), e2e_p99_ms=histogram_percentile_ms(seen, 0.99),
            consumed_per_group=[per_group.get(group, 0) for group in range(groups)],
            delivery_errors=sum(share.delivery_errors for share in collected),
            consumer_errors=sum(share.consumer_errors for share in collected),
            rebalances=watch.rebalances(started, window_end), stable_s=stable_at - watch.first_subscribed,
            rss_mib=peak_rss / 1024, broker_cpu_cores=broker_cpu_cores,
            clients_cpu_cores=sum(share.cpu_seconds for share in collected) / seconds,
            broker_wait_cores=broker_wait_cores, setup_errors=sum(share.setup_errors for share in collected))
    finally:
        broker.stop()


def _pump(watch: GroupWatch, events: Any, wait_s: float) -> None:
    """Apply every event that arrives within `wait_s`."""
    deadline = time.monotonic() + wait_s
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            watch.apply(events.get(timeout=remaining))
        except queue.Empty:
            return


def _wait_stable(watch: GroupWatch, events: Any, workers: Sequence[Any]) -> float:
    """The first moment every group was stable, once it has stayed so for `_SETTLE_S`."""
    deadline = time.monotonic() + _STABLE_TIMEOUT_S
    stable_since: float | None = None
    while time.monotonic() < deadline:
        _pump(watch, events, 0.2)
        if not watch.stable():
            stable_since = None
        elif stable_since is None:
            stable_since = time.monotonic()
        elif time.monotonic() - stable_since >= _SETTLE_S:
            return stable_since
        dead = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
        if dead:
            raise RuntimeError(f"load workers died (exit codes {dead}) before the groups were stable")
    held = {group: sum(1 for (g, _), p in watch.held.items() if g == group and p) for group in range(watch.groups)}
    raise RuntimeError(f"the groups were not stable within {_STABLE_TIMEOUT_S:.0f} s (members holding partitions "
                       f"per group: {held})")


def _run_group_share(bootstrap: str, share: GroupShare, worker: int, rate: int, seconds: float, go: Any,
                     drain: Any, finish: Any, events: Any, results: Any) -> None:
    """A worker process: its producers and group members on threads of their own; `share` back on `results`."""
    import faulthandler

    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

    produce_histograms: dict[int, dict[int, int]] = {index: {} for index in share.producers}
    e2e_histograms: dict[tuple[int, int], dict[int, int]] = {key: {} for key in share.members}
    consumed: dict[tuple[int, int], int] = {key: 0 for key in share.members}
    delivery_errors = {index: 0 for index in share.producers}
    # librdkafka's errors (error_cb) before the window: connections timed out while every client starts
    setup_errors: dict[Any, int] = {**{index: 0 for index in share.producers}, **{key: 0 for key in share.members}}
    consumer_errors = {key: 0 for key in share.members}

    def produce(index: int) -> None:
        histogram = produce_histograms[index]

        def delivered(error: Any, message: Any) -> None:
            if error is None:
                slot = bucket(message.latency())
                histogram[slot] = histogram.get(slot, 0) + 1
            else:
                delivery_errors[index] += 1

        def failed(error: Any) -> None:
            (delivery_errors if go.is_set() else setup_errors)[index] += 1

        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "log_level": 3,
                             "error_cb": failed})
        # A thousand clients connecting at once can time out here; the window has not started, so the
        # producer tries again (each failure counted apart) rather than leaving its partition unwritten.
        while not go.is_set():
            try:
                producer.list_topics(TOPIC, timeout=30.0)
                break
            except KafkaException:
                setup_errors[index] += 1
        go.wait()
        if send_at_rate(producer, TOPIC, index, rate, seconds, delivered, time.monotonic_ns) > 0:
            delivery_errors[index] += 1

    def consume(group: int, member: int) -> None:
        key = (group, member)
        histogram = e2e_histograms[key]

        def failed(error: Any) -> None:
            (consumer_errors if go.is_set() else setup_errors)[key] += 1

        def assigned(_: Any, partitions: list[Any]) -> None:
            events.put(("assigned", group, member, tuple(p.partition for p in partitions), time.monotonic()))

        def revoked(_: Any, partitions: list[Any]) -> None:
            events.put(("revoked", group, member, tuple(p.partition for p in partitions), time.monotonic()))

        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"load-group-{group}",
                             "auto.offset.reset": "earliest", "log_level": 3, "error_cb": failed})
        consumer.subscribe([TOPIC], on_assign=assigned, on_revoke=revoked)
        events.put(("subscribed", group, member, (), time.monotonic()))
        next_check = 0.0
        drained = False
        try:
            while not finish.is_set():
                # consume() waits its whole timeout unless the batch fills, which would add up to that much
                # to each record's latency: take what is queued at once, else wait in poll() for the next.
                messages = consumer.consume(1000, 0)
                if not messages:
                    message = consumer.poll(0.1)
                    messages = [] if message is None else [message]
                now_ns = time.monotonic_ns()
                for message in messages:
                    if message.error() is not None:
                        consumer_errors[key] += 1
                        continue
                    slot = bucket((now_ns - int.from_bytes((message.value() or b"")[:8], "big")) / 1e9)
                    histogram[slot] = histogram.get(slot, 0) + 1
                consumed[key] += sum(1 for message in messages if message.error() is None)
                if drain.is_set() and not drained and not messages and time.monotonic() >= next_check:
                    next_check = time.monotonic() + 1.0
                    if _caught_up(consumer, TopicPartition):
                        drained = True
                        events.put(("drained", group, member, (), time.monotonic()))
        finally:
            consumer.close()

    producer_threads = [threading.Thread(target=produce, args=(i,), daemon=True) for i in share.producers]
    consumer_threads = [threading.Thread(target=consume, args=key, daemon=True) for key in share.members]
    for thread in [*consumer_threads, *producer_threads]:
        thread.start()
    go.wait()
    # Every wait below ends by a deadline, so a client stuck in flush() or close() costs the run its own
    # figures, not every worker's: the share goes back with what the clients counted by then.
    faulthandler.dump_traceback_later(seconds + _FLUSH_S + 120 + _DRAIN_S + _CLOSE_S)
    cpu_at_go = time.process_time()
    _join_by(producer_threads, time.monotonic() + seconds + _FLUSH_S + 10)
    share.cpu_seconds = time.process_time() - cpu_at_go
    events.put(("produced", worker, 0, (), time.monotonic()))
    finish.wait()
    _join_by(consumer_threads, time.monotonic() + _CLOSE_S)
    share.delivered = sum(sum(h.values()) for h in produce_histograms.values())
    share.produce_histogram = merge(produce_histograms.values())
    share.e2e_histogram = merge(e2e_histograms.values())
    for (group, _), count in consumed.items():
        share.consumed_per_group[group] = share.consumed_per_group.get(group, 0) + count
    share.delivery_errors = sum(delivery_errors.values())
    share.consumer_errors = sum(consumer_errors.values())
    share.setup_errors = sum(setup_errors.values())
    faulthandler.cancel_dump_traceback_later()
    results.put(share)


def _join_by(threads: Sequence[threading.Thread], deadline: float) -> None:
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def _caught_up(consumer: Any, topic_partition: Any) -> bool:
    """Whether the member has read each partition it holds up to that partition's high watermark now."""
    assignment = consumer.assignment()
    if not assignment:
        return False
    from confluent_kafka import KafkaException

    for position in consumer.position(assignment):
        try:
            _, high = consumer.get_watermark_offsets(topic_partition(TOPIC, position.partition), timeout=5.0,
                                                     cached=False)
        except KafkaException:
            # The partition left the member while it asked (a rebalance), or the broker did not answer in
            # time: not known to be caught up, ask again on the next pass instead of ending the member.
            return False
        if high > 0 and position.offset < high:
            return False
    return True


def table(results: Sequence[GroupLoadResult]) -> str:
    lines = ["| broker | producers | groups × members | offered rec/s | delivered rec/s | produce p50 ms | "
             "produce p99 ms | end-to-end p50 ms | end-to-end p99 ms | consumed per group (min–max) / delivered | "
             "delivery errors | consumer errors | set-up errors | rebalances in window | groups stable s | "
             "peak RSS MiB | broker CPU cores | broker waiting for a CPU, cores | clients' CPU cores |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r.broker} | {r.producers} | {r.groups} × {r.members} | {r.offered_per_s:.0f} | "
                     f"{r.delivered_per_s:.0f} | {r.p50_ms:.1f} | {r.p99_ms:.1f} | {r.e2e_p50_ms:.1f} | "
                     f"{r.e2e_p99_ms:.1f} | {min(r.consumed_per_group)}–{max(r.consumed_per_group)} / "
                     f"{r.delivered} | {r.delivery_errors} | {r.consumer_errors} | {r.setup_errors} | "
                     f"{sum(r.rebalances)} | "
                     f"{r.stable_s:.1f} | {r.rss_mib:.0f} | {r.broker_cpu_cores:.2f} | {r.broker_wait_cores:.2f} | "
                     f"{r.clients_cpu_cores:.2f} |")
    return "\n".join(lines)


@dataclass(frozen=True)
class Targets:
    """Issue 35, goal 5: what a run must show."""

    p99_ms: float = 250.0
    rss_mib: float = 300.0


def misses(result: GroupLoadResult, targets: Targets = Targets()) -> list[str]:
    """The targets a run missed, in words; empty when it met them all."""
    missed = []
    if not result.p99_ms < targets.p99_ms:
        missed.append(f"produce p99 {result.p99_ms:.1f} ms is not under {targets.p99_ms:.0f}")
    if not result.rss_mib < targets.rss_mib:
        missed.append(f"peak RSS {result.rss_mib:.0f} MiB is not under {targets.rss_mib:.0f}")
    if result.delivery_errors or result.consumer_errors:
        missed.append(f"{result.delivery_errors} delivery and {result.consumer_errors} consumer errors")
    if result.setup_errors:
        missed.append(f"{result.setup_errors} client errors while the clients started")
    if any(result.rebalances):
        missed.append(f"rebalances during the window: {result.rebalances}")
    short = [group for group, count in enumerate(result.consumed_per_group) if count < result.delivered]
    if short:
        missed.append(f"groups {short} consumed fewer records than were delivered")
    return missed
