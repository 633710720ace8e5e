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


def _reference(nodes: int, features: dict[str, int] | None = None) -> ReferenceKafka:
    java = find_java()
    if java is None:
        tool_missing("the reference Kafka needs java (a JDK 17+) on PATH")
    return ReferenceKafka(classpath=jars.classpath(KAFKA_JAR_SET), java=java, nodes=nodes, features=features or {})


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


# A cluster that finalized transaction.version 1, as one formatted with `--feature transaction.version=1` (or
# downgraded with kafka-features): the Java 4.x producer and franz-go then run transactions the version-1 way.
TV1 = {"transaction.version": 1}
# The kemu that finalized the same, to pair with reference_kafka_tv1.
TV1_SETTING = "kemu.features=" + ",".join(f"{name}={level}" for name, level in TV1.items())


@pytest.fixture(scope="session")
def reference_kafka_tv1() -> Iterator[ReferenceKafka]:
    """Apache Kafka 4.3, one KRaft node formatted with transaction.version 1, for the whole session."""
    yield from _running(_reference(1, TV1))
