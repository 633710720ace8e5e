"""The "kemu-kafka" data source from a Python that is not the `python3` on PATH (a virtualenv used without
activating it, as CI jobs and IDEs run `.venv/bin/python -m pytest`): Spark's planner workers must run this
interpreter, where kemu is importable, not PATH's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent("""
    from kemu.spark import spark_kafka_options
    from kemu.spark.session import local_session
    from kemu.testing import Broker

    with Broker() as broker:
        broker.create_topic("orders")
        broker.produce("orders", "order-1")
        spark, _ = local_session(connector=False)
        try:
            frame = spark.read.format("kemu-kafka").options(**spark_kafka_options(broker)) \\
                .option("subscribe", "orders").load()
            print("values", [bytes(row.value) for row in frame.collect()])
        finally:
            spark.stop()
""")


def test_the_data_source_works_when_path_names_another_python(tmp_path: Path) -> None:
    path = "/usr/bin:/bin"
    other = shutil.which("python3", path=path)
    if other is None or Path(other).resolve() == Path(sys.executable).resolve():
        pytest.skip("no other python3 on /usr/bin:/bin to stand for PATH's")
    lacks_kemu = subprocess.run([other, "-c", "import kemu"], cwd=tmp_path, capture_output=True, check=False)
    if lacks_kemu.returncode == 0:
        pytest.skip(f"{other} imports kemu too: it cannot show the worker running the wrong Python")
    if shutil.which("java", path=path) is None:
        pytest.skip("no java on /usr/bin:/bin")
    (tmp_path / "read.py").write_text(SCRIPT)
    completed = subprocess.run([sys.executable, "read.py"], cwd=tmp_path, capture_output=True, text=True,
                               timeout=600, check=False,
                               env={**{k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}, "PATH": path})
    assert "values [b'order-1']" in completed.stdout, completed.stdout + completed.stderr[-3000:]
