"""Committed offsets, and transactional offsets waiting for their transaction's outcome.

This is the one owner of committed offsets in kemu (Kafka's OffsetMetadataManager state). It is a plain
store: the checks (generation, member epoch, metadata size) live in `offset_ops`; the store is changed only
by replaying OffsetCommit records, so the journal and the state can never disagree.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

NO_OFFSET = -1
NO_LEADER_EPOCH = -1
NO_TIMESTAMP = -1
NO_TOPIC_ID = uuid.UUID(int=0)


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = NO_TIMESTAMP  # only from OffsetCommit v2-4 with an explicit retention time
    # The position of the record that wrote this offset in the journal. When a transaction commits, its
    # offsets only win over ones committed after them outside the transaction if they were written later.
    record_seq: int = 0
    # The id of the topic committed to (an OffsetCommit's; a transaction's offsets have none, as in Kafka).
    topic_id: uuid.UUID = NO_TOPIC_ID

    def is_for(self, topic_id: uuid.UUID) -> bool:
        """Whether this offset may answer for the topic of id `topic_id`: unless both ids are known and differ
        (the topic was deleted and made again), as Kafka's OffsetMetadataManager.isMismatchedTopicId."""
        return NO_TOPIC_ID in (self.topic_id, topic_id) or self.topic_id == topic_id

    def to_value(self) -> dict[str, Any]:
        return {
            "offset": self.offset,
            "leader_epoch": self.leader_epoch,
            "metadata": self.metadata,
            "commit_timestamp": self.commit_timestamp,
            "expire_timestamp": self.expire_timestamp,
            "topic_id": self.topic_id,
        }

    @classmethod
    def from_value(cls, value: Mapping[str, Any], record_seq: int) -> OffsetAndMetadata:
        # Older value versions lack leader_epoch (v0-2), expire_timestamp (all but v1) or topic_id (before v4).
        return cls(
            offset=value["offset"],
            leader_epoch=value.get("leader_epoch", NO_LEADER_EPOCH),
            metadata=value.get("metadata") or "",
            commit_timestamp=value["commit_timestamp"],
            expire_timestamp=value.get("expire_timestamp", NO_TIMESTAMP),
            record_seq=record_seq,
            topic_id=value.get("topic_id", NO_TOPIC_ID),
        )


# group -> topic -> partition -> offset
GroupOffsets = dict[str, dict[int, OffsetAndMetadata]]


class OffsetStore:
    def __init__(self) -> None:
        self._committed: dict[str, GroupOffsets] = {}
        # producer id -> group -> topic -> partition -> offset, until the producer's marker arrives.
        self._pending: dict[int, dict[str, GroupOffsets]] = {}
        self._seq = 0

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    # ---- committed --------------------------------------------------------------------------------
    def get(self, group: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        return self._committed.get(group, {}).get(topic, {}).get(partition)

    def group_offsets(self, group: str) -> GroupOffsets:
        return self._committed.get(group, {})

    def groups(self) -> list[str]:
        return list(self._committed)

    def put(self, group: str, topic: str, partition: int, offset: OffsetAndMetadata) -> None:
        self._committed.setdefault(group, {}).setdefault(topic, {})[partition] = offset

    def remove(self, group: str, topic: str, partition: int) -> None:
        topics = self._committed.get(group)
        if topics is None:
            return
        partitions = topics.get(topic)
        if partitions is None:
            return
        partitions.pop(partition, None)
        if not partitions:
            del topics[topic]
        if not topics:
            del self._committed[group]

    def has_offsets(self, group: str) -> bool:
        return bool(self._committed.get(group))

    def iter_group(self, group: str) -> Iterator[tuple[str, int, OffsetAndMetadata]]:
        for topic, partitions in list(self._committed.get(group, {}).items()):
            for partition, offset in list(partitions.items()):
                yield topic, partition, offset

    # ---- transactional ----------------------------------------------------------------------------
    def stage(self, producer_id: int, group: str, topic: str, partition: int, offset: OffsetAndMetadata) -> None:
        self._pending.setdefault(producer_id, {}).setdefault(group, {}).setdefault(topic, {})[partition] = offset

    def unstage(self, producer_id: int, group: str, topic: str, partition: int) -> None:
        partitions = self._pending.get(producer_id, {}).get(group, {}).get(topic)
        if partitions is not None:
            partitions.pop(partition, None)

    def complete(self, producer_id: int, commit: bool, groups: Callable[[str], bool] | None = None) -> None:
        """Apply or drop the producer's staged offsets: all of them, or only those of the `groups` selected
        (a marker lands on one __consumer_offsets partition and decides only the groups placed there)."""
        pending = self._pending.get(producer_id, {})
        staged = {group: topics for group, topics in pending.items() if groups is None or groups(group)}
        for group in staged:
            del pending[group]
        if not pending:
            self._pending.pop(producer_id, None)
        if not commit:
            return
        for group, topics in staged.items():
            for topic, partitions in topics.items():
                for partition, offset in partitions.items():
                    existing = self.get(group, topic, partition)
                    if existing is None or offset.record_seq > existing.record_seq:
                        self.put(group, topic, partition, offset)

    def has_pending(self, group: str, topic: str, partition: int) -> bool:
        return any(
            partition in groups.get(group, {}).get(topic, {}) for groups in self._pending.values()
        )

    def has_pending_in_group(self, group: str) -> bool:
        return any(any(groups.get(group, {}).values()) for groups in self._pending.values())

    def pending_producers(self) -> list[int]:
        return list(self._pending)

    def pending_offsets(self, producer_id: int) -> dict[str, GroupOffsets]:
        return self._pending.get(producer_id, {})

    def drop_pending_for_group(self, group: str) -> None:
        for groups in self._pending.values():
            groups.pop(group, None)
