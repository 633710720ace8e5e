"""Transaction states and the metadata Kafka keeps per transactional id (TransactionMetadata)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any


class TxnState(IntEnum):
    """Numbered as Kafka writes them in TransactionLogValue.TransactionStatus."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """The names DescribeTransactions and ListTransactions use."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    @classmethod
    def from_kafka_name(cls, name: str) -> TxnState | None:
        for state in cls:
            if state.kafka_name == name:
                return state
        return None


MAX_EPOCH = 0x7FFF
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1

TopicPartition = tuple[str, int]


def epoch_exhausted(epoch: int) -> bool:
    # Kafka keeps one epoch in reserve so a fenced producer's bump can still be written.
    return epoch >= MAX_EPOCH - 1


@dataclass(slots=True)
class TxnMetadata:
    transactional_id: str
    producer_id: int
    last_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    timeout_ms: int = 60000
    state: TxnState = TxnState.EMPTY
    partitions: set[TopicPartition] = field(default_factory=set)
    start_ms: int = -1
    update_ms: int = -1

    def log_value(self) -> dict[str, Any]:
        """TransactionLogValue v1, field names in snake_case."""
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(self.partitions):
            by_topic.setdefault(topic, []).append(partition)
        return {
            "producer_id": self.producer_id,
            "previous_producer_id": self.last_producer_id,
            "next_producer_id": self.next_producer_id,
            "producer_epoch": self.producer_epoch,
            "transaction_timeout_ms": self.timeout_ms,
            "transaction_status": int(self.state),
            # Kafka writes no partition list (null) for Empty, and the list otherwise.
            "transaction_partitions": None if self.state == TxnState.EMPTY else [
                {"topic": t, "partition_ids": p} for t, p in by_topic.items()],
            "transaction_last_update_timestamp_ms": self.update_ms,
            "transaction_start_timestamp_ms": self.start_ms,
        }

    @classmethod
    def from_log_value(cls, transactional_id: str, value: dict[str, Any]) -> TxnMetadata:
        partitions = {(p["topic"], pid) for p in value.get("transaction_partitions") or [] for pid in p["partition_ids"]}
        return cls(
            transactional_id=transactional_id,
            producer_id=value["producer_id"],
            last_producer_id=value.get("previous_producer_id", NO_PRODUCER_ID),
            next_producer_id=value.get("next_producer_id", NO_PRODUCER_ID),
            producer_epoch=value["producer_epoch"],
            timeout_ms=value["transaction_timeout_ms"],
            state=TxnState(value["transaction_status"]),
            partitions=partitions,
            start_ms=value["transaction_start_timestamp_ms"],
            update_ms=value["transaction_last_update_timestamp_ms"],
        )
