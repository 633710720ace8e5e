"""What a handler sees besides its request: the broker core, the client, the clock, and request order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kemu.clock import Clock
from kemu.cluster.broker import Broker


@dataclass(slots=True)
class ClientInfo:
    """One client connection, as the broker knows it."""

    host: str
    port: int
    software_name: str | None = None  # from ApiVersions v3+
    software_version: str | None = None


@dataclass(slots=True)
class RequestContext:
    broker: Broker
    client: ClientInfo
    client_id: str | None
    # The connection's requests reach the core one at a time, in the order they arrived, as on a Kafka
    # broker. A handler about to wait (a long-polling Fetch, a JoinGroup) calls `detach()` so the
    # connection's next request may start; the responses still leave in request order.
    _on_detach: Callable[[], None] = field(default=lambda: None, repr=False)

    @property
    def clock(self) -> Clock:
        return self.broker.clock

    def detach(self) -> None:
        self._on_detach()
