"""`--profile`: a py-spy profile of the kemu process while a workload runs, and its top entries.

py-spy samples the broker from outside (`py-spy record --pid`), so the broker runs unchanged; only samples
holding the GIL are kept (`--gil`), so the profile shows what costs the broker CPU, not where it idles in
`epoll`. The raw (collapsed-stack) format is written, which flamegraph.pl and speedscope both read, and
`top_entries` ranks its functions by self and by total samples for the report.
"""

from __future__ import annotations

import collections
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

PY_SPY = "py-spy"
SAMPLE_RATE = 1000
_STOP_TIMEOUT_S = 20.0


class ProfilerUnavailable(RuntimeError):
    """py-spy is not installed or may not attach to the broker."""


@dataclass(frozen=True)
class Entry:
    function: str
    self_samples: int
    total_samples: int


class Profile:
    """py-spy attached to `pid` from `start()` to `stop()`, writing collapsed stacks to `path`."""

    def __init__(self, pid: int, path: Path, rate: int = SAMPLE_RATE) -> None:
        self.pid, self.path, self.rate = pid, path, rate
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which(PY_SPY)
        if binary is None:
            raise ProfilerUnavailable("py-spy is not installed (pip install py-spy)")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._process = subprocess.Popen(
            [binary, "record", "--pid", str(self.pid), "--gil", "--format", "raw", "--rate", str(self.rate),
             "--output", str(self.path)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.3)  # py-spy attaches asynchronously; a workload started before would go unsampled
        if self._process.poll() is not None:
            error = self._process.stderr.read().decode(errors="replace") if self._process.stderr else ""
            raise ProfilerUnavailable(f"py-spy could not attach to {self.pid}: {error.strip()}")

    def stop(self) -> None:
        if self._process is None:
            return
        process, self._process = self._process, None
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
            try:
                process.wait(timeout=_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr is not None:
            process.stderr.close()

    def __enter__(self) -> Profile:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def top_entries(collapsed: str, limit: int = 15) -> tuple[int, list[Entry]]:
    """(samples in all, the `limit` functions with the most self samples) of a collapsed-stack profile:
    one line per distinct stack, frames separated by ';', then a space and the sample count."""
    own: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in collapsed.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        samples += count
        frames = [_function(frame) for frame in stack.split(";")]
        own[frames[-1]] += count
        for function in set(frames):
            total[function] += count
    ranked = [Entry(function, count, total[function]) for function, count in own.most_common(limit)]
    return samples, ranked


def _function(frame: str) -> str:
    """`name (file.py:123)` without the line number, so one function's lines add up."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rsplit(':', 1)[0]})" if where else name


def format_top(title: str, collapsed: str, limit: int = 15) -> str:
    samples, entries = top_entries(collapsed, limit)
    lines = [f"{title}: {samples} samples holding the GIL", "", "| self % | total % | function |",
             "|---:|---:|---|"]
    for entry in entries:
        lines.append(f"| {100 * entry.self_samples / max(samples, 1):.1f} | "
                     f"{100 * entry.total_samples / max(samples, 1):.1f} | `{entry.function}` |")
    return "\n".join(lines)
