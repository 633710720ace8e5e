"""README.md's "Control endpoint" examples run as printed (on ports of the test's choosing instead of 9092 and
9080): the `kemu serve` line starts a broker that prints both lines, the curl and `kemu inspect` lines run
against it without a refusal, and the node lines move its clock. The KemuContainer example needs the image:
compat_tests/docker/test_kemu_container_control.py runs it."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from compat_tests.external_clients import require_executable
from compat_tests.polling import wait_for
from kemu.testing.ports import free_port
from tests.testing.test_control_openapi import send

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Control endpoint"
KAFKA_PORT, CONTROL_PORT = "9092", "9080"


def examples(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION + "\n")
    end = text.find("\n## ", start + len(SECTION))
    return re.findall(rf"^```{language}\n(.*?)^```$", text[start:end], flags=re.S | re.M)


def _on_ports(code: str, kafka: int, control: int) -> str:
    return code.replace(KAFKA_PORT, str(kafka)).replace(CONTROL_PORT, str(control))


@pytest.fixture
def readme_server() -> Iterator[int]:
    """The section's first block, `kemu serve ...`, as a process; yields the control port."""
    [serve, _] = examples("sh")
    kafka, control = free_port(), free_port()
    argv = shlex.split(_on_ports(serve, kafka, control))
    assert argv[:2] == ["kemu", "serve"]
    process = subprocess.Popen([sys.executable, "-m", *argv], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline().strip(), process.stdout.readline().strip()]
        assert lines == [f"kemu serving on 127.0.0.1:{kafka}", f"kemu control on 127.0.0.1:{control}"]
        yield control
    finally:
        process.terminate()
        assert process.wait(30) == 0


def test_the_section_has_its_examples() -> None:
    assert len(examples("sh")) == 2 and len(examples("js")) == 1 and len(examples("python")) == 1


def test_the_curl_and_kemu_inspect_lines(readme_server: int) -> None:
    require_executable("curl")
    [_, lines] = examples("sh")
    # `kemu` as this test's Python runs it; each line's answer is checked for a refusal.
    script = f'kemu() {{ "{sys.executable}" -m kemu "$@"; }}\nset -e\n' + _on_ports(lines, 0, readme_server)
    completed = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert '{"error": {' not in completed.stdout, completed.stdout
    assert '"hits": 0' in completed.stdout  # the faults line
    assert "orders" in completed.stdout.split('"crashed": false')[-1]  # kemu inspect, after the restart
    url = f"http://127.0.0.1:{readme_server}"
    assert [t["partitions"] for t in send(url, "GET", "/topics").json()["topics"] if t["name"] == "orders"] == [3]


def test_the_node_lines(readme_server: int, tmp_path: Path) -> None:
    node = require_executable("node")
    [code] = examples("js")
    url = f"http://127.0.0.1:{readme_server}"
    before = send(url, "GET", "/clock").json()["now_ms"]
    script = tmp_path / "readme.mjs"
    script.write_text(_on_ports(code, 0, readme_server))
    completed = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr
    wait_for(lambda: send(url, "GET", "/clock").json()["now_ms"] >= before + 61_000, what="the clock advanced")
