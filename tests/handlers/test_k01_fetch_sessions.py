"""Fetch sessions (KIP-227), used the way the Java client's FetchSessionHandler does."""

from __future__ import annotations

from typing import Any

import pytest

from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import (
    FETCH,
    batch,
    fetch_body,
    fetch_partitions,
    produce,
    topic_id,
    values_of,
)
from tests.handlers.harness import Broker, Connection


def summary(body: dict[str, Any], version: int) -> list[tuple[Any, int, list[bytes | None]]]:
    return [(topic, p["partition_index"], values_of(p["records"])) for topic, p in fetch_partitions(body, version)]


@pytest.mark.parametrize("version", [7, 12, 13, 17])
def test_full_then_incremental(broker: Broker, conn: Connection, version: int) -> None:
    create_topic(conn, "t", partitions=2)
    produce(conn, "t", batch(b"a"), partition=0)
    key: Any = topic_id(broker, "t") if version >= 13 else "t"

    full = conn.request(FETCH, version, fetch_body([(key, 0, 0), (key, 1, 0)], version=version, session_epoch=0))
    session = full["session_id"]
    assert session != 0 and full["error_code"] == 0
    assert summary(full, version) == [(key, 0, [b"a"]), (key, 1, [])]

    # Nothing changed for partition 1; partition 0 moved its fetch offset and has nothing new either, but
    # the cached high watermark is the same: an empty incremental response.
    nothing = conn.request(FETCH, version, fetch_body([(key, 0, 1)], version=version, session_id=session,
                                                      session_epoch=1))
    assert (nothing["error_code"], nothing["session_id"], nothing["responses"]) == (0, session, [])

    produce(conn, "t", batch(b"b"), partition=1)
    changed = conn.request(FETCH, version, fetch_body([], version=version, session_id=session, session_epoch=2))
    assert summary(changed, version) == [(key, 1, [b"b"])]

    # The session still reads partition 1 from the offset it cached until told otherwise.
    again = conn.request(FETCH, version, fetch_body([], version=version, session_id=session, session_epoch=3))
    assert summary(again, version) == [(key, 1, [b"b"])]
    # Move partition 1 on and forget partition 0: nothing new, so nothing in the response...
    forgot = conn.request(FETCH, version, fetch_body([(key, 1, 1)], version=version, session_id=session,
                                                     session_epoch=4, forgotten=[(key, [0])]))
    assert forgot["responses"] == []
    # ...and new data in the forgotten partition is none of the session's business.
    produce(conn, "t", batch(b"c"), partition=0)
    still = conn.request(FETCH, version, fetch_body([], version=version, session_id=session, session_epoch=5))
    assert still["responses"] == []


@pytest.mark.real_socket
def test_session_errors(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    full = conn.request(FETCH, 12, fetch_body([("t", 0, 0)], session_epoch=0))
    session = full["session_id"]
    unknown = conn.request(FETCH, 12, fetch_body([], session_id=session + 1, session_epoch=1))
    assert (unknown["error_code"], unknown["session_id"], unknown["responses"]) == (70, 0, [])
    wrong_epoch = conn.request(FETCH, 12, fetch_body([], session_id=session, session_epoch=5))
    assert (wrong_epoch["error_code"], wrong_epoch["session_id"]) == (71, 0)
    switched_to_ids = conn.request(FETCH, 13, fetch_body([], version=13, session_id=session, session_epoch=1))
    assert switched_to_ids["error_code"] == 106
    # The errors above did not consume the epoch: epoch 1 is still the next one.
    ok = conn.request(FETCH, 12, fetch_body([], session_id=session, session_epoch=1))
    assert (ok["error_code"], ok["session_id"]) == (0, session)


def test_full_fetch_closes_the_session_it_names(broker: Broker, conn: Connection) -> None:
    create_topic(conn, "t")
    session = conn.request(FETCH, 12, fetch_body([("t", 0, 0)], session_epoch=0))["session_id"]
    closed = conn.request(FETCH, 12, fetch_body([("t", 0, 0)], session_id=session, session_epoch=-1))
    assert (closed["error_code"], closed["session_id"]) == (0, 0)
    assert summary(closed, 12) == [("t", 0, [])]  # sessionless: every partition is answered
    gone = conn.request(FETCH, 12, fetch_body([], session_id=session, session_epoch=1))
    assert gone["error_code"] == 70


def test_partitions_with_data_go_to_the_back(broker: Broker, conn: Connection) -> None:
    """With a response limit that one partition fills, an incremental session serves them in turns: a
    partition that returned records moves to the back of the session (the full fetch keeps request order)."""
    create_topic(conn, "t", partitions=2)
    for index in (0, 1):
        for _ in range(3):
            produce(conn, "t", batch(b"x" * 500), partition=index)
    limits: dict[str, Any] = {"max_bytes": 600, "partition_max_bytes": 600}

    def served(body: dict[str, Any]) -> list[tuple[int, int]]:
        return [(p["partition_index"], len(values_of(p["records"]))) for _, p in fetch_partitions(body)
                if p["records"]]

    full = conn.request(FETCH, 12, fetch_body([("t", 0, 0), ("t", 1, 0)], session_epoch=0, **limits))
    assert served(full) == [(0, 1)]
    session = full["session_id"]
    first = conn.request(FETCH, 12, fetch_body([("t", 0, 1)], session_id=session, session_epoch=1, **limits))
    assert served(first) == [(0, 1)]  # session order is still 0, 1
    second = conn.request(FETCH, 12, fetch_body([("t", 0, 2)], session_id=session, session_epoch=2, **limits))
    assert served(second) == [(1, 1)]  # 0 went to the back after returning records
