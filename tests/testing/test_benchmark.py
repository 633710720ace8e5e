"""benchmarks/testing.py runs (a couple of runs each, so it stays quick; its figures are never a gate) and
prints every figure with its goal, also through `benchmarks.run --mode testing`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import run, testing


def test_the_testing_benchmark_prints_and_writes_each_figure(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    assert testing.main(["--runs", "2", "--pause-ms", "1", "--cold-runs", "1", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Broker() to an answered ApiVersions: median" in printed and "goal ≤ 10 ms" in printed
    assert "reset() after a test (1 ms later): median" in printed and "goal ≤ 1 ms" in printed
    names = [figure["name"] for figure in json.loads(out.read_text())]
    assert names == ["Broker() to an answered ApiVersions", "reset() after a test (1 ms later)",
                     "reset() back to back", "handle call round trip (records())", "cold: import kemu.testing",
                     "cold: import and first Broker() ready"]


def test_the_runner_has_a_testing_mode() -> None:
    assert run.parse_args(["--mode", "testing"]).mode == "testing"
