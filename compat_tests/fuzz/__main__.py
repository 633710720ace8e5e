"""`python -m compat_tests.fuzz --frames 1000000 [--seed N] [--connections 32] [--structured 0.5]
[--minutes 10]`: fuzz a fresh `kemu serve` and print the figures every check (frames sent, answered,
connections closed); a crash, a failed liveness check or a traceback the broker printed is a failure (the
tracebacks are printed). `--minutes` sends frames until that much time has passed, whatever --frames says."""

from __future__ import annotations

import argparse
import sys

from compat_tests.fuzz.server_fuzzer import FuzzFailure, Stats
from compat_tests.fuzz.session import fuzz_session, tracebacks_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat_tests.fuzz", description=__doc__)
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--deadline", type=float, default=1.0, help="seconds ApiVersions+Metadata may take")
    parser.add_argument("--structured", type=float, default=0.5,
                        help="the share of frames built from Kafka's message specs (the rest: recorded clients')")
    parser.add_argument("--minutes", type=float, default=None, help="run this long instead of --frames")
    args = parser.parse_args(argv)

    def progress(stats: Stats) -> None:
        if stats.checks % 10 == 0:
            print(stats.line(), flush=True)

    try:
        stats, corpus, rss, output = fuzz_session(
            args.frames, seed=args.seed, connections=args.connections, deadline_s=args.deadline,
            structured_share=args.structured, progress=progress,
            seconds=None if args.minutes is None else args.minutes * 60)
    except FuzzFailure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        return 1
    print(f"corpus {corpus} client requests; {stats.line()}; broker resident memory {rss // 1024} MiB")
    if stats.tracebacks:
        print(tracebacks_of(output), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
