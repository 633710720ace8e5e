"""Helpers for the data-plane handler tests (Produce, Fetch, ListOffsets, DeleteRecords, ...): topics,
record batches and requests, with Kafka's field names."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from kemu.wire.compression import CompressionType
from kemu.wire.records import NewRecord, RecordBatch, build_batch, iter_batches
from tests.handlers.harness import Broker, Connection

PRODUCE, FETCH, LIST_OFFSETS, DELETE_RECORDS, OFFSET_FOR_LEADER_EPOCH = 0, 1, 2, 21, 23


def topic_id(broker: Broker, name: str) -> uuid.UUID:
    topic = broker.broker.topics.get(name)
    assert topic is not None
    return topic.topic_id


def batch(*values: bytes | None, key: bytes | None = None, timestamp: int = 1_700_000_000_000,
          compression: CompressionType = CompressionType.NONE, **kwargs: Any) -> bytes:
    return build_batch([NewRecord(v, key=key, timestamp=timestamp + i) for i, v in enumerate(values)],
                       compression=compression, **kwargs)


def produce_body(records: dict[tuple[Any, int], bytes | None], *, acks: int = -1,
                 transactional_id: str | None = None, version: int = 11) -> dict[str, Any]:
    """A Produce request for {(topic name, or from v13 topic id, partition): records}."""
    topics: dict[Any, list[dict[str, Any]]] = {}
    for (topic, index), data in records.items():
        topics.setdefault(topic, []).append({"index": index, "records": data})
    field = "topic_id" if version >= 13 else "name"
    return {"transactional_id": transactional_id, "acks": acks, "timeout_ms": 5000,
            "topic_data": [{field: topic, "partition_data": parts} for topic, parts in topics.items()]}


def produce(conn: Connection, topic: Any, data: bytes, *, partition: int = 0, version: int = 11,
            acks: int = -1) -> dict[str, Any]:
    """Produce one batch to a topic (its name, or from v13 its id); returns the partition response."""
    body = conn.request(PRODUCE, version, produce_body({(topic, partition): data}, acks=acks, version=version))
    [answered] = body["responses"]
    assert answered["topic_id" if version >= 13 else "name"] == topic
    [response] = answered["partition_responses"]
    return dict(response)


def fetch_body(partitions: list[tuple[Any, int, int]], *, version: int = 12, max_wait_ms: int = 0,
               min_bytes: int = 1, max_bytes: int = 50 * 1024 * 1024, partition_max_bytes: int = 1024 * 1024,
               isolation_level: int = 0, session_id: int = 0, session_epoch: int = -1,
               forgotten: list[tuple[Any, list[int]]] | None = None, **partition_fields: Any) -> dict[str, Any]:
    """A Fetch request for [(topic name or id, partition, offset)]."""
    topics: list[dict[str, Any]] = []
    for topic, index, offset in partitions:
        entry = {"partition": index, "fetch_offset": offset, "partition_max_bytes": partition_max_bytes,
                 **partition_fields}
        topic_key = "topic_id" if version >= 13 else "topic"
        if topics and topics[-1][topic_key] == topic:
            topics[-1]["partitions"].append(entry)
        else:
            topics.append({topic_key: topic, "partitions": [entry]})
    topic_key = "topic_id" if version >= 13 else "topic"
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes, "max_bytes": max_bytes,
            "isolation_level": isolation_level, "session_id": session_id, "session_epoch": session_epoch,
            "topics": topics,
            "forgotten_topics_data": [{topic_key: t, "partitions": ps} for t, ps in forgotten or []]}


def fetch_partitions(response: dict[str, Any], version: int = 12) -> list[tuple[Any, dict[str, Any]]]:
    """[(topic name or id, partition response)] in response order."""
    topic_key = "topic_id" if version >= 13 else "topic"
    return [(t[topic_key], p) for t in response["responses"] for p in t["partitions"]]


def values_of(records: bytes | None) -> list[bytes | None]:
    """The record values of whole batches (a trailing partial batch is ignored, as clients do)."""
    return [r.value for b in iter_batches(records or b"") for r in b.records()]


def batches_of(records: bytes | None) -> list[RecordBatch]:
    return list(iter_batches(records or b""))


def wait_until(condition: Any, what: str, timeout: float = 10.0) -> None:
    """Poll `condition()` (a cheap check on the broker thread) until it is true."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        pause.wait(0.002)


def listener_count(broker: Broker, name: str, partition: int = 0) -> int:
    """How many listeners the partition's log has (a parked fetch adds one)."""
    def count() -> int:
        found = broker.broker.partition(name, partition)
        assert found is not None
        return len(found.log._listeners)

    return broker.call(count)
