"""Is a Kafka broker answering at host:port? One ApiVersions v0 round trip, through kemu's own codec.

Used by the docker image's HEALTHCHECK (docker/healthcheck.py) and by kemu.testcontainers to decide
that a container is ready: a decoded Kafka answer, not merely an accepted connection (docker's port
proxy accepts connections before anything listens behind it). Needs nothing beyond kemu itself.
"""

from __future__ import annotations

import socket
import struct

from kemu.wire import codec

API_VERSIONS = 18
# v0 is the version every broker answers, whatever it supports; "kemu" in ASCII, to spot a stray answer.
_VERSION = 0
_CORRELATION_ID = 0x6B656D75
DEFAULT_TIMEOUT_S = 5.0


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def api_versions_round_trip(
    host: str, port: int, timeout: float = DEFAULT_TIMEOUT_S, client_id: str = "kemu-probe"
) -> dict[int, tuple[int, int]]:
    """The broker's advertised APIs, {api key: (min version, max version)}.

    Raises OSError when the connection fails or closes, ValueError when the answer is not a
    successful ApiVersions response to this request.
    """
    request = codec.encode_request(API_VERSIONS, _VERSION, _CORRELATION_ID, {}, client_id=client_id)
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        (size,) = struct.unpack(">i", _recv_exactly(sock, 4))
        if size <= 0:
            raise ValueError(f"response frame of {size} bytes")
        frame = _recv_exactly(sock, size)
    try:
        correlation_id, body = codec.decode_response(API_VERSIONS, _VERSION, frame)
    except codec.DecodeError as exc:
        raise ValueError(f"undecodable ApiVersions response: {exc}") from exc
    if correlation_id != _CORRELATION_ID:
        raise ValueError(f"answer carries correlation id {correlation_id}, expected {_CORRELATION_ID}")
    if body["error_code"] != 0:
        raise ValueError(f"ApiVersions answered error code {body['error_code']}")
    return {entry["api_key"]: (entry["min_version"], entry["max_version"]) for entry in body["api_keys"]}
