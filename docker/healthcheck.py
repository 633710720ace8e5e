"""Docker HEALTHCHECK for the kemu image: healthy once the broker answers a Kafka ApiVersions
request (a full round trip through kemu's own codec, not just an open port).

The address comes from the file the entrypoint writes (it knows the --host/--port it passed);
exit 0 = healthy, 1 = not (the reason goes to stdout, which `docker inspect` shows)."""

from __future__ import annotations

import socket
import struct
import sys
from pathlib import Path

from kemu.wire import codec

ADDRESS_FILE = Path("/tmp/kemu-healthcheck-address")
DEFAULT_ADDRESS = "127.0.0.1:9092"
API_VERSIONS = 18
CORRELATION_ID = 0x6B656D75  # "kemu"
TIMEOUT_S = 4.0


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(chunks)} of {size} bytes")
        chunks += chunk
    return bytes(chunks)


def api_versions_round_trip(host: str, port: int) -> int:
    """Send ApiVersions v0; return how many API keys the broker advertised."""
    request = codec.encode_request(API_VERSIONS, 0, CORRELATION_ID, {}, client_id="kemu-healthcheck")
    with socket.create_connection((host, port), timeout=TIMEOUT_S) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        (size,) = struct.unpack(">i", _recv_exactly(sock, 4))
        correlation_id, body = codec.decode_response(API_VERSIONS, 0, _recv_exactly(sock, size))
    if correlation_id != CORRELATION_ID:
        raise ValueError(f"answer to correlation id {correlation_id}, expected {CORRELATION_ID}")
    if body["error_code"] != 0:
        raise ValueError(f"ApiVersions error code {body['error_code']}")
    return len(body["api_keys"])


def main() -> int:
    address = ADDRESS_FILE.read_text().strip() if ADDRESS_FILE.is_file() else DEFAULT_ADDRESS
    host, _, port = address.rpartition(":")
    try:
        count = api_versions_round_trip(host, int(port))
    except (OSError, ValueError, codec.DecodeError) as exc:
        print(f"unhealthy: ApiVersions to {address} failed: {exc}")
        return 1
    print(f"healthy: {address} advertises {count} APIs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
