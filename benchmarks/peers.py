"""Apache Kafka itself and franz-go's kfake as benchmark peers, and the registry of every broker by key.

Kafka 4.3 is the reference broker of compat_tests (compat_tests/reference/kafka.py, jars from the `kafka-4.3`
set of compat_tests/jars.py), one KRaft node, with the JVM options Kafka's own start script uses instead of
the tests' quick-start ones. Its plan formats the storage (a JVM of its own, before the spawn: a deployment
formats once), and the benchmark spawns `java ... kafka.Kafka` itself, so start-up is timed as for every
broker: spawn to the first answered Metadata, the JVM's own start included.

kfake is built from benchmarks/kfake (a main.go of ours over github.com/twmb/franz-go/pkg/kfake, pinned by
go.mod and go.sum) with `go build` on first use, into `$KEMU_KFAKE_CACHE` (default ~/.cache/kemu/kfake) under
a digest of those three files: later runs start no Go toolchain. `python -m benchmarks.peers build-kfake`
builds it ahead of a run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.brokers import (
    BrokerDefinition,
    BrokerError,
    LaunchPlan,
    kemu_definition,
    mock_definition,
    tansu_definition,
)
from compat_tests import go_build

# The order of the report's columns: kemu first (every ratio is kemu's), then Kafka, the spec.
BROKER_KEYS = ("kemu", "kafka", "kfake", "tansu", "mock")
SHORT_NAMES = {"kemu": "kemu", "kafka": "Kafka", "kfake": "kfake", "tansu": "Tansu", "mock": "mock"}

KAFKA_JAR_SET = "kafka-4.3"
# What bin/kafka-server-start.sh and bin/kafka-run-class.sh give the broker when no KAFKA_HEAP_OPTS or
# KAFKA_JVM_PERFORMANCE_OPTS is set: a fixed 1 GiB heap, G1 with a 20 ms pause goal, and (by leaving
# -XX:TieredStopAtLevel alone) tiered compilation up to C2. That is how Kafka is measured when it is run as
# shipped; the tests' quick-start options (serial GC, C1 only, 512 MiB) trade steady-state speed for a
# faster start and would understate it. With -Xms1g the heap is reserved, not touched: RSS counts only
# the pages G1 has used.
KAFKA_JVM_OPTIONS = ("-Xms1g", "-Xmx1g", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                     "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                     "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true")
# ReferenceKafka trims the broker's threads to share a machine with the tests; a benchmark gives back the
# ones that serve requests their defaults (as config/server.properties ships them): 3 network threads, 8
# request handlers, 10 background threads. Recovery threads (an empty log) and the one cleaner thread stay.
KAFKA_SERVING_THREADS = {"num.network.threads": "3", "num.io.threads": "8", "background.threads": "10"}
_KAFKA_JAR = re.compile(r"kafka_[\d.]+-(\d[\w.-]*)\.jar$")

KFAKE_DIR = Path(__file__).with_name("kfake")
KFAKE_SOURCES = ("go.mod", "go.sum", "main.go")
KFAKE_MODULE = "github.com/twmb/franz-go/pkg/kfake"
KFAKE_CACHE_ENV = "KEMU_KFAKE_CACHE"
KFAKE_READY = re.compile(r"kfake serving on \[?([^\s\]]+?)\]?:(\d+)\s*$")
GO_BUILD_TIMEOUT_S = go_build.BUILD_TIMEOUT_S


class PeerUnavailable(RuntimeError):
    """A peer cannot run on this machine; the message says why, for the report."""


# --- Kafka ----------------------------------------------------------------------------------------------


def kafka_version(jars: Sequence[Path]) -> str | None:
    """The broker's version from the name of its jar (kafka_2.13-4.3.1.jar), if the classpath holds one."""
    for jar in jars:
        match = _KAFKA_JAR.search(jar.name)
        if match:
            return match.group(1)
    return None


def kafka_definition() -> BrokerDefinition:
    try:
        # Imported here: compat_tests brings pytest (its skip-or-fail helpers), which no other broker needs.
        from compat_tests.jars import ResolveFailed, resolve
        from compat_tests.reference.kafka import ReferenceKafka, ReferenceKafkaError, find_java
    except ImportError as error:
        return _unavailable("kafka", "Kafka", f"compat_tests cannot be imported ({error}): `pip install -e '.[test]'`")
    java = find_java()
    if java is None:
        return _unavailable("kafka", "Kafka", "no java on PATH (or $KEMU_REFERENCE_JAVA)")
    try:
        jars = resolve(KAFKA_JAR_SET)
    except ResolveFailed as error:
        return _unavailable("kafka", "Kafka", f"the {KAFKA_JAR_SET} jars: {str(error).splitlines()[0]}")
    classpath = os.pathsep.join(str(jar) for jar in jars)

    def plan() -> LaunchPlan:
        kafka = ReferenceKafka(classpath=classpath, java=java, settings=KAFKA_SERVING_THREADS,
                               jvm_options=KAFKA_JVM_OPTIONS)
        try:
            (command,) = kafka.prepare()
        except (ReferenceKafkaError, OSError, subprocess.TimeoutExpired) as error:
            kafka.stop()
            raise BrokerError(f"Kafka: formatting its storage failed: {error}") from None
        return LaunchPlan(command=command, address=kafka.addresses[0], cleanup=kafka.stop, log_tail=kafka.log_tail)

    version = kafka_version(jars)
    return BrokerDefinition(key="kafka", label=f"Kafka {version}" if version else "Kafka", plan=plan)


# --- kfake ----------------------------------------------------------------------------------------------


def kfake_cache_dir() -> Path:
    configured = os.environ.get(KFAKE_CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "kemu" / "kfake"


def kfake_digest(source: Path = KFAKE_DIR) -> str:
    """What the binary is built from: a change to the pinned modules or to main.go builds a new one."""
    return go_build.digest(source, KFAKE_SOURCES)


def kfake_version(go_mod: str) -> str | None:
    """The pinned kfake module version in go.mod's text (kfake tags no releases: a pseudo-version)."""
    match = re.search(rf"^\s*(?:require\s+)?{re.escape(KFAKE_MODULE)}\s+(\S+)", go_mod, re.MULTILINE)
    return match.group(1) if match else None


def kfake_label(version: str | None) -> str:
    """`kfake 2026-09-18` for a pseudo-version v0.0.0-20260918054303-01f206a7e32c: its commit's date."""
    match = re.search(r"-(\d{4})(\d{2})(\d{2})\d{6}-[0-9a-f]{12}$", version or "")
    if match:
        return "kfake " + "-".join(match.groups())
    return f"kfake {version}" if version else "kfake"


def kfake_binary(source: Path = KFAKE_DIR, cache: Path | None = None,
                 progress: Callable[[str], None] | None = None) -> Path:
    """The kfake launcher built from `source`, building it with `go build` when the cache has none."""
    try:
        return go_build.go_binary(source, "kfake", cache or kfake_cache_dir(), sources=KFAKE_SOURCES,
                                  progress=progress, timeout_s=GO_BUILD_TIMEOUT_S)
    except go_build.GoBuildFailed as failed:
        raise PeerUnavailable(str(failed)) from None


def kfake_plan(binary: Path) -> LaunchPlan:
    # Port 0: kfake binds a free port itself and prints it, as kemu does.
    return LaunchPlan(command=[str(binary), "-port", "0"], ready_line=KFAKE_READY)


def kfake_definition(progress: Callable[[str], None] | None = None) -> BrokerDefinition:
    label = kfake_label(kfake_version((KFAKE_DIR / "go.mod").read_text(encoding="utf-8")))
    try:
        binary = kfake_binary(progress=progress)
    except PeerUnavailable as error:
        return _unavailable("kfake", label, str(error))
    return BrokerDefinition(key="kfake", label=label, plan=lambda: kfake_plan(binary))


# --- the registry -----------------------------------------------------------------------------------------


def _unavailable(key: str, label: str, why: str) -> BrokerDefinition:
    def plan() -> LaunchPlan:
        raise BrokerError(f"{label} cannot run here: {why}")

    return BrokerDefinition(key=key, label=label, plan=plan, unavailable=why)


def definitions(keys: Sequence[str], tansu: str | None = None,
                progress: Callable[[str], None] | None = None) -> list[BrokerDefinition]:
    """The brokers named by `keys`, in the report's order; a peer that cannot run says why in `unavailable`."""
    makers: dict[str, Callable[[], BrokerDefinition]] = {
        "kemu": kemu_definition, "kafka": kafka_definition, "kfake": lambda: kfake_definition(progress),
        "tansu": lambda: tansu_definition(tansu), "mock": mock_definition}
    unknown = [key for key in keys if key not in makers]
    if unknown:
        raise KeyError(f"unknown brokers {unknown}: choose from {','.join(BROKER_KEYS)}")
    return [makers[key]() for key in BROKER_KEYS if key in keys]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("build-kfake",), help="build-kfake: build kfake now, print its path")
    parser.parse_args(argv)
    try:
        print(kfake_binary(progress=lambda line: print(line, file=sys.stderr)))
    except PeerUnavailable as error:
        print(f"kfake: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
