"""Each user-facing module that needs a package kemu itself does not depend on is brought by the extra its error
and the README name: `pip install 'kemu[<extra>]'` is all a user has to know."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS: dict[str, list[str]] = PYPROJECT["optional-dependencies"]
BASE = PYPROJECT["dependencies"]
MODULES = {"kemu/testing/certs.py": "tls", "kemu/testcontainers.py": "testcontainers", "kemu/spark": "spark"}


def requirement_name(spec: str) -> str:
    return re.split(r"[\[<>=!~; ]", spec, maxsplit=1)[0].lower().replace("_", "-")


def third_party_imports(path: Path) -> set[str]:
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    found: set[str] = set()
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            found.update(name.split(".")[0] for name in names)
    # pytest: the plugins among these modules are loaded by pytest itself.
    return {name for name in found if name not in sys.stdlib_module_names and name not in ("kemu", "pytest")}


def distributions(module: str) -> set[str]:
    return {name.lower().replace("_", "-") for name in importlib.metadata.packages_distributions().get(module, [])}


@pytest.mark.parametrize(("module", "extra"), sorted(MODULES.items()))
def test_the_extra_brings_what_the_module_imports(module: str, extra: str) -> None:
    brought = {requirement_name(spec) for spec in EXTRAS[extra] + BASE}
    missing = {name for name in third_party_imports(ROOT / module) if not distributions(name) & brought}
    assert not missing, f"{module} imports {sorted(missing)}, which kemu[{extra}] does not bring"


def test_every_extra_the_readme_names_exists() -> None:
    named = set(re.findall(r"kemu\[(\w+)\]", (ROOT / "README.md").read_text(encoding="utf-8")))
    assert {"tls", "spark", "testcontainers"} <= named
    assert named <= set(EXTRAS), f"README names extras pyproject lacks: {sorted(named - set(EXTRAS))}"


def test_the_certificates_module_says_which_extra_it_needs() -> None:
    assert "pip install 'kemu[tls]'" in (ROOT / "kemu/testing/certs.py").read_text(encoding="utf-8")
