"""DescribeLogDirs: every version, sizes, the topics filter, volume sizes (v4)."""

from __future__ import annotations

import pytest

from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import batch, produce
from tests.handlers.harness import Broker, Connection

KEY = 35


@pytest.mark.parametrize("version", range(1, 6))
def test_every_version(conn: Connection, broker: Broker, version: int) -> None:
    create_topic(conn, "t", 2)
    produce(conn, "t", batch(b"hello", b"world"))
    body = conn.request(KEY, version, {"topics": None})
    assert body["error_code"] == 0
    [log_dir] = body["results"]
    assert (log_dir["error_code"], log_dir["log_dir"]) == (0, str(broker.broker.data_dir.absolute()))
    [topic] = [t for t in log_dir["topics"] if t["name"] == "t"]
    written = broker.broker.partition("t", 0).log.size_in_bytes  # type: ignore[union-attr]
    assert written > 0
    assert topic["partitions"] == [
        {"partition_index": 0, "partition_size": written, "offset_lag": 0, "is_future_key": False},
        {"partition_index": 1, "partition_size": 0, "offset_lag": 0, "is_future_key": False}]
    if version >= 4:
        assert log_dir["total_bytes"] >= log_dir["usable_bytes"] > 0
    else:
        assert log_dir["total_bytes"] == log_dir["usable_bytes"] == -1
    assert log_dir["is_cordoned"] is False  # v5's, and the default before it: kemu cordons no directory


@pytest.mark.real_socket
def test_topics_filter(conn: Connection) -> None:
    create_topic(conn, "t", 2)
    create_topic(conn, "u")
    body = {"topics": [{"topic": "t", "partitions": [1, 9]}, {"topic": "missing", "partitions": [0]}]}
    [log_dir] = conn.request(KEY, 4, body)["results"]
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in log_dir["topics"]] == [("t", [1])]
    [empty] = conn.request(KEY, 4, {"topics": []})["results"]
    assert empty["topics"] == []
