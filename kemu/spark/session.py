"""A small local SparkSession for tests, with the "kemu-kafka" source registered and, where they can be had,
Spark's own Kafka connector jars.

`KEMU_SPARK_JARS` says where the connector's jars are: a folder (every *.jar in it), or a list of jars and
folders separated by the path separator (a Maven classpath, say); the jars pyspark already ships (its Hadoop,
Scala, compression and logging jars, at pyspark's own versions) are left out, so what is added to the driver's
class path is the connector, its token provider, its kafka-clients and commons-pool2. `KEMU_SPARK_JARS=off`
starts the session without them and looks nothing up. Unset, the session asks Spark for `spark.jars.packages`
coordinates matching the installed pyspark and its Scala version, which Spark resolves through Maven (what a
user's machine does; offline, that attempt costs seconds before it fails). Where the jars cannot be had the
session starts without them, and `Connector.reason` says why, so tests of `format("kafka")` can skip with it;
`format("kemu-kafka")` needs no jar.
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
JARS_OFF = "off"
CONNECTOR_JAR = re.compile(r"spark-sql-kafka-0-10_(\d+\.\d+)-.*\.jar$")
_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+)-\d+(?:\.\d+)*(?:[-.][0-9A-Za-z]+)*\.jar$")


@dataclass(frozen=True)
class Connector:
    """Whether Spark's own `format("kafka")` is there, and where its jars came from or why they did not."""

    available: bool
    detail: str
    jars: tuple[str, ...] = ()
    """The jars added to Spark's classpath (file names are enough to tell which versions)."""

    @property
    def reason(self) -> str:
        return "" if self.available else f"Spark's Kafka connector jars are not available: {self.detail}"

    def describe(self) -> str:
        if not self.available:
            return self.reason
        used = ", ".join(Path(jar).name for jar in self.jars) if self.jars else "resolved by Spark"
        return f"Spark's Kafka connector from {self.detail}: {used}"


def artifact_name(jar: str) -> str:
    """A jar's artifact without its version: kafka-clients-3.9.2.jar -> kafka-clients."""
    name = Path(jar).name
    found = _VERSIONED_JAR.match(name)
    return found.group("artifact") if found else name.removesuffix(".jar")


def listed_jars(value: str) -> list[str]:
    """Every jar a KEMU_SPARK_JARS value names: jar files as they are, folders by their *.jar."""
    jars: list[str] = []
    for entry in filter(None, value.split(os.pathsep)):
        path = Path(entry)
        jars.extend(sorted(str(p) for p in path.glob("*.jar")) if path.is_dir() else [str(path)])
    return jars


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def jars_to_add(jars: list[str]) -> list[str]:
    """The jars pyspark does not already have: a second, other-versioned copy of one of its own (Hadoop's
    client, Scala's library, lz4, snappy, slf4j) would be a classpath conflict, not a dependency."""
    shipped = {artifact_name(jar.name) for jar in _pyspark_jars().glob("*.jar")}
    return [jar for jar in jars if artifact_name(jar) not in shipped]


def scala_version() -> str:
    """The Scala binary version pyspark's jars were built for (from scala-library-2.13.x.jar)."""
    jars = _pyspark_jars()
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


QUICK_START_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The test session's JVM (driver and, in local mode, its executors): compiled by C1 alone, with the serial
collector. A test session is short and its data small, so the optimising compiler's and a parallel collector's
threads only compete with the tests for the cores: on two cores this halves the session's start and its first
jobs."""


def _builder(app_name: str, cores: int, shuffle_partitions: int) -> SparkSession.Builder:
    return (SparkSession.builder.master(f"local[{cores}]").appName(app_name)
            .config("spark.driver.extraJavaOptions", QUICK_START_JAVA_OPTIONS)
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
    listed = os.environ.get(JARS_VARIABLE, "").strip()
    status = Connector(False, "not asked for")
    session: SparkSession | None = None
    if connector and listed == JARS_OFF:
        status = Connector(False, f"{JARS_VARIABLE}={JARS_OFF}")
    elif connector and listed:
        jars = listed_jars(listed)
        missing = [jar for jar in jars if not Path(jar).is_file()]
        added = jars_to_add(jars)
        if missing:
            status = Connector(False, f"{JARS_VARIABLE} names jars that are not there: {', '.join(missing)}")
        elif any(CONNECTOR_JAR.search(jar) for jar in added):
            # On the driver's own class path rather than spark.jars: in local mode the executors are the
            # driver's JVM, and Spark then neither serves nor copies them (a second off a session's start).
            session = _builder(app_name, cores, shuffle_partitions) \
                .config("spark.driver.extraClassPath", os.pathsep.join(added)).getOrCreate()
            status = Connector(True, JARS_VARIABLE, tuple(added))
        else:
            status = Connector(False, f"no spark-sql-kafka-0-10 jar in {JARS_VARIABLE}={listed}")
    elif connector:
        packages = connector_packages()
        try:
            session = _builder(app_name, cores, shuffle_partitions).config("spark.jars.packages", packages) \
                .getOrCreate()
            status = Connector(True, f"spark.jars.packages={packages}")
        except Exception as error:  # noqa: BLE001 - Spark reports an unresolvable package as a dead gateway
            status = Connector(False, f"spark.jars.packages={packages} could not be resolved (no Maven "
                                      f"repository reachable; set {JARS_VARIABLE} to the connector's jars, or "
                                      f"to {JARS_OFF} to skip the lookup): {error}")
    if session is None:
        session = _builder(app_name, cores, shuffle_partitions).getOrCreate()
    session.sparkContext.setLogLevel(log_level)
    session.dataSource.register(KafkaDataSource)
    return session, status
