"""What the group coordinator needs to know about topics, and how the broker tells it.

KIP-848 groups are assigned by the server, so the coordinator needs each topic's name, id and partition
count. The broker passes a callable returning the current topics; the core calls it whenever it needs a
fresh view (on every consumer-group heartbeat), so topic creation and partition growth are picked up
without any notification.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    num_partitions: int
    internal: bool = False  # __consumer_offsets, __transaction_state: never matched by a subscription regex


TopicSource = Callable[[], Iterable[TopicInfo]]


def no_topics() -> Iterable[TopicInfo]:
    return ()


class TopicsView:
    """One snapshot of the topics, indexed by name and by id."""

    __slots__ = ("by_name", "by_id")

    def __init__(self, topics: Iterable[TopicInfo]) -> None:
        self.by_name: dict[str, TopicInfo] = {}
        self.by_id: dict[uuid.UUID, TopicInfo] = {}
        for topic in topics:
            self.by_name[topic.name] = topic
            self.by_id[topic.topic_id] = topic
