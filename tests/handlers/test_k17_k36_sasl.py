"""SASL on kemu's PLAINTEXT listener: both SASL APIs are advertised and answered ILLEGAL_SASL_STATE, as
Kafka's request handler answers them when no authenticator took the connection first."""

from __future__ import annotations

import pytest

from kemu.wire.errors import ErrorCode
from tests.handlers.harness import Connection

SASL_HANDSHAKE, SASL_AUTHENTICATE, API_VERSIONS = 17, 36, 18


@pytest.mark.real_socket
@pytest.mark.parametrize("version", [0, 1])
def test_handshake_is_illegal_sasl_state_with_no_mechanisms(conn: Connection, version: int) -> None:
    answer = conn.request(SASL_HANDSHAKE, version, {"mechanism": "PLAIN"})
    assert answer["error_code"] == ErrorCode.ILLEGAL_SASL_STATE
    assert answer["mechanisms"] == []


@pytest.mark.parametrize("version", [0, 1, 2])
def test_authenticate_is_illegal_sasl_state_with_kafkas_message(conn: Connection, version: int) -> None:
    answer = conn.request(SASL_AUTHENTICATE, version, {"auth_bytes": b"\x00user\x00secret"})
    assert answer["error_code"] == ErrorCode.ILLEGAL_SASL_STATE
    assert answer["error_message"] == "SaslAuthenticate request received after successful authentication"


def test_both_are_advertised(conn: Connection) -> None:
    keys = {entry["api_key"]: (entry["min_version"], entry["max_version"])
            for entry in conn.request(API_VERSIONS, 3, {"client_software_name": "kemu-tests",
                                                          "client_software_version": "1"})["api_keys"]}
    assert keys[SASL_HANDSHAKE] == (0, 1)
    assert keys[SASL_AUTHENTICATE] == (0, 2)
