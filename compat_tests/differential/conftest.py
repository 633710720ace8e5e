"""The pair of brokers of the differential tests: the session's reference Kafka, and a `kemu serve` with the
same settings (the development defaults Kafka ships: compat_tests/reference/kafka.py's SHIPPED_SETTINGS)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from compat_tests import jars
from compat_tests.differential.targets import Pair, Target
from compat_tests.external_clients import tool_missing
from compat_tests.kemu_process import KemuServeProcess, running
from compat_tests.reference.kafka import KAFKA_JAR_SET, SHIPPED_SETTINGS, ReferenceKafka, find_java


def kemu_twin_args(settings: dict[str, str] | None = None) -> tuple[str, ...]:
    merged = {**SHIPPED_SETTINGS, **(settings or {})}
    return tuple(arg for key, value in merged.items() for arg in ("--override", f"{key}={value}"))


@pytest.fixture(scope="session")
def kemu_twin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KemuServeProcess]:
    """A `kemu serve` configured as the reference Kafka is, for the whole session."""
    yield from running(KemuServeProcess(tmp_path_factory.mktemp("kemu-twin"), extra_args=kemu_twin_args()))


@pytest.fixture(scope="session")
def pair(reference_kafka: ReferenceKafka, kemu_twin: KemuServeProcess) -> Pair:
    host, port = reference_kafka.addresses[0]
    return Pair(kafka=Target("kafka", host, port), kemu=Target("kemu", kemu_twin.host, kemu_twin.port))


@pytest.fixture(scope="session")
def pair_with(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[dict[str, str]], Pair]]:
    """`pair_with({setting: value})`: a reference Kafka and a kemu twin both started with these broker settings
    on top of the shipped ones, made once per distinct settings and kept for the session. Each costs a Kafka
    start (~3 s and ~330 MB): use it only for a broker-level setting no topic config can stand in for."""
    made: dict[tuple[tuple[str, str], ...], Pair] = {}
    running_brokers: list[ReferenceKafka | KemuServeProcess] = []

    def make(settings: dict[str, str]) -> Pair:
        key = tuple(sorted(settings.items()))
        if key in made:
            return made[key]
        java = find_java()
        if java is None:
            tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
        kafka = ReferenceKafka(classpath=jars.classpath(KAFKA_JAR_SET), java=java, settings=settings)
        kafka.start()
        running_brokers.append(kafka)
        kemu = KemuServeProcess(tmp_path_factory.mktemp("kemu-twin-with"), extra_args=kemu_twin_args(settings))
        kemu.start()
        running_brokers.append(kemu)
        host, port = kafka.addresses[0]
        made[key] = Pair(kafka=Target("kafka", host, port), kemu=Target("kemu", kemu.host, kemu.port))
        return made[key]

    try:
        yield make
    finally:
        for broker in reversed(running_brokers):
            if isinstance(broker, ReferenceKafka):
                broker.stop()
            elif broker.is_running():
                broker.stop_cleanly()
