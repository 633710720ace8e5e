"""The data directory's `.lock`: a second broker on the same directory fails with Kafka's message, in this
process or another, and the directory is free again once the first closes or is abandoned (a kill)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.broker.dir_lock import DataDirLocked
from kemu.clock import SystemClock


def broker(data_dir: Path) -> BrokerCore:
    return BrokerCore(BrokerConfig(data_dir=str(data_dir)), SystemClock())


def test_a_second_broker_on_the_directory_fails_until_the_first_closes(tmp_path: Path) -> None:
    first = broker(tmp_path)
    with pytest.raises(DataDirLocked, match=r"^Failed to acquire lock on file \.lock in .* A Kafka instance in "
                                            r"another process or thread is using this directory\.$"):
        broker(tmp_path)
    first.close()
    broker(tmp_path).close()


def test_an_abandoned_broker_frees_the_directory(tmp_path: Path) -> None:
    first = broker(tmp_path)
    first.abandon()
    broker(tmp_path).close()


def test_another_process_is_refused(tmp_path: Path) -> None:
    first = broker(tmp_path)
    try:
        script = ("import sys; from kemu.broker.dir_lock import DirLock, DataDirLocked; from pathlib import Path\n"
                  "try: DirLock(Path(sys.argv[1])).acquire()\nexcept DataDirLocked as exc: print(exc); sys.exit(3)")
        completed = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                                   timeout=60, check=False)
        assert completed.returncode == 3, completed.stderr
        assert "A Kafka instance in another process" in completed.stdout
    finally:
        first.close()
    assert (tmp_path / ".lock").is_file()
