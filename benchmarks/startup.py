"""Start-up time of `kemu serve`: from process start to the first Metadata answer.

Each run starts `python -m kemu serve --port 0`, waits for its `kemu serving on HOST:PORT` line, connects,
sends Metadata v12 for all topics and reads the answer, then stops the server with SIGTERM. Prints the
median (and min/max) of several runs, for the banner and for the Metadata answer, and the CPU time the
process used from start to exit (user + system: unlike the wall-clock times, barely moved by other load
on the machine), with the load average beside them. Bytecode is cached as an installed package has it
(benchmarks.brokers.kemu_environment). Beside them, the floor under any Python broker on this machine, taken
the same way in the same minutes: the interpreter starting and exiting (`python3 -c pass`, site and .pth
files included, as `python3 -m kemu` has them) and importing Trio, the I/O shell kemu is built on.

    python benchmarks/startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import socket
import statistics
import struct
import subprocess
import sys
import time

from benchmarks.brokers import kemu_environment
from benchmarks.kafka_probe import read_exactly
from kemu.wire import codec

BANNER = re.compile(r"kemu serving on (\S+):(\d+)")


def one_run(request: bytes) -> tuple[float, float, float]:
    """(seconds to the banner, to the Metadata answer, CPU seconds of the whole process)."""
    before = _children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "kemu", "serve", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env={**os.environ, **kemu_environment()})
    try:
        assert process.stdout is not None
        match = BANNER.search(process.stdout.readline())
        if match is None:
            raise RuntimeError("kemu serve printed no banner")
        banner = time.perf_counter() - started
        with socket.create_connection((match[1], int(match[2])), timeout=10) as conn:
            conn.sendall(request)
            size = struct.unpack(">i", read_exactly(conn, 4))[0]
            codec.decode_response(3, 12, read_exactly(conn, size))
        answered = time.perf_counter() - started
    finally:
        process.send_signal(signal.SIGTERM)
        if process.wait(timeout=30) != 0:
            raise RuntimeError(f"kemu serve exited with {process.returncode}")
        if process.stdout is not None:
            process.stdout.close()
    return banner, answered, _children_cpu() - before


def floor_run(code: str) -> tuple[float, float]:
    """(seconds, CPU seconds) of `python3 -c code` from spawn to exit, in kemu's environment."""
    before = _children_cpu()
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, **kemu_environment()})
    return time.perf_counter() - started, _children_cpu() - before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    payload = codec.encode_request(3, 12, 1, {"topics": None}, client_id="startup-bench")
    request = struct.pack(">i", len(payload)) + payload
    one_run(request)  # warm the file system cache; not counted
    banners, answers, cpus = [], [], []
    for _ in range(args.runs):
        banner, answered, cpu = one_run(request)
        banners.append(banner)
        answers.append(answered)
        cpus.append(cpu)
    floors: dict[str, list[tuple[float, float]]] = {"python3 -c pass": [], "python3 -c 'import trio'": []}
    codes = {"python3 -c pass": "pass", "python3 -c 'import trio'": "import trio"}
    for label in floors:
        floor_run(codes[label])  # as above: the first run compiles and warms the caches
    for _ in range(args.runs):
        for label, runs in floors.items():
            runs.append(floor_run(codes[label]))
    rows: list[tuple[str, list[float]]] = [("banner printed", banners), ("Metadata answered", answers),
                                           ("process CPU", cpus)]
    for label, runs in floors.items():
        rows += [(f"{label}, wall", [wall for wall, _ in runs]), (f"{label}, CPU", [cpu for _, cpu in runs])]
    width = max(len(label) for label, _ in rows)
    for label, values in rows:
        print(f"{label:>{width}}: median {statistics.median(values) * 1000:6.1f} ms   "
              f"min {min(values) * 1000:6.1f} ms   max {max(values) * 1000:6.1f} ms   ({args.runs} runs)")
    print("load average: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))


if __name__ == "__main__":
    main()
