"""Transaction states and the metadata Kafka keeps per transactional id (TransactionMetadata)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
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


class IllegalStateError(RuntimeError):
    """A transition the table below forbids: a coordinator bug, never a client's mistake.

    Kafka throws IllegalStateException here; like any unexpected exception it reaches the client as
    UNKNOWN_SERVER_ERROR, and nothing is journaled or applied.
    """


_S = TxnState
# Kafka 4.3's TransactionState.VALID_PREVIOUS_STATES. Transaction version 2 lets Empty, CompleteCommit and
# CompleteAbort go to PrepareAbort, for an EndTxn(abort) a client sends when it is unsure whether its
# transaction began; only the TV2 path of the coordinator makes those transitions.
VALID_PREVIOUS: Mapping[TxnState, frozenset[TxnState]] = MappingProxyType({
    _S.EMPTY: frozenset({_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.ONGOING: frozenset({_S.ONGOING, _S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.PREPARE_COMMIT: frozenset({_S.ONGOING}),
    _S.PREPARE_ABORT: frozenset({_S.ONGOING, _S.PREPARE_EPOCH_FENCE, _S.EMPTY, _S.COMPLETE_COMMIT,
                                 _S.COMPLETE_ABORT}),
    _S.COMPLETE_COMMIT: frozenset({_S.PREPARE_COMMIT}),
    _S.COMPLETE_ABORT: frozenset({_S.PREPARE_ABORT}),
    _S.DEAD: frozenset({_S.EMPTY, _S.COMPLETE_ABORT, _S.COMPLETE_COMMIT}),
    _S.PREPARE_EPOCH_FENCE: frozenset({_S.ONGOING}),
})

MAX_EPOCH = 0x7FFF
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
# Kafka's TransactionVersion feature levels: 0 the original coordinator, 1 flexible transaction-log records
# (TransactionLogValue v1), 2 an epoch bump at every EndTxn and partitions added by Produce (KIP-890 part 2).
TV_0, TV_1, TV_2 = 0, 1, 2

TopicPartition = tuple[str, int]


def supports_epoch_bump(transaction_version: int) -> bool:
    """TransactionVersion.supportsEpochBump: transactions version 2 and up."""
    return transaction_version >= TV_2


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
    # The transaction version the client used at the last transition (Kafka's clientTransactionVersion):
    # TV_2 when its partitions came by Produce v12+ / TxnOffsetCommit v5+ or it ended with EndTxn v5+, else
    # TV_0. It decides the markers' transaction version and whether completing rotates to the next id.
    client_version: int = TV_0

    def check_transition(self, state: TxnState) -> None:
        """The one gate for every state change (Kafka's prepareTransitionTo): raises IllegalStateError."""
        if self.state not in VALID_PREVIOUS[state]:
            raise IllegalStateError(
                f"transactional id {self.transactional_id!r}: illegal transition "
                f"{self.state.kafka_name} -> {state.kafka_name}")

    def prepare_transition(self, state: TxnState) -> TxnMetadata:
        """A checked copy in `state` for the caller to finish, journal and install; `self` is untouched.

        A copy, so that a failed journal write leaves the in-memory state as it was (Kafka's transit
        metadata is applied only once the log append succeeds). As Kafka's prepareTransitionTo, the copy's
        previous producer id is this one's producer id: the id before the transition, which differs from
        the new one only when the transition rotates it.
        """
        self.check_transition(state)
        nxt = self.copy()
        nxt.state = state
        nxt.last_producer_id = self.producer_id
        return nxt

    def copy(self) -> TxnMetadata:
        # Spelled out: dataclasses.replace re-inspects the fields on every call, and every state change copies.
        return TxnMetadata(self.transactional_id, self.producer_id, self.last_producer_id, self.next_producer_id,
                           self.producer_epoch, self.last_producer_epoch, self.timeout_ms, self.state,
                           set(self.partitions), self.start_ms, self.update_ms, self.client_version)

    def log_value(self) -> dict[str, Any]:
        """TransactionLogValue v1, field names in snake_case (v0 drops the tagged fields)."""
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
            "client_transaction_version": self.client_version,
        }

    @classmethod
    def from_log_value(cls, transactional_id: str, value: dict[str, Any]) -> TxnMetadata:
        partitions = {(p["topic"], pid)
                      for p in value.get("transaction_partitions") or [] for pid in p["partition_ids"]}
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
            client_version=value.get("client_transaction_version", TV_0),
        )
