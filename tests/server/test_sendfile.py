"""Regions of segment files in a response (kemu.wire.file_region) go out with sendfile, byte for byte the
file's, between the pieces in memory around them; a region whose file was truncated closes the connection
instead of sending a frame its size no longer describes."""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
import trio.testing

from kemu.broker.config import BrokerConfig
from kemu.clock import VirtualClock
from kemu.log import LogConfig, PartitionLog
from kemu.server.connection import _send
from kemu.server.framing import frame_buffers
from kemu.testing.harness import InProcessBroker, InProcessConnection
from kemu.wire.buffers import Part, joined
from kemu.wire.file_region import FileRegion, RegionTruncatedError, SharedFile
from kemu.wire.records import NewRecord, build_batch, iter_batches
from tests.server.broker_thread import BrokerThread
from tests.server.kafka_socket import KafkaSocket

FETCH = 1
DATA = bytes(range(256)) * 4096  # 1 MiB, no two neighbouring KiB alike


@pytest.fixture
def data_file(tmp_path: Path) -> Iterator[SharedFile]:
    path = tmp_path / "data"
    path.write_bytes(DATA)
    yield SharedFile.open(path)


def _parts(file: SharedFile) -> list[Part]:
    return [b"head" * 10, FileRegion(file, 1000, 300_000), memoryview(b"middle" * 700), b"x",
            FileRegion(file, 500_000, 400_000), bytearray(b"tail")]


def _expected(parts: list[Part]) -> bytes:
    body = b"".join(DATA[p.position:p.position + p.length] if isinstance(p, FileRegion) else bytes(p)
                    for p in parts)
    return struct.pack(">i", len(body)) + body


async def _send_and_read(parts: list[Part], *, slow: bool) -> tuple[bytes, BaseException | None]:
    """Send `parts` framed over a real socket pair; the reader takes 4 KiB at a time, yielding between reads
    when `slow`, so the sender meets a full socket."""
    ours, theirs = trio.socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sender = trio.SocketStream(ours)
    received = bytearray()
    failure: list[BaseException] = []
    size = sum(len(p) for p in parts) + 4

    async def send() -> None:
        try:
            await _send(sender, ours.fileno(), frame_buffers(parts), size)
        except RegionTruncatedError as exc:
            failure.append(exc)
        ours.close()  # as a connection closing its socket

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send)
        while chunk := await theirs.recv(4096):
            received += chunk
            if slow:
                await trio.sleep(0)
    theirs.close()
    return bytes(received), failure[0] if failure else None


@pytest.mark.parametrize("slow", [False, True])
def test_regions_arrive_as_the_files_bytes_between_memory_parts(data_file: SharedFile, slow: bool) -> None:
    parts = _parts(data_file)
    received, failure = trio.run(lambda: _send_and_read(parts, slow=slow))
    assert failure is None
    assert received == _expected(parts)


def test_a_region_whose_file_was_truncated_closes_the_connection_short(data_file: SharedFile,
                                                                       tmp_path: Path) -> None:
    parts = _parts(data_file)
    os.truncate(tmp_path / "data", 600_000)  # inside the second region
    received, failure = trio.run(lambda: _send_and_read(parts, slow=True))
    assert isinstance(failure, RegionTruncatedError)
    expected = _expected(parts)
    assert len(received) < len(expected)
    assert received == expected[:len(received)]


def test_on_tls_regions_are_read_into_the_bytes_sent(data_file: SharedFile) -> None:
    parts = _parts(data_file)

    async def run() -> bytes:
        sender, receiver = trio.testing.memory_stream_pair()
        await _send(sender, None, frame_buffers(parts), sum(len(p) for p in parts) + 4)
        await sender.aclose()
        received = bytearray()
        while chunk := await receiver.receive_some():
            received += chunk
        return bytes(received)

    assert trio.run(run) == _expected(parts)
    assert joined(parts) == _expected(parts)[4:]


def test_a_region_sent_after_its_log_was_deleted_is_the_original_bytes(tmp_path: Path) -> None:
    log = PartitionLog.open(tmp_path / "t-0", "t", 0, LogConfig(segment_bytes=300_000), VirtualClock(0))
    for n in range(12):
        log.append(build_batch([NewRecord(value=bytes([n]) * 50_000, timestamp=n)]), leader_epoch=0)
    original = log.segments[0].log_path.read_bytes()
    records = log.read(0, 1 << 20).records
    assert isinstance(records, FileRegion)
    log.delete()
    parts: list[Part] = [b"before", records, b"after"]
    received, failure = trio.run(lambda: _send_and_read(parts, slow=True))
    assert failure is None
    assert received[4:] == b"before" + original[:len(records)] + b"after"


# ---- through a served broker --------------------------------------------------------------------------

def _fetch_body(topic: str, partitions: int) -> dict[str, object]:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 50 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [
                {"partition": p, "fetch_offset": 0, "partition_max_bytes": 8 << 20, "current_leader_epoch": -1,
                 "last_fetched_epoch": -1, "log_start_offset": -1} for p in range(partitions)]}],
            "forgotten_topics_data": [], "rack_id": ""}


PARTITIONS, BATCHES, VALUE_BYTES = 8, 6, 200_000  # per partition 1.2 MB: a rolled 1 MiB segment and more


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[BrokerThread]:
    """A served broker with 8 partitions of 6 batches of 200 kB, in segments of 1 MiB."""
    with BrokerThread(BrokerConfig(data_dir=str(tmp_path / "data"), port=0)) as broker:
        with broker.connect() as conn:
            _create_and_fill(conn, PARTITIONS, BATCHES, VALUE_BYTES)
        yield broker


def _create_and_fill(conn: KafkaSocket | InProcessConnection, partitions: int, batches: int,
                     value_bytes: int) -> None:
    created = conn.request(19, 7, {"topics": [{"name": "t", "num_partitions": partitions, "replication_factor": 1,
                                              "configs": [{"name": "segment.bytes", "value": str(1 << 20)}]}],
                                   "timeout_ms": 5000})
    assert created["topics"][0]["error_code"] == 0
    for partition in range(partitions):
        for n in range(batches):
            data = build_batch([NewRecord(value=bytes([n]) * value_bytes, timestamp=1_700_000_000_000 + n)])
            answer = conn.request(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                         "topic_data": [{"name": "t", "partition_data": [
                                             {"index": partition, "records": data}]}]})
            assert answer["responses"][0]["partition_responses"][0]["error_code"] == 0


def test_a_fetch_of_rolled_segments_through_the_server_is_every_stored_batch(filled: BrokerThread) -> None:
    with filled.connect() as conn:
        body = conn.request(FETCH, 12, _fetch_body("t", PARTITIONS))
    for partition in body["responses"][0]["partitions"]:
        values = [r.value for b in iter_batches(partition["records"]) for r in b.records()]
        assert values == [bytes([n]) * VALUE_BYTES for n in range(5)]  # the first segment's


def test_a_fetch_whose_log_is_truncated_while_it_is_sent_closes_short(filled: BrokerThread) -> None:
    with filled.connect() as conn:
        # A reader that takes nothing yet: the 8 MB answer cannot all leave (the socket's buffers hold at most
        # 4 MiB, tcp_wmem's bound) before the logs are truncated.
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        conn.send(FETCH, 12, _fetch_body("t", PARTITIONS))
        size = struct.unpack(">i", conn.sock.recv(4, socket.MSG_WAITALL))[0]
        assert size > 8_000_000

        def truncate() -> None:
            for index in range(PARTITIONS):
                partition = filled.broker.partition("t", index)
                assert partition is not None
                partition.log.truncate_to(1)  # inside the first segment, which every region is of

        filled.call(truncate)
        received = 0
        while received < size and (chunk := conn.sock.recv(min(1 << 16, size - received))):
            received += len(chunk)
        assert received < size  # the frame never completes: the connection closed


def test_the_in_process_harness_reads_regions_into_the_files_bytes(tmp_path: Path) -> None:
    with InProcessBroker(BrokerConfig(data_dir=str(tmp_path / "data"), port=0)) as broker:
        conn = broker.connect()
        _create_and_fill(conn, 1, 25, 50_000)
        body = conn.request(FETCH, 12, _fetch_body("t", 1))
        [partition] = body["responses"][0]["partitions"]
        on_disk = (tmp_path / "data" / "t-0" / f"{0:020d}.log").read_bytes()
        assert len(partition["records"]) > 100_000
        assert bytes(partition["records"]) == on_disk[:len(partition["records"])]
