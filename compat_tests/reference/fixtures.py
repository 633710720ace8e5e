"""pytest fixtures of the reference Kafka, imported into compat_tests/conftest.py.

`reference_kafka` is one single-node Kafka for the whole run, started the first time a test asks for it (so a
run that selects none of those tests starts no JVM); `reference_kafka_cluster` the same for three nodes. Where
Java or the Kafka jars are missing, the tests that need them skip with that reason, and fail under CI=true
(compat_tests/external_clients.tool_missing): CI cannot pass without running them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from compat_tests import jars
from compat_tests.external_clients import tool_missing
from compat_tests.reference.kafka import KAFKA_JAR_SET, ReferenceKafka, ReferenceKafkaError, find_java


def _reference(nodes: int) -> ReferenceKafka:
    java = find_java()
    if java is None:
        tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
    return ReferenceKafka(classpath=jars.classpath(KAFKA_JAR_SET), java=java, nodes=nodes)


def _running(kafka: ReferenceKafka) -> Iterator[ReferenceKafka]:
    try:
        kafka.start()
    except ReferenceKafkaError as exc:
        pytest.fail(f"the reference Kafka did not start: {exc}", pytrace=False)
    try:
        yield kafka
    finally:
        kafka.stop()


@pytest.fixture(scope="session")
def reference_kafka() -> Iterator[ReferenceKafka]:
    """Apache Kafka 4.3, one KRaft node (broker and controller), for the whole session."""
    yield from _running(_reference(1))


@pytest.fixture(scope="session")
def reference_kafka_cluster() -> Iterator[ReferenceKafka]:
    """Apache Kafka 4.3, three KRaft nodes, each broker and controller, for the whole session."""
    yield from _running(_reference(3))
