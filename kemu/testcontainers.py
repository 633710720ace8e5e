"""`KemuContainer`: kemu's docker image for testcontainers, a drop-in for its `KafkaContainer`.

    from kemu.testcontainers import KemuContainer

    with KemuContainer() as kafka:  # image: $KEMU_IMAGE, else kemu:local (docker/build-image)
        bootstrap = kafka.get_bootstrap_server()

Needs the `testcontainers` package (`pip install 'kemu[testcontainers]'`).

As KafkaContainer does, the container port (9092) is published on a host port docker picks, and
the broker advertises the address a client on the test's side reaches it by: the host and mapped
port testcontainers reports. That port is known only once the container runs, so the entrypoint
waits for it: the container starts with KEMU_ADVERTISED_LISTENERS_FILE set, `start()` writes the
listener into that file, and `kemu serve` starts then. (Publishing a free host port under the same
number inside the container would need no waiting, but the port could be taken between picking
and binding it.) The container counts as started once the broker answers a Kafka ApiVersions
request. Setting KAFKA_ADVERTISED_LISTENERS yourself (`with_env`) skips the waiting.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import Any, Self

from testcontainers.core.container import DockerContainer
from testcontainers.core.exceptions import ContainerStartException
from testcontainers.core.waiting_utils import WaitStrategy, WaitStrategyTarget

from kemu.probe import api_versions_round_trip

DEFAULT_IMAGE = "kemu:local"
KAFKA_PORT = 9092
ADVERTISED_LISTENERS_FILE = "/tmp/kemu-advertised-listeners"
STARTUP_TIMEOUT_S = 60.0


class KafkaApiVersionsWaitStrategy(WaitStrategy):
    """Ready once the broker in the container answers ApiVersions: a Kafka round trip, not an open
    port (docker's port proxy accepts connections before anything listens behind it)."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self._poll_interval = 0.1

    def with_startup_timeout(self, timeout: float | timedelta) -> Self:
        """WaitStrategy's own, taking fractional seconds too: it is annotated `int | timedelta` but stores
        `float(timeout)`, which is what this does for a number."""
        if isinstance(timeout, timedelta):
            return super().with_startup_timeout(timeout)
        self._startup_timeout = float(timeout)
        return self

    def wait_until_ready(self, container: WaitStrategyTarget) -> None:
        deadline = time.monotonic() + self._startup_timeout
        host = container.get_container_host_ip()
        port = container.get_exposed_port(self.port)
        while True:
            container.reload()
            if container.status in {"exited", "dead"}:
                raise ContainerStartException(
                    f"kemu container {container.status} before it answered ApiVersions:\n{_logs(container)}"
                )
            try:
                api_versions_round_trip(host, port, client_id="kemu-testcontainers")
                return
            except (OSError, ValueError) as exc:
                last_error = exc
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"kemu at {host}:{port} did not answer ApiVersions within {self._startup_timeout:.0f}s "
                    f"({last_error}):\n{_logs(container)}"
                )
            time.sleep(self._poll_interval)


def _logs(container: WaitStrategyTarget) -> str:
    stdout, stderr = container.get_logs()
    return stdout.decode(errors="replace") + stderr.decode(errors="replace")


class KemuContainer(DockerContainer):
    """A kemu broker in docker, used like testcontainers' KafkaContainer.

    `port` is the port the broker listens on inside the container (KafkaContainer's `port`).
    Other containers on a shared docker network are told the same host-side address as the test,
    since kemu has one listener (KafkaContainer adds a second one, BROKER, for them).
    """

    def __init__(self, image: str | None = None, port: int = KAFKA_PORT, **kwargs: Any) -> None:
        super().__init__(image or os.environ.get("KEMU_IMAGE", DEFAULT_IMAGE), **kwargs)
        self.port = port
        self.with_exposed_ports(port)
        self.with_env("KAFKA_LISTENERS", f"PLAINTEXT://0.0.0.0:{port}")
        self._kafka_ready = KafkaApiVersionsWaitStrategy(port).with_startup_timeout(STARTUP_TIMEOUT_S)

    def with_startup_timeout(self, seconds: float) -> Self:
        """How long start() waits for the broker to answer ApiVersions (default 60 s)."""
        self._kafka_ready.with_startup_timeout(seconds)
        return self

    def with_kraft(self) -> Self:
        """KafkaContainer's switch from ZooKeeper to KRaft; kemu needs neither, so there is nothing to
        switch, and code written for KafkaContainer runs unchanged."""
        return self

    def start(self, timeout: float | None = None) -> Self:
        """Start the container and wait until the broker answers ApiVersions; `timeout` (seconds), as
        KafkaContainer.start takes it, overrides with_startup_timeout."""
        if timeout is not None:
            self.with_startup_timeout(timeout)
        advertise_on_start = "KAFKA_ADVERTISED_LISTENERS" not in self.env
        if advertise_on_start:
            self.with_env("KEMU_ADVERTISED_LISTENERS_FILE", ADVERTISED_LISTENERS_FILE)
        # A strategy the caller added with waiting_for() runs once kemu is up, not while the
        # entrypoint still waits for its advertised listener.
        callers_strategy, self._wait_strategy = self._wait_strategy, None
        try:
            super().start()
        finally:
            self._wait_strategy = callers_strategy
        if advertise_on_start:
            listener = f"PLAINTEXT://{self.get_container_host_ip()}:{self.get_exposed_port(self.port)}\n"
            self.copy_into_container(listener.encode(), ADVERTISED_LISTENERS_FILE)
        self._kafka_ready.wait_until_ready(self)
        if callers_strategy is not None:
            callers_strategy.wait_until_ready(self)
        return self

    def get_bootstrap_server(self) -> str:
        return f"{self.get_container_host_ip()}:{self.get_exposed_port(self.port)}"
