"""benchmarks.load's group mode without a broker: its flags and preset, the stability check, the rebalance
count, the latency histograms and the targets."""

from __future__ import annotations

import math
import random

import pytest

from benchmarks import load
from benchmarks.load import parse_args, percentile, worker_processes
from benchmarks.load_groups import (
    GroupLoadResult,
    GroupWatch,
    histogram_percentile_ms,
    merge,
    misses,
    shares,
)
from benchmarks.load_groups import bucket as latency_bucket


def test_the_issue35_preset_sets_its_workload_and_a_flag_still_overrides_it() -> None:
    args = parse_args(["--preset", "issue35"])
    assert (args.producers, args.consumers, args.groups, args.rate, args.seconds) == (500, 500, 10, 20, 180.0)
    assert args.producers * args.rate == 10_000
    assert args.keys == ["kemu", "kafka"]
    assert args.processes == 10
    assert parse_args(["--preset", "issue35", "--seconds", "20", "--brokers", "kemu"]).seconds == 20.0
    assert parse_args(["--seconds", "20", "--preset", "issue35"]).seconds == 20.0


def test_without_flags_the_200_client_run_is_unchanged() -> None:
    args = parse_args([])
    assert (args.producers, args.consumers, args.groups, args.rate, args.seconds) == (100, 100, 0, 40, 20.0)
    assert args.processes == load.PROCESSES == 4


def test_worker_processes_grow_with_the_clients_beyond_400() -> None:
    assert [worker_processes(clients) for clients in (40, 200, 400, 401, 1000)] == [4, 4, 4, 5, 10]


@pytest.mark.parametrize("flags", [["--groups", "3"], ["--groups", "-1"],
                                   ["--producers", "5", "--consumers", "20", "--groups", "2"]])
def test_groups_that_do_not_split_the_consumers_are_refused(flags: list[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(flags)


def test_each_worker_holds_a_slice_of_every_group_and_every_client_runs_once() -> None:
    split = shares(producers=10, groups=2, members=5, processes=3)
    assert sorted(i for share in split for i in share.producers) == list(range(10))
    members = [key for share in split for key in share.members]
    assert sorted(members) == [(g, m) for g in range(2) for m in range(5)]
    assert all({g for g, _ in share.members} == {0, 1} for share in split)


def _assign(watch: GroupWatch, group: int, member: int, partitions: tuple[int, ...], at: float = 0.0) -> None:
    watch.apply(("assigned", group, member, partitions, at))


def test_a_group_is_stable_only_when_every_member_holds_a_disjoint_share_covering_the_topic() -> None:
    watch = GroupWatch(groups=2, members=2, partitions=4)
    for member, partitions in enumerate([(0, 1), (2, 3)]):
        _assign(watch, 0, member, partitions)
    assert not watch.stable()  # group 1 has no member yet
    _assign(watch, 1, 0, (0, 1, 2, 3))
    assert not watch.stable()  # its second member holds nothing: a rebalance is still to come
    _assign(watch, 1, 1, (3,))
    assert not watch.stable()  # partition 3 held twice
    _assign(watch, 1, 0, (0, 1, 2))
    assert watch.stable()
    watch.apply(("revoked", 0, 1, (2, 3), 1.0))
    assert not watch.stable()


def test_a_group_missing_a_partition_is_not_stable() -> None:
    watch = GroupWatch(groups=1, members=2, partitions=4)
    _assign(watch, 0, 0, (0,))
    _assign(watch, 0, 1, (1, 2))
    assert not watch.stable()


def test_rebalances_count_the_most_assignments_one_member_got_within_the_window() -> None:
    watch = GroupWatch(groups=2, members=2, partitions=2)
    for at in (1.0, 5.0, 6.0):  # one before the window, two in it
        _assign(watch, 0, 0, (0,), at)
        _assign(watch, 0, 1, (1,), at)
    _assign(watch, 1, 0, (0, 1), 1.0)
    _assign(watch, 1, 1, (), 1.0)
    assert watch.rebalances(start=2.0, end=10.0) == [2, 0]


def test_subscriptions_drains_and_finished_producers_are_recorded() -> None:
    watch = GroupWatch(groups=1, members=2, partitions=2)
    for event in [("subscribed", 0, 1, (), 7.0), ("subscribed", 0, 0, (), 3.0), ("drained", 0, 1, (), 9.0),
                  ("produced", 4, 0, (), 9.0)]:
        watch.apply(event)
    assert (watch.first_subscribed, watch.drained, watch.produced) == (3.0, {(0, 1)}, {4})


def test_a_histogram_percentile_is_within_one_percent_above_the_exact_one() -> None:
    generator = random.Random(35)
    latencies = sorted(generator.lognormvariate(math.log(0.02), 1.0) for _ in range(20_000))
    histograms: list[dict[int, int]] = [{}, {}]
    for index, latency in enumerate(latencies):
        slot = latency_bucket(latency)
        histograms[index % 2][slot] = histograms[index % 2].get(slot, 0) + 1
    merged = merge(histograms)
    assert sum(merged.values()) == len(latencies)
    for fraction in (0.5, 0.99, 1.0):
        exact = percentile(latencies, fraction)
        assert exact <= histogram_percentile_ms(merged, fraction) <= exact * 1.0101


def test_an_empty_histogram_has_no_percentile() -> None:
    assert math.isnan(histogram_percentile_ms({}, 0.99))


def _result(**changes: object) -> GroupLoadResult:
    figures: dict[str, object] = dict(
        broker="kemu", producers=500, groups=10, members=50, offered_per_s=10_000, delivered_per_s=10_000,
        delivered=1_800_000, p50_ms=10.0, p99_ms=100.0, e2e_p50_ms=20.0, e2e_p99_ms=200.0,
        consumed_per_group=[1_800_000] * 10, delivery_errors=0, consumer_errors=0, rebalances=[0] * 10,
        stable_s=5.0, rss_mib=120.0, broker_cpu_cores=1.0, clients_cpu_cores=1.0, broker_wait_cores=0.1)
    figures.update(changes)
    return GroupLoadResult(**figures)  # type: ignore[arg-type]


def test_a_run_within_the_targets_misses_none() -> None:
    assert misses(_result()) == []


@pytest.mark.parametrize(("changes", "said"), [
    ({"p99_ms": 250.0}, "produce p99"), ({"p99_ms": float("nan")}, "produce p99"), ({"rss_mib": 301.0}, "RSS"),
    ({"consumer_errors": 1}, "consumer errors"), ({"setup_errors": 2}, "while the clients started"),
    ({"rebalances": [0] * 9 + [1]}, "rebalances"),
    ({"consumed_per_group": [1_800_000] * 9 + [1_799_999]}, "groups [9]")])
def test_each_missed_target_is_named(changes: dict[str, object], said: str) -> None:
    missed = misses(_result(**changes))
    assert len(missed) == 1 and said in missed[0]
