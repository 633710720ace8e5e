"""`kemu serve --data-dir` across restarts: a clean restart keeps everything; a SIGKILL in the middle of an
acks=all produce stream loses no acknowledged record, drops a torn tail, and rebuilds the indexes."""

from __future__ import annotations

import time
from pathlib import Path

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.record_clients import CLIENTS, Confluent, Record, create_topic
from kemu.wire.records import NewRecord, build_batch

PARTITIONS = 2
SEGMENT_BYTES = 1024 * 1024  # Kafka's smallest: the stream spans several segments, so index lookups matter


def test_clean_restart_keeps_everything(fresh_kemu_server: KemuServeProcess) -> None:
    bootstrap = fresh_kemu_server.bootstrap
    create_topic(bootstrap, "kept", PARTITIONS, {"segment.bytes": str(SEGMENT_BYTES)})
    base = int(time.time() * 1000) - 60_000
    sent = {p: [Record(p, f"k{i}".encode(), f"p{p}-{i}-".encode() * 50, (("n", str(i).encode()),), base + i)
                for i in range(300)] for p in range(PARTITIONS)}
    producer = Confluent(bootstrap)
    for records in sent.values():
        producer.produce("kept", records, compression="gzip")  # every client reads gzip

    fresh_kemu_server.restart()

    for reader in (cls(bootstrap) for cls in CLIENTS.values()):
        for partition, records in sent.items():
            assert reader.watermarks("kept", partition) == (0, len(records)), reader.name
            got = reader.read("kept", partition, 0, len(records))
            assert [(r.offset, r.value, dict(r.headers)) for r in got] == [
                (i, s.value, dict(s.headers)) for i, s in enumerate(records)], reader.name
            assert reader.offset_for_time("kept", partition, base + 150) == 150, reader.name
    # The log carries on where it stopped.
    assert producer.produce("kept", [Record(0, None, b"after restart")]) == [300]


def test_sigkill_mid_stream_loses_no_acknowledged_record(fresh_kemu_server: KemuServeProcess) -> None:
    from confluent_kafka import KafkaError, Producer

    bootstrap = fresh_kemu_server.bootstrap
    create_topic(bootstrap, "stream", PARTITIONS, {"segment.bytes": str(SEGMENT_BYTES)})
    base = int(time.time() * 1000) - 60_000
    acked: dict[tuple[int, int], bytes] = {}
    sent: set[bytes] = set()
    failures: list[KafkaError] = []

    def delivered(error: KafkaError | None, message: object) -> None:
        if error is None:
            acked[(message.partition(), message.offset())] = message.value()  # type: ignore[attr-defined]
        else:
            failures.append(error)

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 1, "batch.num.messages": 50,
                         "enable.idempotence": False, "retries": 0, "message.timeout.ms": 30_000})
    i = 0
    killed_at: int | None = None
    while killed_at is None or i < killed_at + 500:
        value = f"record-{i:06d}-".encode() + b"x" * 1000
        producer.produce("stream", value=value, partition=i % PARTITIONS, timestamp=base + i, on_delivery=delivered)
        sent.add(value)
        producer.poll(0)
        i += 1
        if killed_at is None and len(acked) >= 3000:
            fresh_kemu_server.kill()  # SIGKILL while requests are in flight and more are queued
            killed_at = i
    # Whatever was in flight or queued fails; the acknowledged set is final.
    producer.purge()
    producer.flush(5)
    acked_before_crash = dict(acked)
    assert len(acked_before_crash) >= 3000
    assert failures, "the kill should have cut the stream: some sends were never acknowledged"

    torn = tear_tail(fresh_kemu_server.data_dir / "stream-0")
    fresh_kemu_server.start()

    reader = Confluent(bootstrap)
    seen: set[bytes] = set()
    for partition in range(PARTITIONS):
        low, high = reader.watermarks("stream", partition)
        assert low == 0
        got = reader.read("stream", partition, 0, high)
        assert [r.offset for r in got] == list(range(high))  # nothing missing, nothing after the torn tail
        for record in got:
            assert record.value in sent and record.value not in seen  # only what was sent, once
            assert record.value is not None
            seen.add(record.value)
            expected = acked_before_crash.get((partition, record.offset))
            assert expected is None or expected == record.value
        acked_here = [o for (p, o) in acked_before_crash if p == partition]
        assert max(acked_here) < high  # every acknowledged record survived
    assert torn not in b"".join(seen)
    assert seen >= set(acked_before_crash.values())

    # The rebuilt indexes answer lookups, and the log carries on after the recovered end.
    some_offset = sorted(o for (p, o) in acked_before_crash if p == 0)[len(acked_before_crash) // 4]
    timestamp = next(r.timestamp for r in reader.read("stream", 0, some_offset, 1))
    assert reader.offset_for_time("stream", 0, timestamp) == some_offset
    end = reader.watermarks("stream", 0)[1]
    assert reader.produce("stream", [Record(0, None, b"after the crash")]) == [end]
    assert [r.value for r in reader.read("stream", 0, end, 1)] == [b"after the crash"]


TORN_MARKER = b"torn-tail-marker-"


def tear_tail(partition_dir: Path) -> bytes:
    """Append half a batch to the active segment, as a write cut short by a crash leaves it; returns the
    record bytes that must never be read back."""
    active = max(partition_dir.glob("*.log"), key=lambda path: int(path.stem))
    whole = build_batch([NewRecord(TORN_MARKER * 40, timestamp=int(time.time() * 1000))])
    with active.open("ab") as segment:
        segment.write(whole[: len(whole) // 2])
    return TORN_MARKER
