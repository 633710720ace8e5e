"""The in-process broker a test holds (`kemu.testing.Broker`): how soon it answers, how fast it empties.

- **start**: from calling `Broker()` to an answered ApiVersions over a new socket (the constructor
  returns only once the broker listens; the probe is a client's first request), then `close()`;
- **reset**: `reset()` of a broker a test has just used (a topic created and a record written), after a
  pause standing for the rest of that test (`--pause-ms`), and the same with no pause at all (resets back
  to back, the worst case: the empty core made ahead of time is not ready yet);
- **call**: one handle call's round trip to the broker's thread (`records()` of an empty topic), which is
  what an asyncio or Trio test's loop is held for by each call;
- **cold start**: a new interpreter importing `kemu.testing` and starting its first broker (what the first
  test of a session pays; imports and the first handler loads are most of it).

Each is the median of `--runs` (default 100) after one uncounted warm-up; min and max beside it.
Goals (issue 11): start ≤ 10 ms, reset ≤ 1 ms.

    python3 -m benchmarks.testing [--runs 100] [--pause-ms 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from benchmarks.brokers import kemu_environment
from kemu.probe import api_versions_round_trip
from kemu.testing import Broker


@dataclass(frozen=True)
class Figure:
    name: str
    median_ms: float
    min_ms: float
    max_ms: float
    runs: int
    goal_ms: float | None = None

    def line(self) -> str:
        goal = "" if self.goal_ms is None else \
            f"   goal ≤ {self.goal_ms:g} ms: {'met' if self.median_ms <= self.goal_ms else 'MISSED'}"
        return (f"{self.name:>44}: median {self.median_ms:8.3f} ms   min {self.min_ms:8.3f}   "
                f"max {self.max_ms:8.3f}   ({self.runs} runs){goal}")


def figure(name: str, samples: list[float], goal_ms: float | None = None) -> Figure:
    ms = [s * 1000 for s in samples]
    return Figure(name, statistics.median(ms), min(ms), max(ms), len(ms), goal_ms)


def api_versions(port: int) -> None:
    # kemu.probe's round trip: a decoded ApiVersions answer, as the image's health check waits for.
    api_versions_round_trip("127.0.0.1", port, timeout=10)


def timed(runs: int, setup: Callable[[], None], action: Callable[[], object]) -> list[float]:
    samples = []
    for run in range(runs + 1):
        setup()
        started = time.perf_counter()
        action()
        elapsed = time.perf_counter() - started
        if run:  # run 0 warms caches and is not counted
            samples.append(elapsed)
    return samples


def measure_start(runs: int) -> Figure:
    def start() -> None:
        broker = Broker()
        api_versions(broker.port)
        stopped.append(broker)

    stopped: list[Broker] = []

    def close_previous() -> None:
        while stopped:
            stopped.pop().close()

    samples = timed(runs, close_previous, start)
    close_previous()
    return figure("Broker() to an answered ApiVersions", samples, 10.0)


def measure_reset(runs: int, pause_s: float) -> list[Figure]:
    figures = []
    with Broker() as broker:
        counter = iter(range(10**9))

        def use(pause: float) -> Callable[[], None]:
            def setup() -> None:
                topic = f"t{next(counter)}"
                broker.create_topic(topic)
                broker.produce(topic, "x")
                if pause:
                    time.sleep(pause)
            return setup

        label = f"reset() after a test ({pause_s * 1000:g} ms later)"
        figures.append(figure(label, timed(runs, use(pause_s), broker.reset), 1.0))
        figures.append(figure("reset() back to back", timed(runs, use(0.0), broker.reset)))
        broker.create_topic("empty")
        figures.append(figure("handle call round trip (records())", timed(runs, lambda: None,
                                                                           lambda: broker.records("empty"))))
    return figures


COLD = """
import time
started = time.perf_counter()
from kemu.testing import Broker
imported = time.perf_counter()
with Broker() as broker:
    ready = time.perf_counter()
print(imported - started, ready - started)
"""


def measure_cold(runs: int) -> list[Figure]:
    imports, firsts = [], []
    for _ in range(runs):
        # With bytecode cached, as an installed package has it (else, where PYTHONDONTWRITEBYTECODE is set, every
        # run compiles kemu from source and the figure is mostly the compiler's).
        out = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True, check=True,
                             env={**os.environ, **kemu_environment()}).stdout
        imported, ready = (float(x) for x in out.split())
        imports.append(imported)
        firsts.append(ready)
    return [figure("cold: import kemu.testing", imports), figure("cold: import and first Broker() ready", firsts)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.testing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="measurements per figure (the median is reported)")
    parser.add_argument("--pause-ms", type=float, default=5.0, help="the rest of a test, before its reset")
    parser.add_argument("--cold-runs", type=int, default=10, help="new interpreters for the cold start")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    if min(args.runs, args.cold_runs) < 1 or args.pause_ms < 0:
        parser.error("--runs and --cold-runs must be positive, --pause-ms not negative")
    figures = [measure_start(args.runs), *measure_reset(args.runs, args.pause_ms / 1000),
               *measure_cold(args.cold_runs)]
    print(f"## kemu.testing.Broker in-process (Python {sys.version.split()[0]})\n")
    for found in figures:
        print(found.line())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump([asdict(found) for found in figures], out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
