"""State shared by the coordinator's parts: the groups, the offsets, the timers, the clock and the journal."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from kemu.clock import Clock
from kemu.groups.config import GroupConfig
from kemu.groups.offsets import OffsetStore
from kemu.groups.records import CoordinatorRecord, Journal
from kemu.groups.replay import Group, Replayer
from kemu.groups.timers import TimerCallback, Timers
from kemu.groups.topics import TopicSource, TopicsView


@dataclass(frozen=True, slots=True)
class GroupRequestContext:
    """What the core needs to know about the request beyond its body."""

    api_version: int
    client_id: str = ""
    # Kafka reports the client's address as Java's InetAddress.toString(), e.g. "/127.0.0.1".
    client_host: str = ""


class CoordinatorState:
    def __init__(
        self,
        clock: Clock,
        config: GroupConfig,
        journal: Journal,
        topics: TopicSource,
        new_uuid: Callable[[], uuid.UUID],
    ) -> None:
        self.clock = clock
        self.config = config
        self.journal = journal
        self.topic_source = topics
        self.new_uuid = new_uuid
        self.timers = Timers()
        self.groups: dict[str, Group] = {}
        self.offsets = OffsetStore()
        # Records are applied as they are journaled, and as the coordinator reads them back at start-up.
        self.replay = Replayer(self.groups, self.offsets, clock).replay

    def now_ms(self) -> int:
        """Wall-clock time: what commit timestamps and state timestamps record."""
        return self.clock.now_ms()

    def schedule(self, key: Hashable, delay_ms: int, callback: TimerCallback) -> None:
        # Timeouts measure durations, so they run on the monotonic clock.
        self.timers.schedule(key, self.clock.monotonic_ms() + max(delay_ms, 0), callback)

    def cancel(self, key: Hashable) -> None:
        self.timers.cancel(key)

    def append(self, records: Iterable[CoordinatorRecord], *, replay: bool = True) -> None:
        """Journal records, and apply them to the state unless the state already reflects them."""
        for record in records:
            self.journal(record)
            if replay:
                self.replay(record)

    def topics(self) -> TopicsView:
        return TopicsView(self.topic_source())
