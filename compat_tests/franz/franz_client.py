"""franz-go's clients (github.com/twmb/franz-go, pinned by compat_tests/franz/go.mod and go.sum) in the program
compat_tests/franz/main.go, built with `go build` on first use into ~/.cache/kemu/franz under a digest of its
sources (compat_tests/go_build.py); scripts/install-test-deps builds it ahead of the tests. `python -m
compat_tests.franz.franz_client build` builds it and prints its path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from compat_tests import go_build

SOURCE = Path(__file__).resolve().parent
RUN_TIMEOUT_S = 180.0


class FranzFailed(AssertionError):
    """The program exited non-zero: its stderr says what franz-go returned."""


def franz_binary() -> Path:
    """The built program (raises go_build.GoBuildFailed without go and without a cached binary)."""
    return go_build.go_binary(SOURCE, "franz", go_build.cache_root() / "franz")


def run(binary: Path, *args: str, timeout: float = RUN_TIMEOUT_S) -> Any:
    """One mode of the program (see main.go), its printed JSON line."""
    completed = subprocess.run([str(binary), *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=timeout, check=False)
    if completed.returncode != 0:
        raise FranzFailed(f"franz {' '.join(args)} exited {completed.returncode}: {completed.stderr.strip()}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    if sys.argv[1:] != ["build"]:
        sys.exit("usage: python -m compat_tests.franz.franz_client build")
    print(franz_binary())
