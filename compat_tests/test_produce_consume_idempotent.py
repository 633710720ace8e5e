"""Idempotent producers (enable.idempotence) writing 10,000 records: every record exactly once, at
consecutive offsets, in batches that carry the producer id and sequence numbers the broker checked."""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path

import pytest

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.record_clients import CLIENTS, Confluent, KcatClient, Record, create_topic

COUNT = 10_000
PARTITIONS = 2


@pytest.mark.parametrize("name", list(CLIENTS))
def test_ten_thousand_records_exactly_once(name: str, kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name, PARTITIONS)
    client = CLIENTS[name](kemu_server.bootstrap)
    if isinstance(client, KcatClient):
        records = [Record(0, None, f"{name}-{i}".encode()) for i in range(COUNT)]  # one partition per kcat run
    else:
        records = [Record(i % PARTITIONS, None, f"{name}-{i}".encode()) for i in range(COUNT)]
    offsets = client.produce(topic_name, records, idempotent=True)

    per_partition = Counter(r.partition for r in records)
    acked = {(r.partition, o) for r, o in zip(records, offsets, strict=True)}
    assert acked == {(p, o) for p, n in per_partition.items() for o in range(n)}
    seen = []
    reader = Confluent(kemu_server.bootstrap)
    for partition, count in per_partition.items():
        assert reader.watermarks(topic_name, partition) == (0, count)
        seen += [r.value for r in reader.read(topic_name, partition, 0, count)]
    assert sorted(seen, key=lambda v: v or b"") == sorted((r.value for r in records), key=lambda v: v or b"")
    for partition in per_partition:
        producer_ids, sequences = batch_producer_state(kemu_server.data_dir / f"{topic_name}-{partition}")
        assert len(producer_ids) == 1 and min(producer_ids) >= 0
        assert sequences == list(range(len(sequences)))  # sequences gapless from 0, as the broker checked


def batch_producer_state(directory: Path) -> tuple[set[int], list[int]]:
    """The producer ids of the partition's batches and every record's sequence number, in log order."""
    producer_ids: set[int] = set()
    sequences: list[int] = []
    for segment in sorted(directory.glob("*.log")):
        data = segment.read_bytes()
        position = 0
        while position + 61 <= len(data):
            (length,) = struct.unpack_from(">i", data, position + 8)
            (last_delta,) = struct.unpack_from(">i", data, position + 23)
            producer_id, _epoch, base_sequence = struct.unpack_from(">qhi", data, position + 43)
            producer_ids.add(producer_id)
            sequences += range(base_sequence, base_sequence + last_delta + 1)
            position += 12 + length
    return producer_ids, sequences
