"""CI's bounded atheris run over the framing and the decoders (KEMU_ATHERIS_RUNS inputs, default 100,000),
seeded with kemu's own encoding of every served request; skipped where atheris is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kemu.handlers import all_handlers
from kemu.wire import codec

RUNS = int(os.environ.get("KEMU_ATHERIS_RUNS", "100000"))


def test_the_decoders_survive_coverage_guided_inputs(tmp_path: Path) -> None:
    pytest.importorskip("atheris")
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for handler in all_handlers().values():
        for version in range(handler.min_version, handler.max_version + 1):
            payload = codec.encode_request(handler.key, version, 1, {})
            (seeds / f"{handler.key}-{version}").write_bytes(len(payload).to_bytes(4, "big") + payload)
    result = subprocess.run(
        [sys.executable, "-m", "compat_tests.fuzz.atheris_decoders", f"-runs={RUNS}", "-rss_limit_mb=4096",
         f"-artifact_prefix={tmp_path}/", str(seeds)],
        capture_output=True, text=True, timeout=900, cwd=Path(__file__).resolve().parents[2])
    tail = "\n".join(result.stderr.splitlines()[-15:])
    print(tail)
    assert result.returncode == 0, tail
    assert "Done" in result.stderr and not list(tmp_path.glob("crash-*")), tail
