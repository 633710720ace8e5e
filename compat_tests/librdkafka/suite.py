"""librdkafka's own test suite (its `tests/` folder and `test-runner`), built from the librdkafka sources that ship
in the npm package `@confluentinc/kafka-javascript` (pinned by compat_tests/librdkafka/package.json and its lock;
installed with `npm ci --ignore-scripts`, so the Node binding itself is never built).

`python -m compat_tests.librdkafka.suite build` configures and builds the library and the test runner into
`~/.cache/kemu/librdkafka-<digest of the lock>` (about 4 minutes on 2 cores, once per machine and lock; it needs
gcc, g++, make and Debian's libssl-dev, zlib1g-dev, libzstd-dev, liblz4-dev and rapidjson-dev, which
scripts/install-test-deps installs). `run_suite_test()` runs one numbered test of it against a broker, as
librdkafka's CI does against a trivup cluster: `TESTS=0081 ./test-runner` with a test.conf naming the bootstrap
servers."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from compat_tests import go_build

HERE = Path(__file__).resolve().parent
LOCK = HERE / "package-lock.json"
PACKAGE = Path("node_modules") / "@confluentinc" / "kafka-javascript" / "deps" / "librdkafka"
BUILD_TIMEOUT_S = 1800.0
DONE = ".kemu-built"
# What librdkafka's configure may leave out: the HTTP client (OIDC only) and GSSAPI (Kerberos).
CONFIGURE = ("./configure", "--disable-curl", "--disable-gssapi")
_SUMMARY_ROW = re.compile(r"^\|\s*(\S+)\s*\|\s*(PASSED|FAILED|SKIPPED)\s*\|")
_ESCAPES = re.compile(r"\x1b\[[0-9;]*m")


class SuiteUnavailable(Exception):
    """The suite is not built and cannot be: the message says what is missing."""


def suite_dir() -> Path:
    digest = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
    return go_build.cache_root() / f"librdkafka-{digest}"


def _run(argv: list[str] | tuple[str, ...], cwd: Path, what: str) -> None:
    try:
        completed = subprocess.run(list(argv), cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=BUILD_TIMEOUT_S, check=False)
    except FileNotFoundError as missing:
        raise SuiteUnavailable(f"{what}: {missing}") from None
    except subprocess.TimeoutExpired:
        raise SuiteUnavailable(f"{what} did not finish in {BUILD_TIMEOUT_S:.0f} s") from None
    if completed.returncode != 0:
        tail = (completed.stderr or completed.stdout).strip().splitlines()[-5:]
        raise SuiteUnavailable(f"{what} exited {completed.returncode}: " + " | ".join(tail))


def built_suite() -> Path:
    """The folder holding librdkafka's built `tests/test-runner` (built here first if the cache has none)."""
    target = suite_dir()
    if (target / DONE).is_file():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise SuiteUnavailable("npm is not on PATH, and librdkafka's suite is not built")
    _run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], HERE, "npm ci (compat_tests/librdkafka)")
    source = HERE / PACKAGE
    if not (source / "tests" / "0081-admin.c").is_file():
        raise SuiteUnavailable(f"{source} holds no librdkafka test suite")
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source, partial)
    jobs = str(max(1, os.cpu_count() or 1))
    try:
        _run(CONFIGURE, partial, "librdkafka's configure")
        _run(["make", f"-j{jobs}", "libs"], partial, "make libs")
        _run(["make", f"-j{jobs}", "-C", "tests", "test-runner"], partial, "make -C tests test-runner")
    except SuiteUnavailable:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    (partial / DONE).write_text("built\n", encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


@dataclass(frozen=True)
class SuiteRun:
    returncode: int
    results: dict[str, str]  # each test's line of the summary table: PASSED, FAILED or SKIPPED
    output: str

    def tail(self, lines: int = 60) -> str:
        return "\n".join(self.output.splitlines()[-lines:])


def run_suite_test(suite: Path, number: str, bootstrap: str, *, kafka_version: str = "4.3.0", quick: bool = False,
                   work: Path, timeout: float = 900.0) -> SuiteRun:
    """`TESTS=<number> ./test-runner` against `bootstrap`; its config in `work/test.conf`."""
    conf = work / "test.conf"
    conf.write_text(f"metadata.broker.list={bootstrap}\n", encoding="utf-8")
    tests = suite / "tests"
    env = {**os.environ, "TESTS": number, "TEST_KAFKA_VERSION": kafka_version, "RDKAFKA_TEST_CONF": str(conf),
           "LD_LIBRARY_PATH": os.pathsep.join([str(suite / "src"), str(suite / "src-cpp")])}
    env.pop("CI", None)  # CI=true makes the runner stretch every timeout: the broker here is no slower.
    argv = [str(tests / "test-runner"), *(["-Q"] if quick else [])]
    completed = subprocess.run(argv, cwd=tests, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=timeout, check=False)
    output = _ESCAPES.sub("", completed.stdout + completed.stderr)
    results = {match.group(1): match.group(2) for line in output.splitlines()
               if (match := _SUMMARY_ROW.match(line.strip()))}
    return SuiteRun(completed.returncode, results, output)


if __name__ == "__main__":
    if sys.argv[1:] != ["build"]:
        sys.exit("usage: python -m compat_tests.librdkafka.suite build")
    try:
        print(built_suite())
    except SuiteUnavailable as missing:
        sys.exit(f"librdkafka's suite: {missing}")
