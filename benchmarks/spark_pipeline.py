"""What a PySpark pipeline test costs against kemu: the `kemu_spark` session's start (with Spark's own Kafka
connector) and each pipeline test after the first.

It runs, in a pytest child, a file of N tests that each take `kemu_broker` and `kemu_spark_kafka`, create two
topics, produce 50 records, read them with Spark's own `format("kafka")` (read_committed), write them transformed
through Spark's Kafka sink and read the output back with Spark. The child reports each phase's duration; the
first test's setup is the session's start (the JVM, the connector's jars, the session), the others are what a
pipeline test costs once the session is up.

The connector's jars are the ones KEMU_SPARK_JARS names; unset, the project's Maven set
(`python -m compat_tests.jars classpath spark-kafka`).

    python -m benchmarks.spark_pipeline [--tests 6] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PIPELINE_TEST = '''
def test_pipeline_{n}(kemu_broker, kemu_spark_kafka):
    kemu_broker.create_topic("orders", partitions=2)
    kemu_broker.create_topic("invoices", partitions=2)
    for i in range(50):
        kemu_broker.produce("orders", f"order-{{i}}", key=f"k-{{i}}")
    kafka = spark_kafka_options(kemu_broker)
    orders = kemu_spark_kafka.read.format("kafka").options(**kafka).option("subscribe", "orders").load()
    invoices = orders.selectExpr("key", "concat('invoice for ', CAST(value AS STRING)) AS value")
    invoices.write.format("kafka").options(**kafka).option("topic", "invoices").save()
    out = kemu_spark_kafka.read.format("kafka").options(**kafka).option("subscribe", "invoices").load()
    assert out.count() == 50
'''
HEADER = "from kemu.spark import spark_kafka_options\n"
RECORDER = '''
import json, os

def pytest_runtest_logreport(report):
    with open(os.environ["KEMU_BENCH_PHASES"], "a") as out:
        out.write(json.dumps({"test": report.nodeid, "phase": report.when, "seconds": report.duration,
                              "outcome": report.outcome}) + "\\n")
'''


def connector_jars() -> str:
    given = os.environ.get("KEMU_SPARK_JARS")
    if given:
        return given
    completed = subprocess.run([sys.executable, "-m", "compat_tests.jars", "classpath", "spark-kafka"],
                               capture_output=True, text=True, check=True)
    return completed.stdout.strip()


def one_run(tests: int, jars: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        (folder / "conftest.py").write_text(RECORDER)
        (folder / "test_pipelines.py").write_text(HEADER + "".join(PIPELINE_TEST.format(n=n) for n in range(tests)))
        phases = folder / "phases.jsonl"
        completed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x"],
                                   cwd=folder, capture_output=True, text=True, check=False,
                                   env={**os.environ, "KEMU_SPARK_JARS": jars, "KEMU_BENCH_PHASES": str(phases)})
        if completed.returncode != 0:
            raise RuntimeError(f"the pipeline tests failed:\n{completed.stdout}\n{completed.stderr}")
        reports = [json.loads(line) for line in phases.read_text().splitlines()]
    per_test: dict[str, float] = {}
    first_setup = 0.0
    for report in reports:
        if report["test"].endswith("test_pipeline_0") and report["phase"] == "setup":
            first_setup = report["seconds"]
            continue
        per_test[report["test"]] = per_test.get(report["test"], 0.0) + report["seconds"]
    first = next(name for name in per_test if name.endswith("test_pipeline_0"))
    later = [seconds for name, seconds in per_test.items() if name != first]
    return {"session_start_s": first_setup, "first_test_s": per_test[first],
            "later_test_median_s": statistics.median(later), "later_test_max_s": max(later)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=6)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    jars = connector_jars()
    for run in range(args.runs):
        result = one_run(max(2, args.tests), jars)
        print(f"run {run + 1}: kemu_spark session start {result['session_start_s']:.2f} s; first pipeline test "
              f"{result['first_test_s']:.2f} s; each later one {result['later_test_median_s']:.2f} s median, "
              f"{result['later_test_max_s']:.2f} s at most (load average {os.getloadavg()[0]:.2f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
