"""What a consumer is given to parse, kemu against Kafka (issue 35, goal 2): the same producer workload as
`benchmarks.run`'s small-record rows (confluent-kafka, acks=all, linger.ms=5), then the partition read back.

For each broker it reports how the produced records were stored (batches, records per batch: the producer
batches by how fast the broker acknowledges, so the stored shape is partly the broker's doing), the shape of
the Fetch answers a consumer gets for them (raw Fetch v12 with librdkafka's default sizes: answers, bytes
and batches per answer), and the consumer's own CPU per record for reading them back with confluent-kafka
(its process CPU over the consume, divided by the records).

    python -m benchmarks.fetch_shape [--brokers kemu,kafka] [--records 200000] [--batch-records N]
                                     [--consumer '{"queued.max.messages.kbytes": 2048}']

(the librdkafka mock keeps only the newest 5 MiB of a partition: give it --records 30000.)
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import sys
import time
from dataclasses import dataclass
from typing import Any

from benchmarks.brokers import BrokerDefinition, RunningBroker, on_cpu_seconds_by_thread
from benchmarks.kafka_probe import read_exactly
from benchmarks.throughput import producer_config
from kemu.wire import codec

FETCH = 1
FETCH_VERSION = 12
# librdkafka's defaults: fetch.max.bytes, max.partition.fetch.bytes, fetch.wait.max.ms, fetch.min.bytes.
FETCH_MAX_BYTES = 52_428_800
PARTITION_MAX_BYTES = 1_048_576
TOPIC = "fetch-shape"


@dataclass
class Shape:
    broker: str
    batches: int
    records: int
    answers: int
    answer_bytes: list[int]
    batches_per_answer: list[int]
    consume_cpu_us_per_record: list[dict[str, float]]
    # Everything of the first answer but its records: what else a client reads, and may act on, per answer.
    first_answer: dict[str, Any]

    def lines(self) -> list[str]:
        return [
            f"{self.broker}: {self.records} records in {self.batches} batches "
            f"({self.records / max(self.batches, 1):.1f} records per batch)",
            f"  Fetch answers from offset 0: {self.answers}, median {statistics.median(self.answer_bytes):,.0f} B "
            f"and {statistics.median(self.batches_per_answer):.0f} batches each",
            "  confluent-kafka consume CPU per record, µs (all threads: by thread): " + "; ".join(
                f"{sum(used.values()):.2f}: " + ", ".join(f"{name} {us:.2f}" for name, us in sorted(used.items()))
                for used in self.consume_cpu_us_per_record),
            f"  first answer, but its records: {json.dumps(self.first_answer, sort_keys=True)}",
        ]


def _produce(bootstrap: str, records: int, partitions: int, batch_records: int | None) -> None:
    from confluent_kafka import Producer

    config = producer_config(bootstrap, 60.0)
    if batch_records is not None:
        config["batch.num.messages"] = batch_records
    producer = Producer(config)
    value = b"v" * 100
    for index in range(records):
        producer.produce(TOPIC, value, partition=index % partitions)
        if index % 10_000 == 0:
            producer.poll(0)
    if producer.flush(60) != 0:
        raise RuntimeError("records left unacknowledged")


def _fetch_from(sock: socket.socket, offset: int, correlation_id: int) -> bytes:
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": FETCH_MAX_BYTES, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": TOPIC, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                        "fetch_offset": offset, "last_fetched_epoch": -1,
                                                        "log_start_offset": -1,
                                                        "partition_max_bytes": PARTITION_MAX_BYTES}]}],
            "forgotten_topics_data": [], "rack_id": ""}
    frame = codec.encode_request(FETCH, FETCH_VERSION, correlation_id, body, client_id="fetch-shape")
    sock.sendall(struct.pack(">i", len(frame)) + frame)
    (size,) = struct.unpack(">i", read_exactly(sock, 4))
    return read_exactly(sock, size)


def _batches(records: bytes) -> list[tuple[int, int]]:
    """(base offset, record count) of every whole batch in a partition's records."""
    found: list[tuple[int, int]] = []
    pos = 0
    while pos + 61 <= len(records):
        base, length = struct.unpack_from(">qi", records, pos)
        if pos + 12 + length > len(records):
            break  # a batch cut at the answer's size limit
        (count,) = struct.unpack_from(">i", records, pos + 57)
        found.append((base, count))
        pos += 12 + length
    return found


def answer_fields(body: dict[str, Any]) -> dict[str, Any]:
    """A decoded Fetch answer without its records (and without the broker's own ids and its throttle)."""
    fields = {name: value for name, value in body.items() if name not in ("responses", "node_endpoints")}
    fields["partitions"] = [{name: value for name, value in partition.items() if name != "records"}
                            for topic in body["responses"] for partition in topic["partitions"]]
    return fields


def _read_back(host: str, port: int, end: int) -> tuple[int, list[int], list[int], dict[str, Any]]:
    first: dict[str, Any] = {}
    batches = 0
    answer_bytes: list[int] = []
    per_answer: list[int] = []
    offset = 0
    with socket.create_connection((host, port), timeout=30) as sock:
        while offset < end:
            frame = _fetch_from(sock, offset, len(answer_bytes) + 1)
            _, body = codec.decode_response(FETCH, FETCH_VERSION, frame)
            first = first or answer_fields(body)
            [topic] = body["responses"]
            [partition] = topic["partitions"]
            if partition["error_code"]:
                # The librdkafka mock keeps the newest 5 MiB of a partition: ask it for fewer records.
                raise RuntimeError(f"Fetch at offset {offset} answered error {partition['error_code']}")
            records = bytes(partition["records"] or b"")
            whole = _batches(records)
            if not whole:
                raise RuntimeError(f"no whole batch at offset {offset}")
            answer_bytes.append(len(frame))
            per_answer.append(len(whole))
            batches += len(whole)
            last_base, last_count = whole[-1]
            offset = last_base + last_count
    return batches, answer_bytes, per_answer, first


def _consume_cpu(bootstrap: str, records: int, partitions: int,
                 consumer_settings: dict[str, Any], prefetch_s: float = 0.0) -> dict[str, float]:
    """µs of CPU per record, by thread of this process, to read every record back with confluent-kafka.

    With `prefetch_s`, the consumer is left that long after its assign() before anything is read from it, so
    librdkafka fetches into its queue (up to queued.max.messages.kbytes) before the application reads: how
    fast the broker answers then no longer decides how the fetching and the reading interleave, and the
    measure starts at the assign() to count the fetching too."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"fetch-shape-{time.monotonic_ns()}",
                         "enable.auto.commit": False, "log_level": 4, **consumer_settings})
    before: dict[str, float] | None = on_cpu_seconds_by_thread(os.getpid()) if prefetch_s > 0 else None
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(partitions)])
    time.sleep(prefetch_s)
    seen = 0
    deadline = time.monotonic() + 120
    while seen < records and time.monotonic() < deadline:
        batch = consumer.consume(10_000, 1.0)
        if batch and before is None:
            before = on_cpu_seconds_by_thread(os.getpid())
        seen += sum(1 for message in batch if message.error() is None)
    after = on_cpu_seconds_by_thread(os.getpid())
    consumer.close()
    if seen < records or before is None:
        raise RuntimeError(f"read back {seen} of {records} records")
    used = {name: (spent - before.get(name, 0.0)) / records * 1e6 for name, spent in after.items()}
    return {name: us for name, us in used.items() if us >= 0.005}


def measure(definition: BrokerDefinition, records: int, partitions: int, consumes: int,
            batch_records: int | None = None, consumer_settings: dict[str, Any] | None = None,
            prefetch_s: float = 0.0) -> Shape:
    with RunningBroker(definition) as broker:
        broker.start()
        broker.create_topic(TOPIC, partitions)
        _produce(broker.bootstrap, records, partitions, batch_records)
        host, port = broker.bootstrap.rsplit(":", 1)
        per_partition = records // partitions
        batches, answer_bytes, per_answer, first = _read_back(host, int(port), per_partition)
        cpu = [_consume_cpu(broker.bootstrap, records, partitions, consumer_settings or {}, prefetch_s)
               for _ in range(consumes)]
        return Shape(definition.label, batches, per_partition, len(answer_bytes), answer_bytes, per_answer, cpu,
                     first)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", default="kemu,kafka")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--consumes", type=int, default=3, help="read-backs whose consumer CPU is measured")
    parser.add_argument("--batch-records", type=int, help="the producer's batch.num.messages (default 10,000): "
                        "the same stored shape on every broker")
    parser.add_argument("--consumer", type=json.loads, default={},
                        help='consumer settings as JSON, e.g. \'{"queued.max.messages.kbytes": 2048}\'')
    parser.add_argument("--prefetch", type=float, default=0.0, metavar="S",
                        help="leave each consumer S seconds after assign() before reading: every broker's "
                             "answers are then in librdkafka's queue before the application reads them")
    args = parser.parse_args(argv)
    from benchmarks.peers import definitions

    for definition in definitions(args.brokers.split(",")):
        shape = measure(definition, args.records, args.partitions, args.consumes, args.batch_records,
                        args.consumer, args.prefetch)
        print("\n".join(shape.lines()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
