"""Load: 200 concurrent confluent-kafka clients against one `kemu serve` for a bounded time (issue 16,
item 6) — 100 producers (acks=all, each at a fixed rate to a partition of its own) and 100 consumers (each
reading its producer's partition). Every client must make progress with no error, every record produced
must be consumed, and the broker's resident memory is printed (and bounded). KEMU_LOAD_SECONDS sets the
time (20 in CI), KEMU_LOAD_RATE the records per second of each producer."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from compat_tests.kemu_process import KemuServeProcess

PAIRS = 100
SECONDS = float(os.environ.get("KEMU_LOAD_SECONDS", "20"))
RATE = int(os.environ.get("KEMU_LOAD_RATE", "20"))
TOPIC = "load"
MEMORY_BOUND_MIB = 2048


def rss_mib(pid: int | None) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS")


def test_two_hundred_clients_all_progress(fresh_kemu_server: KemuServeProcess) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = fresh_kemu_server.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(TOPIC, PAIRS, 1)]).values():
        future.result(60)
    before = rss_mib(fresh_kemu_server.pid)
    errors: list[str] = []
    produced = [0] * PAIRS
    consumed = [0] * PAIRS
    stop = threading.Event()
    peak = [before]

    def produce(index: int) -> None:
        def delivered(error: Any, message: Any) -> None:
            if error is not None:
                errors.append(f"producer {index}: {error}")

        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
        while not stop.wait(1.0 / RATE):
            producer.produce(TOPIC, value=b"r%d" % produced[index], partition=index, on_delivery=delivered)
            produced[index] += 1
            producer.poll(0)
        if producer.flush(60) != 0:
            errors.append(f"producer {index}: records left unsent")

    def consume(index: int) -> None:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"load-{index}",
                             "enable.auto.commit": False, "fetch.wait.max.ms": 100})
        consumer.assign([TopicPartition(TOPIC, index, 0)])
        expected = 0
        try:
            while not (stop.is_set() and done_producing.is_set() and expected >= produced[index]):
                for m in consumer.consume(100, timeout=0.5):
                    if m.error() is not None:
                        errors.append(f"consumer {index}: {m.error()}")
                    elif m.value() != b"r%d" % expected:
                        errors.append(f"consumer {index}: record {expected} was {m.value()!r}")
                    else:
                        expected += 1
                consumed[index] = expected
                if drained_deadline[0] and time.monotonic() > drained_deadline[0]:
                    errors.append(f"consumer {index}: stuck at {expected} of {produced[index]}")
                    return
        finally:
            consumer.close()

    done_producing = threading.Event()
    drained_deadline: list[float] = [0.0]
    producers = [threading.Thread(target=produce, args=(i,), daemon=True) for i in range(PAIRS)]
    consumers = [threading.Thread(target=consume, args=(i,), daemon=True) for i in range(PAIRS)]
    for thread in producers + consumers:
        thread.start()
    started = time.monotonic()
    while time.monotonic() - started < SECONDS:
        time.sleep(1.0)
        peak[0] = max(peak[0], rss_mib(fresh_kemu_server.pid))
    stop.set()
    for thread in producers:
        thread.join(120)
    done_producing.set()
    drained_deadline[0] = time.monotonic() + 120
    for thread in consumers:
        thread.join(180)
    after = rss_mib(fresh_kemu_server.pid)
    total = sum(produced)
    print(f"\nload: {PAIRS} producers + {PAIRS} consumers for {SECONDS:.0f} s, {total} records produced and "
          f"{sum(consumed)} consumed, broker memory {before} MiB before, peak {max(peak[0], after)} MiB")
    assert not errors, errors[:10]
    assert all(count > 0 for count in produced), "a producer made no progress"
    assert consumed == produced  # and so every consumer progressed, to the last record of its producer
    assert max(peak[0], after) < MEMORY_BOUND_MIB
