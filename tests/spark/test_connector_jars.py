"""Spark's Kafka connector is of pyspark's own version, and kemu.spark.session adds only the jars pyspark does not
ship (without pyspark or the resolved set, the parts that need them skip)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POM = ROOT / "compat_tests" / "maven" / "spark-kafka" / "pom.xml"


def connector_version() -> str:
    found = re.search(r"<artifactId>spark-sql-kafka-0-10_2\.13</artifactId>\s*<version>([^<]+)</version>",
                      POM.read_text(encoding="utf-8"))
    assert found, f"{POM} names no spark-sql-kafka-0-10_2.13 version"
    return found.group(1)


def pinned_pyspark() -> str:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    pins = [re.fullmatch(r"pyspark(?:\[\w+\])?==(\S+)", spec) for spec in extras["test"]]
    versions = [pin.group(1) for pin in pins if pin]
    assert len(versions) == 1, f"the [test] extra pins pyspark {len(versions)} times"
    return versions[0]


def test_the_connector_is_of_the_pinned_pyspark() -> None:
    assert connector_version() == pinned_pyspark()


def test_the_installed_pyspark_is_the_pinned_one() -> None:
    pyspark = pytest.importorskip("pyspark")
    assert pyspark.__version__ == pinned_pyspark()


@pytest.mark.parametrize(("jar", "artifact"), [
    ("spark-sql-kafka-0-10_2.13-4.2.0.jar", "spark-sql-kafka-0-10_2.13"),
    ("kafka-clients-3.9.2.jar", "kafka-clients"),
    ("commons-pool2-2.13.1.jar", "commons-pool2"),
    ("/m2/org/xerial/snappy-java-1.1.10.5.jar", "snappy-java"),
    ("hadoop-client-runtime-3.5.0.jar", "hadoop-client-runtime"),
    ("scala-library-2.13.15.jar", "scala-library"),
    ("jakarta.inject-api-2.0.1.MR.jar", "jakarta.inject-api"),
    ("unversioned.jar", "unversioned"),
])
def test_artifact_names(jar: str, artifact: str) -> None:
    from kemu.spark.session import artifact_name

    assert artifact_name(jar) == artifact


def test_jars_pyspark_ships_are_left_out(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from kemu.spark.session import jars_to_add, listed_jars

    folder = tmp_path / "set"
    folder.mkdir()
    names = ["spark-sql-kafka-0-10_2.13-4.2.0.jar", "kafka-clients-3.9.2.jar", "commons-pool2-2.13.1.jar",
             "hadoop-client-runtime-3.4.9.jar", "scala-library-2.13.1.jar", "slf4j-api-1.7.36.jar"]
    for name in names:
        (folder / name).write_bytes(b"")
    lone = tmp_path / "lone-1.0.jar"
    lone.write_bytes(b"")
    listed = listed_jars(f"{folder}:{lone}")
    assert sorted(Path(jar).name for jar in listed) == sorted([*names, "lone-1.0.jar"])
    assert sorted(Path(jar).name for jar in jars_to_add(listed)) == [
        "commons-pool2-2.13.1.jar", "kafka-clients-3.9.2.jar", "lone-1.0.jar", "spark-sql-kafka-0-10_2.13-4.2.0.jar"]
