"""OffsetForLeaderEpoch: end offsets per leader epoch, as consumers check them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import OFFSET_FOR_LEADER_EPOCH, batch, produce
from tests.handlers.harness import Broker, Connection


def epochs(conn: Connection, wanted: list[tuple[str, int, int]], *, version: int = 4,
           current_leader_epoch: int = -1) -> list[tuple[int, int, int]]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for name, index, epoch in wanted:
        topics.setdefault(name, []).append({"partition": index, "leader_epoch": epoch,
                                            "current_leader_epoch": current_leader_epoch})
    body = conn.request(OFFSET_FOR_LEADER_EPOCH, version, {
        "replica_id": -2, "topics": [{"topic": name, "partitions": parts} for name, parts in topics.items()]})
    return [(p["error_code"], p["leader_epoch"], p["end_offset"]) for t in body["topics"] for p in t["partitions"]]


@pytest.mark.parametrize("version", range(2, 5))
def test_end_offsets_per_epoch(broker: Broker, conn: Connection, version: int) -> None:
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a", b"b"))

    def new_leader_epoch() -> None:
        partition = broker.broker.topics.get("t").partitions[0]  # type: ignore[union-attr]
        partition.leader_epoch = 3  # type: ignore[union-attr]

    broker.call(new_leader_epoch)
    produce(conn, "t", batch(b"c"))
    assert epochs(conn, [("t", 0, 0), ("t", 0, 1), ("t", 0, 3), ("t", 0, 9)], version=version) == [
        (0, 0, 2), (0, 0, 2), (0, 3, 3), (0, -1, -1)]


def test_errors(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    assert epochs(conn, [("nope", 0, 0), ("t", 2, 0)]) == [(3, -1, -1), (3, -1, -1)]
    assert epochs(conn, [("t", 0, 0)], current_leader_epoch=1) == [(75, -1, -1)]
    assert epochs(conn, [("t", 0, 0)], current_leader_epoch=0) == [(0, 0, 0)]  # known from the start, as in Kafka


@pytest.mark.real_socket
def test_versions_kafka_4_removed_are_refused(broker: Broker, conn: Connection) -> None:
    conn.send(OFFSET_FOR_LEADER_EPOCH, 1, {"topics": []})
    assert conn.closed_by_peer()
