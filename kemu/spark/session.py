"""A small local SparkSession for tests, with the "kemu-kafka" source registered and, where they can be had,
Spark's own Kafka connector jars.

The jars come from the folder `KEMU_SPARK_JARS` names (every *.jar in it), else from `spark.jars.packages`
coordinates matching the installed pyspark and its Scala version, which Spark resolves through Maven (what a
user's machine does). Where neither works the session starts without them, and `Connector.reason` says why, so
tests of `format("kafka")` can skip with it; `format("kemu-kafka")` needs no jar.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from kemu.spark.source import KafkaDataSource

JARS_VARIABLE = "KEMU_SPARK_JARS"
CONNECTOR_JAR = re.compile(r"spark-sql-kafka-0-10_(\d+\.\d+)-.*\.jar$")


@dataclass(frozen=True)
class Connector:
    """Whether Spark's own `format("kafka")` is there, and where its jars came from or why they did not."""

    available: bool
    detail: str

    @property
    def reason(self) -> str:
        return "" if self.available else f"Spark's Kafka connector jars are not available: {self.detail}"


def scala_version() -> str:
    """The Scala binary version pyspark's jars were built for (from scala-library-2.13.x.jar)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("scala-library-*.jar")):
        found = re.match(r"scala-library-(\d+\.\d+)\.", jar.name)
        if found:
            return found.group(1)
    raise RuntimeError(f"no scala-library jar in {jars}: is pyspark installed whole?")


def connector_packages() -> str:
    """`spark.jars.packages` for Spark's Kafka connector of the installed pyspark (its dependencies, the
    token provider, kafka-clients and commons-pool2, come along through Maven)."""
    import pyspark

    version = pyspark.__version__.split("+")[0]
    return f"org.apache.spark:spark-sql-kafka-0-10_{scala_version()}:{version}"


def _builder(app_name: str, cores: int, shuffle_partitions: int) -> SparkSession.Builder:
    return (SparkSession.builder.master(f"local[{cores}]").appName(app_name)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
            .config("spark.default.parallelism", str(cores))
            # Everything stays on the loopback interface, and the workers run this interpreter (kemu and
            # confluent-kafka importable there too).
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.pyspark.python", sys.executable)
            .config("spark.pyspark.driver.python", sys.executable)
            .config("spark.sql.streaming.forceDeleteTempCheckpointLocation", "true"))


def local_session(app_name: str = "kemu", *, cores: int = 2, shuffle_partitions: int = 2,
                  log_level: str = "ERROR", connector: bool = True) -> tuple[SparkSession, Connector]:
    """A `local[cores]` session with the UI off and quiet logs; `connector=False` skips the jars altogether."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # The Python workers that plan a Python data source (create_data_source, plan_data_source_read) are
    # started with PYSPARK_PYTHON, not spark.pyspark.python: without it they run `python3` from PATH, which
    # outside an activated virtualenv has no kemu ("No module named 'kemu'"). The JVM inherits it at launch.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    folder = os.environ.get(JARS_VARIABLE)
    status = Connector(False, "not asked for")
    session: SparkSession | None = None
    if connector and folder:
        jars = sorted(str(p) for p in Path(folder).glob("*.jar"))
        if any(CONNECTOR_JAR.search(jar) for jar in jars):
            session = _builder(app_name, cores, shuffle_partitions).config("spark.jars", ",".join(jars)).getOrCreate()
            status = Connector(True, f"{JARS_VARIABLE}={folder}")
        else:
            status = Connector(False, f"no spark-sql-kafka-0-10 jar in {JARS_VARIABLE}={folder}")
    elif connector:
        packages = connector_packages()
        try:
            session = _builder(app_name, cores, shuffle_partitions).config("spark.jars.packages", packages) \
                .getOrCreate()
            status = Connector(True, f"spark.jars.packages={packages}")
        except Exception as error:  # noqa: BLE001 - Spark reports an unresolvable package as a dead gateway
            status = Connector(False, f"spark.jars.packages={packages} could not be resolved (no Maven "
                                      f"repository reachable, and {JARS_VARIABLE} unset): {error}")
    if session is None:
        session = _builder(app_name, cores, shuffle_partitions).getOrCreate()
    session.sparkContext.setLogLevel(log_level)
    session.dataSource.register(KafkaDataSource)
    return session, status
