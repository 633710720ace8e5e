"""README.md's first command, `bash scripts/serve`, as a new user runs it: a virtualenv made from nothing
(here under a temporary folder, through $KEMU_VENV), kemu installed into it, and a broker serving until
SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

from kemu.probe import api_versions_round_trip

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BANNER = re.compile(r"kemu serving on (\S+):(\d+)")


def test_the_readme_starts_with_the_serve_command() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks[0].strip() == "bash scripts/serve"
    assert blocks[1].strip() == "bash scripts/test"


def test_scripts_serve_installs_into_a_fresh_venv_and_serves(tmp_path: Path) -> None:
    env = {**os.environ, "KEMU_VENV": str(tmp_path / "venv"), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(["bash", "scripts/serve", "--port", "0"], cwd=ROOT, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = BANNER.fullmatch(line.strip())
        assert match, f"banner {line!r}; stderr: {process.stderr.read() if process.stderr else ''}"
        assert 18 in api_versions_round_trip(match[1], int(match[2]))
        installed = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c",
                                    "import kemu, sys; print(kemu.__file__, sys.prefix)"],
                                   capture_output=True, text=True, timeout=60, check=True)
        assert str(tmp_path / "venv") in installed.stdout
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
