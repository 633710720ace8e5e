"""What no real broker gives a test: an in-process broker with a clock the test moves (`kemu.testing.Broker`),
and an inspector whose exactly-once checker tells a test what its clients were wrongly given (`inspect()`).

This room may import the server and everything below it; nothing imports it but the pytest plugin and the
command line. Its names load on first use (PEP 562), so `kemu serve`, which runs through the handle, does not
pay for the inspector at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kemu.coordinators.crash_points import CrashPoint
    from kemu.testing.broker import Broker, BrokerError, Record, UnknownConfigWarning
    from kemu.testing.checker import (
        AbortedRead,
        DuplicateAppend,
        OffsetGap,
        ShareAcceptedTwice,
        ShareRedelivered,
        UncommittedRead,
        Violation,
    )
    from kemu.testing.clock import TestClock
    from kemu.testing.faults import BrokerCrashed, Fault
    from kemu.testing.inspector import Inspection

_WHERE = {
    "Broker": "kemu.testing.broker", "BrokerError": "kemu.testing.broker", "Record": "kemu.testing.broker",
    "UnknownConfigWarning": "kemu.testing.broker",
    "AbortedRead": "kemu.testing.checker", "DuplicateAppend": "kemu.testing.checker",
    "OffsetGap": "kemu.testing.checker", "UncommittedRead": "kemu.testing.checker",
    "ShareAcceptedTwice": "kemu.testing.checker", "ShareRedelivered": "kemu.testing.checker",
    "Violation": "kemu.testing.checker", "TestClock": "kemu.testing.clock", "Inspection": "kemu.testing.inspector",
    "Fault": "kemu.testing.faults", "BrokerCrashed": "kemu.testing.faults",
    "CrashPoint": "kemu.coordinators.crash_points",
}

__all__ = ["AbortedRead", "Broker", "BrokerCrashed", "BrokerError", "CrashPoint", "DuplicateAppend", "Fault",
           "Inspection", "OffsetGap", "Record", "ShareAcceptedTwice", "ShareRedelivered", "TestClock",
           "UncommittedRead", "UnknownConfigWarning", "Violation"]


def __dir__() -> list[str]:
    # The lazy names too, so that completion and dir() find Broker and Fault before their first use.
    return sorted({*globals(), *__all__})


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'kemu.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
