"""Produce and consume throughput with confluent-kafka, each figure checked before it counts.

A record's value is its sequence number (8 bytes, big-endian) followed by a fixed filler up to the record
size; record i goes to partition i % partitions. The produce phase counts as passed only if every record
was acknowledged without error and each partition's acknowledged offsets are exactly 0..n-1. The consume
phase reads from known offsets (no ListOffsets, no group coordinator: `assign`, no commits) and passes
only if it got every sequence number exactly once, each on the partition it was sent to, each value of
the right size and content. Values are built before the clock starts and checked after it stops, so the timings
measure the client and the broker, not this module.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

SEQUENCE_BYTES = 8
_FILLER = bytes(range(256)) * 64
_POLL_EVERY = 1024
_STATS_INTERVAL_MS = 20
_CONSUME_BATCH = 10_000


@dataclass(frozen=True)
class Workload:
    record_size: int
    records: int
    partitions: int
    repeat: int = 1  # each repeat writes a topic of its own
    idempotent: bool = False  # enable.idempotence: producer ids and sequences on every batch

    @property
    def topic(self) -> str:
        kind = "-idem" if self.idempotent else ""
        return f"bench-{self.record_size}b-{self.records}r-{self.partitions}p{kind}-{self.repeat}"

    def records_on(self, partition: int) -> int:
        whole, extra = divmod(self.records, self.partitions)
        return whole + (1 if partition < extra else 0)


def _unmeasured() -> float:
    return 0.0


@dataclass
class CpuMeter:
    """CPU used inside a phase's timed windows, summed over its rounds: the broker's process (what
    `broker_seconds` reads: its threads' time on a CPU), this whole process (the client library's threads and
    the Python thread driving it), and the Python thread alone. Which side had a core to spare is what tells a
    broker that kept the client waiting from a client that could not go faster."""

    broker_seconds: Callable[[], float] = _unmeasured
    broker: float = 0.0
    client: float = 0.0
    thread: float = 0.0
    _at: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0), repr=False)

    def start(self) -> None:
        self._at = (self.broker_seconds(), time.process_time(), time.thread_time())

    def stop(self) -> None:
        broker, client, thread = self._at
        self.broker += self.broker_seconds() - broker
        self.client += time.process_time() - client
        self.thread += time.thread_time() - thread


@dataclass(frozen=True)
class PhaseResult:
    records: int
    payload_bytes: int
    seconds: float | None = None
    failure: str | None = None
    cpu: CpuMeter | None = None  # None when not measured

    def cores(self, which: Literal["broker", "client", "thread"]) -> float | None:
        """The `broker`, `client` or `thread` CPU over the phase's time, in cores."""
        if self.failure or not self.seconds or self.cpu is None:
            return None
        return float(getattr(self.cpu, which)) / self.seconds

    @property
    def msgs_per_s(self) -> float | None:
        return None if self.failure or not self.seconds else self.records / self.seconds

    def broker_us_per_record(self) -> float | None:
        """The broker's CPU per record, µs: where the client is the limit (its CPU near a core, the broker's
        low), this, not msgs/s, is what says which broker does less work for the same records."""
        if self.failure or self.cpu is None or not self.records:
            return None
        return 1e6 * self.cpu.broker / self.records

    @property
    def mb_per_s(self) -> float | None:
        return None if self.failure or not self.seconds else self.payload_bytes / 1e6 / self.seconds

    @classmethod
    def failed(cls, workload: Workload, why: str) -> PhaseResult:
        return cls(workload.records, workload.records * workload.record_size, None, why)

    @classmethod
    def median_of(cls, repeats: list[PhaseResult]) -> PhaseResult:
        """The median run (by time) if every repeat passed its checks, else the first failure."""
        for result in repeats:
            if result.failure is not None:
                return result
        ordered = sorted(repeats, key=lambda result: result.seconds or 0.0)
        return ordered[len(ordered) // 2]


def record_values(workload: Workload) -> list[bytes]:
    if workload.record_size < SEQUENCE_BYTES or workload.record_size - SEQUENCE_BYTES > len(_FILLER):
        raise ValueError(f"record size must be {SEQUENCE_BYTES}..{SEQUENCE_BYTES + len(_FILLER)} bytes")
    filler = _FILLER[: workload.record_size - SEQUENCE_BYTES]
    return [sequence.to_bytes(SEQUENCE_BYTES, "big") + filler for sequence in range(workload.records)]


class _DeliveryTally:
    """Delivery reports: how many were acknowledged, at which offsets, and the first error."""

    def __init__(self, partitions: int) -> None:
        self.offsets: list[list[int]] = [[] for _ in range(partitions)]
        self.acknowledged = 0
        self.errors = 0
        self.first_error: str | None = None

    def __call__(self, error: KafkaError | None, message: Message) -> None:
        if error is not None:
            self.errors += 1
            if self.first_error is None:
                self.first_error = str(error)
            return
        partition, offset = message.partition(), message.offset()
        if partition is None or offset is None:
            self.errors += 1
            self.first_error = self.first_error or "a delivery report without partition or offset"
            return
        self.acknowledged += 1
        self.offsets[partition].append(offset)

    def problem(self, workload: Workload) -> str | None:
        if self.errors:
            return f"{self.errors} records failed delivery, first: {self.first_error}"
        if self.acknowledged != workload.records:
            return f"{self.acknowledged} of {workload.records} records acknowledged"
        for partition, offsets in enumerate(self.offsets):
            expected = workload.records_on(partition)
            if sorted(offsets) != list(range(expected)):
                return (f"partition {partition}: acknowledged offsets are not 0..{expected - 1} "
                        f"({len(offsets)} offsets, {len(set(offsets))} distinct)")
        return None


class _IdempotenceState:
    """The idempotent producer's state, from librdkafka's statistics (`eos.idemp_state`).

    librdkafka asks for a producer id only once its idempotence state machine finds a broker up; if it
    looks before the bootstrap connection is, it retries on a 500 ms timer. Whether a run starts with that
    stall is a race in the client, so the clock starts once the id is assigned, as it starts once the
    client has connected."""

    def __init__(self) -> None:
        self.state = "unknown"

    def update(self, stats_json: str) -> None:
        self.state = str(json.loads(stats_json).get("eos", {}).get("idemp_state", "unknown"))

    def wait_assigned(self, producer: Producer, timeout: float) -> bool:
        deadline = time.perf_counter() + timeout
        while self.state != "Assigned" and time.perf_counter() < deadline:
            producer.poll(_STATS_INTERVAL_MS / 1000)
        return self.state == "Assigned"


def producer_config(bootstrap: str, timeout: float, *, idempotent: bool = False) -> dict[str, Any]:
    # Stock settings except the local queue, which must hold the whole run (no BufferError back-off
    # in the timed loop), and the delivery timeout, which bounds a broker that never answers.
    return {
        "enable.idempotence": idempotent,
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "linger.ms": 5,
        "queue.buffering.max.messages": 2_000_000,
        "queue.buffering.max.kbytes": 4_194_304,
        "message.timeout.ms": max(1000, int(timeout * 1000)),
        "log_level": 4,
    }


class PhaseFailed(Exception):
    """A produce or consume round could not complete; the message says why."""


def rounds(workload: Workload, round_bytes: int) -> list[tuple[int, int]]:
    """[start, end) record ranges putting at most `round_bytes` of values on each partition per round."""
    step = max(1, round_bytes // workload.record_size) * workload.partitions
    return [(start, min(start + step, workload.records)) for start in range(0, workload.records, step)]


def run_workload(bootstrap: str, workload: Workload, values: list[bytes], timeout: float,
                 round_bytes: int, broker_cpu: Callable[[], float] = _unmeasured) -> tuple[PhaseResult, PhaseResult]:
    """Produce then consume, alternating in rounds; returns (produce, consume), each checked.

    The rounds exist for the librdkafka mock cluster, which keeps only the newest 5 MiB of each
    partition: a round never puts more on a partition than `round_bytes`, and is read back before the
    next one is written. Every broker runs the same rounds; each phase's time is the sum of its rounds.
    """
    deadline = time.perf_counter() + timeout
    idempotence = _IdempotenceState()
    config = producer_config(bootstrap, timeout, idempotent=workload.idempotent)
    if workload.idempotent:
        config |= {"statistics.interval.ms": _STATS_INTERVAL_MS, "stats_cb": idempotence.update}
    producer = Producer(config)
    producer.list_topics(workload.topic, timeout=min(timeout, 10.0))  # connect before the clock starts
    if workload.idempotent and not idempotence.wait_assigned(producer, min(timeout, 10.0)):
        failed = PhaseResult.failed(workload, f"no producer id assigned (idempotence state {idempotence.state!r})")
        return failed, PhaseResult.failed(workload, "not run: produce failed")
    tally = _DeliveryTally(workload.partitions)
    batches: list[list[Message]] = []
    produce_seconds = consume_seconds = 0.0
    produce_cpu, consume_cpu = CpuMeter(broker_cpu), CpuMeter(broker_cpu)
    for number, (start, end) in enumerate(rounds(workload, round_bytes), 1):
        try:
            produce_seconds += _produce_round(producer, workload, values, start, end, tally, deadline, produce_cpu)
        except PhaseFailed as failure:
            return (PhaseResult.failed(workload, f"round {number}: {failure}"),
                    PhaseResult.failed(workload, "not run: produce failed"))
        try:
            consume_seconds += _consume_round(bootstrap, workload, start, end, batches, deadline, consume_cpu)
        except PhaseFailed as failure:
            return (PhaseResult.failed(workload, f"stopped in round {number}: the consume failed"),
                    PhaseResult.failed(workload, f"round {number}: {failure}"))
    payload = workload.records * workload.record_size
    problem = tally.problem(workload)
    produced = PhaseResult.failed(workload, problem) if problem else \
        PhaseResult(workload.records, payload, produce_seconds, cpu=produce_cpu)
    problem = check_read_back(workload, batches)
    consumed = PhaseResult.failed(workload, problem) if problem else \
        PhaseResult(workload.records, payload, consume_seconds, cpu=consume_cpu)
    return produced, consumed


def _produce_round(producer: Producer, workload: Workload, values: list[bytes], start: int, end: int,
                   tally: _DeliveryTally, deadline: float, cpu: CpuMeter) -> float:
    topic, partitions = workload.topic, workload.partitions
    cpu.start()
    started = time.perf_counter()
    for index in range(start, end):
        while True:
            try:
                producer.produce(topic, values[index], partition=index % partitions, on_delivery=tally)
                break
            except BufferError:
                producer.poll(0.01)
        if index % _POLL_EVERY == 0:
            producer.poll(0)
    unsent = producer.flush(max(0.0, deadline - time.perf_counter()))
    seconds = time.perf_counter() - started
    cpu.stop()
    if unsent:
        raise PhaseFailed(f"{unsent} records still unacknowledged at the deadline")
    if tally.errors:
        raise PhaseFailed(f"{tally.errors} records failed delivery, first: {tally.first_error}")
    return seconds


def consumer_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": "kemu-bench",  # required by the client; never used: assign() and no commits
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": False,
        "log_level": 4,
        # librdkafka counts queued.min.messages (default 100,000) over the queue every assigned partition
        # forwards to, and a fetch that finds it exceeded backs off fetch.queue.backoff.ms (1 s): two full
        # fetches of 8 partitions (1 MiB each, ~9,500 records of 100 B, as Kafka answers) crossed it and
        # stalled the round a whole second, so the 8-partition row measured that timer (kemu and the mock
        # ~180k msgs/s; Tansu, which answers more than max.partition.fetch.bytes per partition, finished
        # first). Past every round's size, the threshold is never reached, for any broker.
        "queued.min.messages": 10_000_000,
        **extra,
    }


def _consume_round(bootstrap: str, workload: Workload, start: int, end: int, batches: list[list[Message]],
                   deadline: float, cpu: CpuMeter) -> float:
    """Read records [start, end) with a fresh consumer assigned at the round's first offsets.

    A fresh consumer per round, rather than one paused between rounds, keeps its background fetcher
    from competing with the next produce round.
    """
    wanted = end - start
    before = Workload(workload.record_size, start, workload.partitions)
    consumer = Consumer(consumer_config(bootstrap))
    try:
        setup_timeout = max(0.1, min(10.0, deadline - time.perf_counter()))
        consumer.list_topics(workload.topic, timeout=setup_timeout)
        # A consumer with a group.id looks up the group's coordinator as it starts, and a broker's first
        # lookup creates __consumer_offsets (50 partitions: ~70 ms of file creation for kemu here, 1-54 ms for
        # Tansu). That is set-up, as connecting is: it is done before the clock starts, so a broker's first
        # consume round measures reading, as the others do.
        try:
            wait_for_coordinator(consumer, workload.topic, setup_timeout)
        except KafkaException as error:
            raise PhaseFailed(f"no group coordinator before the consume: {error}") from None
        cpu.start()
        started = time.perf_counter()
        consumer.assign([TopicPartition(workload.topic, p, before.records_on(p))
                         for p in range(workload.partitions)])
        received = 0
        first_error: str | None = None
        while received < wanted and time.perf_counter() < deadline:
            wait = min(0.5, max(0.0, deadline - time.perf_counter()))
            batch = consumer.consume(min(_CONSUME_BATCH, wanted - received), timeout=wait)
            good = [message for message in batch if message.error() is None]
            if len(good) != len(batch) and first_error is None:
                first_error = next(str(m.error()) for m in batch if m.error() is not None)
            batches.append(good)
            received += len(good)
        seconds = time.perf_counter() - started
        cpu.stop()
    finally:
        consumer.close()
    if received < wanted:
        why = f"read {received} of {wanted} records by the deadline"
        raise PhaseFailed(why + (f" (first error: {first_error})" if first_error else ""))
    return seconds


# The coordinator's own answer for a group that has committed nothing: Kafka answers no error and offset -1;
# kfake answers GROUP_ID_NOT_FOUND. Either way the coordinator has been found.
_COORDINATOR_ANSWERS = frozenset({KafkaError.GROUP_ID_NOT_FOUND})
# Retried whether or not librdkafka flags them retriable: the coordinator is being set up.
_COORDINATOR_PENDING = frozenset({KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                                  KafkaError.COORDINATOR_NOT_AVAILABLE})


def wait_for_coordinator(consumer: Consumer, topic: str, timeout: float) -> None:
    """Until the group's coordinator has answered an OffsetFetch (librdkafka sends it there). A fresh Kafka
    answers NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS while it creates and loads __consumer_offsets
    (seconds, on a busy machine), and librdkafka's committed() hands those back: retriable ones are retried
    until `timeout`. Raises KafkaException for any other error, or the last one at the deadline."""
    deadline = time.perf_counter() + timeout
    while True:
        try:
            consumer.committed([TopicPartition(topic, 0)], timeout=max(0.1, deadline - time.perf_counter()))
            return
        except KafkaException as exception:
            error = exception.args[0] if exception.args else None
            if isinstance(error, KafkaError) and error.code() in _COORDINATOR_ANSWERS:
                return
            pending = isinstance(error, KafkaError) and (error.retriable() or error.code() in _COORDINATOR_PENDING)
            if not pending or time.perf_counter() >= deadline:
                raise
        time.sleep(0.05)


def check_read_back(workload: Workload, batches: list[list[Message]]) -> str | None:
    """None if the records read are exactly the records written; else what is wrong."""
    filler = _FILLER[: workload.record_size - SEQUENCE_BYTES]
    seen = bytearray(workload.records)
    total_bytes = 0
    count = 0
    for batch in batches:
        for message in batch:
            value = message.value() or b""
            count += 1
            total_bytes += len(value)
            if len(value) != workload.record_size:
                return f"a record of {len(value)} bytes read back, {workload.record_size} written"
            sequence = int.from_bytes(value[:SEQUENCE_BYTES], "big")
            if sequence >= workload.records or value[SEQUENCE_BYTES:] != filler:
                return f"a record read back that was never written (sequence {sequence})"
            if seen[sequence]:
                return f"record {sequence} read back twice"
            seen[sequence] = 1
            if sequence % workload.partitions != message.partition():
                return f"record {sequence} read from partition {message.partition()}"
    if count != workload.records or total_bytes != workload.records * workload.record_size:
        return f"read {count} records / {total_bytes} bytes, wrote {workload.records} / " \
               f"{workload.records * workload.record_size}"
    return None
