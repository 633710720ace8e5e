"""What kemu's pytest plugins cost a user's suite: (1) loading them in a run that asks for no kemu fixture, and
(2) a `kemu_broker` plus a `create_topic` per test.

(1) runs `pytest` on one empty test, alternately with the plugins (as every project with kemu installed has
them) and without (`-p no:kemu -p no:kemu_spark`), and reports the median difference in wall time and in the
CPU time of the run (user + system of the child, which other load on the machine moves less).

(2) runs files of tests that each take `kemu_broker` and create a topic, against files of as many tests that
do nothing, all with the plugins loaded: what the fixture and the call cost on top of pytest's own per-test
work. A run's first kemu fixture also pays once for what every later one reuses: importing the broker (Trio
and the core: ~120 modules, which pytest's assertion rewriting compiles afresh in every run here, as the runs
write no bytecode) and starting the session's broker loop. That one-off is no cost per test, so it is
measured apart: a file of 1 test and one of N against their plain twins, the per-test figure being the slope
between them, ((broker_N - broker_1) - (plain_N - plain_1)) / (N - 1), and the one-off what the single
test cost beyond it. The figure of earlier versions of this benchmark, which spread the one-off over the N
tests ((broker_N - plain_N) / N), is printed as "all in" beside them.

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
    """Medians over `runs` rounds, in ms: per test (the slope between 1 and `tests` tests), the first test's
    one-off, and the all-in figure of earlier versions; each as wall and CPU."""
    if tests < 2:
        raise ValueError("the slope needs at least 2 tests")
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        for count in (1, tests):
            for kind, test in (("broker", WITH_BROKER), ("plain", WITHOUT)):
                (folder / f"{kind}{count}").mkdir()
                (folder / f"{kind}{count}" / f"test_{kind}.py").write_text(
                    "".join(test.format(n=n) for n in range(count)))
        for _ in range(runs):
            took = {name: run_pytest(folder / name) for name in ("broker1", f"broker{tests}", "plain1",
                                                                  f"plain{tests}")}
            for index, unit in enumerate(("wall", "cpu")):
                broker_1, broker_n = took["broker1"][index], took[f"broker{tests}"][index]
                plain_1, plain_n = took["plain1"][index], took[f"plain{tests}"][index]
                each = ((broker_n - broker_1) - (plain_n - plain_1)) / (tests - 1)
                figures.setdefault(f"{unit}_ms", []).append(each)
                figures.setdefault(f"first_{unit}_ms", []).append(broker_1 - plain_1 - each)
                figures.setdefault(f"all_in_{unit}_ms", []).append((broker_n - plain_n) / tests)
    return {name: statistics.median(values) * 1000 for name, values in figures.items()}


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
          f"(slope over 1 and {args.tests} tests); once, in the first test: +{cost['first_wall_ms']:.0f} ms wall, "
          f"+{cost['first_cpu_ms']:.0f} ms CPU; all in over {args.tests} tests: {cost['all_in_wall_ms']:.2f} ms "
          f"wall, {cost['all_in_cpu_ms']:.2f} ms CPU (load average {os.getloadavg()[0]:.2f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
