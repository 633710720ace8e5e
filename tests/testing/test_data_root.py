"""A handle's own data directory goes under a memory-backed folder where the machine has room in one, or where
KEMU_DATA_ROOT says; one the test names is used as given."""

from __future__ import annotations

from pathlib import Path

import pytest

from kemu.testing import Broker
from kemu.testing import data_root as module


def test_kemu_data_root_chooses_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(module.DATA_ROOT_VARIABLE, str(tmp_path))
    with Broker() as broker:
        assert broker.data_dir.parent == tmp_path
        broker.create_topic("orders")
        assert (broker.data_dir / "orders-0").is_dir()
    assert not any(tmp_path.iterdir())  # the handle's own directory is gone with it


def test_a_named_data_dir_is_used_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(module.DATA_ROOT_VARIABLE, str(tmp_path / "elsewhere"))
    with Broker(data_dir=tmp_path / "mine") as broker:
        assert broker.data_dir == tmp_path / "mine"


def test_shared_memory_only_with_room(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(module.DATA_ROOT_VARIABLE, raising=False)

    class Stats:
        f_frsize = 4096

        def __init__(self, free: int) -> None:
            self.f_bavail = free // 4096

    for free, expected in ((64 << 20, None), (module.MIN_FREE_BYTES, module.MEMORY_BACKED)):
        module._memory_backed.cache_clear()
        monkeypatch.setattr(module.os, "statvfs", lambda _path, free=free: Stats(free))
        monkeypatch.setattr(module.os, "access", lambda _path, _mode: True)
        assert module.data_root() == expected
    module._memory_backed.cache_clear()
    monkeypatch.setattr(module.os, "statvfs", lambda _path: (_ for _ in ()).throw(OSError("no /dev/shm")))
    assert module.data_root() is None
    module._memory_backed.cache_clear()
