"""ListOffsets: the special timestamps, lookups by time, isolation, errors."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.log import AppendOrigin
from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import LIST_OFFSETS, batch, produce
from tests.handlers.harness import Broker, Connection

T0 = 1_700_000_000_000


def list_offsets(conn: Connection, wanted: list[tuple[str, int, int]], *, version: int = 10,
                 isolation_level: int = 0, replica_id: int = -1,
                 current_leader_epoch: int = -1) -> list[dict[str, Any]]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for name, index, timestamp in wanted:
        topics.setdefault(name, []).append({"partition_index": index, "timestamp": timestamp,
                                            "current_leader_epoch": current_leader_epoch})
    body = conn.request(LIST_OFFSETS, version, {
        "replica_id": replica_id, "isolation_level": isolation_level, "timeout_ms": 1000,
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()]})
    return [p for t in body["topics"] for p in t["partitions"]]


@pytest.fixture
def filled(conn: Connection) -> Connection:
    """Offsets 0-2 at T0, T0+1, T0+2; offsets 3-4 at T0+10, T0+5 (the max timestamp is at offset 3)."""
    create_topic(conn, "t")
    produce(conn, "t", batch(b"a", b"b", b"c", timestamp=T0))
    produce(conn, "t", batch(b"d", timestamp=T0 + 10))
    produce(conn, "t", batch(b"e", timestamp=T0 + 5))
    return conn


@pytest.mark.parametrize("version", range(1, 12))
def test_each_kind_of_lookup(broker: Broker, filled: Connection, version: int) -> None:
    epoch = 0 if version >= 4 else -1

    def one(timestamp: int) -> tuple[int, int, int, int]:
        [answer] = list_offsets(filled, [("t", 0, timestamp)], version=version)
        return answer["error_code"], answer["offset"], answer["timestamp"], answer["leader_epoch"]

    assert one(-2) == (0, 0, -1, epoch)
    assert one(-1) == (0, 5, -1, epoch)
    assert one(T0 + 1) == (0, 1, T0 + 1, epoch)
    assert one(T0 + 6) == (0, 3, T0 + 10, epoch)  # the first record at or after the time
    assert one(T0 + 11) == (0, -1, -1, -1)  # none: no error, unknown offset
    if version >= 7:
        assert one(-3) == (0, 3, T0 + 10, epoch)  # the max timestamp
    if version >= 8:
        assert one(-4) == (0, 0, -1, epoch)  # earliest local = earliest without tiered storage
    if version >= 9:
        assert one(-5) == (0, -1, -1, -1)  # nothing is tiered
    if version >= 11:
        assert one(-6) == (0, -1, -1, -1)  # nothing pending upload without tiered storage
    # A special timestamp older than the version, or no special timestamp at all: UNSUPPORTED_VERSION.
    for timestamp, since in ((-3, 7), (-4, 8), (-5, 9), (-6, 11), (-7, 99), (-100, 99)):
        if version < since:
            assert one(timestamp) == (35, -1, -1, -1)


@pytest.mark.real_socket
def test_duplicates_unknowns_and_epochs(broker: Broker, filled: Connection) -> None:
    answers = list_offsets(filled, [("t", 0, -1), ("t", 0, -2), ("t", 3, -1), ("nope", 0, -1)])
    assert [(a["partition_index"], a["error_code"], a["offset"]) for a in answers] == [
        (0, 42, -1), (0, 42, -1), (3, 3, -1), (0, 3, -1)]
    [fenced] = list_offsets(filled, [("t", 0, -1)], current_leader_epoch=5)
    assert fenced["error_code"] == 75  # newer than the broker's: UNKNOWN_LEADER_EPOCH


def test_read_committed_latest_is_the_lso(broker: Broker, filled: Connection) -> None:
    def open_transaction() -> None:
        log = broker.broker.partition("t", 0)
        assert log is not None
        log.append(batch(b"open", producer_id=5, producer_epoch=0, base_sequence=0, transactional=True,
                         timestamp=T0 + 20), origin=AppendOrigin.CLIENT)

    broker.call(open_transaction)
    assert list_offsets(filled, [("t", 0, -1)], isolation_level=1)[0]["offset"] == 5
    assert list_offsets(filled, [("t", 0, -1)], isolation_level=0)[0]["offset"] == 6
    # A timestamp lookup stops below the bound too.
    assert list_offsets(filled, [("t", 0, T0 + 20)], isolation_level=1)[0]["offset"] == -1
    assert list_offsets(filled, [("t", 0, T0 + 20)], isolation_level=0)[0]["offset"] == 5
    # Only consumers get an isolation level: a "debugging" replica id reads to the log end.
    assert list_offsets(filled, [("t", 0, -1)], isolation_level=1, replica_id=-2)[0]["offset"] == 6
