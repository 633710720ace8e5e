"""The topic registry: every topic's name, id, configs and partitions.

Each topic holds its `Partition`s (kemu.broker.partition). The registry keeps the indexes Kafka's controller keeps:
by name, by id, and by name with '.' and '_' unified (those collide in metric names, so Kafka refuses such pairs).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from kemu.broker.partition import Partition
from kemu.broker.topic_names import has_collision_chars, is_internal, unify_collision_chars


@dataclass(slots=True)
class Topic:
    """A topic: its name, id, partitions and the config overrides set on it."""

    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, str]  # the overrides set on the topic; defaults are not stored

    @property
    def is_internal(self) -> bool:
        return is_internal(self.name)

    @property
    def replication_factor(self) -> int:
        return len(self.partitions[0].replicas) if self.partitions else 0


class TopicRegistry:
    def __init__(self) -> None:
        self._by_name: dict[str, Topic] = {}
        # By the id's 128-bit int: a UUID's __hash__ is Python code, an int's is not (a DeleteTopics or
        # Metadata of 10,000 ids hashes each several times).
        self._by_id: dict[int, Topic] = {}
        self._by_unified: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._by_name)

    def __iter__(self) -> Iterator[Topic]:
        return iter(list(self._by_name.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> Topic | None:
        return self._by_name.get(name)

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return self._by_id.get(topic_id.int)

    def colliding_with(self, name: str) -> str | None:
        """An existing topic whose name differs from `name` only in '.' versus '_'."""
        if not has_collision_chars(name):
            return None
        for other in sorted(self._by_unified.get(unify_collision_chars(name), ())):
            if other != name:
                return other
        return None

    def add(self, topic: Topic) -> None:
        if topic.name in self._by_name or topic.topic_id.int in self._by_id:
            raise ValueError(f"topic {topic.name} ({topic.topic_id}) already registered")
        self._by_name[topic.name] = topic
        self._by_id[topic.topic_id.int] = topic
        if has_collision_chars(topic.name):
            self._by_unified.setdefault(unify_collision_chars(topic.name), set()).add(topic.name)

    def remove(self, topic_id: uuid.UUID) -> Topic:
        topic = self._by_id.pop(topic_id.int)
        del self._by_name[topic.name]
        if has_collision_chars(topic.name):
            unified_name = unify_collision_chars(topic.name)
            unified = self._by_unified.get(unified_name)
            if unified is not None:
                unified.discard(topic.name)
                if not unified:
                    del self._by_unified[unified_name]
        return topic
