"""benchmarks.group_assignment's broker-free parts: the stability tracker, the members' spread over workers,
the initial-delay override and the arguments (the runs themselves need a broker and are not tests)."""

from __future__ import annotations

import pytest

from benchmarks.brokers import BrokerDefinition, LaunchPlan
from benchmarks.group_assignment import (
    CpuSampler,
    StabilityTracker,
    is_incremental,
    parse_args,
    split,
    with_initial_delay,
)


def complete(tracker: StabilityTracker, at: float) -> None:
    """Four members holding 0-2, 3-5, 6-7 and 8-9 of ten partitions."""
    for member, parts in enumerate([range(0, 3), range(3, 6), range(6, 8), range(8, 10)]):
        tracker.update(member, at, parts)


def test_a_complete_assignment_is_stable_only_after_the_settle_window_and_dates_from_its_last_change() -> None:
    tracker = StabilityTracker(10, 4, settle_s=2.0)
    complete(tracker, 1.0)
    tracker.update(3, 1.5, [8, 9])  # the same partitions again: no change
    assert tracker.problems() == []
    assert tracker.stable_at(2.9) is None
    assert tracker.stable_at(3.0) == 1.0
    assert tracker.changes == 4


def test_a_change_restarts_the_settle_window() -> None:
    tracker = StabilityTracker(10, 4, settle_s=2.0)
    complete(tracker, 1.0)
    tracker.update(0, 2.5, [0, 1])
    tracker.update(3, 2.6, [2, 8, 9])
    assert tracker.stable_at(4.0) is None
    assert tracker.stable_at(4.7) == 2.6


def test_events_arriving_out_of_order_keep_the_latest_change() -> None:
    tracker = StabilityTracker(10, 4, settle_s=2.0)
    tracker.update(1, 5.0, range(3, 6))
    tracker.update(0, 4.0, range(0, 3))
    tracker.update(2, 3.0, range(6, 8))
    tracker.update(3, 4.5, range(8, 10))
    assert tracker.last_change == 5.0
    assert tracker.stable_at(6.9) is None


def test_overlapping_missing_and_idle_are_each_reported_and_never_stable() -> None:
    tracker = StabilityTracker(10, 4, settle_s=1.0, balanced=False)
    tracker.update(0, 0.0, range(0, 6))
    tracker.update(1, 0.0, range(4, 8))
    tracker.update(2, 0.0, [8])
    assert tracker.problems() == ["2 partitions held by more than one member", "1 partitions held by no member",
                                  "1 members hold nothing"]
    assert tracker.stable_at(100.0) is None


def test_partitions_beyond_the_topic_and_imbalance_are_problems() -> None:
    tracker = StabilityTracker(4, 2, settle_s=1.0)
    tracker.update(0, 0.0, [0, 1, 2, 3, 7])
    tracker.update(1, 0.0, [5])
    assert tracker.problems() == ["2 partitions beyond the topic's (first 5)",
                                  "unbalanced: 1 to 5 partitions per member"]
    assert tracker.stable_at(10.0) is None


def test_more_members_than_partitions_may_leave_some_idle() -> None:
    tracker = StabilityTracker(2, 3, settle_s=1.0)
    tracker.update(0, 0.0, [0])
    tracker.update(1, 0.0, [1])
    assert tracker.problems() == []
    assert tracker.stable_at(1.0) == 0.0


def test_a_member_giving_everything_up_is_a_change() -> None:
    tracker = StabilityTracker(2, 2, settle_s=1.0)
    tracker.update(0, 0.0, [0, 1])
    assert tracker.update(0, 1.0, []) is True
    assert tracker.update(0, 2.0, []) is False
    assert tracker.problems() == ["2 partitions held by no member", "2 members hold nothing"]


def test_members_are_spread_evenly_and_no_worker_is_empty() -> None:
    assert split(100, 4) == [25, 25, 25, 25]
    assert split(10, 4) == [3, 3, 2, 2]
    assert split(3, 8) == [1, 1, 1]


def test_incremental_protocols() -> None:
    assert is_incremental("consumer", None)
    assert is_incremental("classic", "cooperative-sticky")
    assert not is_incremental("classic", None)
    assert not is_incremental("classic", "range,cooperative-sticky")


def test_the_initial_delay_is_added_to_kemu_and_kafka_and_nothing_else() -> None:
    def plan() -> LaunchPlan:
        return LaunchPlan(command=["broker", "serve"])

    for key in ("kemu", "kafka"):
        changed = with_initial_delay(BrokerDefinition(key=key, label=key, plan=plan), 250)
        assert changed.plan().command == ["broker", "serve", "--override", "group.initial.rebalance.delay.ms=250"]
    kfake = BrokerDefinition(key="kfake", label="kfake", plan=plan)
    assert with_initial_delay(kfake, 250).plan().command == ["broker", "serve"]


def test_the_cpu_at_a_moment_is_the_first_sample_at_or_after_it() -> None:
    sampler = CpuSampler(pid=0)
    sampler.samples = [(1.0, 0.5), (2.0, 0.75), (3.0, 2.0)]
    assert sampler.at(1.5) == 0.75
    assert sampler.at(2.0) == 0.75
    assert sampler.at(9.0) == 2.0


def test_arguments() -> None:
    args = parse_args([])
    assert (args.brokers, args.protocols, args.partitions, args.members, args.repeats, args.initial_delay_ms) == (
        ["kemu", "kafka"], ["classic", "consumer"], 10_000, 100, 2, 0)
    args = parse_args(["--brokers", "kemu, kfake", "--protocols", "consumer", "--partitions", "1000",
                       "--members", "10", "--settle-s", "0.5"])
    assert (args.brokers, args.protocols, args.partitions, args.members, args.settle_s) == (
        ["kemu", "kfake"], ["consumer"], 1000, 10, 0.5)


@pytest.mark.parametrize("argv", [["--protocols", "classic,share"], ["--members", "0"], ["--settle-s", "0"]])
def test_bad_arguments_are_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(argv)
