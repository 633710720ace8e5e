"""DeleteRecords with each client that has it, then consuming from the partition's new start."""

from __future__ import annotations

import pytest

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.record_clients import (
    CLIENTS,
    DELETERS,
    AioKafka,
    Client,
    Confluent,
    KafkaPython,
    Record,
    create_topic,
)

COUNT = 10
DELETE_BEFORE = 4


@pytest.mark.parametrize("deleter", DELETERS)
def test_delete_records_then_consume_from_the_new_start(deleter: str, kemu_server: KemuServeProcess,
                                                        topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name)
    records = [Record(0, f"k{i}".encode(), f"v{i}".encode()) for i in range(COUNT)]
    Confluent(kemu_server.bootstrap).produce(topic_name, records)
    client: Client = CLIENTS[deleter](kemu_server.bootstrap)
    client.delete_records(topic_name, 0, DELETE_BEFORE)  # type: ignore[attr-defined]
    remaining = [r.value for r in records[DELETE_BEFORE:]]
    for reader in (cls(kemu_server.bootstrap) for cls in CLIENTS.values()):
        assert reader.watermarks(topic_name, 0) == (DELETE_BEFORE, COUNT), reader.name
        got = reader.read(topic_name, 0, DELETE_BEFORE, COUNT - DELETE_BEFORE)
        expected = list(zip(range(DELETE_BEFORE, COUNT), remaining, strict=True))
        assert [(r.offset, r.value) for r in got] == expected, reader.name
    # Consumers positioned below the new start get OFFSET_OUT_OF_RANGE and reset to it (auto.offset.reset).
    for reader in (Confluent(kemu_server.bootstrap), KafkaPython(kemu_server.bootstrap),
                   AioKafka(kemu_server.bootstrap)):
        got = reader.read(topic_name, 0, 0, COUNT - DELETE_BEFORE)
        assert [r.offset for r in got] == list(range(DELETE_BEFORE, COUNT)), reader.name


def test_delete_up_to_the_high_watermark(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name)
    confluent = Confluent(kemu_server.bootstrap)
    confluent.produce(topic_name, [Record(0, None, b"gone")] * 3)
    confluent.delete_records(topic_name, 0, -1)  # -1: everything up to the high watermark
    assert confluent.watermarks(topic_name, 0) == (3, 3)
    assert confluent.produce(topic_name, [Record(0, None, b"next")]) == [3]
    assert [r.value for r in confluent.read(topic_name, 0, 3, 1)] == [b"next"]
