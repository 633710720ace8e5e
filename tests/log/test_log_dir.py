"""A data directory of partition logs, with Kafka's log-start-offset-checkpoint and partition.metadata."""

from __future__ import annotations

import uuid
from pathlib import Path

from kemu.log import LogConfig, LogDir
from kemu.log.log_dir import LOG_START_OFFSET_CHECKPOINT, kafka_uuid_string, parse_kafka_uuid, parse_partition_dir_name

from .conftest import batch

DAY = 86_400_000


def test_partition_dir_names() -> None:
    assert parse_partition_dir_name("my-topic-12") == ("my-topic", 12)
    assert parse_partition_dir_name("__consumer_offsets-0") == ("__consumer_offsets", 0)
    assert parse_partition_dir_name("t-0.6f1e2a3b4c-delete") is None
    assert parse_partition_dir_name("t-0.6f1e2a3b4c-future") is None
    assert parse_partition_dir_name("log-start-offset-checkpoint") is None


def test_kafka_uuid_strings() -> None:
    value = uuid.UUID("0f9e9c2a-8d1b-4b7e-9a55-1c3b6e0b8d11")
    text = kafka_uuid_string(value)
    assert len(text) == 22 and "=" not in text
    assert parse_kafka_uuid(text) == value


def test_log_start_offsets_survive_a_restart(tmp_path: Path, clock) -> None:
    config = LogConfig(segment_bytes=600)
    logs = LogDir(tmp_path, clock)
    topic_id = uuid.uuid4()
    a = logs.open("a", 0, config, topic_id=topic_id)
    b = logs.open("b", 1, config)
    for _ in range(10):
        a.append(batch(1, value_size=100))
        b.append(batch(1, value_size=100))
    a.delete_records(7)
    assert (tmp_path / LOG_START_OFFSET_CHECKPOINT).read_text() == "0\n1\na 0 7\n"
    logs.run_retention()
    assert a.segments[0].base_offset > 0
    logs.close()

    again = LogDir(tmp_path, clock)
    assert again.discover() == [("a", 0), ("b", 1)]
    opened = again.open_all(lambda topic: config)
    assert opened[("a", 0)].log_start_offset == 7
    assert opened[("b", 1)].log_start_offset == 0
    assert again.topic_id("a", 0) == topic_id and again.topic_id("b", 1) is None
    expected = f"version: 0\ntopic_id: {kafka_uuid_string(topic_id)}\n"
    assert (tmp_path / "a-0" / "partition.metadata").read_text() == expected


def test_retention_across_logs_and_deletion(tmp_path: Path, clock) -> None:
    logs = LogDir(tmp_path, clock)
    short = logs.open("short", 0, LogConfig(retention_ms=DAY, segment_bytes=600))
    long = logs.open("long", 0, LogConfig(segment_bytes=600))
    for _ in range(10):
        short.append(batch(1, value_size=100, timestamp=clock.now_ms()))
        long.append(batch(1, value_size=100, timestamp=clock.now_ms()))
    clock.advance(2 * DAY)
    assert logs.run_retention() > 0
    assert short.log_start_offset == 10 and long.log_start_offset == 0
    logs.delete("short", 0)
    assert not (tmp_path / "short-0").exists()
    assert logs.get("short", 0) is None and len(logs) == 1
    assert "short" not in (tmp_path / LOG_START_OFFSET_CHECKPOINT).read_text()


def test_a_deleted_log_is_freed_without_the_cycle_collector(tmp_path: Path, clock) -> None:
    """A listener that holds its log (as the transactional partition does) made a cycle: a deleted partition
    waited for a full collection, or for ever once the server froze it out of them. Closing drops the
    listeners, so reference counting frees the log and its segments the moment the last reference goes."""
    import gc
    import weakref

    from kemu.log.partition_log import PartitionLog

    class Holder:
        def __init__(self, log: PartitionLog) -> None:
            self.log = log
            log.add_listener(self.on_event)

        def on_event(self, log: PartitionLog, event: object) -> None:
            pass

    logs = LogDir(tmp_path, clock)
    opened = logs.open("gone", 0, LogConfig())
    opened.append(batch(1))
    holder = Holder(opened)
    freed = weakref.ref(opened)
    segment = weakref.ref(opened.segments[0])
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        logs.delete("gone", 0)
        del opened, holder
        assert freed() is None and segment() is None
    finally:
        if was_enabled:
            gc.enable()
