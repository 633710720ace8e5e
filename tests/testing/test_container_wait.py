"""KemuContainer's readiness wait, without docker: a stand-in container whose broker is a real kemu."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

pytest.importorskip("testcontainers")

from testcontainers.core.exceptions import ContainerStartException  # noqa: E402

from kemu.testcontainers import KafkaApiVersionsWaitStrategy  # noqa: E402
from kemu.testing import Broker  # noqa: E402


class FakeContainer:
    """What the wait strategy asks a container: its host, its mapped port, and (through the engine) its
    status. `reloads` counts the engine round trips the wait made."""

    def __init__(self, port: int, status: str = "running") -> None:
        self.port = port
        self.status = status
        self.reloads = 0

    def get_container_host_ip(self) -> str:
        return "127.0.0.1"

    def get_exposed_port(self, port: int) -> int:
        return self.port

    def reload(self) -> None:
        self.reloads += 1

    def get_logs(self) -> tuple[bytes, bytes]:
        return b"kemu-docker: the entrypoint's last words\n", b""

    def get_wrapped_container(self) -> Any:
        return self


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_broker_that_answers_is_ready_at_once() -> None:
    with Broker() as broker:
        container = FakeContainer(broker.port)
        started = time.monotonic()
        KafkaApiVersionsWaitStrategy(9092).with_startup_timeout(10).wait_until_ready(container)  # type: ignore[arg-type]
        assert time.monotonic() - started < 1.0
        assert container.reloads == 1


def test_polls_often_but_asks_the_engine_only_now_and_then() -> None:
    container = FakeContainer(_closed_port())
    strategy = KafkaApiVersionsWaitStrategy(9092).with_startup_timeout(1.0)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="did not answer ApiVersions") as failure:
        strategy.wait_until_ready(container)  # type: ignore[arg-type]
    waited = time.monotonic() - started
    assert "the entrypoint's last words" in str(failure.value)
    # One engine round trip per status interval, not one per probe: a probe every 20 ms would be ~50.
    assert 2 <= container.reloads <= waited / 0.25 + 2


def test_a_container_that_exited_is_reported_with_its_logs() -> None:
    container = FakeContainer(_closed_port(), status="exited")
    with pytest.raises(ContainerStartException, match="exited before it answered ApiVersions") as failure:
        KafkaApiVersionsWaitStrategy(9092).with_startup_timeout(10).wait_until_ready(container)  # type: ignore[arg-type]
    assert "the entrypoint's last words" in str(failure.value)
