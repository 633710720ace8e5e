"""`kemu serve` refusing what it cannot use: one line naming the flag and the value, a non-zero exit, never a
traceback; a second broker on a locked data directory; SIGTERM before serving; `kemu --version`."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kemu import __version__
from tests.server.test_cli import kemu_serve


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kemu", "serve", "--port", "0", *args], capture_output=True,
                          text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)


def refusal(completed: subprocess.CompletedProcess[str]) -> str:
    assert completed.returncode != 0, completed.stdout
    assert "Traceback" not in completed.stderr, completed.stderr
    assert completed.stdout == ""
    return completed.stderr.strip().splitlines()[-1]


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a directory")
    return path


def test_a_data_dir_that_is_a_file(a_file: Path) -> None:
    assert refusal(serve("--data-dir", str(a_file))) == f"kemu: --data-dir {a_file}: not a directory"


def test_a_data_dir_under_a_file(a_file: Path) -> None:
    assert refusal(serve("--data-dir", str(a_file / "sub"))) == (
        f"kemu: --data-dir {a_file / 'sub'}: cannot create it (Not a directory)")


def test_a_transcript_under_a_file(a_file: Path) -> None:
    assert refusal(serve("--transcript", str(a_file / "t.jsonl"))) == (
        f"kemu: --transcript {a_file / 't.jsonl'}: cannot write it (Not a directory)")


@pytest.mark.parametrize("flag", ["--port", "--advertised-port", "--control-port"])
@pytest.mark.parametrize("value", ["70000", "-1", "ninety"])
def test_a_port_out_of_range(flag: str, value: str) -> None:
    line = refusal(serve(flag, value))
    assert line.startswith(f"kemu serve: error: argument {flag}: ") and "is not a port number (0-65535)" in line


def test_an_unknown_flag_shows_the_serve_usage() -> None:
    completed = serve("--bogus")
    assert refusal(completed) == "kemu serve: error: unrecognized arguments: --bogus"
    assert completed.stderr.startswith("usage: kemu serve ")


def test_a_taken_port_names_the_flags() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        completed = subprocess.run([sys.executable, "-m", "kemu", "serve", "--port", str(port)],
                                   capture_output=True, text=True, timeout=60, check=False)
        assert refusal(completed) == f"kemu: cannot listen on --host 127.0.0.1 --port {port}: Address already in use"
        completed = serve("--control-port", str(port))
        assert refusal(completed) == (
            f"kemu: cannot listen on --host 127.0.0.1 --control-port {port}: Address already in use")


def test_a_host_that_does_not_resolve() -> None:
    line = refusal(serve("--host", "no-such-host.invalid"))
    assert line.startswith("kemu: cannot listen on --host no-such-host.invalid --port 0: "), line


@pytest.mark.parametrize("observed", [(), ("--control-port", "0")])
def test_a_second_broker_on_the_same_data_dir(tmp_path: Path, observed: tuple[str, ...]) -> None:
    with kemu_serve("--data-dir", str(tmp_path)):
        assert refusal(serve("--data-dir", str(tmp_path), *observed)) == (
            f"kemu: Failed to acquire lock on file .lock in {tmp_path}. A Kafka instance in another process or "
            "thread is using this directory.")


def test_sigterm_before_serving_exits_0() -> None:
    # SIGTERM delivered during start-up, before the broker's loop has its signal receiver: deterministic, by a
    # signal the process sends itself at the start of the serve command.
    script = ("import os, signal, sys, kemu.cli as cli\n"
              "start = cli._serve_command\n"
              "def early(args):\n"
              "    os.kill(os.getpid(), signal.SIGTERM)\n"
              "    return start(args)\n"
              "cli._serve_command = early\n"
              "sys.exit(cli.main(['serve', '--port', '0']))\n")
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                               check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "" and "Traceback" not in completed.stderr


def test_version() -> None:
    completed = subprocess.run([sys.executable, "-m", "kemu", "--version"], capture_output=True, text=True,
                               timeout=60, check=False)
    assert completed.returncode == 0
    assert completed.stdout.strip() == f"kemu {__version__}"
