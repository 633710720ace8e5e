"""A blocking, bare-bones Kafka client connection for tests: frames, headers and bodies via kemu.wire."""

from __future__ import annotations

import select
import socket
import struct
from typing import Any

from kemu.wire import codec

TIMEOUT_S = 10.0


class KafkaSocket:
    def __init__(self, address: tuple[str, int], client_id: str | None = "kemu-tests") -> None:
        self.sock = socket.create_connection(address, timeout=TIMEOUT_S)
        # As Kafka's clients do: a small request right behind another is not held back for the first's ACK.
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client_id = client_id
        self._next_correlation = 1

    def __enter__(self) -> KafkaSocket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def encode(self, api_key: int, version: int, body: dict[str, Any], correlation_id: int | None = None) -> bytes:
        """One size-prefixed request frame."""
        if correlation_id is None:
            correlation_id = self._next_correlation
            self._next_correlation += 1
        payload = codec.encode_request(api_key, version, correlation_id, body, client_id=self.client_id)
        return struct.pack(">i", len(payload)) + payload

    def send(self, api_key: int, version: int, body: dict[str, Any], correlation_id: int | None = None) -> None:
        self.send_raw(self.encode(api_key, version, body, correlation_id))

    def receive_frame(self) -> bytes:
        size = struct.unpack(">i", self._exactly(4))[0]
        return self._exactly(size)

    def receive(self, api_key: int, version: int) -> tuple[int, dict[str, Any]]:
        return codec.decode_response(api_key, version, self.receive_frame())

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        self.send(api_key, version, body)
        return self.receive(api_key, version)[1]

    def closed_by_peer(self, timeout: float = TIMEOUT_S) -> bool:
        """True once the broker has closed the connection (EOF or reset) with nothing left unread; False if
        it has not within `timeout` seconds."""
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return False
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def _exactly(self, count: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < count:
            chunk = self.sock.recv(count - len(chunks))
            if not chunk:
                raise ConnectionError(f"connection closed after {len(chunks)} of {count} bytes")
            chunks += chunk
        return bytes(chunks)
