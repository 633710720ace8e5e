"""Delegation tokens on real sockets, through kemu's SASL_PLAINTEXT listener: a token created over a PLAIN
login logs in with SCRAM (tokenauth=true) at every node of a three-broker kemu (one token store for all); that
session is refused every token request (KafkaPrincipal.tokenAuthenticated); once expired, the token's next
login fails with SASL_AUTHENTICATION_FAILED."""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.testing import Broker
from kemu.testing.certs import sasl_settings
from kemu.wire.errors import ErrorCode
from tests.security.test_listener_sockets import TIMEOUT_S, _exchange
from tests.security.test_token_authentication import TokenClient

CREATE, EXPIRE, DESCRIBE = 38, 40, 41


@pytest.fixture(scope="module")
def broker() -> Iterator[Broker]:
    config = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
              "inter.broker.listener.name": "PLAINTEXT", "delegation.token.secret.key": "socket-secret",
              **sasl_settings("sasl_plaintext", ("PLAIN", "SCRAM-SHA-512"), {"alice": "alice-secret"})}
    with Broker(config=config, brokers=3) as made:
        yield made


def _connect(broker: Broker, node_id: int = 1) -> socket.socket:
    host, port = broker.bootstrap("SASL_PLAINTEXT", node_id=node_id).rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=TIMEOUT_S)


def _authenticate(sock: socket.socket, mechanism: str, *tokens: bytes) -> dict[str, Any] | None:
    handshake = _exchange(sock, 17, 1, {"mechanism": mechanism})
    assert handshake is not None and handshake["error_code"] == 0
    answer = None
    for token in tokens:
        answer = _exchange(sock, 36, 2, {"auth_bytes": token})
        if answer is None or answer["error_code"]:
            break
    return answer


def _token_login(sock: socket.socket, token_id: str, hmac: bytes) -> dict[str, Any] | None:
    client = TokenClient("SCRAM-SHA-512", token_id, base64.b64encode(hmac).decode())
    handshake = _exchange(sock, 17, 1, {"mechanism": "SCRAM-SHA-512"})
    assert handshake is not None and handshake["error_code"] == 0
    first = _exchange(sock, 36, 2, {"auth_bytes": client.first()})
    if first is None or first["error_code"]:
        return first
    final = _exchange(sock, 36, 2, {"auth_bytes": client.final(first["auth_bytes"])})
    assert final is None or final["error_code"] or client.verify(final["auth_bytes"])
    return final


def test_a_token_logs_in_at_every_node_until_it_expires(broker: Broker) -> None:
    with _connect(broker) as alice:
        login = _authenticate(alice, "PLAIN", b"\0alice\0alice-secret")
        assert login is not None and login["error_code"] == 0
        created = _exchange(alice, CREATE, 3, {"owner_principal_type": None, "owner_principal_name": None,
                                              "renewers": [], "max_lifetime_ms": -1})
        assert created is not None and created["error_code"] == 0
        token_id, hmac = created["token_id"], created["hmac"]
        for node_id in (1, 2, 3):
            with _connect(broker, node_id) as session:
                final = _token_login(session, token_id, hmac)
                assert final is not None and final["error_code"] == 0
                # The session is the owner's, but a token's: no token requests on it.
                refused = _exchange(session, DESCRIBE, 3, {"owners": None})
                assert refused == {"error_code": ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "tokens": [],
                                   "throttle_time_ms": 0}
                again = _exchange(session, CREATE, 1, {"renewers": [], "max_lifetime_ms": -1})
                assert again is not None and again["error_code"] == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
        expired = _exchange(alice, EXPIRE, 2, {"hmac": hmac, "expiry_time_period_ms": -1})
        assert expired is not None and expired["error_code"] == 0
    with _connect(broker, 2) as late:
        refused_login = _token_login(late, token_id, hmac)
        assert refused_login is not None
        assert refused_login["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert refused_login["error_message"] == ("Authentication failed during authentication due to invalid "
                                                  "credentials with SASL mechanism SCRAM-SHA-512")
