"""The resident memory of idle connections (issue 34): a fresh `kemu serve`, then N connections that each send
one ApiVersions and stay open doing nothing, then all of them closed.

    python3 -m benchmarks.idle_connections                  # 2,000 connections
    python3 -m benchmarks.idle_connections --connections 5000 --json idle.json

Prints the broker's RSS (VmRSS) at start, with the connections open (and per connection), and three seconds
after they closed, in MiB. The connections are plain sockets of this process, so no client library's memory is in
the figures; their file descriptors need `ulimit -n` above N.
"""

from __future__ import annotations

import argparse
import json
import resource
import socket
import struct
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.brokers import RunningBroker, kemu_definition
from benchmarks.kafka_probe import read_exactly
from kemu.wire import codec

SIZE = struct.Struct(">i")


@dataclass
class IdleResult:
    connections: int
    start_mib: float
    open_mib: float
    closed_mib: float

    @property
    def per_connection_kib(self) -> float:
        return (self.open_mib - self.start_mib) * 1024 / self.connections


def _api_versions(sock: socket.socket) -> None:
    payload = codec.encode_request(18, 3, 1, {"client_software_name": "idle", "client_software_version": "1"},
                                   client_id="idle")
    sock.sendall(SIZE.pack(len(payload)) + payload)
    (size,) = SIZE.unpack(read_exactly(sock, SIZE.size))
    read_exactly(sock, size)


def measure(connections: int, settle_s: float = 1.0, after_close_s: float = 3.0) -> IdleResult:
    """`after_close_s`: kemu gives memory back once no connection has closed for a second, looked at by its
    idle sweep at most a second later."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < connections + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, connections + 1024), hard))
    with RunningBroker(kemu_definition()) as broker:
        broker.start()
        time.sleep(settle_s)
        start = broker.rss_kib() / 1024
        socks = []
        for _ in range(connections):
            sock = socket.create_connection((broker.host, broker.port), timeout=10)
            _api_versions(sock)
            socks.append(sock)
        time.sleep(settle_s)
        opened = broker.rss_kib() / 1024
        for sock in socks:
            sock.close()
        time.sleep(after_close_s)
        closed = broker.rss_kib() / 1024
    return IdleResult(connections, round(start, 1), round(opened, 1), round(closed, 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.idle_connections", description=__doc__)
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    result = measure(args.connections)
    print(f"| connections | RSS at start | with them open | per connection | after they closed |\n"
          f"|---|---|---|---|---|\n"
          f"| {result.connections} | {result.start_mib} MiB | {result.open_mib} MiB | "
          f"{result.per_connection_kib:.1f} KiB | {result.closed_mib} MiB |")
    if args.json:
        args.json.write_text(json.dumps(asdict(result) | {"per_connection_kib": result.per_connection_kib}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
