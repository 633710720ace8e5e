from __future__ import annotations

import pytest

from kemu.clock import VirtualClock
from tests.txn.support import Journal


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(1_000_000)


@pytest.fixture
def journal() -> Journal:
    return Journal()
