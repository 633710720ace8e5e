"""The server through real sockets: framing, request order, refusals, and that nothing takes it down."""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterator

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.config import BrokerConfig
from kemu.handlers import all_handlers
from kemu.server import cpu_handoff
from kemu.wire.records import NewRecord, build_batch
from tests.server.broker_thread import BrokerThread
from tests.server.fake_handlers import METADATA, Script, metadata
from tests.server.kafka_socket import KafkaSocket

API_VERSIONS = 18


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def scripted(script: Script) -> Iterator[BrokerThread]:
    with BrokerThread(handlers=script.handlers()) as broker:
        yield broker


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    with BrokerThread() as broker:
        yield broker


def _header(key: int, version: int, correlation_id: int) -> bytes:
    """A classic (v1) request header with a null client id."""
    return struct.pack(">hhih", key, version, correlation_id, -1)


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def test_pipelined_requests_answered_in_order(broker: BrokerThread) -> None:
    with KafkaSocket(broker.address) as conn:
        software = {"client_software_name": "kemu-tests", "client_software_version": "1"}
        conn.send_raw(b"".join(conn.encode(API_VERSIONS, i % 5, software, correlation_id=1000 + i)
                               for i in range(200)))
        for i in range(200):
            correlation_id, body = conn.receive(API_VERSIONS, i % 5)
            assert correlation_id == 1000 + i and body["error_code"] == 0


def test_frames_trickling_in_byte_by_byte(broker: BrokerThread) -> None:
    with KafkaSocket(broker.address) as conn:
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for byte in conn.encode(API_VERSIONS, 3, {"client_software_name": "a", "client_software_version": "1"}):
            conn.send_raw(bytes([byte]))
        _, body = conn.receive(API_VERSIONS, 3)
        assert body["error_code"] == 0


def test_responses_keep_request_order_when_handlers_finish_out_of_order(
        script: Script, scripted: BrokerThread) -> None:
    with KafkaSocket(scripted.address) as conn:
        conn.send_raw(conn.encode(METADATA, 12, metadata("slow"), correlation_id=1)
                      + conn.encode(METADATA, 12, metadata("fast"), correlation_id=2))
        assert script.fast_done.wait(timeout=10)  # the second request finished while the first waits
        scripted.call(script.gate.set)
        first = conn.receive(METADATA, 12)
        second = conn.receive(METADATA, 12)
    assert [first[0], second[0]] == [1, 2]
    assert [first[1]["topics"][0]["name"], second[1]["topics"][0]["name"]] == ["slow", "fast"]


def test_requests_reach_handlers_one_at_a_time_in_order(script: Script, scripted: BrokerThread) -> None:
    names = [f"yield:{n}" for n in (5, 0, 3, 1, 4, 2, 0, 6) * 4]
    with KafkaSocket(scripted.address) as conn:
        conn.send_raw(b"".join(conn.encode(METADATA, 9, metadata(name)) for name in names))
        got = [conn.receive(METADATA, 9)[1]["topics"][0]["name"] for _ in names]
    assert got == names
    expected = [event for name in names for event in (("start", name), ("end", name))]
    assert scripted.call(lambda: list(script.events)) == expected


def test_a_request_without_response_keeps_its_place(scripted: BrokerThread) -> None:
    with KafkaSocket(scripted.address) as conn:
        conn.send_raw(conn.encode(METADATA, 1, metadata("none"), correlation_id=7)
                      + conn.encode(METADATA, 1, metadata("fast"), correlation_id=8))
        assert conn.receive(METADATA, 1)[0] == 8
        assert conn.request(METADATA, 1, metadata("fast"))["topics"][0]["name"] == "fast"


def test_handler_exception_answers_unknown_server_error(scripted: BrokerThread) -> None:
    with KafkaSocket(scripted.address) as conn:
        body = conn.request(METADATA, 12, metadata("boom"))
        assert body["topics"][0]["error_code"] == -1
        refused = conn.request(METADATA, 12, metadata("refuse"))
        assert (refused["topics"][0]["error_code"], refused["topics"][0]["name"]) == (42, "refused")
        assert conn.request(METADATA, 12, metadata("fast"))["topics"][0]["error_code"] == 0


def test_handler_exception_without_error_response_closes_after_earlier_responses() -> None:
    script = Script(with_error_response=False)
    with BrokerThread(handlers=script.handlers()) as broker:
        with KafkaSocket(broker.address) as conn:
            conn.send_raw(conn.encode(METADATA, 4, metadata("fast"), correlation_id=1)
                          + conn.encode(METADATA, 4, metadata("boom"), correlation_id=2)
                          + conn.encode(METADATA, 4, metadata("fast"), correlation_id=3))
            assert conn.receive(METADATA, 4)[0] == 1
            assert conn.closed_by_peer()
        with KafkaSocket(broker.address) as other:
            assert other.request(METADATA, 4, metadata("fast"))["topics"][0]["name"] == "fast"


def test_client_software_is_recorded_from_api_versions(scripted: BrokerThread) -> None:
    with KafkaSocket(scripted.address) as conn:
        conn.request(API_VERSIONS, 4, {"client_software_name": "kemu-tests", "client_software_version": "1.2.3"})
        assert conn.request(METADATA, 12, metadata("software"))["topics"][0]["name"] == "kemu-tests/1.2.3"


@pytest.mark.parametrize("version", [5, 127, -1])
def test_unsupported_api_versions_version_gets_v0_answer(broker: BrokerThread, version: int) -> None:
    with KafkaSocket(broker.address) as conn:
        # The body of a version the broker does not know is never read, whatever it holds.
        conn.send_raw(_frame(struct.pack(">hhih", API_VERSIONS, version, 77, 4) + b"test" + b"\x01\x02\x03"))
        correlation_id, body = conn.receive(API_VERSIONS, 0)
        assert correlation_id == 77
        assert body == {"error_code": 35, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}],
                        "throttle_time_ms": 0, "supported_features": [], "finalized_features_epoch": -1,
                        "finalized_features": [], "zk_migration_ready": False}
        # The connection stays usable: the client retries with a version the broker knows.
        retry = conn.request(API_VERSIONS, 3, {"client_software_name": "x", "client_software_version": "1"})
        assert retry["error_code"] == 0


def test_oversized_frame_closes_without_reading_body() -> None:
    with BrokerThread(BrokerConfig(port=0, socket_request_max_bytes=1000)) as broker:
        with KafkaSocket(broker.address) as conn:
            conn.send_raw(struct.pack(">i", 1001))  # and no body at all
            assert conn.closed_by_peer()
        with KafkaSocket(broker.address) as conn:
            payload = codec_request_padded_to(1000)
            conn.send_raw(_frame(payload))
            assert conn.receive(API_VERSIONS, 0)[1]["error_code"] == 0


def codec_request_padded_to(size: int) -> bytes:
    """An ApiVersions v0 request of exactly `size` bytes (trailing bytes are ignored, as by Kafka)."""
    payload = _header(API_VERSIONS, 0, 5)
    return payload + b"\x00" * (size - len(payload))


def test_default_max_request_size(broker: BrokerThread) -> None:
    with KafkaSocket(broker.address) as conn:
        conn.send_raw(struct.pack(">i", 104857601))
        assert conn.closed_by_peer()


def test_negative_size_closes(broker: BrokerThread) -> None:
    with KafkaSocket(broker.address) as conn:
        conn.send_raw(struct.pack(">i", -5))
        assert conn.closed_by_peer()


@pytest.mark.parametrize("payload", [
    b"",  # no header at all
    b"\x00\x12\x00",  # a truncated header
    _header(API_VERSIONS, 3, 1) + b"\xff\xff\xff",  # a flexible header whose tagged fields run off the end
    _header(3, 1, 1) + b"\x00\x00\x00\x05\x00\x02ab",  # an array claiming more topics than there are
    b"\x00\x03\x00\x01\x00\x00\x00\x01\x7f\xffabc",  # a client id longer than the frame
    bytes(range(256)),
])
def test_garbage_closes_only_that_connection(broker: BrokerThread, payload: bytes) -> None:
    with KafkaSocket(broker.address) as bystander, KafkaSocket(broker.address) as conn:
        conn.send_raw(_frame(payload))
        assert conn.closed_by_peer()
        assert bystander.request(API_VERSIONS, 2, {})["error_code"] == 0
    with KafkaSocket(broker.address) as fresh:
        assert fresh.request(API_VERSIONS, 1, {})["error_code"] == 0


def test_earlier_responses_are_sent_before_closing_on_garbage(broker: BrokerThread) -> None:
    with KafkaSocket(broker.address) as conn:
        conn.send_raw(conn.encode(API_VERSIONS, 2, {}, correlation_id=9) + _frame(b"\x01"))
        assert conn.receive(API_VERSIONS, 2)[0] == 9
        assert conn.closed_by_peer()


def test_unknown_api_key_closes(broker: BrokerThread) -> None:
    with KafkaSocket(broker.address) as conn:
        conn.send_raw(_frame(_header(9999, 0, 1)))
        assert conn.closed_by_peer()


def test_api_without_handler_closes(scripted: BrokerThread) -> None:
    with KafkaSocket(scripted.address) as conn:
        conn.send(19, 4, {"topics": []})  # CreateTopics is declared but not in this broker's handlers
        assert conn.closed_by_peer()


def test_unsupported_version_closes(broker: BrokerThread) -> None:
    with KafkaSocket(broker.address) as conn:
        conn.send_raw(_frame(_header(METADATA, 13, 1) + b"\x00"))
        assert conn.closed_by_peer()


def test_many_connections_at_once(broker: BrokerThread) -> None:
    conns = [KafkaSocket(broker.address) for _ in range(100)]
    try:
        for i, conn in enumerate(conns):
            conn.send(API_VERSIONS, 3, {"client_software_name": "c", "client_software_version": str(i)},
                      correlation_id=i)
        for i, conn in enumerate(conns):
            correlation_id, body = conn.receive(API_VERSIONS, 3)
            assert correlation_id == i and body["error_code"] == 0
    finally:
        for conn in conns:
            conn.close()


def test_api_versions_lists_exactly_the_handled_apis(broker: BrokerThread) -> None:
    """But the client telemetry APIs, handled and listed only with the receiver (kemu.client.telemetry.enable)."""
    with KafkaSocket(broker.address) as conn:
        body = conn.request(API_VERSIONS, 4, {"client_software_name": "x", "client_software_version": "1"})
    assert body["api_keys"] == [
        {"api_key": h.key, "min_version": h.advertised_min_version, "max_version": h.max_version}
        for h in all_handlers().values() if h.key not in (71, 72)]


def test_shutdown_closes_connections_and_listener() -> None:
    broker = BrokerThread().__enter__()
    conn = KafkaSocket(broker.address)
    try:
        assert conn.request(API_VERSIONS, 0, {})["error_code"] == 0
        broker.stop()
        assert conn.closed_by_peer()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(broker.address, timeout=5).close()
    finally:
        conn.close()


def test_shutdown_with_a_request_waiting(script: Script) -> None:
    broker = BrokerThread(handlers=script.handlers()).__enter__()
    with KafkaSocket(broker.address) as conn:
        conn.send(METADATA, 12, metadata("hold"))
        broker.stop()
        assert conn.closed_by_peer()


def test_a_handler_that_never_waits_runs_on_the_reader_and_one_that_may_in_a_task_each(script: Script) -> None:
    for suspends, tasks_expected in ((False, 1), (True, 3)):
        with BrokerThread(handlers=script.handlers(suspends=suspends)) as broker, \
                KafkaSocket(broker.address) as conn:
            conn.send_raw(b"".join(conn.encode(METADATA, 12, metadata("task"), correlation_id=i) for i in range(3)))
            tasks = {conn.receive(METADATA, 12)[1]["topics"][0]["name"] for _ in range(3)}
        assert len(tasks) == tasks_expected, suspends


def test_requests_run_on_the_reader_answer_after_a_waiting_one_before_them(script: Script,
                                                                           scripted: BrokerThread) -> None:
    software = {"client_software_name": "kemu-tests", "client_software_version": "1"}
    with KafkaSocket(scripted.address) as conn:
        conn.send_raw(conn.encode(METADATA, 12, metadata("slow"), correlation_id=1)
                      + b"".join(conn.encode(API_VERSIONS, 3, software, correlation_id=2 + i) for i in range(3)))
        conn.sock.settimeout(0.5)
        with pytest.raises(TimeoutError):
            conn.sock.recv(1)  # ApiVersions ran on the reader, but its answers wait behind the Metadata's
        conn.sock.settimeout(10)
        scripted.call(script.gate.set)
        assert conn.receive(METADATA, 12)[0] == 1
        assert [conn.receive(API_VERSIONS, 3)[0] for _ in range(3)] == [2, 3, 4]


def test_the_frame_buffer_is_reused_once_a_big_request_has_been_handled(broker: BrokerThread,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # A produce frame bigger than the buffer gets a bigger buffer as its bytes arrive (doubling up to its size);
    # once the request is done with its views (the log copies what it appends), the next such frame is received
    # into that same buffer: no buffer is made after the first frame's.
    from kemu.server.framing import FrameBuffer
    from tests.handlers.config_wire import create_topic
    from tests.handlers.data_plane import batch, produce_body

    buffers: list[bytearray] = []  # kept alive, so no buffer's id is taken by a later one
    make_room = FrameBuffer._make_room

    def recording(frames: FrameBuffer, needed: int) -> None:
        make_room(frames, needed)
        if not any(frames._buffer is seen for seen in buffers):
            buffers.append(frames._buffer)

    monkeypatch.setattr(FrameBuffer, "_make_room", recording)
    with KafkaSocket(broker.address) as conn:
        create_topic(conn, "t")  # type: ignore[arg-type]
        after_first = 0
        for i in range(10):
            body = conn.request(0, 9, produce_body({("t", 0): batch(bytes(200_000))}))
            assert body["responses"][0]["partition_responses"][0]["base_offset"] == i
            after_first = after_first or len(buffers)
    assert len(buffers) == after_first <= 5, f"{len(buffers)} buffers for 10 frames of 200 KB"


def test_the_cpu_is_yielded_once_an_answer_is_out_and_before_the_work_it_queued(
        broker: BrokerThread, monkeypatch: pytest.MonkeyPatch) -> None:
    """After each answer the connection yields the CPU (kemu.server.cpu_handoff): the client's thread the
    answer woke runs first. EndTxn's markers, queued for after its answer, are written after that yield."""
    broker.call(lambda: create_topics(broker.broker, [NewTopic("t", 1, 1)]))
    ends: list[int] = []  # the partition's log end offset at each yield

    def sched_yield() -> None:  # on the broker's thread
        plog = broker.broker.partition("t", 0)
        assert plog is not None
        ends.append(plog.log.log_end_offset)

    monkeypatch.setattr(os, "sched_yield", sched_yield)
    monkeypatch.setattr(cpu_handoff, "LATE_S", float("inf"))  # however slow this machine, never stop yielding
    with KafkaSocket(broker.address) as conn:
        init = conn.request(22, 4, {"transactional_id": "x", "transaction_timeout_ms": 60000,
                                    "producer_id": -1, "producer_epoch": -1})
        pid, epoch = init["producer_id"], init["producer_epoch"]
        added = conn.request(24, 3, {"v3_and_below_transactional_id": "x", "v3_and_below_producer_id": pid,
                                     "v3_and_below_producer_epoch": epoch,
                                     "v3_and_below_topics": [{"name": "t", "partitions": [0]}]})
        assert added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"] == 0
        batch = build_batch([NewRecord(value=b"v", timestamp=1)], producer_id=pid, producer_epoch=epoch,
                            base_sequence=0, transactional=True)
        produced = conn.request(0, 9, {"transactional_id": "x", "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]})
        assert produced["responses"][0]["partition_responses"][0]["error_code"] == 0
        ended = conn.request(26, 3, {"transactional_id": "x", "producer_id": pid, "producer_epoch": epoch,
                                     "committed": True})
        assert ended["error_code"] == 0
        conn.request(API_VERSIONS, 3, {"client_software_name": "kemu-tests", "client_software_version": "1"})
    # The client can hold the last answer before the broker's thread has yielded after it (the rest of the
    # same Trio step): a call queued behind that step runs once it is over.
    broker.call(lambda: None)
    # InitProducerId, AddPartitionsToTxn, Produce (its record in), EndTxn (its COMMIT marker not yet), then
    # ApiVersions (the marker written in between).
    assert ends == [0, 0, 1, 1, 2]


def test_successive_long_polls_on_a_connection_are_finished_by_one_waiting_task(script: Script) -> None:
    """A consumer parks one Fetch after another: the task that finished one takes the next."""
    with BrokerThread(handlers=script.handlers(suspends=False)) as broker, KafkaSocket(broker.address) as conn:
        finishers = {conn.request(METADATA, 12, metadata("later"))["topics"][0]["name"] for _ in range(3)}
    assert len(finishers) == 1


def test_a_long_poll_arriving_while_another_waits_is_finished_by_a_task_of_its_own(script: Script) -> None:
    from tests.handlers.data_plane import wait_until

    with BrokerThread(handlers=script.handlers(suspends=False)) as broker, KafkaSocket(broker.address) as conn:
        conn.send_raw(b"".join(conn.encode(METADATA, 12, metadata("later-hold"), correlation_id=i)
                               for i in (1, 2)))
        wait_until(lambda: broker.call(lambda: ("start", "later-hold") in script.events[1:]), "both to start")
        broker.call(script.gate.set)
        answers = [conn.receive(METADATA, 12) for _ in range(2)]
    assert [correlation for correlation, _ in answers] == [1, 2]
    assert len({body["topics"][0]["name"] for _, body in answers}) == 2


def test_the_waiting_finisher_ends_when_its_client_leaves(script: Script) -> None:
    from tests.handlers.data_plane import wait_until

    with BrokerThread(handlers=script.handlers(suspends=False)) as broker:
        with KafkaSocket(broker.address) as conn:
            conn.request(METADATA, 12, metadata("later"))
        [finisher] = script.tasks
        wait_until(lambda: broker.call(lambda: finisher.coro.cr_frame is None), "the finisher to end")
