"""One partition, the object handlers and coordinators talk to (Kafka's `Partition` over its `UnifiedLog`).

It holds the partition's place in the cluster (replicas, ISR, leader and its epoch) and, once opened, its
data: the segments (`kemu.log.PartitionLog`) and what transactions keep beside them (`kemu.txn`'s producer
state and aborted-transaction index). The last stable offset is computed here from both, and a
read_committed read is bounded by it here: the log itself knows nothing of transactions.

The leader epoch is kept once: while the partition is open it is the log's (which stamps it into every
appended batch and its epoch cache), before that the value loaded or assigned.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kemu.log.errors import LogError
from kemu.log.kinds import AppendOrigin, FetchIsolation
from kemu.wire.errors import ErrorCode
from kemu.wire.records import BatchHeader

if TYPE_CHECKING:
    # The partition log, its segments and the validator load when the first partition opens (kemu.log.LogDir).
    from kemu.log.partition_log import AppendResult, FetchData, PartitionLog
    from kemu.log.segment import TimestampAndOffset

    # Loaded when the first partition opens (attach): producer state, the aborted-transaction index and
    # what compaction asks of them are ~5 ms of imports a broker with no partition yet need not pay.
    from kemu.txn.partition import AbortedTxn, TransactionalPartition
    from kemu.txn.producer_state import ProducerStateManager

NO_LEADER = -1  # Kafka's LeaderAndIsr.NO_LEADER: every replica that could lead is offline

log = logging.getLogger("kemu.broker")


class StorageError(LogError):
    """The partition's files cannot be written (Kafka's KafkaStorageException): KAFKA_STORAGE_ERROR."""

    code = ErrorCode.KAFKA_STORAGE_ERROR


class Partition:
    def __init__(self, *, topic: str, index: int, replicas: list[int], isr: list[int] | None = None,
                 leader_id: int | None = None, leader_epoch: int = 0,
                 offline_replicas: list[int] | None = None) -> None:
        self.topic = topic
        self.index = index
        self.replicas = replicas
        self.isr = list(replicas) if isr is None else isr
        self.leader_id = replicas[0] if leader_id is None else leader_id
        self.offline_replicas = offline_replicas or []
        self._leader_epoch = leader_epoch
        self._txn: TransactionalPartition | None = None
        # Set when a write to the partition's files failed (a full disk, an I/O error): like a Kafka log dir
        # gone offline, the partition answers KAFKA_STORAGE_ERROR until the broker restarts, whose recovery
        # truncates whatever the failed write left torn.
        self.storage_failure: str | None = None

    def __repr__(self) -> str:
        return (f"Partition({self.topic}-{self.index}, leader={self.leader_id}, epoch={self.leader_epoch}, "
                f"replicas={self.replicas}, isr={self.isr})")

    # ---- persisted fields: saved and loaded here only ------------------------------------------------------
    def saved(self) -> dict[str, Any]:
        return {"index": self.index, "replicas": self.replicas, "leader": self.leader_id,
                "leader_epoch": self.leader_epoch}

    @classmethod
    def from_saved(cls, topic: str, saved: dict[str, Any], node_ids: list[int]) -> Partition:
        """The partition as saved, all its replicas live again (a restarted process restarts every node);
        replicas on nodes this process no longer has (its node ids or broker count changed) fall to the
        first node, which then leads."""
        replicas = [r for r in saved["replicas"] if r in node_ids]
        if not replicas:
            replicas = [node_ids[0]]
        leader = saved.get("leader", replicas[0])
        return cls(topic=topic, index=saved["index"], replicas=replicas,
                   leader_id=leader if leader in replicas else replicas[0],
                   leader_epoch=saved.get("leader_epoch", 0))

    # ---- opening and closing -----------------------------------------------------------------------------
    def attach(self, log: PartitionLog) -> None:
        """Take the opened log: its producer state and aborted index are recovered from it, and, as
        Partition.makeLeader does, the leader's epoch starts at the log end even before any append (so
        OffsetForLeaderEpoch and ListOffsets know it on an empty partition too)."""
        log.leader_epoch = self._leader_epoch
        log.epoch_cache.assign(self._leader_epoch, log.log_end_offset)
        from kemu.txn.partition import TransactionalPartition

        self._txn = TransactionalPartition(log)

    def detach(self) -> None:
        if self._txn is not None:
            self._leader_epoch = self._txn.log.leader_epoch
        self._txn = None

    @property
    def is_open(self) -> bool:
        return self._txn is not None

    @property
    def log(self) -> PartitionLog:
        return self._opened().log

    @property
    def producers(self) -> ProducerStateManager:
        return self._opened().producers

    @property
    def cleaner_source(self) -> TransactionalPartition:
        """What the log cleaner works on: the log with its producer state and aborted transactions."""
        return self._opened()

    def _opened(self) -> TransactionalPartition:
        if self._txn is None:
            raise RuntimeError(f"{self.topic}-{self.index} is not open")
        return self._txn

    # ---- leadership ----------------------------------------------------------------------------------------
    @property
    def leader_epoch(self) -> int:
        return self._txn.log.leader_epoch if self._txn is not None else self._leader_epoch

    @leader_epoch.setter
    def leader_epoch(self, epoch: int) -> None:
        self._leader_epoch = epoch
        if self._txn is not None:
            self._txn.log.leader_epoch = epoch

    def elect(self, leader_id: int) -> None:
        """A new leader (or NO_LEADER) with the next leader epoch, which starts at the log end, as
        Partition.makeLeader records it."""
        self.leader_id = leader_id
        epoch = self.leader_epoch + 1
        self.leader_epoch = epoch
        if self._txn is not None:
            log = self._txn.log
            log.epoch_cache.assign(epoch, log.log_end_offset)

    # ---- offsets -------------------------------------------------------------------------------------------
    @property
    def last_stable_offset(self) -> int:
        return self._opened().last_stable_offset

    def bound(self, isolation: FetchIsolation) -> int:
        """The highest offset (exclusive) a reader with this isolation may see."""
        log = self.log
        if isolation is FetchIsolation.TXN_COMMITTED:
            return self.last_stable_offset
        if isolation is FetchIsolation.HIGH_WATERMARK:
            return log.high_watermark
        return log.log_end_offset

    # ---- writing -------------------------------------------------------------------------------------------
    @property
    def effective_min_isr(self) -> int:
        """Partition.effectiveMinIsr: min.insync.replicas, but never more than the partition has replicas (a
        topic of replication factor 1 takes acks=all whatever its min.insync.replicas)."""
        return min(self.log.config.min_insync_replicas, len(self.replicas))

    def needs_verification(self, header: BatchHeader) -> bool:
        """Would this client batch open a transaction here? Then KIP-890 asks the coordinator first."""
        return (header.is_transactional and header.has_producer_id
                and not self.producers.has_ongoing_txn(header.producer_id, header.producer_epoch))

    def append(self, data: bytes | bytearray | memoryview, *, origin: AppendOrigin = AppendOrigin.CLIENT,
               built: bool = False, whole: BatchHeader | None = None, transaction_version: int = 0) -> AppendResult:
        """Validate, check producer state, append. Raises LogError or ProducerStateError (both with .code).
        `built`: the broker built the batch itself, a coordinator's record or marker; `whole`: `data`'s
        header, when the caller read it with `whole_batch_header` already (kemu.log.validator);
        `transaction_version`: a marker's (WriteTxnMarkers v2), which decides how its epoch is checked."""
        self._check_storage()
        try:
            return self._opened().append(data, origin=origin, built=built, whole=whole,
                                         transaction_version=transaction_version)
        except OSError as exc:
            self.storage_failure = f"Error while appending records to {self.topic}-{self.index}: {exc}"
            log.error("%s; the partition is offline until the broker restarts", self.storage_failure)
            raise StorageError(self.storage_failure) from exc

    def maintain(self) -> None:
        """The periodic log maintenance: retention, then `flush.ms`. A failing fsync or unlink takes the
        partition offline as a failed append does (Kafka's log dir goes offline on a flush's IOException)."""
        if self.storage_failure is not None:
            return
        try:
            self.log.delete_old_segments()
            self.log.maybe_flush()
        except OSError as exc:
            self.storage_failure = f"Error while maintaining the log of {self.topic}-{self.index}: {exc}"
            log.error("%s; the partition is offline until the broker restarts", self.storage_failure)

    def _check_storage(self) -> None:
        if self.storage_failure is not None:
            raise StorageError(self.storage_failure)

    # ---- reading -------------------------------------------------------------------------------------------
    def read(self, offset: int, max_bytes: int, *, isolation: FetchIsolation = FetchIsolation.HIGH_WATERMARK,
             min_one_batch: bool = True) -> FetchData:
        self._check_storage()
        return self.log.read(offset, max_bytes, upper_bound=self.bound(isolation),
                             last_stable_offset=self.last_stable_offset, min_one_batch=min_one_batch)

    def offset_for_timestamp(self, timestamp: int, isolation: FetchIsolation | None) -> TimestampAndOffset | None:
        """ListOffsets for a client with an isolation level (None: a replica, bounded by the log end)."""
        bound = self.bound(isolation) if isolation is not None else self.log.log_end_offset
        return self.log.fetch_offset_for_timestamp(timestamp, bound)

    def aborted_transactions(self, fetch_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        return self._opened().aborted_transactions(fetch_offset, upper_bound_offset)

    # ---- maintenance ---------------------------------------------------------------------------------------
    def expire_producers(self, now_ms: int, expiration_ms: int) -> list[int]:
        return self._opened().expire_producers(now_ms, expiration_ms)
