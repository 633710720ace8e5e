"""ListOffsets with every client: earliest and latest, and offsets by timestamp (offsets_for_times)."""

from __future__ import annotations

import time

import pytest

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.record_clients import CLIENTS, Client, Confluent, Record, create_topic

COUNT = 10
STEP_MS = 10


@pytest.fixture(params=list(CLIENTS))
def client(request: pytest.FixtureRequest, kemu_server: KemuServeProcess) -> Client:
    return CLIENTS[request.param](kemu_server.bootstrap)


def test_offsets_by_timestamp_and_watermarks(client: Client, kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name, 2)
    base = int(time.time() * 1000) - 60_000
    # Partition 1: timestamps base, base+10, ... base+90 at offsets 0-9. Partition 0 stays empty.
    Confluent(kemu_server.bootstrap).produce(
        topic_name, [Record(1, f"k{i}".encode(), f"v{i}".encode(), timestamp=base + i * STEP_MS) for i in range(COUNT)])
    assert client.watermarks(topic_name, 1) == (0, COUNT)
    assert client.watermarks(topic_name, 0) == (0, 0)
    assert client.offset_for_time(topic_name, 1, base - 1000) == 0
    assert client.offset_for_time(topic_name, 1, base + 20) == 2  # exactly a record's time
    assert client.offset_for_time(topic_name, 1, base + 25) == 3  # the first one after it
    assert client.offset_for_time(topic_name, 1, base + 90) == 9
    assert client.offset_for_time(topic_name, 1, base + 91) is None  # nothing that late
    assert client.offset_for_time(topic_name, 0, base) is None  # nothing at all
