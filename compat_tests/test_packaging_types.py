"""kemu as a user installs it: a wheel built from the checkout, installed (not editable) into a fresh virtualenv,
and a user's test file that uses the `kemu_broker` fixture type-checked there with `mypy --strict`. The
handle's real types reach the user's code (py.typed), and `dir(kemu.testing)` lists its lazy names."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

USER_TEST = textwrap.dedent('''
    from kemu.testing import Broker


    def test_orders(kemu_broker: Broker) -> None:
        kemu_broker.create_topic("orders", partitions=3)
        reveal_type(kemu_broker.create_topic)
        kemu_broker.create_topic(3)  # a wrong argument type mypy must see
''')


def run(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv seeing this interpreter's packages (mypy, pytest, trio...) with kemu itself installed
    from a wheel into the venv, so the venv's kemu is the installed package, not the editable checkout."""
    directory = tmp_path_factory.mktemp("user-venv")
    made = run([sys.executable, "-m", "venv", "--system-site-packages", str(directory / "venv")], directory)
    assert made.returncode == 0, made.stderr
    python = directory / "venv" / "bin" / "python"
    # Built from a copy of what the package is made of, so the build's by-products stay out of the checkout.
    source = directory / "source"
    shutil.copytree(ROOT / "kemu", source / "kemu", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    installed = run([str(python), "-m", "pip", "install", "--no-deps", "--quiet", "--disable-pip-version-check",
                     str(source)], directory, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    where = run([str(python), "-c", "import kemu; print(kemu.__file__)"], directory)
    assert str(directory) in where.stdout, f"the venv imports kemu from {where.stdout}"
    return python


def test_a_users_test_type_checks_against_the_handles_real_types(venv_python: Path, tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(USER_TEST)
    checked = run([str(venv_python), "-m", "mypy", "--strict", "--no-incremental", "test_user.py"], tmp_path)
    output = checked.stdout
    assert "missing library stubs or py.typed marker" not in output, output
    revealed = r'Revealed type is "def \(name: (builtins\.)?str, partitions: (builtins\.)?int( \| None)? ='
    assert re.search(revealed, output), output
    assert 'Argument 1 to "create_topic" of "Broker" has incompatible type "int"; expected "str"' in output, output


def test_dir_lists_the_lazy_names(venv_python: Path, tmp_path: Path) -> None:
    listed = run([str(venv_python), "-c", "import kemu.testing as t; print(' '.join(dir(t)))"], tmp_path)
    names = listed.stdout.split()
    assert {"Broker", "Fault", "TestClock", "Inspection"} <= set(names), listed.stdout + listed.stderr
