"""One small throughput workload through the benchmark's own code, against an in-process kemu (confluent-kafka)."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from benchmarks import throughput
from benchmarks.throughput import PhaseFailed, Workload, record_values, run_workload
from kemu.testing import Broker

pytest.importorskip("confluent_kafka")

_LOOKUP_S = 1000.0  # what the coordinator lookup is made to cost on the benchmark's clock


def test_the_consume_clock_starts_after_the_group_coordinator_lookup(
        kemu_broker: Broker, monkeypatch: pytest.MonkeyPatch) -> None:
    workload = Workload(record_size=100, records=300, partitions=3)
    kemu_broker.create_topic(workload.topic, workload.partitions)
    real_wait, real_clock = throughput.wait_for_coordinator, throughput.time.perf_counter
    lookups: list[float] = []

    def wait(*args: object) -> None:
        real_wait(*args)  # type: ignore[arg-type]
        lookups.append(_LOOKUP_S)  # the benchmark's clock jumps: a lookup inside a timed window shows

    monkeypatch.setattr(throughput, "wait_for_coordinator", wait)
    monkeypatch.setattr(throughput.time, "perf_counter", lambda: real_clock() + sum(lookups))
    produced, consumed = run_workload(kemu_broker.bootstrap_servers, workload, record_values(workload), 1e6, 5_000)
    assert produced.failure is None and consumed.failure is None, (produced, consumed)
    assert len(lookups) == len(throughput.rounds(workload, 5_000)) == 2  # one fresh consumer per round
    assert consumed.seconds is not None and consumed.seconds < _LOOKUP_S
    # The lookup made the broker create the group coordinator's topic, outside every timed window.
    assert kemu_broker.call(lambda: "__consumer_offsets" in kemu_broker.core.topics)


def test_no_coordinator_fails_the_round_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    class Unanswered:
        def __init__(self, config: object) -> None:
            self.closed = False

        def list_topics(self, topic: str, timeout: float) -> None:
            return None

        def committed(self, partitions: object, timeout: float) -> None:
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT))

        def close(self) -> None:
            self.closed = True

    monkeypatch.setattr(throughput, "Consumer", Unanswered)
    with pytest.raises(PhaseFailed, match="no group coordinator before the consume: .*_TIMED_OUT"):
        throughput._consume_round("127.0.0.1:1", Workload(100, 1, 1), 0, 1, [], throughput.time.perf_counter() + 1,
                                  throughput.CpuMeter())


def test_each_phase_counts_the_cpu_of_its_timed_windows_only(kemu_broker: Broker) -> None:
    # The broker's CPU is read at the start and end of every timed window: a reading that grows by 0.25 s
    # per read gives each phase 0.25 s per round, whatever happens between the windows.
    workload = Workload(record_size=100, records=300, partitions=3)
    kemu_broker.create_topic(workload.topic, workload.partitions)
    reads: list[float] = []

    def broker_cpu() -> float:
        reads.append(0.25)
        return sum(reads)

    produced, consumed = run_workload(kemu_broker.bootstrap_servers, workload, record_values(workload), 1e6, 5_000,
                                      broker_cpu=broker_cpu)
    rounds = len(throughput.rounds(workload, 5_000))
    assert len(reads) == 4 * rounds  # a start and a stop per phase per round
    for phase in (produced, consumed):
        assert phase.cpu is not None and phase.seconds is not None
        assert phase.cpu.broker == pytest.approx(0.25 * rounds)
        assert phase.cores("broker") == pytest.approx(0.25 * rounds / phase.seconds)
        # This process did the client's work inside the windows: its Python thread is part of it.
        assert 0 < phase.cpu.thread <= phase.cpu.client
    assert throughput.PhaseResult(1, 1, 1.0, "failed", phase.cpu).cores("broker") is None


class OffsetFetches:
    """A consumer whose committed() raises the given errors in turn, then answers."""

    def __init__(self, *errors: int) -> None:
        self.errors = list(errors)
        self.calls = 0

    def committed(self, partitions: list[TopicPartition], timeout: float) -> list[TopicPartition]:
        self.calls += 1
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return partitions


def test_the_coordinator_wait_retries_while_a_fresh_kafka_sets_it_up() -> None:
    consumer = OffsetFetches(KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError.NOT_COORDINATOR,
                             KafkaError.COORDINATOR_LOAD_IN_PROGRESS)
    throughput.wait_for_coordinator(consumer, "t", 10.0)  # type: ignore[arg-type]
    assert consumer.calls == 4


def test_the_coordinator_wait_takes_group_id_not_found_as_an_answer() -> None:
    consumer = OffsetFetches(KafkaError.GROUP_ID_NOT_FOUND)  # kfake, for a group that never committed
    throughput.wait_for_coordinator(consumer, "t", 10.0)  # type: ignore[arg-type]
    assert consumer.calls == 1


def test_the_coordinator_wait_raises_other_errors_and_gives_up_at_its_deadline() -> None:
    with pytest.raises(KafkaException, match="GROUP_AUTHORIZATION_FAILED"):
        throughput.wait_for_coordinator(OffsetFetches(KafkaError.GROUP_AUTHORIZATION_FAILED), "t", 10.0)  # type: ignore[arg-type]
    endless = OffsetFetches(*[KafkaError.NOT_COORDINATOR] * 1000)
    with pytest.raises(KafkaException, match="NOT_COORDINATOR"):
        throughput.wait_for_coordinator(endless, "t", 0.0)  # type: ignore[arg-type]
    assert endless.calls == 1
