"""The two brokers a differential test drives: a `Target` is a name, a bootstrap address and raw requests.

`Target.request(api_key, version, body)` sends one request on a connection of its own through kemu's codec
(tests/server/kafka_socket.py) and returns the decoded response body; `connect()` hands out a connection
for a sequence of requests. Stock clients take `target.bootstrap`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tests.server.kafka_socket import KafkaSocket

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    name: str  # "kafka" or "kemu"
    host: str
    port: int

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def address(self) -> tuple[str, int]:
        return (self.host, self.port)

    def connect(self, client_id: str | None = "kemu-differential") -> KafkaSocket:
        return KafkaSocket(self.address, client_id=client_id)

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        with self.connect() as connection:
            return connection.request(api_key, version, body)


TargetT = TypeVar("TargetT", bound=Target)


@dataclass(frozen=True)
class Pair(Generic[TargetT]):
    """Kafka and kemu; a test module may pair richer targets (a subclass of Target) the same way."""

    kafka: TargetT
    kemu: TargetT

    def both(self, scenario: Callable[[TargetT], T]) -> tuple[T, T]:
        """Run `scenario` against Kafka, then against kemu: (what Kafka showed, what kemu showed)."""
        return scenario(self.kafka), scenario(self.kemu)


def pair_of(kafka_address: tuple[str, int], kemu_host: str, kemu_port: int) -> Pair:
    """The Pair of a reference Kafka (its first node's address) and a kemu."""
    host, port = kafka_address
    return Pair(kafka=Target("kafka", host, port), kemu=Target("kemu", kemu_host, kemu_port))
