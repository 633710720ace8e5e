"""The control endpoint in-process (a handle and its `ControlEndpoint`): each operation does what the handle's
own call does, refusals carry Kafka's error names, and the small HTTP server keeps to HTTP/1.1 as curl, node
and urllib speak it. `kemu serve`'s handle (`ServedBroker`) advertises what its flags say, from the first
request on and across restarts."""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator

import pytest

from kemu.testing import Broker
from kemu.testing.control import ControlEndpoint
from kemu.testing.faults import Fault
from kemu.testing.served import ServedBroker, start_broker
from kemu.testing.serving import ServeOptions
from tests.server.kafka_socket import KafkaSocket
from tests.testing.test_control_openapi import send, wait_until_crashed

METADATA = 3


@pytest.fixture
def served() -> Iterator[tuple[Broker, str]]:
    with Broker(virtual_clock=True) as broker, ControlEndpoint(broker) as control:
        yield broker, control.url


def test_advance_moves_the_frozen_clock_and_freeze_resume_toggle(served: tuple[Broker, str]) -> None:
    broker, url = served
    before = send(url, "GET", "/clock").json()
    assert before == {"now_ms": broker.clock.now_ms(), "frozen": True}
    after = send(url, "POST", "/clock/advance", body={"seconds": 61.5}).json()
    assert after == {"now_ms": before["now_ms"] + 61_500, "frozen": True}
    assert send(url, "POST", "/clock/resume").json()["frozen"] is False
    assert not broker.clock.frozen
    assert send(url, "POST", "/clock/freeze").json()["frozen"] is True
    refused = send(url, "POST", "/clock/advance", body={"seconds": -1})
    assert (refused.status, refused.json()["error"]["code"]) == (400, "BAD_REQUEST")
    assert send(url, "POST", "/clock/advance", body={"seconds": "61"}).status == 400


def test_advance_fires_what_fell_due_before_answering(served: tuple[Broker, str]) -> None:
    broker, url = served
    broker.create_topic("t")
    coordinator = broker.coordinators.txn.coordinator
    init = broker.call(lambda: coordinator.init_producer_id("stalled", 60_000))
    broker.call(lambda: coordinator.add_partitions("stalled", init.producer_id, init.producer_epoch, [("t", 0)]))
    state = lambda: broker.call(lambda: coordinator.describe("stalled").state.name)  # noqa: E731
    assert state() == "ONGOING"
    send(url, "POST", "/clock/advance", body={"seconds": 61})
    assert state() in {"PREPARE_ABORT", "COMPLETE_ABORT"}


def test_topics_and_records_are_the_handles(served: tuple[Broker, str]) -> None:
    broker, url = served
    created = send(url, "POST", "/topics", body={"name": "t", "partitions": 2, "config": {"retention.ms": "1000"}})
    assert (created.status, created.json()) == (201, {"name": "t", "partitions": 2, "config": {"retention.ms": "1000"}})
    listed = {t["name"]: t for t in send(url, "GET", "/topics").json()["topics"]}
    assert listed["t"] == {"name": "t", "partitions": 2, "internal": False, "config": {"retention.ms": "1000"}}
    binary = bytes([0xFF, 0x00])
    appended = send(url, "POST", "/topics/t/records", body={
        "partition": 1, "key": "k", "value_base64": base64.b64encode(binary).decode(),
        "headers": [{"key": "h", "value": "v"}, {"key": "none", "value": None}], "timestamp": 5})
    assert (appended.status, appended.json()) == (201, {"topic": "t", "partition": 1, "offset": 0})
    broker.produce("t", "plain")
    [plain, raw] = send(url, "GET", "/topics/t/records").json()["records"]
    assert (plain["partition"], plain["value"], plain["key"], plain["key_base64"]) == (0, "plain", None, None)
    assert raw == {"topic": "t", "partition": 1, "offset": 0, "timestamp": 5, "key": "k", "key_base64": "aw==",
                   "value": None, "value_base64": base64.b64encode(binary).decode(),
                   "headers": [{"key": "h", "value": "v", "value_base64": "dg=="},
                               {"key": "none", "value": None, "value_base64": None}]}
    assert [r.value for r in broker.records("t", 1)] == [binary]
    only = send(url, "GET", "/topics/t/records", query={"partition": 1}).json()["records"]
    assert [r["offset"] for r in only] == [0]


def test_read_committed_leaves_out_an_open_transaction(served: tuple[Broker, str]) -> None:
    broker, url = served
    broker.create_topic("t")
    coordinator = broker.coordinators.txn.coordinator

    def open_transaction() -> None:
        from kemu.wire.records import NewRecord, build_batch

        init = coordinator.init_producer_id("open", 60_000)
        coordinator.add_partitions("open", init.producer_id, init.producer_epoch, [("t", 0)])
        partition = broker.core.partition("t", 0)
        assert partition is not None
        partition.append(build_batch([NewRecord(value=b"open", timestamp=1)], producer_id=init.producer_id,
                                     producer_epoch=init.producer_epoch, base_sequence=0, transactional=True))

    broker.call(open_transaction)
    broker.produce("t", "after")
    values = lambda **query: [r["value"] for r in send(url, "GET", "/topics/t/records", query=query)  # noqa: E731
                              .json()["records"]]
    assert values() == ["open", "after"]
    assert values(read_committed="true") == []
    send(url, "POST", "/clock/advance", body={"seconds": 61})
    assert values(read_committed="true") == ["after"]


def test_refusals_carry_kafkas_error_names(served: tuple[Broker, str]) -> None:
    _, url = served
    assert send(url, "POST", "/topics", body={"name": "t"}).status == 201
    again = send(url, "POST", "/topics", body={"name": "t"})
    assert (again.status, again.json()["error"]["code"]) == (409, "TOPIC_ALREADY_EXISTS")
    bad = send(url, "POST", "/topics", body={"name": "bad/name"})
    assert (bad.status, bad.json()["error"]["code"]) == (400, "INVALID_TOPIC_EXCEPTION")
    missing = send(url, "GET", "/topics/nope/records")
    assert (missing.status, missing.json()["error"]["code"]) == (404, "UNKNOWN_TOPIC_OR_PARTITION")
    assert send(url, "GET", "/topics/t/records", query={"partition": 7}).status == 404
    assert send(url, "POST", "/topics/t/records", body={"partition": 3, "value": "x"}).status == 404
    for body in (b"{", b"[]", b'{"name": 5}', b'{"name": "u", "partitions": true}',
                 b'{"name": "u", "config": {"a": 1}}'):
        refused = send(url, "POST", "/topics", raw_body=body)
        assert (refused.status, refused.json()["error"]["code"]) == (400, "BAD_REQUEST"), body
    wrong = send(url, "DELETE", "/topics")
    assert (wrong.status, wrong.json()["error"]["code"]) == (405, "METHOD_NOT_ALLOWED")


def test_restart_kill_and_reset(served: tuple[Broker, str]) -> None:
    broker, url = served
    broker.create_topic("t")
    broker.produce("t", "one")
    port = broker.port
    for operation in ("/restart", "/kill"):
        answer = send(url, "POST", operation).json()
        assert answer["bootstrap_servers"] == f"127.0.0.1:{port}"
        assert [r.value for r in broker.records("t")] == [b"one"]
    send(url, "POST", "/reset")
    assert [t["name"] for t in send(url, "GET", "/topics").json()["topics"]] == []
    assert broker.port == port


def _metadata(broker: Broker, client_id: str = "kemu-tests") -> dict[str, object]:
    with KafkaSocket(("127.0.0.1", broker.port), client_id=client_id) as conn:
        return conn.request(METADATA, 9, {"topics": [], "allow_auto_topic_creation": False})


def test_faults_are_armed_from_json_and_count_their_hits(served: tuple[Broker, str]) -> None:
    broker, url = served
    added = send(url, "POST", "/faults", body={"api": "Metadata", "client_id": "victim", "delay_ms": 1, "count": 2})
    assert added.status == 201
    fault = added.json()
    assert fault == {"id": fault["id"], "api": "Metadata", "client_id": "victim", "delay_ms": 1, "count": 2, "hits": 0}
    [armed] = broker.faults.list()
    assert armed.client_id == "victim"
    _metadata(broker, "someone-else")
    _metadata(broker, "victim")
    assert send(url, "GET", f"/faults/{fault['id']}").json()["hits"] == 1
    python_side = broker.faults.add(Fault(api="Fetch", error="NOT_LEADER_OR_FOLLOWER", count=None))
    listed = send(url, "GET", "/faults").json()["faults"]
    assert [(f["api"], f["hits"]) for f in listed] == [("Metadata", 1), ("Fetch", 0)]
    assert listed[1]["count"] is None and listed[1]["error"] == "NOT_LEADER_OR_FOLLOWER"
    removed = send(url, "DELETE", f"/faults/{listed[1]['id']}")
    assert removed.status == 200 and broker.faults.list() == [armed] and python_side not in broker.faults.list()
    assert send(url, "GET", f"/faults/{listed[1]['id']}").status == 404
    for bad in ({"api": "NoSuchApi", "delay_ms": 1}, {"error": "NO_SUCH_ERROR"}, {"api": "Metadata"},
                {"bogus": 1}, {"crash": "after-prepare", "api": "EndTxn"}, {"delay_ms": "soon"}):
        refused = send(url, "POST", "/faults", body=bad)
        assert (refused.status, refused.json()["error"]["code"]) == (400, "BAD_REQUEST"), bad
    assert send(url, "DELETE", "/faults").json() == {"faults": []} and broker.faults.list() == []


def test_inspect_and_transcript_are_the_handles(served: tuple[Broker, str]) -> None:
    broker, url = served
    broker.create_topic("t", partitions=2)
    broker.produce("t", "one")
    inspection = send(url, "GET", "/inspect").json()
    assert inspection == broker.inspect().to_json() | {"time_ms": inspection["time_ms"]}
    assert [(p["partition"], p["high_watermark"]) for p in inspection["partitions"] if p["topic"] == "t"] == \
        [(0, 1), (1, 0)]
    assert inspection["violations"] == []
    text = send(url, "GET", "/inspect/text")
    assert text.content_type.startswith("text/plain") and "t" in text.body.decode()
    _metadata(broker, "reader")
    [entry] = send(url, "GET", "/transcript", query={"last": 1}).json()["entries"]
    assert (entry["api"], entry["client_id"], entry["sent"]) == ("Metadata", "reader", True)
    assert send(url, "GET", "/transcript", query={"last": 0}).json() == {"entries": []}
    assert "Metadata" in send(url, "GET", "/transcript/text", query={"last": 1}).body.decode()


def test_a_crashed_broker_answers_503_until_restarted(served: tuple[Broker, str]) -> None:
    broker, url = served
    broker.create_topic("t")
    send(url, "POST", "/faults", body={"crash": "after-prepare", "transactional_id": "tx"})
    coordinator = broker.coordinators.txn.coordinator

    def commit() -> None:
        init = coordinator.init_producer_id("tx", 60_000)
        coordinator.add_partitions("tx", init.producer_id, init.producer_epoch, [("t", 0)])
        coordinator.end_txn("tx", init.producer_id, init.producer_epoch, commit=True)

    broker.call(commit)  # the markers fall due at once: the broker stops dead before the first
    wait_until_crashed(url)
    stopped = send(url, "GET", "/topics")
    assert (stopped.status, stopped.json()["error"]["code"]) == (503, "BROKER_STOPPED")
    assert send(url, "GET", "/faults").json()["faults"][0]["hits"] == 1  # what needs no broker still answers
    assert send(url, "POST", "/restart").json()["crashed"] is False
    assert broker.call(lambda: coordinator_state(broker, "tx")) == "COMPLETE_COMMIT"


def test_an_advance_that_runs_into_a_crash_point_answers_503(served: tuple[Broker, str]) -> None:
    broker, url = served
    broker.create_topic("t")
    send(url, "POST", "/faults", body={"crash": "after-prepare"})
    coordinator = broker.coordinators.txn.coordinator

    def open_transaction() -> None:
        init = coordinator.init_producer_id("stalled", 10_000)
        coordinator.add_partitions("stalled", init.producer_id, init.producer_epoch, [("t", 0)])

    broker.call(open_transaction)
    advanced = send(url, "POST", "/clock/advance", body={"seconds": 11})  # the timeout's abort hits the crash
    assert (advanced.status, advanced.json()["error"]["code"]) == (503, "BROKER_STOPPED")
    assert "crash point after-prepare" in advanced.json()["error"]["message"]
    wait_until_crashed(url)
    send(url, "POST", "/restart")
    assert broker.call(lambda: coordinator_state(broker, "stalled")) == "COMPLETE_ABORT"


def test_a_failing_operation_is_a_500_and_the_endpoint_stays_up(served: tuple[Broker, str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    broker, url = served

    def broken() -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(broker, "inspect", broken)
    failed = send(url, "GET", "/inspect")
    assert (failed.status, failed.json()["error"]["code"]) == (500, "INTERNAL_ERROR")
    assert send(url, "GET", "/clock").status == 200


def coordinator_state(broker: Broker, transactional_id: str) -> str:
    found = broker.coordinators.txn.coordinator.describe(transactional_id)
    assert found is not None
    return found.state.name


# ---- the HTTP server ------------------------------------------------------------------------------------------
def _raw(url: str, data: bytes, *, until_closed: bool = True) -> bytes:
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(data)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
            if not until_closed:
                break
        return b"".join(chunks)


def test_persistent_connections_and_connection_close(served: tuple[Broker, str]) -> None:
    _, url = served
    two = b"GET /clock HTTP/1.1\r\nHost: x\r\n\r\nGET /clock HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    answered = _raw(url, two)
    assert answered.count(b"HTTP/1.1 200 OK") == 2
    assert b"Connection: close" in answered.split(b"HTTP/1.1 200 OK")[2]
    old = _raw(url, b"GET /clock HTTP/1.0\r\n\r\n")  # HTTP/1.0 closes unless asked not to
    assert old.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" in old


def test_expect_continue_and_chunked_bodies(served: tuple[Broker, str]) -> None:
    _, url = served
    body = b'{"seconds": 1}'
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(b"POST /clock/advance HTTP/1.1\r\nContent-Length: %d\r\nExpect: 100-continue\r\n"
                     b"Connection: close\r\n\r\n" % len(body))
        assert conn.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
        conn.sendall(body)
        assert conn.recv(65536).startswith(b"HTTP/1.1 200 OK")
    chunked = _raw(url, b"POST /clock/advance HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    assert chunked.startswith(b"HTTP/1.1 411 ")
    assert _raw(url, b"nonsense\r\n\r\n").startswith(b"HTTP/1.1 400 ")


# ---- kemu serve's handle --------------------------------------------------------------------------------------
def _advertised(broker: Broker) -> tuple[str, int]:
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        [node] = conn.request(METADATA, 9, {"topics": [], "allow_auto_topic_creation": False})["brokers"]
    return node["host"], node["port"]


def test_served_broker_advertises_its_flags_from_the_start_and_after_restart(tmp_path: pytest.TempPathFactory) -> None:
    options = ServeOptions(host="127.0.0.1", port=0, data_dir=str(tmp_path), advertised_host="kafka.example",
                           advertised_port=19092)
    broker = start_broker(options)
    try:
        assert isinstance(broker, ServedBroker)
        assert broker.bootstrap_servers == "kafka.example:19092"
        assert _advertised(broker) == ("kafka.example", 19092)
        broker.restart()
        assert _advertised(broker) == ("kafka.example", 19092)
        broker.reset()
        assert _advertised(broker) == ("kafka.example", 19092)
    finally:
        broker.close()


def test_a_taken_port_is_an_os_error(tmp_path: pytest.TempPathFactory) -> None:
    with Broker() as taken:
        with pytest.raises(OSError):
            start_broker(ServeOptions(host="127.0.0.1", port=taken.port, data_dir=str(tmp_path)))


@pytest.mark.parametrize(("control_port", "transcript_file", "observed"),
                         [(None, False, False), (0, False, True), (None, True, True)])
def test_served_broker_feeds_the_transcript_only_when_something_can_read_it(
        tmp_path: pytest.TempPathFactory, control_port: int | None, transcript_file: bool, observed: bool) -> None:
    options = ServeOptions(host="127.0.0.1", port=0, data_dir=str(tmp_path), control_port=control_port,
                           transcript_file=transcript_file)
    assert options.observed is observed
    broker = start_broker(options)
    try:
        _advertised(broker)
        assert (len(broker.transcript) > 0) is observed
    finally:
        broker.close()


def test_every_body_ends_in_a_newline(served: tuple[Broker, str]) -> None:
    # As curl prints it to a terminal: a JSON answer, a refusal and the text inspection each end their line.
    _, url = served
    for request in (b"GET /clock HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                    b"GET /no-such-thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                    b"GET /inspect/text HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"):
        head, _, body = _raw(url, request).partition(b"\r\n\r\n")
        assert body.endswith(b"\n"), (head, body)
        assert f"Content-Length: {len(body)}".encode() in head


def test_kemu_serves_through_the_handle_with_the_gc_policy_a_broker_in_a_tests_process_leaves_off(
        tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kemu serve` with a control endpoint or a transcript file runs through the handle: its process is the
    broker's own, so full collections are kept short there too (kemu.server.gc_policy), as on the plain path.
    A handle in a test's process, served or not, leaves the collector alone."""
    import gc

    import trio

    from kemu.server.gc_policy import FULL_EVERY, POLICY
    from kemu.testing import served, serving

    assert not POLICY.installed
    with Broker():
        assert not POLICY.installed
    plain = start_broker(ServeOptions(host="127.0.0.1", port=0, data_dir=str(tmp_path / "plain")))
    try:
        _advertised(plain)
        assert not POLICY.installed
    finally:
        plain.close()
    managed = start_broker(ServeOptions(host="127.0.0.1", port=0, data_dir=str(tmp_path / "managed")),
                           manage_gc=True)
    try:
        _advertised(managed)
        assert POLICY.installed and gc.get_threshold()[2] == FULL_EVERY
    finally:
        managed.close()
        POLICY.uninstall()
        gc.unfreeze()

    asked: list[bool] = []

    class Stop(Exception):
        pass

    def recording(options: ServeOptions, on_failure: object = None, *, manage_gc: bool = False) -> ServedBroker:
        asked.append(manage_gc)
        raise Stop

    monkeypatch.setattr(served, "start_broker", recording)
    options = ServeOptions(host="127.0.0.1", port=0, data_dir=str(tmp_path / "serve"), transcript_file=True)
    with pytest.raises(BaseException) as stopped:  # noqa: PT011, B017 - Trio may wrap it in a group
        trio.run(serving.serve_until_signalled, options)
    assert stopped.errisinstance(Stop) or (isinstance(stopped.value, BaseExceptionGroup)
                                           and stopped.value.subgroup(Stop) is not None)
    assert asked == [True]
