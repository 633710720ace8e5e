"""Ports for brokers a test starts as processes, chosen so that no client can connect to itself on them.

A port taken with `bind(0)` comes from the kernel's ephemeral range, the range outgoing connections draw their
source ports from. A client that dials such a port before its server listens can be given that very port as
its own source port, and TCP then connects the socket to itself (a "simultaneous open"): the client talks to
itself, and a Kafka controller sending BEGIN_QUORUM_EPOCH to a peer that is still starting answers its own
request with INVALID_VOTER_KEY for as long as the connection lives. A port below the ephemeral range is never a
source port, so that cannot happen.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Callable
from pathlib import Path

EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Linux's default range, for systems that do not say theirs.
DEFAULT_EPHEMERAL_RANGE = (32768, 60999)
LOWEST_PORT = 10000
ATTEMPTS = 200


def ephemeral_range(source: Path = EPHEMERAL_RANGE_FILE) -> tuple[int, int]:
    try:
        low, high = (int(word) for word in source.read_text().split())
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL_RANGE
    return low, high


def fixed_port_candidates(ephemeral: tuple[int, int]) -> range:
    """The ports below the ephemeral range (at least a few thousand of them), or above it when it starts low."""
    low, high = ephemeral
    if low - LOWEST_PORT >= 2000:
        return range(LOWEST_PORT, low)
    return range(high + 1, 65536)


def free_port(host: str = "127.0.0.1", choose: Callable[[range], int] | None = None) -> int:
    """A port nothing listens on now, outside the ephemeral range (see the module's docstring); `choose` draws
    one candidate (a test's own, to make the draws known)."""
    draw = choose or random.SystemRandom().choice
    candidates = fixed_port_candidates(ephemeral_range())
    for _ in range(ATTEMPTS):
        port = draw(candidates)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    # Every draw was taken: a busy machine's last resort is the kernel's choice.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def distinct_free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` free ports, no two alike: a cluster's listeners are chosen before any of them binds."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port(host)
        if port not in ports:
            ports.append(port)
    return ports
