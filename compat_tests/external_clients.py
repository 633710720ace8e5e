"""The non-Python clients, run as child processes: kcat, and kafkajs through node scripts.

On a developer's machine a missing tool skips the tests that need it. In CI (`CI=true`) it fails
them instead: CI installs every tool, so a missing one means the install step broke.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

JS_DIR = Path(__file__).parent / "js"
TOOL_TIMEOUT_S = 60.0


def running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def tool_missing(message: str) -> NoReturn:
    if running_in_ci():
        pytest.fail(f"{message} (CI=true: the CI script must install it)", pytrace=False)
    pytest.skip(message)


def require_executable(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        tool_missing(f"{name} is not on PATH; install it with `bash scripts/install-test-deps`")
    return path


class ToolFailed(AssertionError):
    """A client process exited abnormally or printed something that is not its JSON result."""


def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        # Even with text=True the partial output a timeout carries may be bytes.
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr
        raise ToolFailed(f"{' '.join(argv)} ran longer than {timeout:.0f}s\nstderr:\n{stderr}") from None


# --- kcat ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kcat:
    executable: str

    def run(self, bootstrap: str, *args: str, timeout: float = TOOL_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        return _run([self.executable, "-b", bootstrap, *args], timeout)

    def metadata(self, bootstrap: str, topic: str | None = None) -> dict[str, Any]:
        """`kcat -L -J` (optionally `-t topic`): the cluster metadata as kcat's JSON."""
        args = ["-L", "-J", "-m", "10"]
        if topic is not None:
            args += ["-t", topic]
        completed = self.run(bootstrap, *args)
        if completed.returncode != 0:
            raise ToolFailed(f"kcat {' '.join(args)} exited {completed.returncode}\nstderr:\n{completed.stderr}")
        try:
            shown: dict[str, Any] = json.loads(completed.stdout)
        except json.JSONDecodeError:
            raise ToolFailed(f"kcat printed no JSON:\n{completed.stdout}\nstderr:\n{completed.stderr}") from None
        return shown


def find_kcat() -> Kcat:
    return Kcat(require_executable("kcat"))


# --- kafkajs -------------------------------------------------------------------------------------


class KafkajsError(Exception):
    """kafkajs threw; `error` is the script's description of the thrown error."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('name')} {error.get('type')}: {error.get('message')}")
        self.error = error

    @property
    def type(self) -> str | None:
        """Kafka's error name as kafkajs spells it (e.g. TOPIC_ALREADY_EXISTS), for protocol errors."""
        return self.error.get("type")

    @property
    def types(self) -> list[str | None]:
        """The error types of this error and of any per-topic errors it aggregates."""
        return [self.type, *(inner.get("type") for inner in self.error.get("errors", []))]


@dataclass(frozen=True)
class Kafkajs:
    node: str

    def run(self, script: str, bootstrap: str, *args: str, timeout: float = TOOL_TIMEOUT_S) -> Any:
        """Run `node compat_tests/js/<script>.mjs <bootstrap> args...`; return its `ok` result.

        Raises KafkajsError when kafkajs threw (the script reports it as {"error": ...}).
        """
        argv = [self.node, str(JS_DIR / f"{script}.mjs"), bootstrap, *args]
        completed = _run(argv, timeout)
        lines = completed.stdout.strip().splitlines()
        if completed.returncode != 0 or len(lines) != 1:
            raise ToolFailed(
                f"{' '.join(argv)} exited {completed.returncode}\n"
                f"stdout:\n{completed.stdout}\nstderr:\n{completed.stderr}"
            )
        document = json.loads(lines[0])
        if "error" in document:
            raise KafkajsError(document["error"])
        return document["ok"]

    def admin(self, bootstrap: str, *args: str) -> Any:
        return self.run("admin", bootstrap, *args)


def find_kafkajs() -> Kafkajs:
    node = require_executable("node")
    if not (JS_DIR / "node_modules" / "kafkajs" / "package.json").is_file():
        tool_missing(f"kafkajs is not installed; run `npm ci` in {JS_DIR}")
    return Kafkajs(node)
