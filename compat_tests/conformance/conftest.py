"""The brokers the conformance tests replay the corpus against: kemu twins (the shipped development settings,
those plus the authorizer settings, three brokers), and, where Java is, the Kafka with the authorizer (the
plain reference Kafka and the three-node one are compat_tests/conftest.py's `reference_kafka` and
`reference_kafka_cluster`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from compat_tests import jars
from compat_tests.conformance.brokers import (
    AUTHORIZER_SETTINGS,
    CLUSTER_SETTINGS,
    AuthorizerKafka,
    TokensKafka,
    kemu_tokens_settings,
)
from compat_tests.differential.conftest import kemu_twin_args
from compat_tests.external_clients import tool_missing
from compat_tests.kemu_process import KemuServeProcess, running
from compat_tests.reference.fixtures import _running as started
from compat_tests.reference.kafka import KAFKA_JAR_SET, SHIPPED_SETTINGS, ReferenceKafka, find_java


@pytest.fixture(scope="session")
def conformance_kemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KemuServeProcess]:
    yield from running(KemuServeProcess(tmp_path_factory.mktemp("conformance-kemu"), extra_args=kemu_twin_args()))


@pytest.fixture(scope="session")
def conformance_kemu_authorizer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KemuServeProcess]:
    yield from running(KemuServeProcess(tmp_path_factory.mktemp("conformance-kemu-authorizer"),
                                        extra_args=kemu_twin_args(AUTHORIZER_SETTINGS)))


@pytest.fixture(scope="session")
def conformance_kemu_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A three-broker `kemu serve` (the `cluster` scripts): the first broker's address."""
    process = KemuServeProcess(tmp_path_factory.mktemp("conformance-kemu-cluster"),
                               extra_args=("--brokers", "3", *kemu_twin_args(CLUSTER_SETTINGS)))
    for _ in running(process):
        # The banner lists every broker's address, comma-separated: the first is the bootstrap.
        banner = re.search(r"kemu serving on ([^\s:,]+):(\d+)", process.output())
        assert banner is not None, process.output()
        yield banner[1], int(banner[2])


@pytest.fixture(scope="session")
def conformance_kemu_tokens(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A kemu for the `tokens` scripts (in-process, as the SASL client tests run theirs): the address of its
    SASL_PLAINTEXT listener."""
    from kemu.testing import Broker

    broker = Broker(config={**SHIPPED_SETTINGS, **kemu_tokens_settings()},
                    data_dir=str(tmp_path_factory.mktemp("conformance-kemu-tokens")))
    try:
        host, _, port = broker.bootstrap("SASL_PLAINTEXT").rpartition(":")
        yield host, int(port)
    finally:
        broker.close()


def _reference(kind: type[ReferenceKafka]) -> Iterator[ReferenceKafka]:
    java = find_java()
    if java is None:
        tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
    yield from started(kind(classpath=jars.classpath(KAFKA_JAR_SET), java=java))


@pytest.fixture(scope="session")
def tokens_kafka() -> Iterator[ReferenceKafka]:
    yield from _reference(TokensKafka)


@pytest.fixture(scope="session")
def authorizer_kafka() -> Iterator[ReferenceKafka]:
    yield from _reference(AuthorizerKafka)
