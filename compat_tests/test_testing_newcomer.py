"""A newcomer's path, end to end: a fresh venv, `pip install <checkout>` and confluent-kafka, a three-line test
file asking for `kemu_broker` with no conftest of its own, and pytest passes it — the plugin found by its
`pytest11` entry point alone.

It builds kemu and installs its dependencies from the package index, so it takes a minute or so; skip it
locally with `-k "not fresh_venv"` (CI runs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

THREE_LINES = """\
from confluent_kafka.admin import AdminClient
def test_a_broker_of_my_own(kemu_broker):
    assert AdminClient({"bootstrap.servers": kemu_broker.bootstrap_servers}).list_topics(timeout=10).brokers
"""


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.mark.timeout(900)
def test_fresh_venv_pip_install_and_a_three_line_kemu_broker_test_passes(tmp_path: Path) -> None:
    # A copy of the checkout as a clone has it: pip's in-tree build would leave build/ behind, and a stale
    # build/ can carry modules the tree no longer has.
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO, checkout, ignore=shutil.ignore_patterns(
        ".git", "node_modules", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis",
        ".venv", ".mypy_cache", ".ruff_cache"))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "PYTEST", "VIRTUAL_ENV"))}
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path, env, 120)
    python = str(venv / "bin" / "python")
    run([python, "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off",
         str(checkout), "confluent-kafka", "pytest"], tmp_path, env, 600)

    project = tmp_path / "project"
    project.mkdir()
    (project / "test_orders.py").write_text(THREE_LINES)
    assert len(THREE_LINES.splitlines()) == 3
    assert not list(project.glob("conftest.py"))
    done = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], project, env, 180)
    assert "1 passed" in done.stdout, done.stdout
