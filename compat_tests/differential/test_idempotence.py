"""Idempotent produce, Kafka against kemu, through raw Produce requests: retried duplicates, sequence gaps,
fenced and bumped epochs, unknown producer ids, a new producer whose first sequence is not 0."""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.data_txn import transactional_id_ready
from compat_tests.differential.data_wire import (
    BASE_TIME,
    PRODUCE_VERSION,
    compare,
    create_topic,
    fetch,
    init_producer_id,
    produce_one,
    unique_topic,
)
from compat_tests.differential.targets import Pair, Target
from kemu.wire.records import NewRecord, build_batch

VERSIONS = [3, 8, 11, PRODUCE_VERSION]
UNKNOWN_PRODUCER_ID = 987_654_321


def idempotent_batch(producer_id: int, epoch: int, sequence: int, count: int = 1) -> bytes:
    records = [NewRecord(b"seq-%d" % (sequence + i), key=b"k", timestamp=BASE_TIME + sequence + i)
               for i in range(count)]
    return build_batch(records, producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence)


class Session:
    """One idempotent producer's raw requests against one broker, and what each was answered."""

    def __init__(self, target: Target, topic: str) -> None:
        self.target = target
        self.topic = topic
        answer = init_producer_id(target)
        assert answer["error_code"] == 0, answer
        self.producer_id: int = answer["producer_id"]
        self.epoch: int = answer["producer_epoch"]
        self.answers: list[Any] = [{"init": answer}]

    def send(self, sequence: int, count: int = 1, *, epoch: int | None = None, producer_id: int | None = None,
             version: int = PRODUCE_VERSION, partition: int = 0) -> dict[str, Any]:
        data = idempotent_batch(self.producer_id if producer_id is None else producer_id,
                                self.epoch if epoch is None else epoch, sequence, count)
        answer = produce_one(self.target, self.topic, data, partition=partition, version=version)
        self.answers.append({"sequence": sequence, "count": count, "version": version, "answer": answer})
        return answer

    def bump(self) -> None:
        """InitProducerId with the current id and epoch (KIP-360): the same id, the next epoch."""
        answer = init_producer_id(self.target, producer_id=self.producer_id, producer_epoch=self.epoch)
        self.answers.append({"bump": answer})
        assert answer["error_code"] == 0, answer
        self.producer_id, self.epoch = answer["producer_id"], answer["producer_epoch"]

    def observed(self, partitions: int = 1) -> dict[str, Any]:
        return {"answers": self.answers,
                "log": fetch(self.target, [(self.topic, p, 0) for p in range(partitions)])}


def scenario_retried_duplicates(session: Session) -> None:
    session.send(0, 3)
    session.send(3, 2)
    for version in VERSIONS:
        session.send(0, 3, version=version)  # the first batch again: its original offset, nothing appended
        session.send(3, 2, version=version)
    session.send(5, 1)


def scenario_out_of_order(session: Session) -> None:
    session.send(0, 2)
    for version in VERSIONS:
        session.send(5, 1, version=version)  # a gap
        session.send(1, 1, version=version)  # overlapping the last batch, not a duplicate of it
    session.send(2, 1)


def scenario_duplicate_older_than_the_cache(session: Session) -> None:
    """Kafka remembers the last 5 batches of a producer: a retry of an older one is out of order."""
    for sequence in range(7):
        session.send(sequence)
    for version in VERSIONS:
        session.send(0, version=version)
        session.send(2, version=version)
        session.send(3, version=version)


def scenario_old_epoch(session: Session) -> None:
    """A partition knows a producer's epoch from its batches: a lower one is INVALID_PRODUCER_EPOCH."""
    session.send(0, 2, epoch=session.epoch + 3)
    for version in VERSIONS:
        session.send(2, 1, version=version)
        session.send(0, 1, version=version)
    session.send(2, 1, epoch=session.epoch + 3)


def scenario_bumped_producer(session: Session) -> None:
    """InitProducerId again with the id and epoch (KIP-360): what Kafka gives an idempotent producer."""
    session.send(0, 2)
    session.bump()
    session.send(0, 1)
    session.send(2, 1)


def scenario_new_epoch_not_from_zero(session: Session) -> None:
    session.send(0, 2)
    session.bump()
    for version in VERSIONS:
        session.send(2, 1, version=version)
    session.send(0, 1)


def scenario_epoch_from_the_future(session: Session) -> None:
    session.send(0, 2)
    for version in VERSIONS:
        session.send(2, 1, epoch=session.epoch + 5, version=version)
    session.send(0, 1, epoch=session.epoch + 5)
    session.send(1, 1, epoch=session.epoch + 5)
    session.send(2, 1, epoch=session.epoch)


def scenario_unknown_producer_id(session: Session) -> None:
    for version in VERSIONS:
        session.send(4, 1, producer_id=UNKNOWN_PRODUCER_ID, version=version)  # a new producer above 0
    session.send(0, 2, producer_id=UNKNOWN_PRODUCER_ID)  # a new producer at 0 is accepted, allocated or not
    session.send(2, 1, producer_id=UNKNOWN_PRODUCER_ID)


def scenario_first_sequence_above_zero(session: Session) -> None:
    for version in VERSIONS:
        session.send(1, 1, version=version)
    session.send(0, 1)
    session.send(1, 1)


def scenario_partitions_apart(session: Session) -> None:
    """Sequences are per partition: the same producer starts at 0 on each."""
    session.send(0, 2, partition=0)
    session.send(0, 1, partition=1)
    session.send(2, 1, partition=0)
    session.send(2, 1, partition=1)  # a gap on partition 1
    session.send(1, 1, partition=1)


def scenario_sequence_wraps(session: Session) -> None:
    """After Int32.MAX comes 0 — but a new producer must still start at 0, so it is refused first."""
    session.send(2**31 - 2, 2)
    session.send(0, 1)
    session.send(1, 1)


@pytest.mark.parametrize("version", [2, 3, 4, 5])
def test_fenced_transactional_producer(pair: Pair, version: int) -> None:
    """A transactional id initialised again fences the older epoch: InitProducerId with the old epoch is
    PRODUCER_FENCED from v4 and INVALID_PRODUCER_EPOCH before; a batch of the old epoch is refused."""
    name = unique_topic(f"idem-fenced-v{version}")
    transactional_id = unique_topic("fenced-txn")

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name)
        first = transactional_id_ready(target, transactional_id)
        second = init_producer_id(target, transactional_id)
        old = {"producer_id": first["producer_id"], "producer_epoch": first["producer_epoch"]}
        again = init_producer_id(target, transactional_id, version=version, **old) if version >= 3 else None
        stale = produce_one(target, name, idempotent_batch(first["producer_id"], first["producer_epoch"], 0))
        current = produce_one(target, name, idempotent_batch(second["producer_id"], second["producer_epoch"], 0))
        return {"first": first, "second": second, "old_epoch_again": again, "old_epoch_batch": stale,
                "current_batch": current, "log": fetch(target, [(name, 0, 0)])}

    compare(pair, f"produce_fetch.idempotence.fenced.v{version}", observe)


SCENARIOS = {name.removeprefix("scenario_"): function for name, function in globals().items()
             if name.startswith("scenario_")}


@pytest.mark.parametrize("case", sorted(SCENARIOS))
def test_idempotent_produce(pair: Pair, case: str) -> None:
    name = unique_topic(f"idem-{case}")

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name, partitions=2)
        session = Session(target, name)
        SCENARIOS[case](session)
        return session.observed(partitions=2)

    compare(pair, f"produce_fetch.idempotence.{case}", observe)
