"""Spark pipelines against a `kemu serve` child: the session's broker of compat_tests/conftest.py and the
`kemu_spark` fixture of kemu's own pytest plugin (registered by its entry point once kemu is installed; loaded
here when a checkout runs without that install).

Spark's own connector comes from the project's Maven descriptor (compat_tests/maven/spark-kafka, resolved by
scripts/install-test-deps and cached), handed to the session through KEMU_SPARK_JARS, so that no session start
asks Maven for anything; a KEMU_SPARK_JARS set by the caller wins. `spark_kafka` is the session for a test of
`format("kafka")`: it skips without the connector, and fails under CI=true, where the connector must be there."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pyspark", reason="the Spark tests need pyspark: pip install -e '.[spark]'")

from pyspark.sql import SparkSession  # noqa: E402 - only once pyspark is known to be there

from compat_tests import jars  # noqa: E402
from compat_tests.external_clients import tool_missing  # noqa: E402
from compat_tests.kemu_process import KemuServeProcess  # noqa: E402
from compat_tests.reference.kafka import ReferenceKafka  # noqa: E402
from kemu.spark.session import JARS_OFF, JARS_VARIABLE, Connector  # noqa: E402

CONNECTOR_SET = "spark-kafka"
_unresolved: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("kemu_spark"):
        config.pluginmanager.import_plugin("kemu.spark.plugin")
    if JARS_VARIABLE in os.environ:
        return
    try:
        os.environ[JARS_VARIABLE] = os.pathsep.join(str(jar) for jar in jars.resolve(CONNECTOR_SET))
    except (jars.ResolveFailed, OSError) as exc:
        os.environ[JARS_VARIABLE] = JARS_OFF
        _unresolved.append(f"the jar set {CONNECTOR_SET} could not be resolved: {exc}")


@pytest.fixture
def spark_kafka(kemu_spark: SparkSession, kemu_spark_connector: Connector) -> SparkSession:
    """The session, for a test of Spark's own format("kafka")."""
    if not kemu_spark_connector.available:
        tool_missing("; ".join([kemu_spark_connector.reason, *_unresolved]))
    return kemu_spark


@pytest.fixture
def brokers(kemu_server: KemuServeProcess, reference_kafka: ReferenceKafka) -> dict[str, str]:
    """The bootstrap address of the session's kemu and of the reference Kafka, for scenarios run on both."""
    return {"kemu": kemu_server.bootstrap, "kafka": reference_kafka.bootstrap}
