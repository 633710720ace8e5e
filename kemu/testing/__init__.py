"""What no real broker gives a test: an in-process broker with a clock the test moves (`kemu.testing.Broker`).

This room may import the server and everything below it; nothing imports it but the pytest plugin and the
command line.
"""

from kemu.testing.broker import Broker, BrokerError, Record
from kemu.testing.clock import TestClock

__all__ = ["Broker", "BrokerError", "Record", "TestClock"]
