"""Every Python example of README.md's "Testing with kemu" section runs as printed: a block with tests as
a user's test file under pytest (the plugin found by its entry point, no conftest), any other as a script."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Testing with kemu"


def examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION + "\n")
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end != -1 else len(text)]
    return re.findall(r"^```python\n(.*?)^```$", section, flags=re.S | re.M)


def is_test_file(code: str) -> bool:
    return re.search(r"^(\s*)def test_|unittest\.TestCase", code, flags=re.M) is not None


def test_the_section_leads_with_the_fixture() -> None:
    found = examples()
    assert len(found) >= 3
    assert "def test_" in found[0] and "(kemu_broker)" in found[0]


@pytest.mark.parametrize("index", range(len(examples())))
def test_readme_example_runs(pytester: pytest.Pytester, index: int) -> None:
    code = examples()[index]
    if is_test_file(code):
        pytester.makepyfile(**{f"test_readme_{index}": code})
        result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
        outcomes = result.parseoutcomes()
        assert outcomes.get("passed", 0) >= 1 and not {"failed", "errors", "error"} & outcomes.keys(), \
            result.stdout.str()
    else:
        script = pytester.makepyfile(**{f"readme_{index}": code})
        result = pytester.runpython(script)
        assert result.ret == 0, result.stderr.str()
