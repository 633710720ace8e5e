"""How soon kemu's docker image serves (issue 35, goal 4: the container ready in under 1 s).

    bash docker/build-image                      # kemu:local
    python3 -m benchmarks.image_startup --runs 7 [--image kemu:local] [--json PATH]

Three figures, each the median (with min and max) of `--runs` starts after one uncounted warm-up:
- `docker run -d` to the first answered Metadata: the image started as its README shows it
  (`-p HOST:9092`, the advertised listener given), probed through the published port every 2 ms, as
  benchmarks/startup.py probes `kemu serve`;
- `KemuContainer(...).start()` returning: what a test written for testcontainers waits for (the container
  started, its mapped port written into it for the advertised listener, the broker's ApiVersions answered,
  and with the control endpoint, that answering too);
- the floor under any image on this engine: `docker run -d` of the same image running `/bin/true`, to the
  engine saying it exited — a container's creation, start and end, with nothing in it.
Each container is removed after its run (not timed). Markdown to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

from benchmarks.kafka_probe import wait_for_metadata

DEFAULT_IMAGE = "kemu:local"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True).stdout.strip()


def run_to_metadata(image: str) -> float:
    """Seconds from `docker run -d` to the first Metadata answered through the published port."""
    port = _free_port()
    started = time.perf_counter()
    container = _docker("run", "-d", "-p", f"127.0.0.1:{port}:9092",
                        "-e", f"KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://127.0.0.1:{port}", image)
    try:
        return wait_for_metadata("127.0.0.1", port, started + 60) - started
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)


def kemu_container_start(image: str, control: bool) -> float:
    """Seconds for KemuContainer(...).start() to return."""
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # the reaper's image is not on this machine
    from kemu.testcontainers import CONTROL_PORT, KemuContainer

    container = KemuContainer(image, control_port=CONTROL_PORT if control else None)
    started = time.perf_counter()
    container.start()
    try:
        return time.perf_counter() - started
    finally:
        container.stop()


def empty_container(image: str) -> float:
    """Seconds from `docker run -d` of `/bin/true` to the engine reporting it exited."""
    started = time.perf_counter()
    container = _docker("run", "-d", "--entrypoint", "/bin/true", image)
    try:
        _docker("wait", container)
        return time.perf_counter() - started
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)


def summarise(seconds: Sequence[float]) -> dict[str, float]:
    """Median, min and max in ms."""
    values = [1000 * value for value in seconds]
    return {"median_ms": statistics.median(values), "min_ms": min(values), "max_ms": max(values),
            "runs": float(len(values))}


def measure(name: str, runs: int, once: Callable[[], float]) -> dict[str, float]:
    once()  # warm-up: the engine's first container of an image pays for its layers once
    results = []
    for index in range(runs):
        results.append(once())
        print(f"[{name}] {index + 1}/{runs}: {1000 * results[-1]:.0f} ms", file=sys.stderr)
    return summarise(results)


def table(figures: dict[str, dict[str, float]]) -> str:
    lines = ["| from start to | median ms | min | max |", "|---|---:|---:|---:|"]
    for name, figure in figures.items():
        lines.append(f"| {name} | {figure['median_ms']:.0f} | {figure['min_ms']:.0f} | {figure['max_ms']:.0f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default=os.environ.get("KEMU_IMAGE", DEFAULT_IMAGE))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    figures = {
        "`docker run -d` to an answered Metadata": measure("run", args.runs, lambda: run_to_metadata(args.image)),
        "`KemuContainer().start()` returned (control endpoint on, the default)":
            measure("KemuContainer", args.runs, lambda: kemu_container_start(args.image, control=True)),
        "`KemuContainer(control_port=None).start()` returned":
            measure("KemuContainer, no control", args.runs, lambda: kemu_container_start(args.image, control=False)),
        "floor: `docker run -d` of `/bin/true` to its exit": measure("empty", args.runs,
                                                                      lambda: empty_container(args.image)),
    }
    print(table(figures))
    print(f"\nimage {args.image}; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"image": args.image, "figures": figures}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
