"""A Fetch of records in segment files answers the same bytes on a TLS listener (the regions read into the
bytes it encrypts) as on a plain one (the regions sent with sendfile)."""

from __future__ import annotations

import socket
import ssl
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.testing import Broker
from kemu.testing.certs import TestCertificates
from kemu.wire import codec
from kemu.wire.records import NewRecord, build_batch, iter_batches

FETCH = 1
TIMEOUT_S = 10.0


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[tuple[Broker, TestCertificates]]:
    certs = TestCertificates.create(tmp_path / "certs")
    config = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "inter.broker.listener.name": "PLAINTEXT",
              **certs.tls_settings()}
    with Broker(config=config) as made:
        yield made, certs


def _frame(sock: socket.socket) -> bytes:
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
        chunk = sock.recv(1 << 16)
        assert chunk, "the broker closed the connection"
        data += chunk
    return data


def _call(sock: socket.socket, key: int, version: int, body: dict[str, object]) -> bytes:
    request = codec.encode_request(key, version, 7, body)
    sock.sendall(struct.pack(">i", len(request)) + request)
    return _frame(sock)


def _address(broker: Broker, listener: str) -> tuple[str, int]:
    host, port = broker.bootstrap(listener).rsplit(":", 1)
    return host, int(port)


def test_a_fetch_from_segment_files_is_the_same_frame_on_tls_as_on_plaintext(
        broker: tuple[Broker, TestCertificates]) -> None:
    served, certs = broker
    fetch = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 50 << 20, "isolation_level": 0,
             "session_id": 0, "session_epoch": -1,
             "topics": [{"topic": "t", "partitions": [
                 {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 4 << 20, "current_leader_epoch": -1,
                  "last_fetched_epoch": -1, "log_start_offset": -1}]}],
             "forgotten_topics_data": [], "rack_id": ""}
    with socket.create_connection(_address(served, "PLAINTEXT"), timeout=TIMEOUT_S) as plain:
        created = codec.decode_response(19, 7, _call(plain, 19, 7, {
            "topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1,
                        "configs": [{"name": "segment.bytes", "value": str(1 << 20)}]}], "timeout_ms": 5000})[4:])
        assert created[1]["topics"][0]["error_code"] == 0
        for n in range(25):  # 1.25 MB: the first segment rolls
            data = build_batch([NewRecord(value=bytes([n]) * 50_000, timestamp=1_700_000_000_000 + n)])
            _call(plain, 0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": data}]}]})
        over_plaintext = _call(plain, FETCH, 12, fetch)
    context = ssl.create_default_context(cafile=str(certs.ca_file))
    with socket.create_connection(_address(served, "SSL"), timeout=TIMEOUT_S) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as tls:
        over_tls = _call(tls, FETCH, 12, fetch)
    assert len(over_plaintext) > 1_000_000
    assert over_tls == over_plaintext
    [partition] = codec.decode_response(FETCH, 12, over_tls[4:])[1]["responses"][0]["partitions"]
    values = [r.value for b in iter_batches(partition["records"]) for r in b.records()]
    assert values == [bytes([n]) * 50_000 for n in range(len(values))] and len(values) > 15
