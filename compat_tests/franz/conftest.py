"""Fixtures of the franz-go tests: the built program, and `kemu serve`s writing their transcripts (one finalized at
transaction.version 2, as a new Kafka 4.3 cluster; one at 1), each paired with the reference Kafka at the same
level."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compat_tests import go_build
from compat_tests.differential.targets import Pair, pair_of
from compat_tests.external_clients import tool_missing
from compat_tests.franz.franz_client import franz_binary
from compat_tests.kemu_process import TranscribedKemu, serving_transcribed
from compat_tests.reference.fixtures import TV1_SETTING
from compat_tests.reference.kafka import ReferenceKafka

FAST_GROUPS = ("group.initial.rebalance.delay.ms=0",)


@pytest.fixture(scope="session")
def franz() -> Path:
    try:
        return franz_binary()
    except go_build.GoBuildFailed as failed:
        tool_missing(f"franz-go's program is not built: {failed}")


@pytest.fixture(scope="session")
def franz_kemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TranscribedKemu]:
    yield from serving_transcribed(tmp_path_factory.mktemp("franz-kemu"), FAST_GROUPS)


@pytest.fixture(scope="session")
def franz_kemu_tv1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TranscribedKemu]:
    yield from serving_transcribed(tmp_path_factory.mktemp("franz-kemu-tv1"), (*FAST_GROUPS, TV1_SETTING))


@pytest.fixture(scope="session")
def franz_pair(reference_kafka: ReferenceKafka, franz_kemu: TranscribedKemu) -> Pair:
    return pair_of(reference_kafka.addresses[0], franz_kemu.host, franz_kemu.port)


@pytest.fixture(scope="session")
def franz_pair_tv1(reference_kafka_tv1: ReferenceKafka, franz_kemu_tv1: TranscribedKemu) -> Pair:
    return pair_of(reference_kafka_tv1.addresses[0], franz_kemu_tv1.host, franz_kemu_tv1.port)
