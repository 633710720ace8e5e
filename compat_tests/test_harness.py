"""The `kemu serve` process harness itself, driven against fake_serve.py (which only plays the
process contract), so a harness bug never masquerades as a broker bug."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from compat_tests.kemu_process import KemuServeError, KemuServeProcess

FAKE_LAUNCHER = (sys.executable, str(Path(__file__).parent / "fake_serve.py"))


def _fake(tmp_path: Path, *extra_args: str) -> KemuServeProcess:
    return KemuServeProcess(tmp_path / "data", extra_args=extra_args, launcher=FAKE_LAUNCHER)


def _accepts_connections(process: KemuServeProcess) -> bool:
    with socket.create_connection((process.host, process.port), timeout=5):
        return True


def test_start_reports_the_address_from_the_banner(tmp_path: Path) -> None:
    process = _fake(tmp_path)
    process.start()
    try:
        assert process.host == "127.0.0.1"
        assert process.port > 0
        assert process.bootstrap == f"127.0.0.1:{process.port}"
        assert _accepts_connections(process)
        assert f"fake serve: data dir {tmp_path / 'data'}" in process.output()
    finally:
        process.stop_cleanly()
    assert not process.is_running()


def test_restart_keeps_the_port_and_replaces_the_process(tmp_path: Path) -> None:
    process = _fake(tmp_path)
    process.start()
    port, pid = process.port, process.pid
    process.restart()
    try:
        assert (process.port, process.pid != pid) == (port, True)
        assert _accepts_connections(process)
    finally:
        process.stop_cleanly()


def test_kill_then_start_comes_back_on_the_same_port(tmp_path: Path) -> None:
    process = _fake(tmp_path)
    process.start()
    port = process.port
    process.kill()
    assert not process.is_running()
    process.start()
    try:
        assert process.port == port
        assert _accepts_connections(process)
    finally:
        process.stop_cleanly()


def test_death_before_ready_fails_with_the_output(tmp_path: Path) -> None:
    process = _fake(tmp_path, "--die-before-ready")
    with pytest.raises(KemuServeError, match=r"(?s)exited with code 3 before it was ready.*cannot open the data dir"):
        process.start()


def test_no_banner_times_out(tmp_path: Path) -> None:
    process = _fake(tmp_path, "--never-ready")
    with pytest.raises(KemuServeError, match="printed no 'kemu serving on HOST:PORT' line within 1s"):
        process.start(timeout=1)
    assert not process.is_running()


def test_unclean_exit_on_sigterm_is_reported(tmp_path: Path) -> None:
    process = _fake(tmp_path, "--exit-code-on-sigterm", "7")
    process.start()
    with pytest.raises(KemuServeError, match="exited with code 7 on SIGTERM"):
        process.stop_cleanly()
