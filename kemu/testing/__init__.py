"""What no real broker gives a test: an in-process broker with a clock the test moves (`kemu.testing.Broker`),
and an inspector whose exactly-once checker tells a test what its clients were wrongly given (`inspect()`).

This room may import the server and everything below it; nothing imports it but the pytest plugin and the
command line.
"""

from kemu.testing.broker import Broker, BrokerError, Record
from kemu.testing.checker import AbortedRead, DuplicateAppend, OffsetGap, UncommittedRead, Violation
from kemu.testing.clock import TestClock
from kemu.testing.inspector import Inspection

__all__ = ["AbortedRead", "Broker", "BrokerError", "DuplicateAppend", "Inspection", "OffsetGap", "Record",
           "TestClock", "UncommittedRead", "Violation"]
