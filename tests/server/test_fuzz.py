"""Malformed input of every kind: the broker answers or closes that one connection, and keeps serving."""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kemu.handlers import all_handlers
from kemu.wire import codec
from tests.server.broker_thread import BrokerThread
from tests.server.kafka_socket import KafkaSocket

MARKER = 0x7EADBEEF
HANDLED = sorted((h.key, v) for h in all_handlers().values() for v in range(h.min_version, h.max_version + 1))


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerThread]:
    with BrokerThread() as running:
        yield running


def _still_serving(broker: BrokerThread) -> None:
    with KafkaSocket(broker.address) as conn:
        assert conn.request(18, 2, {})["error_code"] == 0


def _drain(conn: KafkaSocket) -> None:
    """Read until the broker closes the connection."""
    try:
        while conn.sock.recv(65536):
            pass
    except ConnectionResetError:
        pass


def _answered_or_closed(conn: KafkaSocket) -> None:
    """Read responses until the marker request's (the connection still works) or until the broker closes."""
    try:
        while conn.receive_frame()[:4] != struct.pack(">i", MARKER):
            pass
    except (ConnectionError, OSError):
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(key_version=st.sampled_from(HANDLED), tail=st.binary(max_size=200), client_id=st.one_of(
    st.none(), st.text(max_size=20)))
def test_random_bodies_after_a_valid_header(broker: BrokerThread, key_version: tuple[int, int], tail: bytes,
                                            client_id: str | None, caplog: pytest.LogCaptureFixture) -> None:
    key, version = key_version
    header = codec.encode_request(key, version, 1, {}, client_id=client_id)
    # Keep the header, replace the body: encode_request writes the header first, then an empty-ish body.
    empty_body = codec.encode_body(key, version, "request", {})
    payload = header[:len(header) - len(empty_body)] + tail
    with caplog.at_level(logging.WARNING, logger="kemu.server"):
        with KafkaSocket(broker.address) as conn:
            conn.send_raw(struct.pack(">i", len(payload)) + payload + conn.encode(18, 0, {}, correlation_id=MARKER))
            _answered_or_closed(conn)
        _still_serving(broker)
    assert not [r for r in caplog.records if r.exc_info], "an unexpected exception reached the server"


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.binary(max_size=300))
def test_random_bytes(broker: BrokerThread, data: bytes, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kemu.server"):
        with KafkaSocket(broker.address) as conn:
            conn.send_raw(data)
            conn.sock.shutdown(socket.SHUT_WR)
            _drain(conn)
        _still_serving(broker)
    assert not [r for r in caplog.records if r.exc_info], "an unexpected exception reached the server"
