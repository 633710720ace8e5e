"""One partition, the object handlers and coordinators talk to (Kafka's `Partition` over its `UnifiedLog`).

It holds the partition's place in the cluster (replicas, ISR, leader and its epoch) and, once opened, its
log (`kemu.log.PartitionLog`: the segments with the producer state, the aborted-transaction index and the
last stable offset beside them). Everything a handler or coordinator needs of the log is asked here: no
module outside kemu/log and kemu/broker reaches the log itself (tests/test_partition_access.py checks).

The leader epoch is kept here only, as Kafka's Partition keeps it: each append passes it to the log, which
stamps it into the batch and records it in its epoch cache (the history OffsetForLeaderEpoch answers from).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kemu.log.errors import LogError
from kemu.log.kinds import AppendOrigin, FetchIsolation
from kemu.wire.errors import ErrorCode
from kemu.wire.records import BatchHeader

if TYPE_CHECKING:
    # The partition log, its segments, producer state and the validator load when the first partition opens
    # (kemu.log.LogDir): ~5 ms of imports a broker with no partition yet need not pay.
    from kemu.log.config import LogConfig
    from kemu.log.partition_log import AppendResult, FetchData, LogListener, PartitionLog
    from kemu.log.producer_state import ProducerStateManager
    from kemu.log.segment import LogSegment, TimestampAndOffset
    from kemu.log.txn_index import AbortedTxn
    from kemu.wire.records import RecordBatch

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
        self.leader_epoch = leader_epoch
        """Stamped into every batch appended; `elect` moves it (tests may set it)."""
        self._log: PartitionLog | None = None
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
        """Take the opened log (it has recovered its producer state and aborted index), and, as
        Partition.makeLeader does, start the leader's epoch at the log end even before any append (so
        OffsetForLeaderEpoch and ListOffsets know it on an empty partition too)."""
        log.epoch_cache.assign(self.leader_epoch, log.log_end_offset)
        self._log = log

    def detach(self) -> None:
        self._log = None

    @property
    def is_open(self) -> bool:
        return self._log is not None

    @property
    def log(self) -> PartitionLog:
        """For kemu/broker and kemu/log (and tests); every other caller asks the partition itself."""
        if self._log is None:
            raise RuntimeError(f"{self.topic}-{self.index} is not open")
        return self._log

    @property
    def producers(self) -> ProducerStateManager:
        return self.log.producers

    @property
    def config(self) -> LogConfig:
        """The topic's log config, as the partition's log has it."""
        return self.log.config

    # ---- leadership ----------------------------------------------------------------------------------------
    def elect(self, leader_id: int) -> None:
        """A new leader (or NO_LEADER) with the next leader epoch, which starts at the log end, as
        Partition.makeLeader records it."""
        self.leader_id = leader_id
        self.leader_epoch += 1
        if self._log is not None:
            self._log.epoch_cache.assign(self.leader_epoch, self._log.log_end_offset)

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (epoch, end offset), (-1, -1) when unknown."""
        return self.log.end_offset_for_epoch(leader_epoch)

    # ---- offsets -------------------------------------------------------------------------------------------
    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        return self.log.last_stable_offset

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        """The log's segments, oldest first (for tools that show them)."""
        return self.log.segments

    def bound(self, isolation: FetchIsolation) -> int:
        """The highest offset (exclusive) a reader with this isolation may see."""
        return self.log.bound(isolation)

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
        """Validate, check producer state, append, at the partition's leader epoch (PartitionLog.append).
        Raises LogError or ProducerStateError (both with .code)."""
        self._check_storage()
        try:
            return self.log.append(data, leader_epoch=self.leader_epoch, origin=origin, built=built, whole=whole,
                                   transaction_version=transaction_version)
        except OSError as exc:
            self.storage_failure = f"Error while appending records to {self.topic}-{self.index}: {exc}"
            log.error("%s; the partition is offline until the broker restarts", self.storage_failure)
            raise StorageError(self.storage_failure) from exc

    def delete_records(self, offset: int) -> int:
        """DeleteRecords: the new low watermark (PartitionLog.delete_records)."""
        return self.log.delete_records(offset)

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
        log = self.log
        return log.read(offset, max_bytes, upper_bound=log.bound(isolation), min_one_batch=min_one_batch)

    def fetch_upper_bound(self, offset: int, fetched_bytes: int) -> int:
        """Where a read_committed fetch's aborted transactions are listed up to (PartitionLog.fetch_upper_bound)."""
        return self.log.fetch_upper_bound(offset, fetched_bytes)

    def aborted_transactions(self, fetch_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        return self.log.aborted_transactions(fetch_offset, upper_bound_offset)

    def offset_for_timestamp(self, timestamp: int, isolation: FetchIsolation | None) -> TimestampAndOffset | None:
        """ListOffsets for a client with an isolation level (None: a replica, bounded by the log end)."""
        log = self.log
        bound = log.bound(isolation) if isolation is not None else log.log_end_offset
        return log.fetch_offset_for_timestamp(timestamp, bound, self.leader_epoch)

    def batches(self, start_offset: int | None = None, end_offset: int | None = None) -> list[RecordBatch]:
        """Whole stored batches overlapping [start, end) (defaults: the whole log): for coordinators replaying
        their topics, tests and tools; not the fetch path."""
        return self.log.batches(start_offset, end_offset)

    # ---- watching ------------------------------------------------------------------------------------------
    def add_listener(self, listener: LogListener) -> None:
        """Called with the log and its LogEvent on every change (PartitionLog.add_listener)."""
        self.log.add_listener(listener)

    def remove_listener(self, listener: LogListener) -> None:
        """A closed log has dropped its listeners already: then there is nothing to remove."""
        if self._log is not None and not self._log.is_closed:
            self._log.remove_listener(listener)

    @property
    def changes(self) -> int:
        """The log's count of events told (PartitionLog.changes): unchanged, a read would read the same."""
        return self.log.changes

    # ---- maintenance ---------------------------------------------------------------------------------------
    def expire_producers(self, now_ms: int, expiration_ms: int) -> list[int]:
        return self.log.expire_producers(now_ms, expiration_ms)
