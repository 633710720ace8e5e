"""DeleteRecords: the new low watermark, -1 for the high watermark, Kafka's refusals."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.admin.topics import auto_creation_request, create_topics
from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import (
    DELETE_RECORDS,
    FETCH,
    LIST_OFFSETS,
    batch,
    fetch_body,
    fetch_partitions,
    produce,
    values_of,
)
from tests.handlers.harness import Broker, Connection


def delete_records(conn: Connection, wanted: list[tuple[str, int, int]], version: int = 2) -> list[dict[str, Any]]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for name, index, offset in wanted:
        topics.setdefault(name, []).append({"partition_index": index, "offset": offset})
    body = conn.request(DELETE_RECORDS, version, {
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()], "timeout_ms": 1000})
    return [p for t in body["topics"] for p in t["partitions"]]


@pytest.mark.parametrize("version", range(3))
def test_delete_then_read_from_the_new_start(broker: Broker, conn: Connection, version: int) -> None:
    create_topic(conn, "t")
    for value in (b"a", b"b", b"c", b"d"):
        produce(conn, "t", batch(value))
    [answer] = delete_records(conn, [("t", 0, 2)], version)
    assert answer == {"partition_index": 0, "low_watermark": 2, "error_code": 0}
    earliest = conn.request(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "timestamp": -2}]}]})
    assert earliest["topics"][0]["partitions"][0]["offset"] == 2
    below = fetch_partitions(conn.request(FETCH, 12, fetch_body([("t", 0, 1)])))[0][1]
    assert below["error_code"] == 1
    fetched = fetch_partitions(conn.request(FETCH, 12, fetch_body([("t", 0, 2)])))[0][1]
    assert (fetched["log_start_offset"], values_of(fetched["records"])) == (2, [b"c", b"d"])


def test_minus_one_is_the_high_watermark_and_beyond_it_is_refused(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t", partitions=2)
    produce(conn, "t", batch(b"a", b"b"))
    produce(conn, "t", batch(b"c"), partition=1)
    answers = delete_records(conn, [("t", 0, -1), ("t", 1, 5)])
    assert [(a["error_code"], a["low_watermark"]) for a in answers] == [(0, 2), (1, -1)]
    [negative] = delete_records(conn, [("t", 1, -7)])
    assert (negative["error_code"], negative["low_watermark"]) == (1, -1)
    [backwards] = delete_records(conn, [("t", 0, 1)])  # never moves back
    assert (backwards["error_code"], backwards["low_watermark"]) == (0, 2)


@pytest.mark.real_socket
def test_refusals(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "compacted", configs={"cleanup.policy": "compact"})
    broker.call(lambda: create_topics(broker.broker, [auto_creation_request(broker.broker, "__transaction_state")]))
    answers = delete_records(conn, [("compacted", 0, 0), ("nope", 0, 0), ("compacted", 4, 0),
                                    ("__transaction_state", 0, 0)])
    assert [(a["partition_index"], a["error_code"], a["low_watermark"]) for a in answers] == [
        (0, 44, -1), (4, 3, -1), (0, 3, -1), (0, 17, -1)]
