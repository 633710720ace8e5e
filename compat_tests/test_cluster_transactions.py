"""librdkafka's 0103 shape on a three-broker kemu: topics with replication factor 3, a transactional
consume-transform-produce job (confluent-kafka) running while partition leaders move, the group and
transaction coordinators move, and a broker is stopped and started again, several times over. The output is
exactly once (every input record transformed once, in committed transactions), a read_committed consumer
never sees aborted data, and each move is timed until the job committed again. `pytest -s` prints the
figures."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from confluent_kafka import Consumer, KafkaException, Message, Producer, TopicPartition

from compat_tests.cluster_moves import BROKERS, Progress, disturb, report, rotation
from compat_tests.polling import wait_for
from kemu.testing import Broker

PARTITIONS = 3
ROUNDS = 2
GROUP, TRANSACTIONAL_ID = "transformer", "transformer-tx"


def feed_input(broker: Broker, stop: threading.Event, fed: list[bytes], failures: list[BaseException]) -> None:
    """An idempotent producer writing the input all along, through the same moves (a few hundred records a second)."""
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                         "linger.ms": 5})

    def delivered(error: object, message: Message) -> None:
        if error is None:
            fed.append(message.value() or b"")

    try:
        number = 0
        while not stop.is_set():
            producer.produce("input", f"in-{number}".encode(), partition=number % PARTITIONS,
                             on_delivery=delivered)
            number += 1
            if number % 5 == 0:
                producer.poll(0.01)
        assert producer.flush(60) == 0
    except BaseException as exc:  # reported in the test's thread
        failures.append(exc)


def transform(broker: Broker, progress: Progress, stop: threading.Event, aborted: list[str],
              failures: list[BaseException]) -> None:
    """Read input, write "out-N" to the same partition of output, commit the offsets with the records; on an
    abortable error abort and rewind to the committed offsets, as the transactional API asks."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": GROUP,
                         "isolation.level": "read_committed", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": TRANSACTIONAL_ID,
                         "transaction.timeout.ms": 60000})
    try:
        producer.init_transactions(60)
        consumer.subscribe(["input"])
        while not stop.is_set():
            batch = [m for m in consumer.consume(200, 0.2) if m.error() is None]
            if not batch:
                continue
            try:
                producer.begin_transaction()
                for message in batch:
                    value = (message.value() or b"").replace(b"in-", b"out-")
                    producer.produce("output", value, partition=message.partition())
                producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                                     consumer.consumer_group_metadata(), 60)
                producer.commit_transaction(60)
                for partition in {m.partition() for m in batch}:
                    progress.ack(partition)
            except KafkaException as exc:
                error = exc.args[0]
                if error.fatal() or not (error.txn_requires_abort() or error.retriable()):
                    raise
                aborted.append(error.str())
                if error.txn_requires_abort():
                    producer.abort_transaction(60)
                rewind(consumer)
    except BaseException as exc:  # reported in the test's thread
        failures.append(exc)
    finally:
        consumer.close()


def move_all_leaders(broker: Broker, topic: str) -> None:
    for index in range(PARTITIONS):
        broker.move_leader(topic, index, 1 + broker.leader(topic, index) % BROKERS)


def group_off(broker: Broker, node_id: int) -> None:
    if broker.coordinator("group", GROUP) == node_id:
        broker.move_coordinator("group", GROUP, 1 + node_id % BROKERS)


def rewind(consumer: Consumer) -> None:
    """Back to the committed offsets: what the aborted transaction consumed is consumed again."""
    assignment = consumer.assignment()
    for committed in consumer.committed(assignment, 30):
        consumer.seek(TopicPartition(committed.topic, committed.partition,
                                     committed.offset if committed.offset >= 0 else 0))


def read_all(broker: Broker, topic: str) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"check-{time.time()}",
                         "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    expected = len(broker.records(topic, read_committed=True))
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(values) < expected and time.monotonic() < deadline:
        for message in consumer.consume(500, 0.5):
            if message.error() is None:
                values.append(message.value() or b"")
    consumer.close()
    return values


@pytest.mark.kemu(brokers=BROKERS)
def test_transactional_transform_is_exactly_once_through_moves(kemu_broker: Broker) -> None:
    for name in ("input", "output"):
        kemu_broker.create_topic(name, partitions=PARTITIONS, replication_factor=BROKERS)
    progress = Progress(PARTITIONS)
    feeding, stop = threading.Event(), threading.Event()
    fed: list[bytes] = []
    aborted: list[str] = []
    failures: list[BaseException] = []
    # Daemon threads: a client stuck past the joins below fails the test and must not keep pytest's process alive
    # after its summary (librdkafka's handles are never destroyed while their thread still runs).
    feeder = threading.Thread(target=feed_input, args=(kemu_broker, feeding, fed, failures), daemon=True)
    job = threading.Thread(target=transform, args=(kemu_broker, progress, stop, aborted, failures), daemon=True)
    feeder.start()
    job.start()
    try:
        steps = rotation(kemu_broker, "output", PARTITIONS, group=GROUP, transactional_id=TRANSACTIONAL_ID)
        steps.insert(1, ("input leaders moved", lambda: move_all_leaders(kemu_broker, "input")))
        # librdkafka 2.16 hangs in send_offsets_to_transaction when the cached group coordinator is a broker
        # that left the metadata (confluentinc/librdkafka#5511), as a stopped Kafka broker does: the group
        # moves off broker 2 first (and the job commits through the new coordinator) before 2 stops.
        steps.insert(3, ("group coordinator moved off broker 2", lambda: group_off(kemu_broker, 2)))
        moves = disturb(kemu_broker, progress, steps, ROUNDS, timeout_s=90)
        feeding.set()
        feeder.join()
        # Then let the job finish the input.
        def finished() -> bool:
            assert not failures, failures
            return len(kemu_broker.records("output", read_committed=True)) >= len(fed)

        wait_for(finished, what="the job to finish the input", timeout=90)
    finally:
        feeding.set()
        stop.set()
        feeder.join(120)
        job.join(120)
    assert not job.is_alive() and not feeder.is_alive(), "a client did not stop within 2 minutes"
    assert not failures, failures

    committed = Counter(r.value for r in kemu_broker.records("output", read_committed=True))
    expected = {value.replace(b"in-", b"out-") for value in fed}
    assert len(expected) == len(fed) and set(r.value for r in kemu_broker.records("input")) >= set(fed)
    duplicated = sum(n - 1 for n in committed.values() if n > 1)
    lost = len(expected - set(committed))
    print(report("confluent-kafka transactional transform", moves, len(fed), lost, duplicated))
    print(f"  aborted and retried transactions: {len(aborted)} {sorted(set(aborted))[:3]}")
    assert (lost, duplicated) == (0, 0)
    assert set(committed) == expected
    # A read_committed consumer sees exactly the committed output: no aborted record, nothing twice.
    seen = read_all(kemu_broker, "output")
    assert Counter(seen) == committed
