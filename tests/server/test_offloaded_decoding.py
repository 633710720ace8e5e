"""A request with more than ON_LOOP_ELEMENTS array elements is decoded on a worker thread (issue 16 item 1:
one near the 200,000-element budget held the loop for seconds): other connections are answered meanwhile,
and the request itself is answered as before, in its order on its connection."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.broker.config import BrokerConfig
from kemu.server import admission, connection
from kemu.wire.primitives import MAX_DECODED_ELEMENTS
from tests.server.broker_thread import BrokerThread

API_VERSIONS = {"client_software_name": "t", "client_software_version": "1"}
METADATA = 3
TIMEOUT_S = 30.0  # fails a stuck test instead of hanging it; not a measurement


def metadata(count: int) -> dict[str, Any]:
    return {"topics": [{"name": f"t{i}", "topic_id": uuid.UUID(int=0)} for i in range(count)],
            "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


@pytest.fixture
def served() -> Iterator[BrokerThread]:
    with BrokerThread(BrokerConfig(port=0)) as thread:
        yield thread


def test_a_big_request_decodes_off_the_loop_while_others_are_answered(
        served: BrokerThread, monkeypatch: pytest.MonkeyPatch) -> None:
    started, opened = threading.Event(), threading.Event()
    loop_thread = served.call(threading.get_ident)
    decoded_on: list[int] = []

    def gated(frame: bytes | memoryview, handlers: Any) -> Any:
        decoded_on.append(threading.get_ident())
        started.set()
        assert opened.wait(TIMEOUT_S)  # on the loop's thread this would stop every connection
        return admission.admit_whole(frame, handlers)

    monkeypatch.setattr(connection, "admit_whole", gated)
    big, other = served.connect(), served.connect()
    big.send(METADATA, 12, metadata(admission.ON_LOOP_ELEMENTS + 1))
    assert started.wait(TIMEOUT_S)
    assert other.request(18, 3, API_VERSIONS)["error_code"] == 0  # answered while the big one decodes
    assert other.request(METADATA, 12, metadata(3))["topics"][0]["error_code"] == 3  # small: on the loop
    assert len(decoded_on) == 1 and decoded_on[0] != loop_thread
    opened.set()
    _, body = big.receive(METADATA, 12)
    assert [t["name"] for t in body["topics"]] == [f"t{i}" for i in range(admission.ON_LOOP_ELEMENTS + 1)]
    assert {t["error_code"] for t in body["topics"]} == {3}


def test_past_the_whole_budget_the_connection_is_still_closed(served: BrokerThread) -> None:
    conn = served.connect()
    conn.send(METADATA, 12, metadata(MAX_DECODED_ELEMENTS + 1))
    assert conn.closed_by_peer()
    assert served.connect().request(18, 3, API_VERSIONS)["error_code"] == 0
