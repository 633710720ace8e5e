"""The transaction coordinator on the broker: its journal in `__transaction_state`, recovery at start-up, the
marker writer and the timers.

`kemu.txn.coordinator.TransactionCoordinator` is sans I/O; this is the shell around it that Kafka's
TransactionStateManager and TransactionMarkerChannelManager are:

- **Journal.** Every state change is appended, before it takes effect, as one TransactionLog record (key:
  the transactional id; value: TransactionLogValue, null for an expired id) to `__transaction_state` partition
  `partition_for(transactional_id, partitions)`, with `AppendOrigin.COORDINATOR`. The topic is created with
  Kafka's layout for it when the first record is written (FindCoordinator usually created it already).
- **Start-up.** Every `__transaction_state` partition is replayed, tombstones included, and transactions left
  in PrepareCommit/PrepareAbort get their markers written — Kafka's recovery. The coordinator epoch (which
  every marker carries, and partitions use to fence a stale coordinator) goes up by one on each load; it
  is kept in `transaction-coordinator-epoch` in the data directory, as Kafka keeps it as the partition's
  leader epoch.
- **Markers.** Entering PrepareCommit/PrepareAbort queues a job; the "txn-markers" housekeeping task appends
  a COMMIT/ABORT marker to each partition of the transaction through the same append path a produce takes
  (`Partition.append`, origin COORDINATOR), then completes the transaction. A partition whose
  topic was deleted is skipped, as Kafka skips partitions without a leader. Until then the transactional
  id answers CONCURRENT_TRANSACTIONS — the window `hold_markers` keeps open for tests (and the
  `KEMU_HOLD_TXN_MARKERS=1` environment variable from the start, so a `kemu serve` child can be stopped
  with a transaction still prepared). A request for the id that arrives before the writer has run has the
  markers written first instead (`_settle`, before the request reaches the coordinator): they are due, and
  librdkafka would back off a whole retry.backoff.ms on CONCURRENT_TRANSACTIONS. Handlers therefore ask
  this service (`init_producer_id`, `add_partitions`, `verify_partitions`, `end_transaction`), not the
  coordinator, for anything that moves a transaction.
- **Time.** "txn-timeouts" aborts transactions older than their timeout (with an epoch bump, fencing the
  stalled producer) and expires idle transactional ids; "producer-id-expiration" drops idle producers'
  state from every partition every `producer.id.expiration.check.interval.ms`.
- **Crash points.** `crash_hook`, given at construction and off by default, is called where a test may stop
  the broker dead inside the two-phase commit (`CrashPoint`); a hook that stops it raises, so nothing after
  that point is written, and the recovery on the next start is what finishes the transaction.
- **Verification.** `verify_produce(...)` is the KIP-890 check a transactional Produce makes before it
  opens a transaction on a partition: up to v11 a check that the client added it
  (`transaction.partition.verification.enable`), from v12 (transactions version 2) the adding itself, which
  AddPartitionsToTxn v4+ with verify_only false does in Kafka, whatever the setting.
- **Transaction version.** The cluster's finalized `transaction.version` (the broker's features) decides
  the TransactionLogValue version journaled (v1, flexible, from level 1; v0 below it, without the previous
  and next producer ids or the client's transaction version) and the way the coordinator's own aborts go.

Settings come from `BrokerConfig` under Kafka's names in snake_case when it declares them, else Kafka's
defaults.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from typing import Any

from kemu.broker.broker import BrokerCore
from kemu.broker.errors import ApiError
from kemu.broker.features import Features
from kemu.broker.topic_names import TRANSACTION_STATE_TOPIC
from kemu.coordinators.crash_points import CrashHook, CrashPoint
from kemu.coordinators.journal import InternalTopicJournal, txn_write_error
from kemu.log import AppendOrigin, LogError
from kemu.log.producer_state import ProducerStateError
from kemu.txn.coordinator import EndTxnResult, InitResult, MarkerJob, TransactionCoordinator, TxnConfig
from kemu.txn.producer_ids import ProducerIdAllocator
from kemu.txn.state import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TV_0, TV_1, TV_2, TopicPartition, TxnMetadata
from kemu.wire.coordinator_records import (
    CoordinatorRecordError,
    UnknownRecordType,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from kemu.wire.errors import ErrorCode
from kemu.wire.records import build_end_txn_marker, build_one_record_batch

log = logging.getLogger(__name__)

RECORD_TYPE = "TransactionLog"
HOLD_MARKERS_ENV = "KEMU_HOLD_TXN_MARKERS"
PRODUCER_ID_BLOCK_FILE = "producer-id-block"
COORDINATOR_EPOCH_FILE = "transaction-coordinator-epoch"
MARKERS_TASK = "txn-markers"
TIMEOUTS_TASK = "txn-timeouts"
_MARKER_RETRY_MS = 1000
# Produce v11 is the first that may answer TRANSACTION_ABORTABLE (KIP-890); older clients get INVALID_TXN_STATE.
_PRODUCE_TRANSACTION_ABORTABLE_VERSION = 11
# Produce v12 is the first a transactions-version-2 client sends: the broker adds the partition itself.
FIRST_TV2_PRODUCE_VERSION = 12
# Errors that end marker writing for a partition: the producer or the coordinator was fenced there, so this
# marker can never be written (Kafka's TransactionMarkerRequestCompletionHandler stops sending then).
_FENCED = (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED, ErrorCode.PRODUCER_FENCED)




class TxnService:
    def __init__(self, broker: BrokerCore, crash_hook: CrashHook | None = None) -> None:
        self.broker = broker
        self.settings = broker.config
        self.journal = InternalTopicJournal(broker, TRANSACTION_STATE_TOPIC,
                                            broker.config.transaction_state_log_num_partitions, txn_write_error)
        self.coordinator = TransactionCoordinator(
            broker.clock,
            ProducerIdAllocator(broker.data_dir / PRODUCER_ID_BLOCK_FILE),
            self._journal,
            TxnConfig(max_timeout_ms=self.settings.transaction_max_timeout_ms,
                      id_expiration_ms=self.settings.transactional_id_expiration_ms,
                      transaction_version=broker.features.transaction_version),
            coordinator_epoch=self._next_coordinator_epoch(),
            shell=self,
        )
        self._hold_markers = os.environ.get(HOLD_MARKERS_ENV, "").strip().lower() in {"1", "true", "yes"}
        # Partitions of a queued job still to be written, by transactional id (a retry writes only these).
        self._unwritten: dict[str, set[TopicPartition]] = {}
        self.crash_hook = crash_hook
        # Set once a crash hook stopped the marker writer: nothing after that point is written, whoever runs
        # the writer next (the housekeeper and the connections that answered a request may both).
        self._stopped_dead = False
        broker.features.listeners.append(self._features_changed)
        self._load()
        housekeeping = broker.housekeeping
        # Timeouts first: an abort they start has its markers written in the same round.
        housekeeping.add(TIMEOUTS_TASK, self._run_timeouts)
        housekeeping.add(MARKERS_TASK, self._write_queued_markers)

    def _features_changed(self, features: Features) -> None:
        """UpdateFeatures moved transaction.version: the coordinator's own aborts and journal follow."""
        self.coordinator.config = replace(self.coordinator.config, transaction_version=features.transaction_version)

    # ---- test powers ----------------------------------------------------------------------------------
    @property
    def hold_markers(self) -> bool:
        """While True, no COMMIT/ABORT marker is written: transactions stay in PrepareCommit/PrepareAbort."""
        return self._hold_markers

    @hold_markers.setter
    def hold_markers(self, hold: bool) -> None:
        self._hold_markers = hold
        if not hold:
            self.broker.housekeeping.wake(MARKERS_TASK)

    # ---- the requests that move a transaction -----------------------------------------------------------
    def init_producer_id(self, transactional_id: str | None, timeout_ms: int,
                         expected_producer_id: int = NO_PRODUCER_ID,
                         expected_epoch: int = NO_PRODUCER_EPOCH) -> InitResult:
        if transactional_id is not None:
            self._settle(transactional_id)
        return self.coordinator.init_producer_id(transactional_id, timeout_ms, expected_producer_id, expected_epoch)

    def add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                       partitions: Iterable[TopicPartition], client_version: int = TV_0) -> ErrorCode:
        self._settle(transactional_id)
        return self.coordinator.add_partitions(transactional_id, producer_id, epoch, partitions, client_version)

    def verify_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                          partitions: Iterable[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        self._settle(transactional_id)
        return self.coordinator.verify_partitions(transactional_id, producer_id, epoch, partitions)

    def end_transaction(self, transactional_id: str, producer_id: int, epoch: int, commit: bool,
                        client_version: int = TV_0) -> EndTxnResult:
        self._settle(transactional_id)
        return self.coordinator.end_transaction(transactional_id, producer_id, epoch, commit, client_version)

    def describe(self, transactional_id: str) -> TxnMetadata | None:
        """DescribeTransactions sees a completing transaction as completing: nothing is settled first."""
        return self.coordinator.describe(transactional_id)

    def list_transactions(self, states: Iterable[str] = (), producer_ids: Iterable[int] = (),
                          duration_filter_ms: int = -1) -> list[TxnMetadata]:
        return self.coordinator.list(states, producer_ids, duration_filter_ms)

    # ---- what the coordinator tells its shell (kemu.txn.coordinator.TxnShell) ---------------------------
    def deadline_changed(self, deadline_ms: int | None) -> None:
        """A transaction started (a new timeout) or moved on (the coordinator calls this): make sure the timer
        runs by its deadline. Most changes need nothing, the timer being due earlier already."""
        if deadline_ms is not None:
            self.broker.housekeeping.schedule(TIMEOUTS_TASK, deadline_ms)

    # ---- placement ------------------------------------------------------------------------------------
    def coordinator_error(self, transactional_id: str, node_id: int) -> ErrorCode:
        """NONE when node `node_id` coordinates `transactional_id` (leads its __transaction_state partition),
        else NOT_COORDINATOR. Before the topic exists the first node answers, creating it as it journals."""
        topic = self.broker.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is None or not topic.partitions:
            return ErrorCode.NONE if node_id == self.broker.node_id else ErrorCode.NOT_COORDINATOR
        if topic.partitions[self.partition_of(transactional_id)].leader_id != node_id:
            return ErrorCode.NOT_COORDINATOR
        return ErrorCode.NONE

    # ---- the journal ----------------------------------------------------------------------------------
    def partition_count(self) -> int:
        return self.journal.partition_count()

    def partition_of(self, transactional_id: str) -> int:
        return self.journal.partition_of(transactional_id)

    def _journal(self, transactional_id: str, value: dict[str, Any] | None) -> None:
        index = self.partition_of(transactional_id)
        key = _journal_key(transactional_id)
        encoded = None if value is None else encode_value(RECORD_TYPE, self._value_version, value)
        batch = build_one_record_batch(key, encoded, self.broker.clock.now_ms())
        try:
            self.journal.append(index, batch)
        except ApiError as error:
            log.error("could not journal transactional id %r to %s-%d: %s", transactional_id,
                      TRANSACTION_STATE_TOPIC, index, error)
            raise

    @property
    def _value_version(self) -> int:
        # TransactionVersion.transactionLogValueVersion: v1 (flexible) from transaction.version 1 on.
        return 1 if self.coordinator.config.transaction_version >= TV_1 else 0

    # ---- start-up ---------------------------------------------------------------------------------------
    def _next_coordinator_epoch(self) -> int:
        path = self.broker.data_dir / COORDINATOR_EPOCH_FILE
        previous = -1
        try:
            previous = int(path.read_text().strip())
        except (OSError, ValueError):
            pass
        epoch = previous + 1
        tmp = path.with_suffix(".tmp")
        tmp.write_text(f"{epoch}\n")
        os.replace(tmp, path)
        return epoch

    def _load(self) -> None:
        for index, plog in self.journal.partitions():
            for batch in plog.batches():
                if batch.header.is_control:
                    continue
                for record in batch.records():
                    self._replay(index, record.key, record.value)
        self.coordinator.finish_loading()
        if self.coordinator.txns:
            log.info("transaction coordinator (epoch %d) loaded %d transactional ids from %s, %d to complete",
                     self.coordinator.coordinator_epoch, len(self.coordinator.txns), TRANSACTION_STATE_TOPIC,
                     len(self.coordinator.pending_markers))

    def _replay(self, index: int, key: bytes | None, value: bytes | None) -> None:
        if key is None:
            log.warning("skipping a record without a key in %s-%d", TRANSACTION_STATE_TOPIC, index)
            return
        try:
            decoded = decode_key(key, TRANSACTION_STATE_TOPIC)
            fields = None if value is None else decode_value(RECORD_TYPE, value).fields
        except UnknownRecordType as unknown:
            log.warning("skipping a record of unknown key version %d in %s-%d", unknown.version,
                        TRANSACTION_STATE_TOPIC, index)
            return
        except CoordinatorRecordError as error:
            log.warning("skipping a malformed record in %s-%d: %s", TRANSACTION_STATE_TOPIC, index, error)
            return
        self.coordinator.replay(decoded.fields["transactional_id"], fields)

    # ---- markers ----------------------------------------------------------------------------------------
    def markers_queued(self, job: MarkerJob) -> None:
        self._unwritten[job.transactional_id] = set(job.partitions)
        self.broker.housekeeping.wake(MARKERS_TASK)

    def _write_queued_markers(self, now_ms: int) -> int | None:
        if self._hold_markers or self._stopped_dead:
            return None
        retry = False
        for job in self.coordinator.take_marker_jobs():
            retry = not self._complete(job) or retry
        return now_ms + _MARKER_RETRY_MS if retry else None

    def _settle(self, transactional_id: str) -> None:
        """A request for `transactional_id` came while its markers were queued but not yet written (the
        marker writer runs right after EndTxn's response; a client quick enough, or a busy machine, gets
        there first): write them now and complete the transaction, instead of answering
        CONCURRENT_TRANSACTIONS for work that is due anyway — librdkafka backs off a whole retry.backoff.ms
        on it. Not while markers are held or a crash hook decides where the writer stops (those windows stay
        observable), and a marker or journal write that fails leaves the transaction completing, as before."""
        if self._hold_markers or self.crash_hook is not None:
            return
        job = self.coordinator.pending_markers.get(transactional_id)
        if job is None:
            return
        try:
            self._complete(job)
        except ApiError:
            pass  # the journal write failed and said so; the marker writer retries

    def _complete(self, job: MarkerJob) -> bool:
        """Write `job`'s markers still unwritten; once all are, complete its transaction. False: some are
        left for a retry."""
        remaining = self._unwritten.setdefault(job.transactional_id, set(job.partitions))
        if self.crash_hook is None:
            results = self.write_markers(job.producer_id, job.producer_epoch, job.commit, job.coordinator_epoch,
                                         sorted(remaining), job.transaction_version)
        else:
            results = self._write_markers_with_crash_points(job, self.crash_hook, sorted(remaining))
        for tp, error in results.items():
            if error is ErrorCode.NONE or error is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                remaining.discard(tp)  # written, or its topic is gone: nothing left to mark
            elif error in _FENCED:
                log.warning("%s marker of %r not written to %s-%d: %s", "COMMIT" if job.commit else "ABORT",
                            job.transactional_id, tp[0], tp[1], error.name)
                remaining.discard(tp)
        if remaining:
            return False
        if self.crash_hook is not None:
            self._reach(self.crash_hook, CrashPoint.BEFORE_COMPLETE, job.transactional_id)
        self.coordinator.markers_written(job)
        self._unwritten.pop(job.transactional_id, None)
        return True

    def _reach(self, hook: CrashHook, point: CrashPoint, transactional_id: str) -> None:
        try:
            hook(point, transactional_id)
        except BaseException:
            self._stopped_dead = True
            raise

    def _write_markers_with_crash_points(self, job: MarkerJob, hook: CrashHook,
                                         partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        if len(partitions) == len(job.partitions):
            self._reach(hook, CrashPoint.AFTER_PREPARE, job.transactional_id)
        # One marker first, so that a crash between the two writes leaves the others unwritten.
        results = self.write_markers(job.producer_id, job.producer_epoch, job.commit, job.coordinator_epoch,
                                     partitions[:1], job.transaction_version)
        if len(partitions) > 1:
            self._reach(hook, CrashPoint.PARTIAL_MARKERS, job.transactional_id)
            results.update(self.write_markers(job.producer_id, job.producer_epoch, job.commit,
                                              job.coordinator_epoch, partitions[1:], job.transaction_version))
        return results

    def write_markers(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                      partitions: Iterable[TopicPartition],
                      transaction_version: int = TV_0) -> dict[TopicPartition, ErrorCode]:
        """Append one COMMIT/ABORT marker to each partition, as a WriteTxnMarkers request does; the error per
        partition (UNKNOWN_TOPIC_OR_PARTITION where there is no such partition). `transaction_version` is
        the transaction's, which the partition checks the marker's epoch by."""
        results: dict[TopicPartition, ErrorCode] = {}
        for topic, index in partitions:
            plog = self.broker.partition(topic, index)
            if plog is None:
                results[(topic, index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            marker = build_end_txn_marker(commit=commit, producer_id=producer_id, producer_epoch=producer_epoch,
                                          coordinator_epoch=coordinator_epoch, timestamp=self.broker.clock.now_ms())
            try:
                plog.append(marker, origin=AppendOrigin.COORDINATOR, built=True,
                            transaction_version=transaction_version)
            except (LogError, ProducerStateError) as error:
                results[(topic, index)] = error.code
            else:
                results[(topic, index)] = ErrorCode.NONE
        return results

    # ---- timers -----------------------------------------------------------------------------------------
    def _run_timeouts(self, now_ms: int) -> int | None:
        for transactional_id in self.coordinator.tick():
            log.info("aborting the transaction of %r: older than its timeout", transactional_id)
        return self.coordinator.next_deadline()

    # ---- KIP-890 verification of transactional produce --------------------------------------------------
    def verify_produce(self, transactional_id: str, produce_version: int, topic: str, partition: int,
                       producer_id: int, producer_epoch: int) -> tuple[ErrorCode, str | None]:
        """The check a transactional Produce makes before it opens a transaction on a partition: NONE, or the
        error and message the partition answers. Up to v11 (Kafka's DEFAULT_ERROR / GENERIC_ERROR_SUPPORTED)
        the coordinator is asked whether the client added the partition, when
        `transaction.partition.verification.enable`; from v12 (ADD_PARTITION, transactions version 2) it is
        asked to add it, always."""
        tp = (topic, partition)
        if produce_version >= FIRST_TV2_PRODUCE_VERSION:
            error = self.add_implicitly(transactional_id, producer_id, producer_epoch, tp)
        elif not self.settings.transaction_partition_verification_enable:
            return ErrorCode.NONE, None
        else:
            error = self.verify_partitions(transactional_id, producer_id, producer_epoch, [tp])[tp]
        if error is ErrorCode.NONE:
            return error, None
        code, message = produce_verification_error(error, produce_version >= _PRODUCE_TRANSACTION_ABORTABLE_VERSION,
                                                   adds=produce_version >= FIRST_TV2_PRODUCE_VERSION)
        # ReplicaManager sends its own message only for the errors it translates.
        return code, (message if message != code.message else None)

    def add_implicitly(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partition: TopicPartition) -> ErrorCode:
        """A TV2 client's partition added to its transaction by the broker (AddPartitionsToTxn v5 from the
        partition's leader, verify_only false: the coordinator takes it as transaction version 2). A failed
        journal write is its coordinator error."""
        try:
            return self.add_partitions(transactional_id, producer_id, producer_epoch, [partition],
                                       client_version=TV_2)
        except ApiError as failed:
            return failed.code


def produce_verification_error(error: ErrorCode, abortable_ok: bool, adds: bool = False) -> tuple[ErrorCode, str]:
    """What a Produce answers when the coordinator did not verify (or, `adds`, did not add) the partition:
    Kafka's AddPartitionsToTxnManager and ReplicaManager translations, in that order."""
    if error is ErrorCode.PRODUCER_FENCED:
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    elif error is ErrorCode.TRANSACTION_ABORTABLE and not abortable_ok:
        error = ErrorCode.INVALID_TXN_STATE
    if error is ErrorCode.INVALID_TXN_STATE:
        return error, "Partition was not added to the transaction"
    if error is ErrorCode.CONCURRENT_TRANSACTIONS and adds:
        # TV2 keeps it: while the previous transaction completes it is common, and clearer as it is.
        return error, error.message
    if error in (ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NETWORK_EXCEPTION,
                 ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                 ErrorCode.NOT_COORDINATOR):
        # Older clients may not retry these on a produce; Kafka answers an error they all retry.
        return (ErrorCode.NOT_ENOUGH_REPLICAS,
                f"Unable to verify the partition has been added to the transaction. Underlying error: {error.name}")
    return error, error.message


# Every state change of an id is journaled under the same key, three per transaction; a client keeps using
# the same few ids.
@lru_cache(maxsize=4096)
def _journal_key(transactional_id: str) -> bytes:
    return encode_key(RECORD_TYPE, 0, {"transactional_id": transactional_id})


