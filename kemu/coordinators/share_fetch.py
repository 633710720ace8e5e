"""The broker side of share groups' reads (KIP-932): share sessions and the share-partitions they acquire from,
as Kafka's SharePartitionManager and ShareSessionCache keep them. Synchronous and socket-free; the ShareFetch
(78) and ShareAcknowledge (79) handlers are its shell.

- A share session belongs to a (group, member): epoch 0 opens one (dropping the member's old one), -1 closes
  it (releasing what the member still holds in its partitions), and every other request must carry the epoch
  the session expects next, which then moves on (Kafka's ShareRequestMetadata.nextEpoch: wraps to 1).
- A share-partition (kemu.groups.share_partition) is made for a (group, topic id, partition) when a member first
  fetches it, at the group's `share.auto.offset.reset` (latest by default), with the group's lock duration,
  delivery count limit, record lock limit and isolation level (its GROUP configs, else the broker's).
- Lock deadlines run on the broker's clock through the housekeeping tick "share-locks", so a test's virtual
  clock expires them when it moves.

Durable: every change to a share-partition is written to `__share_group_state` (kemu.coordinators.share_state)
and read back when the manager is made after a restart: what was acknowledged or archived stays so, and what a
member held is available again with its delivery count.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from kemu.broker.broker import BrokerCore
from kemu.broker.group_configs import effective_int
from kemu.broker.partition import Partition
from kemu.coordinators.share_state import ShareStateJournal
from kemu.groups.share_partition import (
    AcknowledgementBatch,
    AckOutcome,
    AcquiredRecords,
    FetchedAbort,
    ShareConfig,
    ShareOffsetError,
    SharePartition,
    fetched_batches,
    initial_start_offset,
    validate_acknowledgement_batches,
)
from kemu.log import FetchIsolation
from kemu.wire.errors import ErrorCode
from kemu.wire.records import iter_batches

if TYPE_CHECKING:
    # ShareAcknowledge's acknowledgement batches have the same fields.
    from kemu.wire.messages.k78_share_fetch import (
        ShareFetchRequestTopicsPartitionsAcknowledgementBatches as AcknowledgementBatchEntry,
    )

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
LOCKS_TICK = "share-locks"
TopicPartition = tuple[uuid.UUID, int]


class ShareSession:
    __slots__ = ("group_id", "member_id", "epoch", "partitions")

    def __init__(self, group_id: str, member_id: str, partitions: Iterable[TopicPartition]) -> None:
        self.group_id, self.member_id = group_id, member_id
        self.epoch = 1  # the epoch the next request must carry
        self.partitions: dict[TopicPartition, None] = dict.fromkeys(partitions)


class SessionOutcome(NamedTuple):
    error: ErrorCode
    session: ShareSession | None
    message: str | None = None


class Acquisition(NamedTuple):
    """One partition's answer to a fetch: an error, or the records read and the ranges acquired of them."""

    error: ErrorCode
    records: bytes
    acquired: list[AcquiredRecords]
    message: str | None = None


def _next_epoch(epoch: int) -> int:
    return 1 if epoch >= 2**31 - 1 else epoch + 1


class _LogOffsets:
    """What share.auto.offset.reset reads of a partition (kemu.groups.share_partition.OffsetLookup)."""

    def __init__(self, partition: Partition) -> None:
        self._partition = partition

    def log_start_offset(self) -> int:
        return self._partition.log_start_offset

    def high_watermark(self) -> int:
        return self._partition.high_watermark

    def offset_for_timestamp(self, timestamp_ms: int) -> int | None:
        found = self._partition.offset_for_timestamp(timestamp_ms, FetchIsolation.HIGH_WATERMARK)
        return None if found is None else found.offset


class ShareFetchManager:
    def __init__(self, broker: BrokerCore) -> None:
        self.broker = broker
        self._sessions: dict[tuple[str, str], ShareSession] = {}
        self._partitions: dict[tuple[str, uuid.UUID, int], SharePartition] = {}
        # The share-partitions whose state the group coordinator initialised, by assigning them to a member
        # (Kafka's InitializeShareGroupState): until then a fetch acquires nothing from them, as Kafka's parks
        # while its persister has no state to read.
        self._initialised: set[tuple[str, uuid.UUID, int]] = set()
        self._journal = ShareStateJournal(broker)
        self._persisted = self._journal.load()
        broker.housekeeping.add(LOCKS_TICK, self._expire_locks, None)

    def _persist(self, key: tuple[str, uuid.UUID, int], share: SharePartition) -> None:
        partition = self._partition(key[1], key[2])
        self._journal.write(key, share.snapshot(), partition.leader_epoch if partition is not None else 0)

    def initialise(self, group_id: str, partitions: Iterable[TopicPartition]) -> None:
        """The group coordinator assigned these partitions to a member of `group_id`: they may be read."""
        self._initialised.update((group_id, topic_id, index) for topic_id, index in partitions)

    # ---- sessions ------------------------------------------------------------------------------------
    def open_session(self, group_id: str, member_id: str, epoch: int, wanted: Sequence[TopicPartition],
                     forgotten: Sequence[TopicPartition]) -> SessionOutcome:
        """The session a request runs in (SharePartitionManager.newContext); for the final epoch, the closed
        one, whose member's acquired records the caller releases once its acknowledgements are applied (`release`)."""
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            # The old session goes; what its member acquired stays its own until the locks expire (Kafka's
            # newContext only drops it from the cache).
            self._sessions.pop(key, None)
            opened = ShareSession(group_id, member_id, (tp for tp in wanted if tp not in set(forgotten)))
            self._sessions[key] = opened
            return SessionOutcome(ErrorCode.NONE, opened)
        session = self._sessions.get(key)
        if session is None:
            return SessionOutcome(ErrorCode.SHARE_SESSION_NOT_FOUND, None,
                                  f"Share session not found for member {member_id} in group {group_id}")
        if epoch == FINAL_EPOCH:
            del self._sessions[key]
            return SessionOutcome(ErrorCode.NONE, session)
        if epoch != session.epoch:
            return SessionOutcome(ErrorCode.INVALID_SHARE_SESSION_EPOCH, None,
                                  f"Invalid share session epoch {epoch}: expected {session.epoch}")
        for tp in wanted:
            session.partitions.setdefault(tp)
        for tp in forgotten:
            session.partitions.pop(tp, None)
        session.epoch = _next_epoch(session.epoch)
        return SessionOutcome(ErrorCode.NONE, session)

    def release(self, session: ShareSession) -> int:
        """Hand back whatever the session's member holds in its partitions (its session closed); returns how many
        share-partitions had something to give back."""
        released = 0
        for topic_id, index in session.partitions:
            key = (session.group_id, topic_id, index)
            share = self._partitions.get(key)
            if share is not None and share.release_acquired_records(session.member_id):
                released += 1
                self._persist(key, share)
        return released

    def member_left(self, group_id: str, member_id: str) -> int:
        """The group coordinator's word that a member left or was expelled: its session goes, its records
        are released; returns how many share-partitions had something to give back."""
        session = self._sessions.pop((group_id, member_id), None)
        released = 0 if session is None else self.release(session)
        for key, share in self._partitions.items():
            if key[0] == group_id and share.release_acquired_records(member_id):
                released += 1
                self._persist(key, share)
        return released

    def session_count(self) -> int:
        return len(self._sessions)

    # ---- partitions ------------------------------------------------------------------------------------
    def _partition(self, topic_id: uuid.UUID, index: int) -> Partition | None:
        topic = self.broker.topics.by_id(topic_id)
        if topic is None or not 0 <= index < len(topic.partitions):
            return None
        partition = topic.partitions[index]
        return partition if partition.is_open else None

    def share_config(self, group_id: str) -> ShareConfig:
        overrides = self.broker.group_configs.get(group_id)
        layers = self.broker.config_layers()
        return ShareConfig(
            record_lock_duration_ms=effective_int("share.record.lock.duration.ms", overrides, layers),
            delivery_count_limit=effective_int("share.delivery.count.limit", overrides, layers),
            max_in_flight_records=effective_int("share.partition.max.record.locks", overrides, layers),
            read_committed=overrides.get("share.isolation.level", "read_uncommitted") == "read_committed")

    def _share_partition(self, group_id: str, topic_id: uuid.UUID, index: int,
                         partition: Partition) -> SharePartition:
        key = (group_id, topic_id, index)
        share = self._partitions.get(key)
        if share is None:
            persisted = self._persisted.pop(key, None)
            if persisted is not None:
                start = max(persisted.start_offset, partition.log_start_offset)
                share = SharePartition.restored(start, persisted.batches, self.share_config(group_id))
            else:
                reset = self.broker.group_configs.get(group_id).get("share.auto.offset.reset", "latest")
                start = initial_start_offset(reset, _LogOffsets(partition), self.broker.clock.now_ms())
                share = SharePartition(start, self.share_config(group_id))
            self._partitions[key] = share
            self._persist(key, share)
        return share

    def all_share_partitions(self) -> list[tuple[str, uuid.UUID, int, SharePartition]]:
        """(group id, topic id, partition, its share-partition) of every share-partition made so far."""
        return [(group, topic_id, index, share) for (group, topic_id, index), share in self._partitions.items()]

    def acquire(self, group_id: str, member_id: str, topic_id: uuid.UUID, index: int, *, max_records: int,
                batch_size: int, max_bytes: int) -> Acquisition:
        partition = self._partition(topic_id, index)
        if partition is None:
            return Acquisition(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, b"", [])
        if not group_id:
            # Kafka's persister refuses the empty group id its ShareFetch accepts: the partition fails.
            return Acquisition(ErrorCode.UNKNOWN_SERVER_ERROR, b"", [])
        if (group_id, topic_id, index) not in self._initialised:
            return Acquisition(ErrorCode.NONE, b"", [])
        try:
            share = self._share_partition(group_id, topic_id, index, partition)
        except ShareOffsetError as exc:
            return Acquisition(ErrorCode.OFFSET_NOT_AVAILABLE, b"", [], str(exc))
        config = share.config
        isolation = FetchIsolation.TXN_COMMITTED if config.read_committed else FetchIsolation.HIGH_WATERMARK
        offset = share.next_fetch_offset()
        if not share.can_acquire_records() or offset >= partition.bound(isolation):
            return Acquisition(ErrorCode.NONE, b"", [])
        data = partition.read(offset, max_bytes, isolation=isolation, min_one_batch=True)
        records = bytes(data.records)
        batches = fetched_batches(records)
        aborted: list[FetchedAbort] = []
        if config.read_committed and batches:
            upper = partition.fetch_upper_bound(offset, len(records))
            aborted = [FetchedAbort(t.producer_id, t.first_offset)
                       for t in partition.aborted_transactions(offset, upper)]
        now = self.broker.clock.now_ms()
        acquired = share.acquire(member_id, batches, fetch_offset=offset, now_ms=now, max_records=max_records,
                                 batch_size=batch_size, read_committed=config.read_committed,
                                 aborted_transactions=aborted)
        if not acquired.records:
            return Acquisition(ErrorCode.NONE, b"", [])
        self._persist((group_id, topic_id, index), share)
        self._schedule(share)
        return Acquisition(ErrorCode.NONE, _covering(records, acquired.records), acquired.records)

    def acknowledge(self, group_id: str, member_id: str, topic_id: uuid.UUID, index: int,
                    batches: Sequence[AcknowledgementBatchEntry], renew_allowed: bool = False) -> AckOutcome:
        acks = [AcknowledgementBatch(b["first_offset"], b["last_offset"], list(b["acknowledge_types"]))
                for b in batches]
        checked = validate_acknowledgement_batches(acks, renew_allowed=renew_allowed)
        if not checked.ok:
            return checked
        partition = self._partition(topic_id, index)
        if partition is None:
            return AckOutcome(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        share = self._partitions.get((group_id, topic_id, index))
        if share is None:
            return AckOutcome(ErrorCode.INVALID_RECORD_STATE, "Share partition not found")
        outcome = share.acknowledge(member_id, acks, now_ms=self.broker.clock.now_ms(), renew_allowed=renew_allowed)
        if outcome.ok:
            self._persist((group_id, topic_id, index), share)
        self._schedule(share)
        return outcome

    # ---- locks ---------------------------------------------------------------------------------------
    def _schedule(self, share: SharePartition) -> None:
        deadline = share.next_lock_deadline()
        if deadline is not None:
            self.broker.housekeeping.schedule(LOCKS_TICK, deadline)

    def _expire_locks(self, now_ms: int) -> int | None:
        soonest: int | None = None
        for key, share in self._partitions.items():
            if share.expire_locks(now_ms):
                self._persist(key, share)
            deadline = share.next_lock_deadline()
            if deadline is not None and (soonest is None or deadline < soonest):
                soonest = deadline
        return soonest


    # ---- share-group offsets (DescribeShareGroupOffsets 90, AlterShareGroupOffsets 91, DeleteShareGroupOffsets 92)
    def start_offset(self, group_id: str, topic_id: uuid.UUID, index: int) -> int | None:
        """The share-partition start offset (SPSO); None where there is no state to tell: never initialised,
        or initialised and not read since (Kafka's share coordinator answers -1 for both)."""
        share = self._known((group_id, topic_id, index))
        return None if share is None else share.start_offset

    def lag(self, group_id: str, topic_id: uuid.UUID, index: int) -> int | None:
        """Kafka's share-partition lag (KIP-1226): the partition's high watermark less the start offset and the
        records already done with above it (acknowledged or archived: the delivery-complete count); None
        where the start offset is not known or the partition is gone."""
        share = self._known((group_id, topic_id, index))
        partition = self._partition(topic_id, index)
        if share is None or partition is None:
            return None
        start = share.start_offset
        complete = sum(row.last_offset - max(row.first_offset, start) + 1
                       for row in share.snapshot().in_flight
                       if row.state.is_terminal and row.last_offset >= start)
        return partition.high_watermark - start - complete

    def alter_start_offset(self, group_id: str, topic_id: uuid.UUID, index: int, offset: int) -> None:
        """AlterShareGroupOffsets: the share-partition starts afresh at `offset`, nothing in flight (Kafka's
        InitializeShareGroupState); -1 leaves the start to share.auto.offset.reset at the next fetch. The
        group has no members, so no one holds any of its records."""
        key = (group_id, topic_id, index)
        self._initialised.add(key)
        self._persisted.pop(key, None)
        if offset == -1:
            self._partitions.pop(key, None)
            self._journal.forget(key)
        else:
            self._partitions[key] = share = SharePartition(offset, self.share_config(group_id))
            self._persist(key, share)

    def delete_state(self, group_id: str, topic_id: uuid.UUID, index: int) -> None:
        """DeleteShareGroupOffsets: the share-partition's state is gone; it is read again only once the group
        coordinator initialises it anew (a member assigned it), from share.auto.offset.reset."""
        key = (group_id, topic_id, index)
        self._partitions.pop(key, None)
        self._initialised.discard(key)
        self._persisted.pop(key, None)
        self._journal.forget(key)

    def _known(self, key: tuple[str, uuid.UUID, int]) -> SharePartition | None:
        """The share-partition of `key` if it has state: made already, or persisted before a restart (then
        made from it now)."""
        share = self._partitions.get(key)
        if share is None and key in self._persisted:
            partition = self._partition(key[1], key[2])
            if partition is not None:
                share = self._share_partition(*key, partition)
        return share


def _covering(records: bytes, acquired: Sequence[AcquiredRecords]) -> bytes:
    """The batches read that hold an acquired offset (ShareFetchUtils.maybeSliceFetchRecords)."""
    low, high = acquired[0].first_offset, acquired[-1].last_offset
    start = end = None
    position = 0
    for batch in iter_batches(records):
        size = batch.size
        header = batch.header
        if header.last_offset >= low and header.base_offset <= high:
            start = position if start is None else start
            end = position + size
        position += size
    return records[start:end] if start is not None and end is not None else b""
