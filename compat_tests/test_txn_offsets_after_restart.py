"""A transaction that commits consumer offsets (confluent-kafka's send_offsets_to_transaction) after `kemu serve`
was SIGKILLed and restarted on its data dir: kemu answers AddOffsetsToTxn and TxnOffsetCommit after recovery,
the second transaction commits, and the group's offset is the one it carried.

Why the producer sets `metadata.recovery.strategy=none`: with librdkafka's default (`rebootstrap`, KIP-899),
losing every broker of a one-broker cluster makes librdkafka decommission the broker it knew ("Decommissioning
1 broker(s): re-bootstrap") while its coordinator cache still holds that broker as the group's coordinator.
The next send_offsets_to_transaction then gets AddOffsetsToTxn answered (NONE) but never sends TxnOffsetCommit:
the coordinator request waits for a state change of the dead broker object, and librdkafka never checks that
request's timeout — so the call blocks far past its own timeout (librdkafka issues #5456 and #5511, open, seen
with 2.16.0). Nothing the broker answers is involved (every answer is NONE; the request is never sent), so a
one-broker Kafka hangs the same way. This is the hang the crash-chaos job once saw.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for

GROUP, TXN_ID, INPUT, OUTPUT = "restart-offsets", "restart-offsets-tx", "restart-in", "restart-out"
# A guard against a hang, far above the 10 s the calls are given: not a speed assertion.
HANG_S = 90.0


def test_send_offsets_to_transaction_after_a_sigkill_and_restart(tmp_path: Path) -> None:
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    server = KemuServeProcess(tmp_path / "data", extra_args=("--override", "group.initial.rebalance.delay.ms=0"))
    server.start()
    try:
        bootstrap = server.bootstrap
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics([NewTopic(t, 1, 1) for t in (INPUT, OUTPUT)]).values():
            future.result(30)
        feeder = Producer({"bootstrap.servers": bootstrap})
        for i in range(10):
            feeder.produce(INPUT, value=b"in-%d" % i)
        assert feeder.flush(30) == 0
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "auto.offset.reset": "earliest",
                             "enable.auto.commit": False})
        consumer.subscribe([INPUT])
        seen: list[bytes | None] = []
        wait_for(lambda: read_into(seen, consumer) >= 10, what="the consumer read the input", timeout=60)
        metadata = consumer.consumer_group_metadata()
        producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": TXN_ID,
                             "metadata.recovery.strategy": "none"})
        producer.init_transactions(30)

        def transaction(offset: int) -> None:
            producer.begin_transaction()
            producer.produce(OUTPUT, value=b"out-%d" % offset)
            producer.send_offsets_to_transaction([TopicPartition(INPUT, 0, offset)], metadata, 10)
            producer.commit_transaction(10)

        transaction(5)
        server.kill()
        server.start()
        # The producer learns of the restart by itself; wait until it sees the broker again.
        wait_for(lambda: producer.list_topics(timeout=5).brokers, what="the producer reconnected", timeout=60)

        outcome: list[BaseException | None] = []

        def second() -> None:
            try:
                transaction(10)
                outcome.append(None)
            except KafkaException as exc:
                outcome.append(exc)

        worker = threading.Thread(target=second, daemon=True)
        worker.start()
        worker.join(HANG_S)
        assert not worker.is_alive(), "send_offsets_to_transaction/commit_transaction hung after the restart"
        assert outcome == [None], outcome

        checker = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False})
        try:
            assert [tp.offset for tp in checker.committed([TopicPartition(INPUT, 0)], timeout=30)] == [10]
        finally:
            checker.close()
        reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "restart-offsets-reader",
                           "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                           "enable.auto.commit": False})
        reader.assign([TopicPartition(OUTPUT, 0, 0)])
        out: list[bytes | None] = []
        try:
            wait_for(lambda: read_into(out, reader) >= 2, what="both committed transactions' records", timeout=60)
        finally:
            reader.close()
        assert out == [b"out-5", b"out-10"]
        consumer.close()
    finally:
        if server.is_running():
            server.stop()


def read_into(values: list[bytes | None], consumer: Any) -> int:
    """One consume round: the values read are appended; how many there are now."""
    values.extend(m.value() for m in consumer.consume(10, 1.0) if m.error() is None)
    return len(values)
