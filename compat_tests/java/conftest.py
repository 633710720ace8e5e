"""Fixtures for the Java client tests: `java`, the client of one line (4.3 unless the test is parametrized with
BOTH_LINES), and a `kemu serve` of their own that writes its transcript, so a test can show which APIs the
Java client used."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compat_tests.differential.targets import Pair, pair_of
from compat_tests.java.java_client import LATEST, LINES, JavaClient, JavaLines
from compat_tests.kemu_process import TranscribedKemu, serving_transcribed
from compat_tests.reference.fixtures import TV1_SETTING
from compat_tests.reference.kafka import ReferenceKafka

# What test setups of Kafka set, so that groups form without waiting: no delay before a new classic group's
# first rebalance, and KIP-848 members heartbeating every second (the minimum lowered to allow it).
FAST_GROUPS = ("group.initial.rebalance.delay.ms=0", "group.consumer.heartbeat.interval.ms=1000",
               "group.consumer.min.heartbeat.interval.ms=1000")


class JavaKemu(TranscribedKemu):
    """`kemu serve --transcript FILE`, its groups quick to form (FAST_GROUPS)."""

    def __init__(self, data_dir: Path, transcript: Path, settings: tuple[str, ...] = ()) -> None:
        super().__init__(data_dir, transcript, (*FAST_GROUPS, *settings))


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


@pytest.fixture(scope="session")
def java_kemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaKemu]:
    yield from serving_transcribed(tmp_path_factory.mktemp("java-kemu"), kind=JavaKemu)


@pytest.fixture(scope="session")
def java_kemu_tv1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaKemu]:
    yield from serving_transcribed(tmp_path_factory.mktemp("java-kemu-tv1"), (TV1_SETTING,), JavaKemu)


@pytest.fixture(scope="session")
def java_pair_tv1(reference_kafka_tv1: ReferenceKafka, java_kemu_tv1: JavaKemu) -> Pair:
    """A Kafka and a kemu that finalized transaction.version 1."""
    return pair_of(reference_kafka_tv1.addresses[0], java_kemu_tv1.host, java_kemu_tv1.port)


@pytest.fixture(scope="session")
def java_pair(reference_kafka: ReferenceKafka, java_kemu: JavaKemu) -> Pair:
    """The reference Kafka and the Java tests' kemu, to run one scenario on both (`Pair.both`)."""
    return pair_of(reference_kafka.addresses[0], java_kemu.host, java_kemu.port)
