"""The Java client, kafka-clients from Maven in two lines, as one long-lived JVM per line (src/Runner.java).

LINES maps a line to its jar set in compat_tests/maven: "4.3" (clients-4.3, kafka-clients 4.3.1) and "3.9"
(clients-3.9, kafka-clients 3.9.1: the line Spark's Kafka connector is built against). compat_tests/jars.py
resolves a set to its classpath (kafka-clients and the lz4, snappy, zstd and slf4j-api jars it uses); javac
and java come from a JDK on PATH. The programs in src/ are compiled once per session per line, and every
request of the session goes to that line's one Runner, so the whole suite starts four JVMs (two javac, two
Runners) however many scenarios it runs. A request is answered with one JSON line, {"ok": ...} or
{"error": ...}, as the kafkajs scripts do; an exception the client threw is a `JavaError` naming its class.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from compat_tests import jars
from compat_tests.external_clients import ToolFailed, require_executable

SOURCES = Path(__file__).parent / "src"
LINES = {"4.3": "clients-4.3", "3.9": "clients-3.9"}
LATEST = "4.3"
# Programs that need a line's own API (the share consumer, listConfigResources, a voter change's cluster id and Kafka
# Streams' streams group protocol are 4.x's): compiled for those lines only; Runner finds them by name.
LINE_ONLY = {"ShareGroups.java": {"4.3"}, "Telemetry.java": {"4.3"}, "Operations.java": {"4.3"},
             "StreamsApps.java": {"4.3"}}
RUNNER = "Runner"
RUN_TIMEOUT_S = 90.0
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
COMPILE_TIMEOUT_S = 120.0
STDERR_SHOWN = 8000
# The C1 compiler alone warms a client up fastest, and the serial collector keeps the JVM from starting a GC
# thread per core on a shared machine.
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m")


class JavaError(Exception):
    """The Java client threw; `error` is the program's description of it (class, message, cause)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('class')}: {error.get('message')}")
        self.error = error

    @property
    def java_class(self) -> str:
        return str(self.error.get("class"))


def _forward_lines(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


class JavaClient:
    """The Runner JVM of one client line. It starts on the first request, and again on the request after one
    that timed out (that one's JVM is killed, as nothing says what it is still doing)."""

    def __init__(self, line: str, java: str, classpath: str, stderr: Path) -> None:
        self.line = line
        self.java = java
        self.classpath = classpath
        self.stderr = stderr
        self.version: str | None = None
        self.starts = 0
        self._process: subprocess.Popen[str] | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()

    def run(self, program: str, bootstrap: str, *args: str, timeout: float = RUN_TIMEOUT_S) -> Any:
        """Run `<program>.<operation>(bootstrap, args...)` (args[0] is the operation; src/*.java) in the
        Runner; return its `ok` result. Raises JavaError when the client threw out of the operation."""
        request = [program, bootstrap, *args]
        if any("\t" in field or "\n" in field for field in request):
            raise ValueError(f"a Runner request's fields hold no tab or newline: {request}")
        what = f"{self.line}: {program} {' '.join(args)}"
        with self._lock:
            process = self._process if self._process is not None and self._process.poll() is None else self._start()
            shown_from = self.stderr.stat().st_size
            assert process.stdin is not None
            process.stdin.write("\t".join(request) + "\n")
            process.stdin.flush()
            document = self._next(what, timeout, shown_from)
        if "usage" in document:
            raise ToolFailed(f"{what}: {document['usage']}")
        if "error" in document:
            raise JavaError(document["error"])
        return document["ok"]

    def start(self) -> None:
        """Start the Runner now rather than at the first request."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._start()

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
            if process is None:
                return
            assert process.stdin is not None
            process.stdin.close()
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _start(self) -> subprocess.Popen[str]:
        argv = [self.java, *JVM_OPTIONS, "-cp", self.classpath, RUNNER]
        shown_from = self.stderr.stat().st_size if self.stderr.exists() else 0
        with self.stderr.open("a", encoding="utf-8") as stderr:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                       text=True, encoding="utf-8", bufsize=1)
        self.starts += 1
        self._process = process
        self._answers = queue.Queue()
        assert process.stdout is not None
        threading.Thread(target=_forward_lines, args=(process.stdout, self._answers), daemon=True,
                         name=f"java-{self.line}-stdout").start()
        version = str(self._next(f"{self.line}: starting {RUNNER}", START_TIMEOUT_S, shown_from).get("ready"))
        if version.rsplit(".", 1)[0] != self.line:
            raise ToolFailed(f"the {LINES[self.line]} classpath runs kafka-clients {version}, not {self.line}.x:"
                             f" {self.classpath}")
        self.version = version
        return process

    def _next(self, what: str, timeout: float, shown_from: int) -> dict[str, Any]:
        """The Runner's next answer; the JVM's stderr since `shown_from` goes into the failure otherwise."""
        process = self._process
        assert process is not None
        try:
            line = self._answers.get(timeout=timeout)
        except queue.Empty:
            process.kill()
            process.wait()
            self._process = None
            raise ToolFailed(f"{what} ran longer than {timeout:.0f}s (its JVM killed)\n"
                             f"stderr:\n{self._stderr_since(shown_from)}") from None
        if line is None:
            self._process = None
            raise ToolFailed(f"{what}: the JVM exited {process.wait()}\nstderr:\n{self._stderr_since(shown_from)}")
        try:
            document: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError:
            raise ToolFailed(f"{what}: the Runner answered no JSON line: {line!r}") from None
        return document

    def _stderr_since(self, offset: int) -> str:
        with self.stderr.open(encoding="utf-8", errors="replace") as stderr:
            stderr.seek(offset)
            return stderr.read()[-STDERR_SHOWN:]


def compile_client(line: str, directory: Path) -> JavaClient:
    """javac every program in src/ against the line's jars, into `directory`/classes."""
    classpath = jars.classpath(LINES[line])
    javac = require_executable("javac")
    java = require_executable("java")
    classes = directory / "classes"
    sources = sorted(str(path) for path in SOURCES.glob("*.java") if line in LINE_ONLY.get(path.name, {line}))
    completed = subprocess.run(
        [javac, "-d", str(classes), "-cp", classpath, "-Xlint:all", *sources],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False,
    )
    if completed.returncode != 0:
        raise ToolFailed(f"javac against {LINES[line]} failed:\n{completed.stdout}\n{completed.stderr}")
    return JavaClient(line, java, f"{classes}{os.pathsep}{classpath}", directory / "stderr.log")


class JavaLines:
    """The session's client lines. Each line the session will use is compiled and its Runner started in the
    background from the start, while the brokers start; `client(line)` waits for it (or prepares a line not
    foreseen)."""

    def __init__(self, directory: Path, foreseen: Iterable[str]) -> None:
        self.directory = directory
        self._preparing = ThreadPoolExecutor(max_workers=len(LINES), thread_name_prefix="java-line")
        self._clients: dict[str, Future[JavaClient]] = {}
        for line in foreseen:
            self._prepare(line)

    def client(self, line: str) -> JavaClient:
        return self._prepare(line).result()

    def close(self) -> None:
        self._preparing.shutdown(wait=True)
        for future in self._clients.values():
            if future.exception() is None:
                future.result().close()

    def _prepare(self, line: str) -> Future[JavaClient]:
        if line not in self._clients:
            self._clients[line] = self._preparing.submit(self._compile_and_start, line)
        return self._clients[line]

    def _compile_and_start(self, line: str) -> JavaClient:
        directory = self.directory / line
        directory.mkdir(parents=True, exist_ok=True)
        client = compile_client(line, directory)
        client.start()
        return client
