"""The whole suite as two pytest processes side by side (compat_tests/parts.py says which test goes where).

scripts/test runs this when it is given no pytest arguments. Each part's lines are printed as they come,
prefixed with its name; then each part's closing line, and last one closing line in pytest's own form that
sums the two ("= 1 failed, 6228 passed, 3 skipped in 1712.40s =", the wall time of the pair), which is the
line .ci/run reports. The exit code is the worst of the two parts' (a part that collected nothing counts as
passed when the other ran tests).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO

PARTS = ("kafka", "rest")
# pytest's closing line: "===== 1 failed, 6228 passed, 3 skipped, 1 xfailed, 218 warnings in 2518.86s (0:41:58) ====="
CLOSING = re.compile(r"^=+ (?P<counts>.*) in (?P<seconds>[0-9.]+)s.* =+$")
COUNT = re.compile(r"(?P<number>\d+) (?P<word>[a-z]+)")
# Most severe first: interrupted, internal error, usage error, failed; "no tests" only when both say so.
SEVERITY = (2, 3, 4, 1)
NO_TESTS = 5
DURATIONS = "--durations=25"


def merged_code(codes: Sequence[int]) -> int:
    for code in SEVERITY:
        if code in codes:
            return code
    if all(code == NO_TESTS for code in codes):
        return NO_TESTS
    unknown = [code for code in codes if code not in (0, NO_TESTS)]
    return unknown[0] if unknown else 0


def merged_closing(lines: Sequence[str], seconds: float) -> str:
    """One closing line summing the parts' counts, in pytest's order of words. "deselected" is left out: each
    part deselects the other's tests, so the sum would only be the suite's size again."""
    totals: dict[str, int] = {}
    for line in lines:
        match = CLOSING.match(line)
        if not match:
            continue
        for count in COUNT.finditer(match["counts"]):
            if count["word"] != "deselected":
                totals[count["word"]] = totals.get(count["word"], 0) + int(count["number"])
    order = ["failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "warnings", "errors", "error"]
    words = sorted(totals, key=lambda word: order.index(word) if word in order else len(order))
    counts = ", ".join(f"{totals[word]} {word}" for word in words) or "no tests ran"
    return f"{'=' * 8} {counts} in {seconds:.2f}s (both parts side by side) {'=' * 8}"


def _relay(name: str, stream: IO[str], closing: list[str], lock: threading.Lock) -> None:
    for line in stream:
        line = line.rstrip("\n")
        if CLOSING.match(line):
            closing.append(line)
        with lock:
            print(f"[{name}] {line}", flush=True)


def main(argv: Sequence[str]) -> int:
    started = time.monotonic()
    lock = threading.Lock()
    closings: dict[str, list[str]] = {part: [] for part in PARTS}
    processes: dict[str, subprocess.Popen[str]] = {}
    relays: list[threading.Thread] = []
    for part in PARTS:
        environment = dict(os.environ, KEMU_TEST_PART=part)
        process = subprocess.Popen([sys.executable, "-m", "pytest", DURATIONS, *argv], env=environment,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   text=True, errors="replace")
        assert process.stdout is not None
        processes[part] = process
        relay = threading.Thread(target=_relay, args=(part, process.stdout, closings[part], lock), daemon=True)
        relay.start()
        relays.append(relay)
    codes = [processes[part].wait() for part in PARTS]
    for relay in relays:
        relay.join()
    seconds = time.monotonic() - started
    print()
    for part, code in zip(PARTS, codes, strict=True):
        print(f"==> part {part}: exit code {code}; {closings[part][-1] if closings[part] else 'no closing line'}")
    print(merged_closing([closing for part in PARTS for closing in closings[part][-1:]], seconds))
    return merged_code(codes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
