from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.server.broker_thread import BrokerThread
from tests.server.kafka_socket import KafkaSocket


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    with BrokerThread() as running:
        yield running


@pytest.fixture
def conn(broker: BrokerThread) -> Iterator[KafkaSocket]:
    # A module that needs another broker (e.g. group_wire.group_broker) overrides `broker` only: this
    # connects to whichever broker the module's tests get.
    with KafkaSocket(broker.address) as connection:
        yield connection
