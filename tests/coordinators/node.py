"""A broker core with its coordinators, as the server holds them, for tests that drive both directly."""

from __future__ import annotations

from typing import Any

from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.clock import Clock
from kemu.coordinators import Coordinators
from kemu.coordinators.group_service import GroupService
from kemu.coordinators.txn_service import TxnService


class CoreNode:
    """`Broker` attributes read through; `groups` and `txn` are the coordinators' (made as the server makes
    them: at once for a broker restarted on its data)."""

    def __init__(self, config: BrokerConfig, clock: Clock) -> None:
        self.broker = BrokerCore(config, clock)
        self.coordinators = Coordinators(self.broker)

    @property
    def groups(self) -> GroupService:
        return self.coordinators.groups

    @property
    def txn(self) -> TxnService:
        return self.coordinators.txn

    def __getattr__(self, name: str) -> Any:
        return getattr(self.broker, name)
