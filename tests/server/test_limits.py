"""Kafka's connection and request limits on a served broker: max.connections.per.ip (and its overrides),
max.connections, connections.max.idle.ms, queued.max.requests, and the bound on finished responses a slow
reader can leave buffered. Each waits on the outcome itself (an answer, a close), never on a duration; the
"not answered while full" checks can only miss a defect, never invent one."""

from __future__ import annotations

import select
from collections.abc import Iterator

import pytest

from compat_tests.polling import wait_for
from kemu.broker.config import BrokerConfig
from kemu.server import connection
from kemu.server.limits import parse_overrides
from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import batch, fetch_body, produce_body
from tests.server.broker_thread import BrokerThread
from tests.server.kafka_socket import KafkaSocket

API_VERSIONS = {"client_software_name": "t", "client_software_version": "1"}


def answers(conn: KafkaSocket) -> bool:
    return conn.request(18, 3, API_VERSIONS)["error_code"] == 0


def a_new_connection_answers(served: BrokerThread) -> bool:
    """The broker notices a client's close a moment after it happens: until then the slot is still taken."""
    with served.connect() as conn:
        try:
            return answers(conn)
        except ConnectionError:
            return False


def nothing_arrives(conn: KafkaSocket, within_s: float = 0.5) -> bool:
    ready, _, _ = select.select([conn.sock], [], [], within_s)
    return not ready


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[BrokerThread]:
    config = BrokerConfig(port=0, **request.param)
    with BrokerThread(config) as broker:
        yield broker


@pytest.mark.parametrize("served", [{"max_connections_per_ip": 2}], indirect=True)
def test_a_connection_past_max_connections_per_ip_is_closed_at_once(served: BrokerThread) -> None:
    with served.connect() as first, served.connect() as second:
        assert answers(first) and answers(second)
        with served.connect() as third:
            assert third.closed_by_peer()
        assert answers(first)
    wait_for(lambda: a_new_connection_answers(served), what="a connection once the others closed")


@pytest.mark.parametrize("served", [{"max_connections_per_ip": 1,
                                     "max_connections_per_ip_overrides": "127.0.0.1:3,otherhost:1"}], indirect=True)
def test_an_override_raises_one_address_maximum(served: BrokerThread) -> None:
    with served.connect() as a, served.connect() as b, served.connect() as c:
        assert answers(a) and answers(b) and answers(c)
        with served.connect() as d:
            assert d.closed_by_peer()


@pytest.mark.parametrize("served", [{"max_connections": 2}], indirect=True)
def test_past_max_connections_a_connection_waits_until_another_closes(served: BrokerThread) -> None:
    first, second = served.connect(), served.connect()
    assert answers(first) and answers(second)
    with served.connect() as waiting:
        waiting.send(18, 3, API_VERSIONS)
        assert nothing_arrives(waiting)
        first.close()
        assert waiting.receive(18, 3)[1]["error_code"] == 0
    second.close()


@pytest.mark.parametrize("served", [{"connections_max_idle_ms": 300}], indirect=True)
def test_an_idle_connection_is_closed_and_a_busy_one_is_not(served: BrokerThread) -> None:
    with served.connect() as idle, served.connect() as busy:
        assert answers(idle)
        while not select.select([idle.sock], [], [], 0.05)[0]:
            assert answers(busy)  # keeps talking for as long as the idle one is open
        assert idle.closed_by_peer()
        assert answers(busy)


@pytest.mark.parametrize("served", [{"queued_max_requests": 1}], indirect=True)
def test_with_a_queue_of_one_pipelined_requests_are_all_answered_in_order(served: BrokerThread) -> None:
    with served.connect() as conn, served.connect() as other:
        conn.send_raw(b"".join(conn.encode(18, 3, API_VERSIONS, correlation_id=i) for i in range(50)))
        other.send_raw(b"".join(other.encode(18, 3, API_VERSIONS, correlation_id=i) for i in range(50)))
        assert [conn.receive(18, 3)[0] for _ in range(50)] == list(range(50))
        assert [other.receive(18, 3)[0] for _ in range(50)] == list(range(50))


def test_overrides_parse_hosts_and_ipv6_literals() -> None:
    assert parse_overrides("") == {}
    assert parse_overrides("a:1, 10.0.0.1:20,[::1]:3") == {"a": 1, "10.0.0.1": 20, "::1": 3}
    with pytest.raises(ValueError, match="max.connections.per.ip.overrides"):
        parse_overrides("a:b")


@pytest.mark.parametrize("served", [{}], indirect=True)
def test_a_reader_that_does_not_read_stops_the_connection_admitting_requests(
        served: BrokerThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "MAX_BUFFERED_RESPONSE_BYTES", 1024 * 1024)
    with served.connect() as admin:
        create_topic(admin, "big")
        create_topic(admin, "marker")
        for _ in range(2):
            admin.request(0, 9, produce_body({("big", 0): batch(bytes(900_000))}))
    slow = served.connect()
    fetch = fetch_body([("big", 0, 0)], version=4, max_bytes=2 * 1024 * 1024,
                       partition_max_bytes=2 * 1024 * 1024)
    # 30 fetches of ~1.8 MB each, then a produce: were the responses not bounded, all 31 would be executed
    # at once, ~54 MB held for a client that reads nothing (the sockets' buffers take a few MB of it).
    slow.send_raw(b"".join(slow.encode(1, 4, fetch) for _ in range(30))
                  + slow.encode(0, 9, produce_body({("marker", 0): batch(b"m")})))
    with served.connect() as admin:
        before = admin.request(2, 1, {"replica_id": -1, "topics": [
            {"name": "marker", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
    assert before["topics"][0]["partitions"][0]["offset"] == 0  # the produce waits behind the unread fetches
    for _ in range(30):
        assert slow.receive(1, 4)[1]["error_code"] == 0
    assert slow.receive(0, 9)[1]["responses"][0]["partition_responses"][0]["error_code"] == 0
    slow.close()
