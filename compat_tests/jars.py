"""The Java artifacts the compat tests run, resolved with Maven from the descriptors in compat_tests/maven/.

Each folder there is one set: a `pom.xml` of `pom` packaging that only lists dependencies (the reference
Kafka broker, the Java clients of two lines). `classpath(name)` asks Maven for the set's runtime classpath
(`dependency:build-classpath`), whose jars Maven keeps in its own local repository, and caches the answer
under `$KEMU_JARS_CACHE` (default `~/.cache/kemu/jars`) keyed by the pom's digest: a second call, or a
second run on the same machine, starts no Maven. No jar is copied into the tree.

`python -m compat_tests.jars resolve [NAME ...]` resolves sets ahead of the tests (scripts/install-test-deps
runs it for all of them); `python -m compat_tests.jars classpath NAME` prints one; `python -m compat_tests.jars
sources NAME` fetches the `-sources` jars of a set, Kafka's own source to read.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from compat_tests.external_clients import tool_missing

DESCRIPTORS = Path(__file__).parent / "maven"
MAVEN_TIMEOUT_S = 900.0


class ResolveFailed(RuntimeError):
    """Maven could not resolve a set; the message carries its output."""


def sets() -> list[str]:
    return sorted(path.parent.name for path in DESCRIPTORS.glob("*/pom.xml"))


def _descriptor(name: str) -> Path:
    pom = DESCRIPTORS / name / "pom.xml"
    if not pom.is_file():
        raise KeyError(f"no jar set {name!r} in {DESCRIPTORS} (known: {', '.join(sets())})")
    return pom


def cache_dir() -> Path:
    configured = os.environ.get("KEMU_JARS_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "kemu" / "jars"


def _cache_file(pom: Path) -> Path:
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()[:16]
    return cache_dir() / f"{pom.parent.name}-{digest}.classpath"


def _cached(pom: Path) -> list[Path] | None:
    cached = _cache_file(pom)
    if not cached.is_file():
        return None
    jars = [Path(entry) for entry in cached.read_text(encoding="utf-8").strip().split(os.pathsep) if entry]
    # The local Maven repository may have been cleaned since: then the set is resolved again.
    return jars if jars and all(jar.is_file() for jar in jars) else None


def resolve(name: str) -> list[Path]:
    """The jars of set `name`, resolving it with Maven when no cached answer is still valid."""
    pom = _descriptor(name)
    jars = _cached(pom)
    if jars is not None:
        return jars
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ResolveFailed("mvn is not on PATH")
    target = _cache_file(pom)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.partial")
    argv = [mvn, "-B", "-q", "-f", str(pom), "dependency:build-classpath", "-Dmdep.includeScope=runtime",
            f"-Dmdep.outputFile={partial}"]
    completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=MAVEN_TIMEOUT_S, check=False)
    if completed.returncode != 0 or not partial.is_file():
        raise ResolveFailed(f"{' '.join(argv)} exited {completed.returncode}\n{completed.stdout}\n{completed.stderr}")
    partial.replace(target)
    jars = _cached(pom)
    if jars is None:
        raise ResolveFailed(f"Maven's classpath for {name} names no jar, or jars that are not there: {target}")
    return jars


def classpath(name: str) -> str:
    """The set's classpath for `java -cp`; a test that needs it skips (fails under CI=true) without it."""
    try:
        return os.pathsep.join(str(jar) for jar in resolve(name))
    except ResolveFailed as exc:
        tool_missing(f"the jar set {name} could not be resolved: {exc}")


def fetch_sources(name: str) -> Path:
    """Fetch the set's `-sources` jars into Maven's local repository; returns where they are listed."""
    pom = _descriptor(name)
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ResolveFailed("mvn is not on PATH")
    listing = cache_dir() / f"{name}.sources.txt"
    listing.parent.mkdir(parents=True, exist_ok=True)
    argv = [mvn, "-B", "-q", "-f", str(pom), "dependency:sources", "-DincludeGroupIds=org.apache.kafka",
            f"-DoutputFile={listing}"]
    completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=MAVEN_TIMEOUT_S, check=False)
    if completed.returncode != 0:
        raise ResolveFailed(f"{' '.join(argv)} exited {completed.returncode}\n{completed.stdout}\n{completed.stderr}")
    return listing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat_tests.jars", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    resolve_command = commands.add_parser("resolve", help="resolve sets (all of them by default)")
    resolve_command.add_argument("names", nargs="*")
    classpath_command = commands.add_parser("classpath", help="print a set's classpath")
    classpath_command.add_argument("name")
    sources_command = commands.add_parser("sources", help="fetch a set's -sources jars (Kafka's own source)")
    sources_command.add_argument("name")
    args = parser.parse_args(argv)
    try:
        if args.command == "resolve":
            for name in args.names or sets():
                jars = resolve(name)
                print(f"{name}: {len(jars)} jars")
        elif args.command == "classpath":
            print(os.pathsep.join(str(jar) for jar in resolve(args.name)))
        else:
            print(fetch_sources(args.name))
    except (ResolveFailed, KeyError) as exc:
        print(f"python -m compat_tests.jars: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
