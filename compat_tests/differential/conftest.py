"""The pair of brokers of the differential tests: the session's reference Kafka, and a `kemu serve` with the
same settings (the development defaults Kafka ships: compat_tests/reference/kafka.py's SHIPPED_SETTINGS)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from compat_tests.differential.targets import Pair, Target
from compat_tests.kemu_process import KemuServeProcess, running
from compat_tests.reference.kafka import SHIPPED_SETTINGS, ReferenceKafka


def kemu_twin_args() -> tuple[str, ...]:
    return tuple(arg for key, value in SHIPPED_SETTINGS.items() for arg in ("--override", f"{key}={value}"))


@pytest.fixture(scope="session")
def kemu_twin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KemuServeProcess]:
    """A `kemu serve` configured as the reference Kafka is, for the whole session."""
    yield from running(KemuServeProcess(tmp_path_factory.mktemp("kemu-twin"), extra_args=kemu_twin_args()))


@pytest.fixture(scope="session")
def pair(reference_kafka: ReferenceKafka, kemu_twin: KemuServeProcess) -> Pair:
    host, port = reference_kafka.addresses[0]
    return Pair(kafka=Target("kafka", host, port), kemu=Target("kemu", kemu_twin.host, kemu_twin.port))
