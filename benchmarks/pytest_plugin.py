"""What kemu's pytest plugins cost a user's suite: (1) loading them in a run that asks for no kemu fixture, and
(2) a `kemu_broker` plus a `create_topic` per test.

(1) runs `pytest` on one empty test, alternately with the plugins (as every project with kemu installed has
them) and without (`-p no:kemu -p no:kemu_spark`), and reports the median difference in wall time and in the
CPU time of the run (user + system of the child, which other load on the machine moves less).

(2) runs a file of N tests that each take `kemu_broker` and create a topic, against a file of N tests that do
nothing, both with the plugins loaded, and reports the difference per test: what the fixture and the call
cost on top of pytest's own per-test work. The broker's thread and loop start once per test; the import of
the broker (Trio and the core) is paid once per run and counted in the first test.

    python -m benchmarks.pytest_plugin [--runs 9] [--tests 200]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EMPTY = "def test_nothing():\n    pass\n"
WITH_BROKER = """
def test_{n}(kemu_broker):
    kemu_broker.create_topic("orders")
"""
WITHOUT = """
def test_{n}():
    pass
"""
WITHOUT_PLUGINS = ("-p", "no:kemu", "-p", "no:kemu_spark")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_pytest(folder: Path, *args: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `python -m pytest -q` in `folder`, failing if its tests fail."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                               cwd=folder, capture_output=True, text=True, check=False,
                               env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    wall = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(f"pytest {' '.join(args)} failed:\n{completed.stdout}\n{completed.stderr}")
    return wall, _children_cpu() - cpu_before


def plugin_load(runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        (folder / "test_empty.py").write_text(EMPTY)
        run_pytest(folder)  # a first run warms the page cache and compiles nothing (no bytecode written)
        walls: list[float] = []
        cpus: list[float] = []
        for _ in range(runs):
            with_wall, with_cpu = run_pytest(folder)
            without_wall, without_cpu = run_pytest(folder, *WITHOUT_PLUGINS)
            walls.append(with_wall - without_wall)
            cpus.append(with_cpu - without_cpu)
    return {"wall_ms": statistics.median(walls) * 1000, "cpu_ms": statistics.median(cpus) * 1000}


def per_test(runs: int, tests: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        (folder / "broker").mkdir()
        (folder / "plain").mkdir()
        (folder / "broker" / "test_broker.py").write_text("".join(WITH_BROKER.format(n=n) for n in range(tests)))
        (folder / "plain" / "test_plain.py").write_text("".join(WITHOUT.format(n=n) for n in range(tests)))
        walls: list[float] = []
        cpus: list[float] = []
        for _ in range(runs):
            broker_wall, broker_cpu = run_pytest(folder / "broker")
            plain_wall, plain_cpu = run_pytest(folder / "plain")
            walls.append((broker_wall - plain_wall) / tests)
            cpus.append((broker_cpu - plain_cpu) / tests)
    return {"wall_ms": statistics.median(walls) * 1000, "cpu_ms": statistics.median(cpus) * 1000}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--tests", type=int, default=200)
    args = parser.parse_args(argv)
    load = plugin_load(args.runs)
    print(f"loading the plugins, one empty test: +{load['wall_ms']:.1f} ms wall, +{load['cpu_ms']:.1f} ms CPU "
          f"(median of {args.runs}; load average {os.getloadavg()[0]:.2f})", flush=True)
    cost = per_test(max(1, args.runs // 3), args.tests)
    print(f"kemu_broker + create_topic: {cost['wall_ms']:.2f} ms wall, {cost['cpu_ms']:.2f} ms CPU per test "
          f"(over {args.tests} tests; load average {os.getloadavg()[0]:.2f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
