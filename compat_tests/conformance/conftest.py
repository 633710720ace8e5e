"""The brokers the conformance tests replay the corpus against: kemu twins (the shipped development settings,
and those plus the authorizer settings), and, where Java is, the Kafka with the authorizer (the plain
reference Kafka is compat_tests/conftest.py's `reference_kafka`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from compat_tests import jars
from compat_tests.conformance.brokers import AUTHORIZER_SETTINGS, AuthorizerKafka
from compat_tests.differential.conftest import kemu_twin_args
from compat_tests.external_clients import tool_missing
from compat_tests.kemu_process import KemuServeProcess, running
from compat_tests.reference.fixtures import _running as started
from compat_tests.reference.kafka import KAFKA_JAR_SET, ReferenceKafka, find_java


@pytest.fixture(scope="session")
def conformance_kemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KemuServeProcess]:
    yield from running(KemuServeProcess(tmp_path_factory.mktemp("conformance-kemu"), extra_args=kemu_twin_args()))


@pytest.fixture(scope="session")
def conformance_kemu_authorizer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KemuServeProcess]:
    yield from running(KemuServeProcess(tmp_path_factory.mktemp("conformance-kemu-authorizer"),
                                        extra_args=kemu_twin_args(AUTHORIZER_SETTINGS)))


@pytest.fixture(scope="session")
def authorizer_kafka() -> Iterator[ReferenceKafka]:
    java = find_java()
    if java is None:
        tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
    kafka = AuthorizerKafka(classpath=jars.classpath(KAFKA_JAR_SET), java=java)
    yield from started(kafka)
