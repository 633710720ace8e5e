"""The Java client (kafka-clients 3.9) as child processes: the programs in src/, compiled once per session.

The jars come from the PyPI package shigawire-apache-flink-libraries (pyflink/lib/: kafka-clients.jar with
the lz4, snappy, zstd and slf4j-api jars it uses), found through the installed distribution's files; javac
and java from a JDK on PATH. A program prints one JSON line, {"ok": ...} or {"error": ...}, as the kafkajs
scripts do; an exception the client threw is a `JavaError` naming its class.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat_tests.external_clients import ToolFailed, require_executable, tool_missing

SOURCES = Path(__file__).parent / "src"
JARS_DISTRIBUTION = "shigawire-apache-flink-libraries"
JARS = ("kafka-clients", "slf4j-api", "lz4-java", "snappy-java", "zstd-jni")
RUN_TIMEOUT_S = 90.0
COMPILE_TIMEOUT_S = 120.0
# A client program is short-lived: the C1 compiler alone starts it fastest, and the serial collector keeps
# it from starting a GC thread per core on a shared machine.
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m")


class JavaError(Exception):
    """The Java client threw; `error` is the program's description of it (class, message, cause)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('class')}: {error.get('message')}")
        self.error = error

    @property
    def java_class(self) -> str:
        return str(self.error.get("class"))


def client_jars() -> list[Path]:
    """kafka-clients.jar and the jars it needs at run time, from the installed PyPI package."""
    try:
        distribution = importlib.metadata.distribution(JARS_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        tool_missing(f"{JARS_DISTRIBUTION} (the Java client's jars) is not installed; "
                     "`pip install -e '.[test]'` installs it")
    jars = [Path(str(distribution.locate_file(f"pyflink/lib/{name}.jar"))) for name in JARS]
    missing = [jar.name for jar in jars if not jar.is_file()]
    if missing:
        tool_missing(f"{JARS_DISTRIBUTION} {distribution.version} lacks {missing}")
    return jars


@dataclass(frozen=True)
class JavaClient:
    java: str
    classpath: str

    def run(self, program: str, bootstrap: str, *args: str, timeout: float = RUN_TIMEOUT_S) -> Any:
        """Run `java <program> <bootstrap> args...` (one of src/*.java); return its `ok` result.

        Raises JavaError when the client threw out of the program."""
        argv = [self.java, *JVM_OPTIONS, "-cp", self.classpath, program, bootstrap, *args]
        try:
            completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                       timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ToolFailed(f"java {program} {' '.join(args)} ran longer than {timeout:.0f}s\n"
                             f"stderr:\n{exc.stderr}") from None
        lines = completed.stdout.strip().splitlines()
        if completed.returncode != 0 or len(lines) != 1:
            raise ToolFailed(f"java {program} {' '.join(args)} exited {completed.returncode}\n"
                             f"stdout:\n{completed.stdout}\nstderr:\n{completed.stderr}")
        document = json.loads(lines[0])
        if "error" in document:
            raise JavaError(document["error"])
        return document["ok"]


def compile_client(classes: Path) -> JavaClient:
    """javac every program in src/ into `classes` against the client's jars."""
    javac = require_executable("javac")
    java = require_executable("java")
    jars = [str(jar) for jar in client_jars()]
    sources = sorted(str(path) for path in SOURCES.glob("*.java"))
    completed = subprocess.run(
        [javac, "-d", str(classes), "-cp", jars[0], "-Xlint:all", *sources],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False,
    )
    if completed.returncode != 0:
        raise ToolFailed(f"javac failed:\n{completed.stdout}\n{completed.stderr}")
    return JavaClient(java, ":".join([str(classes), *jars]))
