"""What `kemu serve` loads to serve: the modules a process has imported once it answered a Metadata and was
stopped. A process with nothing to read the in-process handle serves its core without it; one with a
transcript file (or a control endpoint) runs through it."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.server.test_cli import kemu_serve, metadata

# `python -m kemu` as runpy runs it, printing every module the process imported once it exits.
DRIVER = """
import runpy, sys
sys.argv = ["kemu", *sys.argv[1:]]
try:
    runpy.run_module("kemu", run_name="__main__", alter_sys=True)
finally:
    print("modules: " + " ".join(sorted(sys.modules)), file=sys.stderr)
"""

HANDLE = {"kemu.testing.broker", "kemu.testing.served", "kemu.testing.faults", "kemu.testing.transcript"}


def served_modules(*args: str) -> set[str]:
    """The modules of a `kemu serve` that answered one Metadata and was stopped by SIGTERM."""
    with kemu_serve(*args, launcher=("-c", DRIVER)) as (process, host, port):
        assert metadata(host, port)["brokers"] == [{"node_id": 1, "host": host, "port": port, "rack": None}]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        [listed] = [line for line in process.stderr.read().splitlines() if line.startswith("modules: ")]
    return set(listed.removeprefix("modules: ").split())


def test_serve_without_observers_never_loads_the_handle() -> None:
    modules = served_modules()
    assert {"kemu.server.listener", "kemu.handlers.k03_metadata"} <= modules  # the list is the process's
    assert not modules & HANDLE


def test_serve_with_a_transcript_file_runs_through_the_handle(tmp_path: Path) -> None:
    modules = served_modules("--transcript", str(tmp_path / "transcript.jsonl"))
    assert HANDLE <= modules
    assert (tmp_path / "transcript.jsonl").read_text().count("\n") == 1  # the Metadata exchange
