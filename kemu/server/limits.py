"""Kafka's connection quotas (kafka.network.ConnectionQuotas) and request queue bound, under its names.

- `max.connections`: past it the acceptor stops accepting (clients wait in the listen backlog) until a
  connection closes; Kafka's acceptor blocks the same way.
- `max.connections.per.ip` and `max.connections.per.ip.overrides` ("host:count,host:count"): a new
  connection from an address that already has its maximum is closed at once, as Kafka's
  TooManyConnectionsException closes it.
- `queued.max.requests`: requests read from all connections and waiting for their turn; once that many
  wait, connections stop reading until one starts (Kafka's network threads block on the full queue).
- `connections.max.idle.ms`: a connection with nothing read, nothing owed and nothing sent for that long
  is closed (Kafka's Selector expires idle channels). As the Selector does on its polls, one task looks
  over every connection now and then (`expire_idle`), rather than each read of each connection running
  under a deadline of its own.

Shared by every connection of one server; touched only on its Trio thread.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Protocol

import trio

from kemu.broker.config import BrokerConfig
from kemu.server.gc_policy import POLICY, QUIET_S
from kemu.server.memory import ClosedConnections

log = logging.getLogger("kemu.server")


def parse_overrides(text: str) -> dict[str, int]:
    """`max.connections.per.ip.overrides`: comma-separated host:count pairs (a host may be an IPv6 literal,
    so the count is what follows the last colon)."""
    overrides: dict[str, int] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        host, _, count = item.rpartition(":")
        if not host or not count.strip().isdigit():
            raise ValueError(f"Invalid value {text} for configuration max.connections.per.ip.overrides: "
                             "Must be a comma-separated list of host:count pairs")
        overrides[host.strip().strip("[]")] = int(count)
    return overrides


class Expirable(Protocol):
    def expire_if_idle(self, now: float, idle_s: float) -> None: ...

    def quiet_for(self, now: float) -> float: ...


# How often the idle connections are looked for: a tenth of connections.max.idle.ms, between these bounds.
_IDLE_CHECK_MIN_S, _IDLE_CHECK_MAX_S = 0.01, 1.0


@dataclass
class ServerLimits:
    """The server's connection limits (max.connections, per IP, queued.max.requests, connections.max.idle.ms)
    and what they count."""

    max_connections: int
    max_connections_per_ip: int
    overrides: dict[str, int]
    queued_max_requests: int
    idle_ms: int
    per_ip: dict[str, int] = field(default_factory=dict)
    connection_slots: trio.Semaphore = field(init=False)
    queue_slots: trio.Semaphore = field(init=False)
    refused: int = 0  # connections closed for max.connections.per.ip
    live: set[Expirable] = field(default_factory=set)  # open connections, for expire_idle
    crowd: ClosedConnections = field(default_factory=ClosedConnections)  # memory given back after a crowd

    def __post_init__(self) -> None:
        self.connection_slots = trio.Semaphore(self.max_connections)
        self.queue_slots = trio.Semaphore(self.queued_max_requests)

    @classmethod
    def from_config(cls, config: BrokerConfig) -> ServerLimits:
        return cls(config.max_connections, config.max_connections_per_ip,
                   parse_overrides(config.max_connections_per_ip_overrides), config.queued_max_requests,
                   config.connections_max_idle_ms)

    def limit_for(self, host: str) -> int:
        return self.overrides.get(host, self.max_connections_per_ip)

    def admit_address(self, host: str) -> bool:
        """Count a new connection from `host`, or False (and count nothing) if it has its maximum."""
        current = self.per_ip.get(host, 0)
        limit = self.limit_for(host)
        if current >= limit:
            self.refused += 1
            log.info("Rejected connection from %s, address already has the configured maximum of %d "
                     "connections.", host, limit)
            return False
        self.per_ip[host] = current + 1
        return True

    def release_address(self, host: str) -> None:
        left = self.per_ip.get(host, 0) - 1
        if left > 0:
            self.per_ip[host] = left
        else:
            self.per_ip.pop(host, None)

    @asynccontextmanager
    async def connection(self, stream: trio.SocketStream, host: str) -> AsyncIterator[bool]:
        """Hold a connection slot (waiting for one past max.connections) and count the peer's address;
        yields False, with the stream closed, when the address already has its maximum."""
        async with self.connection_slots:
            if not self.admit_address(host):
                await stream.aclose()
                yield False
                return
            self.crowd.opened()
            try:
                yield True
            finally:
                self.release_address(host)
                self.crowd.closed(trio.current_time())


    async def expire_idle(self) -> None:
        """Forever: close the connections idle for connections.max.idle.ms, give memory back once a crowd of
        connections has left (kemu.server.memory), and thaw the objects frozen out of full garbage
        collections once every connection is quiet (kemu.server.gc_policy)."""
        idle_s = self.idle_ms / 1000
        interval = min(max(idle_s / 10, _IDLE_CHECK_MIN_S), _IDLE_CHECK_MAX_S)
        while True:
            await trio.sleep(interval)
            now = trio.current_time()
            for connection in tuple(self.live):
                connection.expire_if_idle(now, idle_s)
            if not self.crowd.settle(now) and POLICY.pending:  # each connection looked at only then
                POLICY.settle(all(c.quiet_for(now) >= QUIET_S for c in self.live))
