"""Bad input on real sockets: TLS to a PLAINTEXT port, PLAINTEXT to a TLS port, a SASL exchange out of order,
a garbage token, an expired OAUTHBEARER token. Each gets a log line and Kafka's error or a closed connection,
and every listener serves the next client as before."""

from __future__ import annotations

import base64
import json
import logging
import socket
import ssl
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kemu.probe import api_versions_round_trip
from kemu.testing import Broker
from kemu.testing.certs import TestCertificates, sasl_settings
from kemu.wire import codec
from kemu.wire.errors import ErrorCode

TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> TestCertificates:
    return TestCertificates.create(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def broker(certs: TestCertificates) -> Iterator[Broker]:
    config = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
              "inter.broker.listener.name": "PLAINTEXT", **certs.tls_settings(),
              **sasl_settings("sasl_plaintext", ("PLAIN", "SCRAM-SHA-256", "OAUTHBEARER"), {"alice": "a"})}
    with Broker(config=config) as made:
        yield made


def _address(broker: Broker, listener: str) -> tuple[str, int]:
    host, port = broker.bootstrap(listener).rsplit(":", 1)
    return host, int(port)


def _tls_client(certs: TestCertificates) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(certs.ca_file))


def _send(sock: socket.socket, frame: bytes) -> None:
    sock.sendall(struct.pack(">i", len(frame)) + frame)


def _receive(sock: socket.socket) -> bytes | None:
    """One response frame, or None when the broker closed the connection instead."""
    header = b""
    while len(header) < 4:
        chunk = sock.recv(4 - len(header))
        if not chunk:
            return None
        header += chunk
    (size,) = struct.unpack(">i", header)
    body = b""
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            return None
        body += chunk
    return body


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, ssl.SSLError):
        return True


def _exchange(sock: socket.socket, key: int, version: int, body: dict[str, Any]) -> dict[str, Any] | None:
    _send(sock, codec.encode_request(key, version, 1, body))
    frame = _receive(sock)
    return None if frame is None else codec.decode_response(key, version, frame)[1]


def _still_serving(broker: Broker, certs: TestCertificates) -> None:
    assert 18 in api_versions_round_trip(*_address(broker, "PLAINTEXT"))
    with socket.create_connection(_address(broker, "SSL"), timeout=TIMEOUT_S) as raw, \
            _tls_client(certs).wrap_socket(raw, server_hostname="localhost") as tls:
        answer = _exchange(tls, 18, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert answer is not None and answer["error_code"] == 0


def test_tls_client_on_a_plaintext_port(broker: Broker, certs: TestCertificates,
                                        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "kemu.server"), \
            socket.create_connection(_address(broker, "PLAINTEXT"), timeout=TIMEOUT_S) as raw:
        with pytest.raises((ssl.SSLError, ConnectionResetError, OSError)):
            _tls_client(certs).wrap_socket(raw, server_hostname="localhost")
    assert any("began a TLS handshake" in r.getMessage() for r in caplog.records)
    _still_serving(broker, certs)


def test_plaintext_client_on_a_tls_port(broker: Broker, certs: TestCertificates,
                                        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "kemu.server"), \
            socket.create_connection(_address(broker, "SSL"), timeout=TIMEOUT_S) as sock:
        _send(sock, codec.encode_request(18, 3, 1, {"client_software_name": "t", "client_software_version": "1"}))
        sock.settimeout(TIMEOUT_S)
        received = b""
        while chunk := _recv_or_empty(sock):
            received += chunk
        assert not received.startswith(b"\x00\x00")  # no Kafka response: at most a TLS alert
    assert any("TLS handshake failed on listener SSL" in r.getMessage() for r in caplog.records)
    _still_serving(broker, certs)


def _recv_or_empty(sock: socket.socket) -> bytes:
    try:
        return sock.recv(4096)
    except ConnectionResetError:
        return b""


def test_sasl_out_of_order_and_garbage(broker: Broker, certs: TestCertificates) -> None:
    address = _address(broker, "SASL_PLAINTEXT")
    with socket.create_connection(address, timeout=TIMEOUT_S) as sock:
        assert _exchange(sock, 3, 12, {"topics": None}) is None  # Metadata before authenticating: closed
    with socket.create_connection(address, timeout=TIMEOUT_S) as sock:
        _send(sock, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # not a Kafka client at all
        assert _closed(sock)
    with socket.create_connection(address, timeout=TIMEOUT_S) as sock:
        assert _exchange(sock, 17, 1, {"mechanism": "SCRAM-SHA-256"}) == {
            "error_code": 0, "mechanisms": ["PLAIN", "SCRAM-SHA-256", "OAUTHBEARER"]}
        answer = _exchange(sock, 36, 2, {"auth_bytes": b"\xde\xad\xbe\xef"})
        assert answer is not None and answer["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert answer["error_message"].endswith("invalid credentials with SASL mechanism SCRAM-SHA-256")
        assert _closed(sock)
    with socket.create_connection(address, timeout=TIMEOUT_S) as sock:
        _exchange(sock, 17, 1, {"mechanism": "PLAIN"})
        answer = _exchange(sock, 36, 2, {"auth_bytes": b"\0alice\0a"})
        assert answer is not None and answer["error_code"] == 0
        assert _exchange(sock, 36, 2, {"auth_bytes": b"\0alice\0a"}) == {  # out of order, after success
            "error_code": ErrorCode.ILLEGAL_SASL_STATE, "auth_bytes": b"", "session_lifetime_ms": 0,
            "error_message": "SaslAuthenticate request received after successful authentication"}
    _still_serving(broker, certs)


def _expired_jwt() -> bytes:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    token = f"{part({'alg': 'none'})}.{part({'sub': 'alice', 'exp': 1_000_000, 'iat': 999_000})}."
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


def test_expired_oauthbearer_token(broker: Broker, certs: TestCertificates) -> None:
    with socket.create_connection(_address(broker, "SASL_PLAINTEXT"), timeout=TIMEOUT_S) as sock:
        _exchange(sock, 17, 1, {"mechanism": "OAUTHBEARER"})
        challenge = _exchange(sock, 36, 1, {"auth_bytes": _expired_jwt()})
        assert challenge is not None and challenge["error_code"] == 0
        assert json.loads(challenge["auth_bytes"]) == {"status": "invalid_token"}
        failed = _exchange(sock, 36, 1, {"auth_bytes": b"\x01"})
        assert failed is not None and failed["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert failed["error_message"] == '{"status":"invalid_token"}'
        assert _closed(sock)
    _still_serving(broker, certs)


def test_an_oauthbearer_token_that_never_expires(broker: Broker, certs: TestCertificates) -> None:
    """exp = 1e30 s: Kafka's expiry saturates at Long.MAX_VALUE ms, and the session lifetime told in
    SaslAuthenticate is what remains of it, an int64 like any other (it used to fail to encode: no answer)."""
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    token = f"{part({'alg': 'none'})}.{part({'sub': 'alice', 'exp': 1e30})}."
    with socket.create_connection(_address(broker, "SASL_PLAINTEXT"), timeout=TIMEOUT_S) as sock:
        _exchange(sock, 17, 1, {"mechanism": "OAUTHBEARER"})
        answer = _exchange(sock, 36, 1, {"auth_bytes": f"n,,\x01auth=Bearer {token}\x01\x01".encode()})
        assert answer is not None and answer["error_code"] == 0
        assert 2**63 - 1 - 10**13 < answer["session_lifetime_ms"] < 2**63 - 1
        assert _exchange(sock, 3, 12, {"topics": [], "allow_auto_topic_creation": False}) is not None
    _still_serving(broker, certs)


def test_restart_keeps_every_listeners_port(tmp_path: Path, certs: TestCertificates) -> None:
    config = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "inter.broker.listener.name": "PLAINTEXT",
              **certs.tls_settings()}
    with Broker(config=config, data_dir=tmp_path) as restarted:
        before = (restarted.bootstrap("PLAINTEXT"), restarted.bootstrap("SSL"))
        restarted.restart()
        assert (restarted.bootstrap("PLAINTEXT"), restarted.bootstrap("SSL")) == before
        _still_serving(restarted, certs)
