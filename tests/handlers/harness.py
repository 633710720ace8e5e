"""What the handler tests run against, for their annotations and time-moving steps: a broker in-process
(kemu/testing/harness.py, the default) or serving on a real socket (tests/server/broker_thread.py, for a
test marked `real_socket`), and their connections. conftest's `make_broker` picks one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kemu.broker.config import BrokerConfig
from kemu.clock import VirtualClock
from kemu.testing.harness import InProcessBroker, InProcessConnection
from tests.server.broker_thread import BrokerThread
from tests.server.kafka_socket import KafkaSocket

Broker = InProcessBroker | BrokerThread
Connection = InProcessConnection | KafkaSocket
MakeBroker = Callable[..., Broker]

# The internal topics' partition counts in the handler tests' brokers, 50 each by Kafka's default: creating
# 100 partitions' files was most of what a test touching a group or a transaction cost. Coordinators hash
# ids modulo these; the handler tests read them from the broker's config, and tests/broker and
# tests/coordinators check the defaults of 50.
INTERNAL_TOPIC_PARTITIONS = 5


def broker_config(**settings: Any) -> BrokerConfig:
    """The handler tests' broker config: Kafka's defaults but for the internal topics' partition counts; port 0
    (a real socket binds an ephemeral one)."""
    defaults: dict[str, Any] = {"port": 0, "offsets_topic_num_partitions": INTERNAL_TOPIC_PARTITIONS,
                                "transaction_state_log_num_partitions": INTERNAL_TOPIC_PARTITIONS}
    return BrokerConfig(**{**defaults, **settings})


def advance(broker: Broker, ms: int) -> None:
    """Move the broker's virtual clock and run the timers that came due (the housekeeper would, a moment
    later), so the test's next request sees their effect."""
    clock = broker.clock
    assert isinstance(clock, VirtualClock), "the broker needs clock=VirtualClock() to move time"
    clock.advance(ms)
    broker.call(broker.broker.housekeeping.run_due)
