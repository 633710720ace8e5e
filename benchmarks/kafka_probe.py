"""Hand-encoded Metadata and ApiVersions requests over a plain socket.

The start-up probe must not depend on a client library's reconnect back-off (librdkafka waits up to a
second between attempts, which would swamp a start-up of a few milliseconds) nor on anything inside
kemu, so it writes the two requests itself: both are fixed, tiny, and non-flexible at the versions used.
"""

from __future__ import annotations

import socket
import struct
import time

CLIENT_ID = b"kemu-bench"
METADATA_KEY = 3
API_VERSIONS_KEY = 18
_RETRY_INTERVAL_S = 0.002


class ProbeError(Exception):
    """The broker answered, but not with a well-formed response to the request sent."""


def _request_frame(api_key: int, api_version: int, correlation_id: int, body: bytes) -> bytes:
    header = struct.pack(">hhih", api_key, api_version, correlation_id, len(CLIENT_ID)) + CLIENT_ID
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = sock.recv(remaining)
        if not chunk:
            raise ConnectionResetError("broker closed the connection mid-response")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _exchange(host: str, port: int, api_key: int, api_version: int, body: bytes, timeout: float) -> bytes:
    """One request on a fresh connection; returns the response body after the correlation id."""
    correlation_id = 0x6B656D75  # arbitrary, but checked on the way back
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(_request_frame(api_key, api_version, correlation_id, body))
        (size,) = struct.unpack(">i", read_exactly(sock, 4))
        frame = read_exactly(sock, size)
    (answered_id,) = struct.unpack_from(">i", frame)
    if answered_id != correlation_id:
        raise ProbeError(f"correlation id {answered_id} in the answer, {correlation_id} was sent")
    return frame[4:]


def metadata_broker_count(host: str, port: int, timeout: float = 2.0) -> int:
    """Metadata v1 for all topics (a null topic array); returns how many brokers the answer lists."""
    body = _exchange(host, port, METADATA_KEY, 1, struct.pack(">i", -1), timeout)
    brokers: int = struct.unpack_from(">i", body)[0]
    if brokers < 1:
        raise ProbeError(f"Metadata answer lists {brokers} brokers")
    return brokers


def api_versions(host: str, port: int, timeout: float = 2.0) -> dict[int, tuple[int, int]]:
    """ApiVersions v0: {api key: (min version, max version)} as the broker advertises them."""
    body = _exchange(host, port, API_VERSIONS_KEY, 0, b"", timeout)
    error_code, count = struct.unpack_from(">hi", body)
    if error_code != 0:
        raise ProbeError(f"ApiVersions answered error code {error_code}")
    entries = (struct.unpack_from(">hhh", body, 6 + 6 * index) for index in range(count))
    return {key: (low, high) for key, low, high in entries}


def wait_for_metadata(host: str, port: int, deadline: float) -> float:
    """Retry Metadata until one is answered; returns the perf_counter() instant it was.

    Refused, reset and timed-out connections mean "not up yet"; a malformed answer is an error.
    """
    last_error: OSError | None = None
    while time.perf_counter() < deadline:
        try:
            metadata_broker_count(host, port, timeout=max(0.05, min(2.0, deadline - time.perf_counter())))
            return time.perf_counter()
        except OSError as error:
            last_error = error
            time.sleep(_RETRY_INTERVAL_S)
    raise TimeoutError(f"no Metadata answer from {host}:{port} in time (last error: {last_error})")
