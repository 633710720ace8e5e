"""The transaction coordinator (Kafka's TransactionCoordinator and TransactionStateManager), sans I/O.

Every state change is journaled first (to `__transaction_state`, through the injected `journal`) and applied
after, so replaying the journal rebuilds exactly this state. Writing the COMMIT/ABORT markers is the
shell's job: entering PrepareCommit/PrepareAbort queues a `MarkerJob`; the shell writes the markers to each
partition and calls `markers_written`, which completes the transaction. Between the two, the transactional
id answers CONCURRENT_TRANSACTIONS — the same two-phase window Kafka has, which tests can observe. The shell
writes an id's queued markers before it hands the coordinator a request for that id, when nothing holds them
(`TxnService`), so the coordinator never calls its shell back in the middle of a request: what it tells the
shell (a job queued, a deadline moved) goes to the `TxnShell` it is born with.

Transaction version 2 (KIP-890 part 2) is chosen per request, as Kafka chooses it: EndTxn v5+, and the
partitions Produce v12+ / TxnOffsetCommit v5+ add, come from a TV2 client (`client_version` TV_2), the
rest from a TV0 one. A TV2 EndTxn bumps the epoch (and moves to the next producer id when the epoch would
be exhausted), answering the producer id and epoch the producer goes on with, and may abort a transaction
that never began. The coordinator's own aborts (a timeout, InitProducerId fencing an open transaction) take
the way of the cluster's finalized `transaction.version` (`TxnConfig.transaction_version`), as Kafka's use
`transactionVersionLevel()`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from kemu.clock import Clock
from kemu.kafka_defaults import int_default
from kemu.txn.producer_ids import ProducerIdAllocator
from kemu.txn.state import (
    MAX_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TV_0,
    TV_2,
    IllegalStateError,
    TopicPartition,
    TxnMetadata,
    TxnState,
    epoch_exhausted,
    supports_epoch_bump,
)
from kemu.wire.errors import ErrorCode

Journal = Callable[[str, "dict[str, Any] | None"], None]

_COMPLETING = (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)
# States an id may sit in between transactions; it expires after transactional.id.expiration.ms in them.
_IDLE = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


@dataclass(frozen=True, slots=True)
class TxnConfig:
    max_timeout_ms: int = int_default("transaction.max.timeout.ms")
    id_expiration_ms: int = int_default("transactional.id.expiration.ms")
    # The cluster's finalized transaction.version: the way the coordinator's own aborts take, and the
    # TransactionLogValue version it journals (v1, flexible, from TV_1 on).
    transaction_version: int = TV_2


@dataclass(frozen=True, slots=True)
class InitResult:
    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(frozen=True, slots=True)
class EndTxnResult:
    """EndTxn's answer: with TV2 (v5+) the producer id and epoch the producer continues with, else none."""

    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(frozen=True, slots=True)
class MarkerJob:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int
    partitions: frozenset[TopicPartition]
    # The transaction's client transaction version, which WriteTxnMarkers carries and the partitions check
    # the marker's epoch by (a TV2 marker's epoch is above the transaction's).
    transaction_version: int = TV_0


class TxnShell(Protocol):
    """What the coordinator tells its shell, which it is given at construction."""

    def markers_queued(self, job: MarkerJob) -> None:
        """A job was queued: the shell's marker writer has work."""

    def deadline_changed(self, deadline_ms: int | None) -> None:
        """A transaction changed; its deadline (`deadline_of`) is when `tick` must run by."""


class Unobserved:
    """The shell of a coordinator nothing drives but its caller (the unit tests): told nothing."""

    def markers_queued(self, job: MarkerJob) -> None:
        pass

    def deadline_changed(self, deadline_ms: int | None) -> None:
        pass


UNOBSERVED = Unobserved()


class TransactionCoordinator:
    def __init__(
        self,
        clock: Clock,
        producer_ids: ProducerIdAllocator,
        journal: Journal,
        config: TxnConfig = TxnConfig(),
        coordinator_epoch: int = 0,
        *,
        shell: TxnShell = UNOBSERVED,
    ) -> None:
        self.clock = clock
        self.shell = shell
        self.producer_ids = producer_ids
        self.journal = journal
        self.config = config
        self.coordinator_epoch = coordinator_epoch
        self.txns: dict[str, TxnMetadata] = {}
        self.pending_markers: dict[str, MarkerJob] = {}

    # ---- InitProducerId ---------------------------------------------------------------------------
    def init_producer_id(
        self,
        transactional_id: str | None,
        timeout_ms: int,
        expected_producer_id: int = NO_PRODUCER_ID,
        expected_epoch: int = NO_PRODUCER_EPOCH,
    ) -> InitResult:
        if transactional_id is None:
            # An idempotent producer always gets a fresh id; KIP-360 bumps of its epoch happen client-side.
            return InitResult(ErrorCode.NONE, self.producer_ids.next_id(), 0)
        if transactional_id == "":
            return InitResult(ErrorCode.INVALID_REQUEST)
        if timeout_ms <= 0 or timeout_ms > self.config.max_timeout_ms:
            return InitResult(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        expected = expected_producer_id != NO_PRODUCER_ID or expected_epoch != NO_PRODUCER_EPOCH
        txn = self.txns.get(transactional_id)
        if txn is None or txn.state == TxnState.DEAD:
            txn = TxnMetadata(transactional_id, self.producer_ids.next_id(), timeout_ms=timeout_ms,
                              update_ms=self.clock.now_ms())
            self.txns[transactional_id] = txn
        if expected and not self._valid_expected_producer(txn, expected_producer_id, expected_epoch):
            return InitResult(ErrorCode.PRODUCER_FENCED)
        if txn.state in _COMPLETING or txn.state == TxnState.PREPARE_EPOCH_FENCE:
            return InitResult(ErrorCode.CONCURRENT_TRANSACTIONS)
        if txn.state == TxnState.ONGOING:
            # Fence the old producer and abort its transaction; the caller retries once it is done, and
            # that retry bumps the epoch again (Kafka never hands out the fencing epoch).
            self._fence_and_abort(txn)
            return InitResult(ErrorCode.CONCURRENT_TRANSACTIONS)
        now = self.clock.now_ms()
        nxt = txn.prepare_transition(TxnState.EMPTY)
        if epoch_exhausted(txn.producer_epoch) and (not expected or expected_epoch == txn.producer_epoch):
            nxt.last_producer_id, nxt.producer_id = txn.producer_id, self.producer_ids.next_id()
            nxt.producer_epoch = 0
            nxt.last_producer_epoch = txn.producer_epoch if expected else NO_PRODUCER_EPOCH
        elif not expected or txn.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == txn.producer_epoch:
            nxt.producer_epoch, nxt.last_producer_epoch = txn.producer_epoch + 1, (
                txn.producer_epoch if expected else NO_PRODUCER_EPOCH)
        elif expected_epoch == txn.last_producer_epoch:
            # A retry of a bump whose response was lost: the current epoch again, unbumped. (A newer
            # producer's init would have reset the last epoch to -1, so this cannot un-fence anyone.)
            pass
        else:
            return InitResult(ErrorCode.PRODUCER_FENCED)
        nxt.timeout_ms = timeout_ms
        nxt.partitions = set()
        nxt.start_ms = -1
        nxt.update_ms = now
        self._commit(nxt)
        return InitResult(ErrorCode.NONE, nxt.producer_id, nxt.producer_epoch)

    @staticmethod
    def _valid_expected_producer(txn: TxnMetadata, producer_id: int, epoch: int) -> bool:
        return (
            txn.producer_epoch == NO_PRODUCER_EPOCH
            or producer_id == txn.producer_id
            or (producer_id == txn.last_producer_id and epoch_exhausted(epoch))
        )

    # ---- AddPartitionsToTxn / AddOffsetsToTxn --------------------------------------------------------
    def add_partitions(
        self, transactional_id: str, producer_id: int, epoch: int, partitions: Iterable[TopicPartition],
        client_version: int = TV_0,
    ) -> ErrorCode:
        """AddPartitionsToTxn (AddOffsetsToTxn adds the group's offsets partition): `client_version` TV_2
        for the partitions a Produce v12+ or TxnOffsetCommit v5+ adds (AddPartitionsToTxn v4+ from the
        broker, verify_only false), TV_0 for a client's own AddPartitionsToTxn (v0-3) and AddOffsetsToTxn."""
        txn, error = self._check_producer(transactional_id, producer_id, epoch)
        if txn is None:
            return error
        wanted = set(partitions)
        if txn.state in _COMPLETING or txn.state == TxnState.PREPARE_EPOCH_FENCE:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if txn.state == TxnState.DEAD:
            return ErrorCode.INVALID_TXN_STATE
        if txn.state == TxnState.ONGOING and wanted <= txn.partitions:
            return ErrorCode.NONE
        now = self.clock.now_ms()
        nxt = txn.prepare_transition(TxnState.ONGOING)
        if txn.state != TxnState.ONGOING:
            nxt.start_ms = now
            nxt.partitions = set()
        nxt.partitions |= wanted
        nxt.update_ms = now
        nxt.client_version = client_version
        self._commit(nxt)
        return ErrorCode.NONE

    def verify_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                          partitions: Iterable[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        """KIP-890 verification (AddPartitionsToTxn v4+ `verify_only`): is each partition in the transaction?

        As Kafka's handleVerifyPartitionsInTransaction: a producer mismatch or a completing transaction
        answers the same error for every partition; otherwise each partition is NONE if it was added and
        TRANSACTION_ABORTABLE if not (callers translate that for clients that predate the code).
        """
        wanted = list(partitions)
        txn, error = self._check_producer(transactional_id, producer_id, epoch)
        if txn is not None and txn.state in _COMPLETING:
            error = ErrorCode.CONCURRENT_TRANSACTIONS
        if error != ErrorCode.NONE or txn is None:
            return {tp: error for tp in wanted}
        return {tp: ErrorCode.NONE if tp in txn.partitions else ErrorCode.TRANSACTION_ABORTABLE for tp in wanted}

    # ---- EndTxn ---------------------------------------------------------------------------------------
    def end_txn(self, transactional_id: str, producer_id: int, epoch: int, commit: bool) -> ErrorCode:
        """EndTxn v0-4: the transaction-version-1 way (Kafka's endTransactionWithTV1)."""
        return self.end_transaction(transactional_id, producer_id, epoch, commit).error

    def end_transaction(self, transactional_id: str, producer_id: int, epoch: int, commit: bool,
                        client_version: int = TV_0) -> EndTxnResult:
        """EndTxn; `client_version` TV_2 for v5+ (TransactionVersion.transactionVersionForEndTxn)."""
        if supports_epoch_bump(client_version):
            return self._end_v2(transactional_id, producer_id, epoch, commit)
        txn, error = self._check_producer(transactional_id, producer_id, epoch)
        if txn is None:
            return EndTxnResult(error)
        state = txn.state
        if state == TxnState.ONGOING:
            self._prepare(txn, commit, txn.producer_epoch)
            return EndTxnResult(ErrorCode.NONE)
        if state == TxnState.COMPLETE_COMMIT:
            return EndTxnResult(ErrorCode.NONE if commit else ErrorCode.INVALID_TXN_STATE)
        if state == TxnState.COMPLETE_ABORT:
            return EndTxnResult(ErrorCode.NONE if not commit else ErrorCode.INVALID_TXN_STATE)
        if state == TxnState.PREPARE_COMMIT:
            return EndTxnResult(ErrorCode.CONCURRENT_TRANSACTIONS if commit else ErrorCode.INVALID_TXN_STATE)
        if state == TxnState.PREPARE_ABORT:
            return EndTxnResult(ErrorCode.CONCURRENT_TRANSACTIONS if not commit else ErrorCode.INVALID_TXN_STATE)
        if state == TxnState.PREPARE_EPOCH_FENCE:
            return EndTxnResult(ErrorCode.CONCURRENT_TRANSACTIONS)
        return EndTxnResult(ErrorCode.INVALID_TXN_STATE)

    def _end_v2(self, transactional_id: str, producer_id: int, epoch: int, commit: bool) -> EndTxnResult:
        """Kafka's endTransaction for TV2 clients, from a client. The epoch a request must carry depends on
        the state: the current one while the transaction is open (or none began), the one before the bump
        (a retry whose answer was lost) while it completes, either once it completed; and a retry of the
        EndTxn that rotated the producer id names the old id with its last epoch. Then, as Kafka's table:

            state            abort: retry / current     commit: retry / current
            Empty            PRODUCER_FENCED / bump     PRODUCER_FENCED / INVALID_TXN_STATE
            CompleteAbort    NONE / bump                INVALID_TXN_STATE / INVALID_TXN_STATE
            CompleteCommit   INVALID_TXN_STATE / bump   NONE / INVALID_TXN_STATE

        where "bump" aborts afresh, with no partitions to mark. A NONE without a new transition answers the
        producer id and epoch as they are; an error answers none.
        """
        if not transactional_id:
            return EndTxnResult(ErrorCode.INVALID_REQUEST)
        txn = self.txns.get(transactional_id)
        if txn is None:
            return EndTxnResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        state = txn.state
        retry_on_overflow = (txn.last_producer_id == producer_id and epoch == MAX_EPOCH - 1
                             and txn.producer_epoch == 0)
        retry_on_bump = txn.producer_epoch == epoch + 1
        if state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            valid_epoch = retry_on_bump
        elif state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            valid_epoch = retry_on_bump or retry_on_overflow or epoch == txn.producer_epoch
        else:
            valid_epoch = epoch == txn.producer_epoch
        is_retry = retry_on_bump or retry_on_overflow
        if txn.producer_id != producer_id and not retry_on_overflow:
            return EndTxnResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        if not valid_epoch:
            return EndTxnResult(ErrorCode.PRODUCER_FENCED)
        as_it_is = EndTxnResult(ErrorCode.NONE, txn.producer_id, txn.producer_epoch)
        if state == TxnState.ONGOING:
            return self._prepare_v2(txn, commit, no_partition_added=False)
        if state == TxnState.COMPLETE_COMMIT:
            if commit:
                return as_it_is if is_retry else EndTxnResult(ErrorCode.INVALID_TXN_STATE)
            return EndTxnResult(ErrorCode.INVALID_TXN_STATE) if is_retry else self._prepare_v2(txn, False, True)
        if state == TxnState.COMPLETE_ABORT:
            if commit:
                return EndTxnResult(ErrorCode.INVALID_TXN_STATE)
            return as_it_is if is_retry else self._prepare_v2(txn, False, True)
        if state == TxnState.PREPARE_COMMIT:
            return EndTxnResult(ErrorCode.CONCURRENT_TRANSACTIONS if commit else ErrorCode.INVALID_TXN_STATE)
        if state == TxnState.PREPARE_ABORT:
            return EndTxnResult(ErrorCode.CONCURRENT_TRANSACTIONS if not commit else ErrorCode.INVALID_TXN_STATE)
        if state == TxnState.EMPTY:
            return EndTxnResult(ErrorCode.INVALID_TXN_STATE) if commit else self._prepare_v2(txn, False, True)
        # Dead is never kept and PrepareEpochFence never outlives the call that entered it.
        raise IllegalStateError(f"transactional id {transactional_id!r} found in state {state.kafka_name}")

    def _check_producer(
        self, transactional_id: str, producer_id: int, epoch: int
    ) -> tuple[TxnMetadata | None, ErrorCode]:
        if not transactional_id:
            return None, ErrorCode.INVALID_REQUEST
        txn = self.txns.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return None, ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if epoch != txn.producer_epoch:
            return None, ErrorCode.PRODUCER_FENCED
        return txn, ErrorCode.NONE

    # ---- completing -----------------------------------------------------------------------------------
    def _prepare(self, txn: TxnMetadata, commit: bool, epoch: int) -> None:
        nxt = txn.prepare_transition(TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT)
        nxt.producer_epoch = epoch
        nxt.update_ms = self.clock.now_ms()
        nxt.client_version = TV_0  # the TV1 path completes as TV_0, whoever began the transaction
        self._commit(nxt)
        self._queue_markers(nxt)

    def _prepare_v2(self, txn: TxnMetadata, commit: bool, no_partition_added: bool,
                    client_version: int = TV_2) -> EndTxnResult:
        """PrepareCommit/PrepareAbort with TV2's bump (prepareAbortOrCommit): the epoch goes up by one — an
        abort at Short.MaxValue, reachable only by a bug, keeps it — and the one before is remembered as the
        last; at an exhausted epoch the next producer id is drawn now and taken when the transaction
        completes. An abort with no transaction begun starts and ends now. Answers what the producer goes on
        with: the completed transaction's producer id and epoch (prepareComplete)."""
        now = self.clock.now_ms()
        next_producer_id = self.producer_ids.next_id() if epoch_exhausted(txn.producer_epoch) else NO_PRODUCER_ID
        nxt = txn.prepare_transition(TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT)
        if not (txn.producer_epoch == MAX_EPOCH and not commit):
            nxt.producer_epoch = txn.producer_epoch + 1
        nxt.last_producer_epoch = txn.producer_epoch
        if no_partition_added:
            nxt.start_ms = now
        nxt.next_producer_id = next_producer_id
        nxt.update_ms = now
        nxt.client_version = client_version
        self._commit(nxt)
        self._queue_markers(nxt)
        if next_producer_id != NO_PRODUCER_ID:
            return EndTxnResult(ErrorCode.NONE, next_producer_id, 0)
        return EndTxnResult(ErrorCode.NONE, nxt.producer_id, nxt.producer_epoch)

    def _queue_markers(self, txn: TxnMetadata) -> None:
        job = MarkerJob(txn.transactional_id, txn.producer_id, txn.producer_epoch,
                        txn.state == TxnState.PREPARE_COMMIT, self.coordinator_epoch, frozenset(txn.partitions),
                        txn.client_version)
        self.pending_markers[txn.transactional_id] = job
        self.shell.markers_queued(job)

    def _fence_and_abort(self, txn: TxnMetadata) -> None:
        """The abort the coordinator starts itself (InitProducerId finding a transaction open, or a timeout),
        the way of the cluster's finalized transaction.version (Kafka passes `transactionVersionLevel()`).

        TV2 (Kafka 4.x's default): PrepareEpochFence is only a pending state, cleared again, and the abort
        bumps the epoch as a TV2 EndTxn does, remembering the one it fenced as the last epoch. So the fenced
        producer's KIP-360 InitProducerId with that epoch is taken for a retry and gets the bumped epoch
        back, unbumped, as long as no other producer initialised in between; an exhausted epoch gets the
        next producer id once the abort is complete. A TV2 producer's EndTxn(abort) with the fenced epoch is
        a retry of this abort, answered NONE with the bumped epoch.

        TV0/TV1: the fence sets the bumped epoch and forgets the last one, and the abort goes out with it;
        the fenced producer can only start again with a plain InitProducerId.

        Nothing is applied before the abort is journaled: a failed write leaves the id as it was.
        """
        txn.check_transition(TxnState.PREPARE_EPOCH_FENCE)
        if supports_epoch_bump(self.config.transaction_version):
            # Only at Short.MaxValue is there nothing left to bump to: the abort goes out with the current epoch.
            self._prepare_v2(txn, False, no_partition_added=False, client_version=self.config.transaction_version)
            return
        nxt = txn.prepare_transition(TxnState.PREPARE_ABORT)
        if txn.producer_epoch < MAX_EPOCH:
            nxt.producer_epoch = txn.producer_epoch + 1
        nxt.last_producer_epoch = NO_PRODUCER_EPOCH
        nxt.update_ms = self.clock.now_ms()
        nxt.client_version = TV_0
        self._commit(nxt)
        self._queue_markers(nxt)

    def take_marker_jobs(self) -> list[MarkerJob]:
        return list(self.pending_markers.values())

    def markers_written(self, job: MarkerJob) -> None:
        txn = self.txns.get(job.transactional_id)
        if self.pending_markers.get(job.transactional_id) != job or txn is None:
            return
        nxt = txn.prepare_transition(TxnState.COMPLETE_COMMIT if job.commit else TxnState.COMPLETE_ABORT)
        if supports_epoch_bump(txn.client_version) and nxt.next_producer_id != NO_PRODUCER_ID:
            # A TV2 end of an exhausted epoch: the id goes on under the next producer id, at epoch 0.
            nxt.last_producer_id, nxt.producer_id = txn.producer_id, txn.next_producer_id
            nxt.producer_epoch, nxt.next_producer_id = 0, NO_PRODUCER_ID
        nxt.partitions = set()
        nxt.update_ms = self.clock.now_ms()
        self._commit(nxt)
        del self.pending_markers[job.transactional_id]

    # ---- timers ---------------------------------------------------------------------------------------
    def deadline_of(self, txn: TxnMetadata) -> int | None:
        """When `tick` has something to do for `txn`: abort it (ongoing) or expire its id (idle)."""
        if txn.state == TxnState.ONGOING:
            # Kafka aborts a transaction once start + timeout < now: the first millisecond past the timeout.
            return txn.start_ms + txn.timeout_ms + 1
        if txn.state in _IDLE:
            return txn.update_ms + self.config.id_expiration_ms
        return None

    def next_deadline(self) -> int | None:
        deadlines = [deadline for deadline in map(self.deadline_of, self.txns.values()) if deadline is not None]
        return min(deadlines, default=None)

    def tick(self) -> list[str]:
        """Abort timed-out transactions and expire idle transactional ids; returns the ids aborted."""
        now = self.clock.now_ms()
        aborted = []
        for txn in list(self.txns.values()):
            if txn.state == TxnState.ONGOING and now > txn.start_ms + txn.timeout_ms:
                self._fence_and_abort(txn)
                aborted.append(txn.transactional_id)
            elif txn.state in _IDLE and now >= txn.update_ms + self.config.id_expiration_ms:
                # Dead is never stored: as in Kafka, the tombstone removes the id instead.
                txn.check_transition(TxnState.DEAD)
                self.journal(txn.transactional_id, None)
                del self.txns[txn.transactional_id]
        return aborted

    # ---- journal and recovery -------------------------------------------------------------------------
    def _commit(self, nxt: TxnMetadata) -> None:
        self.journal(nxt.transactional_id, nxt.log_value())
        self.txns[nxt.transactional_id] = nxt
        self.shell.deadline_changed(self.deadline_of(nxt))

    def replay(self, transactional_id: str, value: dict[str, Any] | None) -> None:
        """Apply one `__transaction_state` record read back at start-up (None is a tombstone).

        Not checked against the state table: the record is a state Kafka (or kemu) already reached
        legally, and compaction may have removed the steps between it and the record before.
        """
        if value is None:
            self.txns.pop(transactional_id, None)
        else:
            self.txns[transactional_id] = TxnMetadata.from_log_value(transactional_id, value)

    def finish_loading(self) -> None:
        """After replay: transactions left in PREPARE_* get their markers written again, as Kafka does."""
        for txn in self.txns.values():
            if txn.state in _COMPLETING:
                self._queue_markers(txn)

    # ---- admin ----------------------------------------------------------------------------------------
    def describe(self, transactional_id: str) -> TxnMetadata | None:
        txn = self.txns.get(transactional_id)
        return txn if txn is not None and txn.state != TxnState.DEAD else None

    def list(
        self, states: Iterable[str] = (), producer_ids: Iterable[int] = (), duration_filter_ms: int = -1
    ) -> list[TxnMetadata]:
        """ListTransactions, filtered as Kafka's listTransactionStates filters.

        `states` are Kafka's state names; a name that is no state matches nothing (the handler reports it
        as unknown), so a filter of unknown names only lists nothing. With `duration_filter_ms` >= 0, only
        transactions whose start lies more than that far back are listed — which, as in Kafka, includes
        ids that never started one (start time -1).
        """
        names = list(states)
        wanted_states = {state for state in map(TxnState.from_kafka_name, names) if state is not None}
        wanted_ids = set(producer_ids)
        now = self.clock.now_ms()
        out = []
        for txn in self.txns.values():
            if txn.state == TxnState.DEAD:
                continue
            if wanted_ids and txn.producer_id not in wanted_ids:
                continue
            if names and txn.state not in wanted_states:
                continue
            if duration_filter_ms >= 0 and now - txn.start_ms <= duration_filter_ms:
                continue
            out.append(txn)
        return out
