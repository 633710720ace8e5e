"""Go programs of the repository (a main.go over modules pinned by its go.mod and go.sum), built with `go build`
on first use into a cache, under a digest of their sources: a later run starts no Go toolchain, and a change to
the pinned modules or to the program builds a new binary. compat_tests/franz (franz-go's clients) and
benchmarks/kfake (franz-go's kfake broker) are built so."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

SOURCES = ("go.mod", "go.sum", "main.go")
BUILD_TIMEOUT_S = 900.0


class GoBuildFailed(Exception):
    """No binary: go is missing, or `go build` failed (the message says which, with go's last line)."""


def cache_root() -> Path:
    return Path.home() / ".cache" / "kemu"


def digest(source: Path, sources: Sequence[str] = SOURCES) -> str:
    found = hashlib.sha256()
    for name in sources:
        found.update(name.encode() + b"\0" + (source / name).read_bytes() + b"\0")
    return found.hexdigest()[:16]


def go_binary(source: Path, name: str, cache: Path, *, sources: Sequence[str] = SOURCES,
              progress: Callable[[str], None] | None = None, timeout_s: float = BUILD_TIMEOUT_S) -> Path:
    """`cache/NAME-DIGEST`, built from `source` when the cache has none."""
    target = cache / f"{name}-{digest(source, sources)}"
    if target.is_file() and os.access(target, os.X_OK):
        return target
    go = shutil.which("go")
    if go is None:
        raise GoBuildFailed(f"go is not on PATH, and {target} is not built")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built aside and renamed: a run that stops mid-build (or two that build at once) leaves no half binary.
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    if progress is not None:
        progress(f"[{name}] go build -o {target} (once per go.sum and main.go) ...")
    argv = [go, "build", "-buildvcs=false", "-trimpath", "-o", str(partial), "."]
    try:
        completed = subprocess.run(argv, cwd=source, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        partial.unlink(missing_ok=True)
        raise GoBuildFailed(f"go build did not finish in {timeout_s:.0f} s") from None
    if completed.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        detail = (completed.stderr or completed.stdout).strip().splitlines()
        raise GoBuildFailed(f"go build exited {completed.returncode}: {detail[-1] if detail else 'no output'}")
    partial.replace(target)
    return target
