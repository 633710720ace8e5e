"""`kemu serve` as a child process: start it, learn its address from its banner, restart, kill."""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

READY_LINE = re.compile(r"kemu serving on (\S+):(\d+)")
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0
_OUTPUT_LINES_KEPT = 5000


class KemuServeError(AssertionError):
    """`kemu serve` did not start, or did not stop cleanly; the message carries its output."""


class KemuServeProcess:
    """One `python -m kemu serve` child with a fixed data directory.

    The first start binds `port` (0 = an ephemeral port chosen by the server); every later start
    reuses the port the server reported, so clients keep the same bootstrap address across
    restarts, as they would with a real broker.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        extra_args: tuple[str, ...] = (),
        launcher: tuple[str, ...] = (sys.executable, "-m", "kemu"),
    ) -> None:
        self.data_dir = data_dir
        self.launcher = launcher
        self.bind_host = host
        self.extra_args = extra_args
        self.host: str = host
        self.port: int = port
        self._process: subprocess.Popen[str] | None = None
        self._output: collections.deque[str] = collections.deque(maxlen=_OUTPUT_LINES_KEPT)
        self._output_lock = threading.Lock()

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def command(self) -> list[str]:
        return [
            *self.launcher, "serve",
            "--host", self.bind_host,
            "--port", str(self.port),
            "--data-dir", str(self.data_dir),
            *self.extra_args,
        ]  # fmt: skip

    def output(self, last: int | None = None) -> str:
        """What the server printed (stdout and stderr interleaved), across all its starts."""
        with self._output_lock:
            lines = list(self._output)
        if last is not None:
            lines = lines[-last:]
        return "".join(lines)

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        if self.is_running():
            raise RuntimeError(f"kemu serve is already running (pid {self.pid})")
        self._append_output(f"--- starting: {' '.join(self.command())}\n")
        # Unbuffered, so the ready line reaches the pipe the moment it is printed.
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            env=env,
        )
        self._process = process
        ready = threading.Event()
        address: list[tuple[str, int]] = []
        reader = threading.Thread(
            target=self._read_output,
            args=(process, ready, address),
            name=f"kemu-serve-{process.pid}-output",
            daemon=True,
        )
        reader.start()
        if not ready.wait(timeout):
            process.kill()
            process.wait()
            raise KemuServeError(
                f"kemu serve printed no 'kemu serving on HOST:PORT' line within {timeout:.0f}s\n"
                + self.output(last=200)
            )
        if not address:
            returncode = process.wait()
            reader.join()
            raise KemuServeError(
                f"kemu serve exited with code {returncode} before it was ready\n" + self.output(last=200)
            )
        self.host, self.port = address[0]

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int:
        """SIGTERM, then wait for the exit code (SIGKILL and fail if it does not come)."""
        process = self._require_process()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise KemuServeError(
                    f"kemu serve ignored SIGTERM for {timeout:.0f}s and was killed\n" + self.output(last=200)
                ) from None
        return process.returncode

    def stop_cleanly(self) -> None:
        returncode = self.stop()
        if returncode != 0:
            raise KemuServeError(f"kemu serve exited with code {returncode} on SIGTERM\n" + self.output(last=200))

    def restart(self, timeout: float = START_TIMEOUT_S) -> None:
        """Stop with SIGTERM (asserting a clean exit) if running, then start on the same data dir and port."""
        if self.is_running():
            self.stop_cleanly()
        self.start(timeout)

    def kill(self) -> None:
        """SIGKILL: the crash a restart must recover from."""
        process = self._require_process()
        if process.poll() is None:
            process.kill()
        process.wait()

    def _require_process(self) -> subprocess.Popen[str]:
        if self._process is None:
            raise RuntimeError("kemu serve was never started")
        return self._process

    def _append_output(self, line: str) -> None:
        with self._output_lock:
            self._output.append(line)

    def _read_output(
        self,
        process: subprocess.Popen[str],
        ready: threading.Event,
        address: list[tuple[str, int]],
    ) -> None:
        # Drains the pipe for the whole life of the process, so a chatty server never blocks on a
        # full pipe; `ready` fires on the banner, or on EOF if the process died first.
        assert process.stdout is not None
        for line in process.stdout:
            self._append_output(line)
            if not address:
                match = READY_LINE.search(line)
                if match:
                    address.append((match.group(1), int(match.group(2))))
                    ready.set()
        ready.set()


def running(process: KemuServeProcess) -> Iterator[KemuServeProcess]:
    """Start `process` for a fixture to yield, and stop it cleanly after (unless the test left it stopped)."""
    process.start()
    try:
        yield process
    finally:
        if process.is_running():
            process.stop_cleanly()


class TranscribedKemu(KemuServeProcess):
    """`kemu serve --transcript FILE` (every exchange, one JSON line each) with `--override` settings: a test reads
    which APIs, at which versions, a client used."""

    def __init__(self, data_dir: Path, transcript: Path, settings: tuple[str, ...] = ()) -> None:
        overrides = tuple(arg for setting in settings for arg in ("--override", setting))
        super().__init__(data_dir, extra_args=("--transcript", str(transcript), *overrides))
        self.transcript = transcript

    def exchanges(self, api_key: int) -> list[dict[str, Any]]:
        lines = self.transcript.read_text(encoding="utf-8").splitlines()
        return [entry for entry in map(json.loads, lines) if entry["api_key"] == api_key]


Transcribed = TypeVar("Transcribed", bound=TranscribedKemu)


def serving_transcribed(directory: Path, settings: tuple[str, ...] = (),
                        kind: type[Transcribed] = TranscribedKemu) -> Iterator[Transcribed]:  # type: ignore[assignment]
    """A session fixture's body: a `kind` serving from `directory` (data and transcript there) until it ends."""
    server = kind(directory / "data", directory / "transcript.jsonl", settings)
    for _ in running(server):
        yield server
