"""`KemuContainer`: kemu's docker image for testcontainers, a drop-in for its `KafkaContainer`.

    from kemu.testcontainers import KemuContainer

    with KemuContainer() as kafka:  # image: $KEMU_IMAGE, else kemu:local (docker/build-image)
        bootstrap = kafka.get_bootstrap_server()

Needs the `testcontainers` package (`pip install 'kemu[testcontainers]'`).

The broker must advertise the address clients reach it by. kemu advertises its listen port, so the
container listens on a free host port and publishes it on the same number; the advertised host is
the docker host as testcontainers sees it (set TESTCONTAINERS_HOST_OVERRIDE when that guess is
wrong, e.g. inside a VM or container that reaches published ports on 127.0.0.1).
The container counts as started once the broker answers a Kafka ApiVersions request.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from typing import Any, Self

from testcontainers.core.container import DockerContainer
from testcontainers.core.exceptions import ContainerStartException
from testcontainers.core.waiting_utils import WaitStrategy, WaitStrategyTarget

from kemu.wire import codec

DEFAULT_IMAGE = "kemu:local"
API_VERSIONS = 18
_PROBE_CORRELATION_ID = 0x6B656D75  # "kemu"
_PROBE_TIMEOUT_S = 5.0


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def api_versions_round_trip(host: str, port: int, timeout: float = _PROBE_TIMEOUT_S) -> dict[int, tuple[int, int]]:
    """One ApiVersions v0 exchange with the broker at host:port: {api key: (min, max version)}.

    Raises OSError for connection trouble, ValueError for a wrong or failed answer. (The image's
    docker/healthcheck.py does the same exchange; it cannot import this module, which needs
    testcontainers.)
    """
    request = codec.encode_request(API_VERSIONS, 0, _PROBE_CORRELATION_ID, {}, client_id="kemu-testcontainers")
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        (size,) = struct.unpack(">i", _recv_exactly(sock, 4))
        try:
            correlation_id, body = codec.decode_response(API_VERSIONS, 0, _recv_exactly(sock, size))
        except codec.DecodeError as exc:
            raise ValueError(str(exc)) from exc
    if correlation_id != _PROBE_CORRELATION_ID:
        raise ValueError(f"answer carries correlation id {correlation_id}, expected {_PROBE_CORRELATION_ID}")
    if body["error_code"] != 0:
        raise ValueError(f"ApiVersions answered error code {body['error_code']}")
    return {entry["api_key"]: (entry["min_version"], entry["max_version"]) for entry in body["api_keys"]}


def _free_host_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


class KafkaApiVersionsWaitStrategy(WaitStrategy):
    """Ready once the broker in the container answers ApiVersions: a Kafka round trip, not an open
    port (docker's port proxy accepts connections before anything listens behind it)."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self._poll_interval = 0.1

    def wait_until_ready(self, container: WaitStrategyTarget) -> None:
        deadline = time.monotonic() + self._startup_timeout
        host = container.get_container_host_ip()
        port = container.get_exposed_port(self.port)
        while True:
            container.reload()
            if container.status in {"exited", "dead"}:
                stdout, stderr = container.get_logs()
                raise ContainerStartException(
                    f"kemu container {container.status} before it answered ApiVersions:\n"
                    f"{stdout.decode(errors='replace')}{stderr.decode(errors='replace')}"
                )
            try:
                api_versions_round_trip(host, port)
                return
            except (OSError, ValueError) as exc:
                last_error = exc
            if time.monotonic() >= deadline:
                stdout, stderr = container.get_logs()
                raise TimeoutError(
                    f"kemu at {host}:{port} did not answer ApiVersions within {self._startup_timeout:.0f}s "
                    f"({last_error}):\n{stdout.decode(errors='replace')}{stderr.decode(errors='replace')}"
                )
            time.sleep(self._poll_interval)


class KemuContainer(DockerContainer):
    """A kemu broker in docker, used like testcontainers' KafkaContainer."""

    def __init__(self, image: str | None = None, port: int | None = None, **kwargs: Any) -> None:
        super().__init__(image or os.environ.get("KEMU_IMAGE", DEFAULT_IMAGE), **kwargs)
        self.port = port or _free_host_port()
        self.with_bind_ports(self.port, self.port)
        self.with_env("KAFKA_LISTENERS", f"PLAINTEXT://0.0.0.0:{self.port}")
        self.waiting_for(KafkaApiVersionsWaitStrategy(self.port).with_startup_timeout(60))

    def start(self) -> Self:
        # Decided at start, like KafkaContainer's advertised listener, once the docker client is known.
        host = self.get_docker_client().host()
        self.with_env("KAFKA_ADVERTISED_LISTENERS", f"PLAINTEXT://{host}:{self.port}")
        super().start()
        return self

    def get_bootstrap_server(self) -> str:
        return f"{self.get_container_host_ip()}:{self.get_exposed_port(self.port)}"
