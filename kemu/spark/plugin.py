"""The pytest plugin of kemu.spark (the `kemu_spark` entry point of `pytest11`): a SparkSession per test session.

    def test_pipeline(kemu_broker, kemu_spark):
        df = kemu_spark.read.format("kemu-kafka").options(**spark_kafka_options(kemu_broker))...

- `kemu_spark`: a `local[2]` SparkSession (shuffle partitions 2, UI off, logs at ERROR) with the "kemu-kafka"
  source registered and Spark's Kafka connector jars where they can be had; stopped when the session ends.
- `kemu_spark_connector`: whether `format("kafka")` is there (`.available`) and, if not, why (`.reason`).
- `kemu_spark_kafka`: `kemu_spark` for a test of Spark's own `format("kafka")`; skips it, with the reason, where
  the connector's jars cannot be had (KEMU_SPARK_JARS, kemu.spark.session).

The run's summary says which connector jars the session used, or why it had none.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kemu.spark.session import Connector

_STARTED: list[Connector] = []


@pytest.fixture(scope="session")
def _kemu_spark_session() -> Iterator[tuple[SparkSession, Connector]]:
    pytest.importorskip("pyspark", reason="kemu_spark needs pyspark: pip install 'kemu[spark]'")
    from kemu.spark.session import local_session

    session, connector = local_session("kemu-tests")
    _STARTED.append(connector)
    try:
        yield session, connector
    finally:
        session.stop()


@pytest.fixture(scope="session")
def kemu_spark(_kemu_spark_session: tuple[SparkSession, Connector]) -> SparkSession:
    """One local[2] SparkSession for the whole test session, with the "kemu-kafka" source registered."""
    return _kemu_spark_session[0]


@pytest.fixture(scope="session")
def kemu_spark_connector(_kemu_spark_session: tuple[SparkSession, Connector]) -> Connector:
    """Whether Spark's own format("kafka") is available in `kemu_spark`, and why not."""
    return _kemu_spark_session[1]


@pytest.fixture
def kemu_spark_kafka(_kemu_spark_session: tuple[SparkSession, Connector]) -> SparkSession:
    """`kemu_spark` with Spark's own format("kafka"): the test is skipped, with the reason, without it."""
    session, connector = _kemu_spark_session
    if not connector.available:
        pytest.skip(connector.reason)
    return session


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for connector in _STARTED:
        terminalreporter.write_line(f"kemu_spark: {connector.describe()}")
