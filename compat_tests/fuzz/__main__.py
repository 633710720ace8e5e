"""`python -m compat_tests.fuzz --frames 1000000 [--seed N] [--connections 32]`: fuzz a fresh `kemu serve`
and print the figures every check (frames sent, answered, connections closed; crashes are a failure)."""

from __future__ import annotations

import argparse
import sys

from compat_tests.fuzz.server_fuzzer import FuzzFailure, Stats
from compat_tests.fuzz.session import fuzz_session


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat_tests.fuzz", description=__doc__)
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--deadline", type=float, default=1.0, help="seconds ApiVersions+Metadata may take")
    args = parser.parse_args(argv)

    def progress(stats: Stats) -> None:
        if stats.checks % 10 == 0:
            print(stats.line(), flush=True)

    try:
        stats, corpus, rss = fuzz_session(args.frames, seed=args.seed, connections=args.connections,
                                          deadline_s=args.deadline, progress=progress)
    except FuzzFailure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        return 1
    print(f"corpus {corpus} client requests; {stats.line()}; broker resident memory {rss // 1024} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
