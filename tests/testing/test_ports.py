"""Ports for test brokers started as processes lie outside the ephemeral range, where no client self-connects."""

from __future__ import annotations

import random
import socket
from pathlib import Path

from kemu.testing.ports import (
    DEFAULT_EPHEMERAL_RANGE,
    distinct_free_ports,
    ephemeral_range,
    fixed_port_candidates,
    free_port,
)


def test_the_range_is_read_from_the_kernel_file(tmp_path: Path) -> None:
    source = tmp_path / "ip_local_port_range"
    source.write_text("40000\t50000\n")
    assert ephemeral_range(source) == (40000, 50000)
    assert ephemeral_range(tmp_path / "absent") == DEFAULT_EPHEMERAL_RANGE
    source.write_text("garbage\n")
    assert ephemeral_range(source) == DEFAULT_EPHEMERAL_RANGE


def test_candidates_lie_below_the_range_or_above_it_when_it_starts_low() -> None:
    assert fixed_port_candidates((32768, 60999)) == range(10000, 32768)
    assert fixed_port_candidates((1024, 40000)) == range(40001, 65536)


def test_a_free_port_is_outside_the_ephemeral_range_and_bindable() -> None:
    low, high = ephemeral_range()
    for seed in range(20):
        port = free_port(choose=random.Random(seed).choice)
        assert not low <= port <= high
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", port))


def test_a_taken_port_is_not_offered() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", free_port()))
        holder.listen()
        taken = holder.getsockname()[1]
        draws = iter([taken, taken])

        def taken_twice_then_random(candidates: range) -> int:
            return next(draws, None) or random.choice(candidates)

        assert free_port(choose=taken_twice_then_random) != taken


def test_a_cluster_s_ports_are_distinct() -> None:
    ports = distinct_free_ports(30)
    assert len(set(ports)) == 30
