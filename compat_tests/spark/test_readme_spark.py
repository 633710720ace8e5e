"""README.md's "Testing a PySpark pipeline with kemu" examples run as printed, in this session's SparkSession:
each block's test functions are called with the fixtures they name (a second JVM per example would cost more
than the examples). The `format("kafka")` example takes `kemu_spark_kafka`, which skips it where Spark's connector
jars cannot be had; here that is a failure under CI=true, where compat_tests/spark/conftest.py must have found
them."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from compat_tests.external_clients import tool_missing
from kemu.spark.session import Connector

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Testing a PySpark pipeline with kemu"


def examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION + "\n")
    end = text.find("\n## ", start + len(SECTION))
    return re.findall(r"^```python\n(.*?)^```$", text[start:end], flags=re.S | re.M)


def test_the_section_shows_both_formats_and_the_fixture() -> None:
    found = examples()
    assert len(found) == 2
    assert 'format("kafka")' in found[0] and 'format("kemu-kafka")' in found[1]
    assert all("kemu_spark" in code and "spark_kafka_options(kemu_broker)" in code for code in found)
    # Spark's own format needs the connector's jars: its example takes the fixture that skips without them.
    assert "kemu_spark_kafka" in found[0] and "kemu_spark_kafka" not in found[1]


@pytest.mark.parametrize("index", range(len(examples())))
def test_readme_example_runs(index: int, request: pytest.FixtureRequest, kemu_spark_connector: Connector) -> None:
    code = examples()[index]
    if 'format("kafka")' in code and not kemu_spark_connector.available:
        tool_missing(kemu_spark_connector.reason)
    namespace: dict[str, object] = {"__name__": f"readme_spark_{index}"}
    exec(compile(code, f"README.md ({SECTION}, example {index + 1})", "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_") and callable(value)]
    assert tests, "the example defines no test"
    for test in tests:
        test(**{name: request.getfixturevalue(name) for name in inspect.signature(test).parameters})
