"""Fixtures for the Java client tests: `java`, the client of one line (4.3 unless the test is parametrized with
BOTH_LINES), and a `kemu serve` of their own that writes its transcript, so a test can show which APIs the
Java client used."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat_tests import jars
from compat_tests.differential.targets import Pair, Target
from compat_tests.external_clients import tool_missing
from compat_tests.java.java_client import LATEST, LINES, JavaClient, JavaLines
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.reference.kafka import KAFKA_JAR_SET, ReferenceKafka, find_java

# What test setups of Kafka set, so that groups form without waiting: no delay before a new classic group's
# first rebalance, and KIP-848 members heartbeating every second (the minimum lowered to allow it).
FAST_GROUPS = ("group.initial.rebalance.delay.ms=0", "group.consumer.heartbeat.interval.ms=1000",
               "group.consumer.min.heartbeat.interval.ms=1000")


class JavaKemu(KemuServeProcess):
    """`kemu serve --transcript FILE`: every exchange, one JSON line each."""

    def __init__(self, data_dir: Path, transcript: Path, settings: tuple[str, ...] = ()) -> None:
        overrides = tuple(arg for setting in (*FAST_GROUPS, *settings) for arg in ("--override", setting))
        super().__init__(data_dir, extra_args=("--transcript", str(transcript), *overrides))
        self.transcript = transcript

    def exchanges(self, api_key: int) -> list[dict[str, Any]]:
        lines = self.transcript.read_text(encoding="utf-8").splitlines()
        return [entry for entry in map(json.loads, lines) if entry["api_key"] == api_key]


# For the scenarios Spark relies on (its admin calls, a read_committed consumer, a transactional producer):
# its connector runs kafka-clients 3.9.
BOTH_LINES = pytest.mark.parametrize("java", list(LINES), indirect=True, ids=[f"clients-{line}" for line in LINES])


def lines_used(items: list[pytest.Item]) -> set[str]:
    """The client lines the selected tests ask for: their `java` parameter, LATEST where they have none."""
    used = set()
    for item in items:
        if "java" in getattr(item, "fixturenames", ()):
            callspec = getattr(item, "callspec", None)
            used.add(callspec.params.get("java", LATEST) if callspec is not None else LATEST)
    return used


# Autouse, so that it is set up first: the lines compile while the brokers start.
@pytest.fixture(scope="session", autouse=True)
def java_lines(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaLines]:
    lines = JavaLines(tmp_path_factory.mktemp("java"), lines_used(request.session.items))
    try:
        yield lines
    finally:
        lines.close()


@pytest.fixture
def java(request: pytest.FixtureRequest, java_lines: JavaLines) -> JavaClient:
    return java_lines.client(getattr(request, "param", LATEST))


def _serving(directory: Path, settings: tuple[str, ...] = ()) -> Iterator[JavaKemu]:
    server = JavaKemu(directory / "data", directory / "transcript.jsonl", settings)
    server.start()
    try:
        yield server
    finally:
        if server.is_running():
            server.stop_cleanly()


@pytest.fixture(scope="session")
def java_kemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaKemu]:
    yield from _serving(tmp_path_factory.mktemp("java-kemu"))


# A cluster that finalized transaction.version 1, as one formatted with `--feature transaction.version=1` (or
# downgraded with kafka-features): the Java 4.x producer then runs transactions the version-1 way.
TV1 = {"transaction.version": 1}


@pytest.fixture(scope="session")
def java_kemu_tv1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaKemu]:
    yield from _serving(tmp_path_factory.mktemp("java-kemu-tv1"), ("kemu.features=transaction.version=1",))


@pytest.fixture(scope="session")
def reference_kafka_tv1() -> Iterator[ReferenceKafka]:
    java = find_java()
    if java is None:
        tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
    kafka = ReferenceKafka(classpath=jars.classpath(KAFKA_JAR_SET), java=java, features=TV1)
    kafka.start()
    try:
        yield kafka
    finally:
        kafka.stop()


@pytest.fixture(scope="session")
def java_pair_tv1(reference_kafka_tv1: ReferenceKafka, java_kemu_tv1: JavaKemu) -> Pair:
    """A Kafka and a kemu that finalized transaction.version 1."""
    host, port = reference_kafka_tv1.addresses[0]
    return Pair(kafka=Target("kafka", host, port), kemu=Target("kemu", java_kemu_tv1.host, java_kemu_tv1.port))


@pytest.fixture(scope="session")
def java_pair(reference_kafka: ReferenceKafka, java_kemu: JavaKemu) -> Pair:
    """The reference Kafka and the Java tests' kemu, to run one scenario on both (`Pair.both`)."""
    host, port = reference_kafka.addresses[0]
    return Pair(kafka=Target("kafka", host, port), kemu=Target("kemu", java_kemu.host, java_kemu.port))
