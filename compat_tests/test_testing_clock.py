"""The movable clock with a stock client: a confluent-kafka transaction left open holds a read_committed
consumer back at the last stable offset until `advance(61)` runs the coordinator's 60 s timeout; then the
consumer moves past the aborted records to what comes after."""

from __future__ import annotations

from confluent_kafka import Consumer, Producer, TopicPartition

from compat_tests.polling import wait_for
from kemu.testing import Broker


def committed_values(consumer: Consumer, wanted: int) -> list[bytes]:
    seen: list[bytes] = []

    def step() -> bool:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            seen.append(message.value())
        return len(seen) >= wanted

    wait_for(step, what=f"{wanted} read_committed records")
    return seen


def test_advance_aborts_a_stalled_transaction_and_frees_read_committed() -> None:
    with Broker(virtual_clock=True) as broker:
        broker.create_topic("orders")
        stalled = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "stalled",
                            "transaction.timeout.ms": 60_000})
        stalled.init_transactions(10)
        stalled.begin_transaction()
        stalled.produce("orders", b"never-committed")
        stalled.flush(10)
        broker.produce("orders", "after")  # a plain write behind the open transaction

        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "reader",
                             "isolation.level": "read_committed", "enable.auto.commit": False})
        consumer.assign([TopicPartition("orders", 0, 0)])
        try:
            # Held back: nothing is below the last stable offset yet.
            assert consumer.poll(1.0) is None
            assert [r.value for r in broker.records("orders", read_committed=True)] == []
            broker.advance(61)
            assert committed_values(consumer, 1) == [b"after"]
            assert [r.value for r in broker.records("orders", read_committed=True)] == [b"after"]
        finally:
            consumer.close()
