"""`kemu serve` / `python -m kemu serve` as a real process: the banner, serving, clean exits, data dirs."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.server.kafka_socket import KafkaSocket

BANNER = re.compile(r"kemu serving on (\S+):(\d+)")


@contextmanager
def kemu_serve(*args: str, launcher: Sequence[str] = ("-m", "kemu")) -> Iterator[
        tuple[subprocess.Popen[str], str, int]]:
    """`kemu serve --port 0 *args` started by `python *launcher`, once it printed its banner."""
    process = subprocess.Popen([sys.executable, *launcher, "serve", "--port", "0", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = BANNER.fullmatch(line.strip())
        assert match, f"banner was {line!r}; stderr: {process.stderr.read() if process.stderr else ''}"
        yield process, match[1], int(match[2])
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def metadata(host: str, port: int) -> dict[str, object]:
    with KafkaSocket((host, port)) as conn:
        return conn.request(3, 12, {"topics": None})


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_serves_then_exits_cleanly_on_signal(stop: signal.Signals) -> None:
    with kemu_serve() as (process, host, port):
        assert host == "127.0.0.1" and port > 0
        body = metadata(host, port)
        assert body["brokers"] == [{"node_id": 1, "host": "127.0.0.1", "port": port, "rack": None}]
        process.send_signal(stop)
        assert process.wait(timeout=30) == 0
        assert process.stdout is not None and process.stdout.read() == ""  # exactly one line on stdout


def test_temporary_data_dir_is_removed_on_exit() -> None:
    with kemu_serve("--log-level", "INFO") as (process, _, _):
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        logged = process.stderr.read()
    found = re.search(r"data directory (\S+) \(temporary\)", logged)
    assert found, logged
    assert not Path(found[1]).exists()


def test_data_dir_keeps_the_cluster_id(tmp_path: Path) -> None:
    cluster_ids = []
    for _ in range(2):
        with kemu_serve("--data-dir", str(tmp_path), "--node-id", "3") as (process, host, port):
            body = metadata(host, port)
            cluster_ids.append(body["cluster_id"])
            assert body["controller_id"] == 3
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
    assert cluster_ids[0] == cluster_ids[1]
    assert (tmp_path / "meta.properties").exists()


def test_advertised_host_is_in_the_banner_and_metadata() -> None:
    with kemu_serve("--advertised-host", "localhost") as (process, host, port):
        assert host == "localhost"
        body = metadata("127.0.0.1", port)
        assert body["brokers"] == [{"node_id": 1, "host": "localhost", "port": port, "rack": None}]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_help_names_the_options() -> None:
    done = subprocess.run([sys.executable, "-m", "kemu", "serve", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    for option in ("--host", "--port", "--advertised-host", "--data-dir", "--log-level", "--node-id"):
        assert option in done.stdout


def test_brokers_serve_a_cluster_with_racks_and_list_it_in_the_banner() -> None:
    with kemu_serve("--brokers", "3", "--rack", "a,b,c", "--node-id", "4") as (process, host, port):
        # The banner lists every broker, comma-separated: the pattern's host takes in all but the last port.
        ports = [int(address.rsplit(":", 1)[1]) for address in f"{host}:{port}".split(",")]
        assert len(set(ports)) == 3
        for port in ports:
            body = metadata("127.0.0.1", port)
            assert body["brokers"] == [{"node_id": node, "host": "127.0.0.1", "port": p, "rack": rack}
                                       for node, p, rack in zip([4, 5, 6], ports, "abc", strict=True)]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_racks_must_be_one_or_one_per_broker() -> None:
    done = subprocess.run([sys.executable, "-m", "kemu", "serve", "--port", "0", "--brokers", "3", "--rack", "a,b"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--rack names 2 racks for 3 brokers" in done.stderr
