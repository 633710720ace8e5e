"""The suite's two parts, run side by side by `python -m compat_tests.run_parts` (scripts/test's full run).

`KEMU_TEST_PART=kafka` keeps the tests that run a JVM: the reference Kafka (any test whose fixtures reach one
named `reference_kafka*`, `*_kafka` or `*pair`, so each reference Kafka starts in one process only), the Java
clients, Kafka Streams, Spark and franz-go's differential suites. `KEMU_TEST_PART=rest` keeps every other
test. Without the variable nothing is deselected. Much of the first part's time is JVMs starting and Kafka
settling, where a core is idle: the two side by side take less wall time than one after the other on CI's
two cores.
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath

import pytest

PART_VARIABLE = "KEMU_TEST_PART"
PARTS = ("kafka", "rest")
# Folders and files (under the rootdir) whose tests all go to the kafka part: each of them starts a JVM of its own.
JVM_FOLDERS = ("compat_tests/differential", "compat_tests/java", "compat_tests/spark", "compat_tests/franz",
               "compat_tests/conformance", "compat_tests/reference",
               # its parameters choose kemu or the reference Kafka (request.getfixturevalue), out of sight of
               # the fixture names
               "compat_tests/test_share_groups_confluent.py")


def part_of(relative_path: str, fixture_names: list[str]) -> str:
    path = PurePosixPath(relative_path)
    if any(path.is_relative_to(folder) for folder in JVM_FOLDERS):
        return "kafka"
    if any(name.startswith("reference_kafka") or name.endswith("_kafka") or name.endswith("pair")
           for name in fixture_names):
        return "kafka"
    return "rest"


def pytest_configure(config: pytest.Config) -> None:
    part = os.environ.get(PART_VARIABLE, "")
    if part and part not in PARTS:
        raise pytest.UsageError(f"{PART_VARIABLE}={part!r}: expected one of {', '.join(PARTS)}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    part = os.environ.get(PART_VARIABLE, "")
    if not part:
        return
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        relative = item.path.relative_to(config.rootpath).as_posix()
        names = list(getattr(item, "fixturenames", ()))
        (kept if part_of(relative, names) == part else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
