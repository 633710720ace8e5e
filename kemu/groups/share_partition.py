"""One share-partition of a share group (KIP-932): which records are in flight, in which state, held by whom.

The broker-side state machine Kafka keeps in `SharePartition` (core, kafka.server.share) with
`InFlightBatch` and `InFlightState` (server, org.apache.kafka.server.share.fetch), as kemu follows it for
Kafka 4.3. Synchronous and socket-free: time is passed in (`now_ms`), the fetched batches and the aborted
transactions come in as plain values, and every call finishes its state change before it returns (Kafka
persists each change through the share coordinator first and rolls it back when the write fails; kemu has
no persister yet, so a change is committed at once, and only a refused acknowledgement is rolled back).

The partition keeps
- the share-partition start offset (SPSO, `start_offset`): every record below it is done with;
- the end offset (SPEO, `end_offset`): the last offset it has acquired (or, with nothing in flight, the
  next one to fetch);
- the in-flight batches between them, keyed by first offset. A batch has one state for all its records
  until something touches part of it (a subset fetch or acknowledgement, a start offset moving into it),
  when it is split into one state per offset, for good.

A record is AVAILABLE, ACQUIRED (by one member, until its lock deadline), ACKNOWLEDGED or ARCHIVED; the
last two are terminal. Acquiring counts a delivery; a record released (by RELEASE, by its lock expiring or
by its member leaving) whose delivery count reached `group.share.delivery.count.limit` is ARCHIVED instead
of made AVAILABLE again. The start offset moves over the terminal records at the front.

Left out: the persister's initial read state and its gap window, the record-limit acquire mode
(ShareFetch v2's share_acquire_mode 1), group-level overrides of the settings (pass another
`ShareConfig`), metrics and the delivery-complete count behind the lag.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple, Protocol

from kemu.kafka_defaults import int_default
from kemu.wire.errors import ErrorCode
from kemu.wire.records import ControlRecordType, decode_control_key, iter_batches

# Kafka 4.3's broker defaults (ShareGroupConfig) and group-config defaults (GroupConfig).
DEFAULT_RECORD_LOCK_DURATION_MS = int_default("group.share.record.lock.duration.ms")  # share.record.lock.duration.ms
DEFAULT_DELIVERY_COUNT_LIMIT = int_default("group.share.delivery.count.limit")  # share.delivery.count.limit
DEFAULT_MAX_RECORD_LOCKS = int_default("group.share.partition.max.record.locks")  # share.partition.max.record.locks
DEFAULT_AUTO_OFFSET_RESET = "latest"  # share.auto.offset.reset
DEFAULT_ISOLATION_LEVEL = "read_uncommitted"  # share.isolation.level

NO_MEMBER = ""  # Kafka's EMPTY_MEMBER_ID: the owner of a record nobody holds
_MINIMUM_THROTTLE_LIMIT = 2  # SharePartition.MINIMUM_THROTTLE_RECORDS_DELIVERY_LIMIT


class RecordState(IntEnum):
    """A record's delivery state, with Kafka's ids (as the share coordinator stores them)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4

    @property
    def is_terminal(self) -> bool:
        return self in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


class AcknowledgeType(IntEnum):
    """ShareFetch/ShareAcknowledge acknowledge types; GAP (0) marks an offset with no record (compaction,
    a control record), RENEW (4, v2) extends the lock without changing the state."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


_STATE_FOR_ACK = {
    AcknowledgeType.GAP: RecordState.ARCHIVED,
    AcknowledgeType.ACCEPT: RecordState.ACKNOWLEDGED,
    AcknowledgeType.RELEASE: RecordState.AVAILABLE,
    AcknowledgeType.REJECT: RecordState.ARCHIVED,
}


@dataclass(frozen=True, slots=True)
class ShareConfig:
    """The settings a share-partition reads (a group's config where it sets them, else the broker's)."""

    record_lock_duration_ms: int = DEFAULT_RECORD_LOCK_DURATION_MS
    delivery_count_limit: int = DEFAULT_DELIVERY_COUNT_LIMIT
    max_in_flight_records: int = DEFAULT_MAX_RECORD_LOCKS
    read_committed: bool = False  # share.isolation.level=read_committed

    @property
    def throttle_delivery_limit(self) -> int:
        """Records delivered this often are handed out in ever smaller sets (half the limit, rounded up)."""
        return max(_MINIMUM_THROTTLE_LIMIT, -(-self.delivery_count_limit // 2))


class FetchedBatch(NamedTuple):
    """What acquisition needs of one record batch the log returned: its offsets and transactional marks."""

    base_offset: int
    last_offset: int
    producer_id: int = -1
    is_transactional: bool = False
    is_abort_marker: bool = False  # a control batch whose first record is an ABORT marker


class FetchedAbort(NamedTuple):
    """One aborted transaction overlapping the fetched range, as a read_committed Fetch reports it."""

    producer_id: int
    first_offset: int


class AcknowledgementBatch(NamedTuple):
    """One acknowledgement: a single type for the whole range, or one type per offset."""

    first_offset: int
    last_offset: int
    acknowledge_types: Sequence[int]


class AcquiredRecords(NamedTuple):
    """A range handed to a member (ShareFetch's AcquiredRecords)."""

    first_offset: int
    last_offset: int
    delivery_count: int


class Acquired(NamedTuple):
    records: list[AcquiredRecords]
    record_count: int  # records acquired (the ranges of a read_committed fetch leave the aborted ones out)


class AckOutcome(NamedTuple):
    """A partition's answer to an acknowledgement: NONE, or Kafka's error code with its message."""

    error: ErrorCode = ErrorCode.NONE
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.error == ErrorCode.NONE


class InFlightRecords(NamedTuple):
    """One row of `SharePartition.snapshot()`: a whole batch, or one offset of a split batch."""

    first_offset: int
    last_offset: int
    state: RecordState
    member_id: str | None  # None: held by nobody
    delivery_count: int
    lock_deadline_ms: int | None  # when an ACQUIRED record's lock expires
    per_offset: bool  # part of a batch kept per offset


class ShareState(NamedTuple):
    start_offset: int
    end_offset: int
    in_flight: tuple[InFlightRecords, ...]


class OffsetLookup(Protocol):
    """The log's answers `initial_start_offset` needs (all read_uncommitted, as Kafka asks them)."""

    def log_start_offset(self) -> int: ...

    def high_watermark(self) -> int: ...

    def offset_for_timestamp(self, timestamp_ms: int) -> int | None: ...


class ShareOffsetError(Exception):
    """The start offset cannot be found (OFFSET_NOT_AVAILABLE)."""

    error = ErrorCode.OFFSET_NOT_AVAILABLE


class _AcknowledgementRefused(Exception):
    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error, self.message = error, message


def _invalid_state(message: str) -> _AcknowledgementRefused:
    return _AcknowledgementRefused(ErrorCode.INVALID_RECORD_STATE, message)


class _Delivery:
    """The state of a batch or of one offset (Kafka's InFlightState)."""

    __slots__ = ("state", "delivery_count", "member_id", "deadline_ms")

    def __init__(self, state: RecordState, delivery_count: int, member_id: str, deadline_ms: int | None) -> None:
        self.state, self.delivery_count = state, delivery_count
        self.member_id, self.deadline_ms = member_id, deadline_ms

    def copy(self) -> _Delivery:
        return _Delivery(self.state, self.delivery_count, self.member_id, self.deadline_ms)

    def restore(self, saved: _Delivery) -> None:
        self.state, self.delivery_count = saved.state, saved.delivery_count
        self.member_id, self.deadline_ms = saved.member_id, saved.deadline_ms

    def move(self, new: RecordState, count_change: int, limit: int, member_id: str,
             deadline_ms: int | None = None) -> bool:
        """InFlightState.tryUpdateState: made AVAILABLE at the delivery limit it is ARCHIVED instead."""
        if new is RecordState.AVAILABLE and count_change >= 0 and self.delivery_count >= limit:
            new = RecordState.ARCHIVED
        if (new is self.state or self.state.is_terminal
                or (self.state is RecordState.AVAILABLE and new is not RecordState.ACQUIRED)):
            return False
        self.state = new
        if new is not RecordState.ARCHIVED:
            self.delivery_count += count_change
        self.member_id = member_id
        self.deadline_ms = deadline_ms if new is RecordState.ACQUIRED else None
        return True

    def archive(self) -> None:
        self.state, self.member_id, self.deadline_ms = RecordState.ARCHIVED, NO_MEMBER, None


class _Batch:
    """An in-flight batch (Kafka's InFlightBatch): one `_Delivery` for all, or one per offset once split."""

    __slots__ = ("first", "last", "whole", "offsets")

    def __init__(self, first: int, last: int, whole: _Delivery) -> None:
        self.first, self.last = first, last
        self.whole: _Delivery | None = whole
        self.offsets: dict[int, _Delivery] | None = None

    def split(self) -> dict[int, _Delivery]:
        if self.offsets is None:
            assert self.whole is not None
            self.offsets = {offset: self.whole.copy() for offset in range(self.first, self.last + 1)}
            self.whole = None
        return self.offsets

    def deliveries(self) -> Iterator[tuple[int, int, _Delivery]]:
        if self.offsets is None:
            assert self.whole is not None
            yield self.first, self.last, self.whole
        else:
            for offset, delivery in self.offsets.items():
                yield offset, offset, delivery


class SharePartition:
    """The in-flight state of one topic-partition for one share group."""

    def __init__(self, start_offset: int, config: ShareConfig | None = None) -> None:
        self.config = config or ShareConfig()
        self._start = start_offset
        self._end = start_offset
        self._keys: list[int] = []  # first offsets of the cached batches, ascending
        self._batches: dict[int, _Batch] = {}

    @classmethod
    def restored(cls, start_offset: int, batches: Iterable[tuple[int, int, RecordState, int]],
                 config: ShareConfig | None = None) -> SharePartition:
        """A share-partition as its persisted state had it (SharePartition.maybeInitialize over the share
        coordinator's snapshot): the start offset and the state batches (first, last, state, delivery count).
        Nothing is held by a member after a restart: an ACQUIRED batch (not a state Kafka persists) comes back
        AVAILABLE with its delivery count; batches below the start offset are left out."""
        share = cls(start_offset, config)
        for first, last, state, count in sorted(batches, key=lambda batch: batch[0]):
            if last < start_offset or last < first:
                continue
            kept = RecordState.AVAILABLE if state is RecordState.ACQUIRED else state
            share._add(_Batch(max(first, start_offset), last, _Delivery(kept, count, NO_MEMBER, None)))
        if share._keys:
            share._end = share._batches[share._keys[-1]].last
        return share

    @property
    def start_offset(self) -> int:
        return self._start

    @property
    def end_offset(self) -> int:
        return self._end

    # -- the cache ----------------------------------------------------------------------------------------

    def _floor(self, offset: int) -> _Batch | None:
        index = bisect.bisect_right(self._keys, offset)
        return self._batches[self._keys[index - 1]] if index else None

    def _between(self, low: int, high: int) -> list[_Batch]:
        """Batches whose first offset is in [low, high]."""
        lo, hi = bisect.bisect_left(self._keys, low), bisect.bisect_right(self._keys, high)
        return [self._batches[key] for key in self._keys[lo:hi]]

    def _add(self, batch: _Batch) -> None:
        bisect.insort(self._keys, batch.first)
        self._batches[batch.first] = batch

    def _drop_through(self, key: int) -> None:
        """Forget the batches whose first offset is at most `key`."""
        cut = bisect.bisect_right(self._keys, key)
        for first in self._keys[:cut]:
            del self._batches[first]
        del self._keys[:cut]

    def _in_flight_count(self) -> int:
        return self._end - self._start + 1 if self._keys else 0

    def _start_within(self, first: int, last: int) -> bool:
        return first < self._start <= last

    # -- inspection ---------------------------------------------------------------------------------------

    def snapshot(self) -> ShareState:
        rows = tuple(
            InFlightRecords(first, last, d.state, d.member_id or None, d.delivery_count, d.deadline_ms,
                            batch.offsets is not None)
            for key in self._keys for batch in (self._batches[key],) for first, last, d in batch.deliveries())
        return ShareState(self._start, self._end, rows)

    def next_fetch_offset(self) -> int:
        """Where the next fetch for this partition reads from: the first AVAILABLE record in flight, else
        past the end."""
        if not self._keys or self._start > self._batches[self._keys[-1]].last:
            return self._end
        for key in self._keys:
            for first, _, delivery in self._batches[key].deliveries():
                if delivery.state is RecordState.AVAILABLE:
                    return first
        return self._end + 1

    def can_acquire_records(self) -> bool:
        """Whether a fetch may acquire anything: records to redeliver, or room under the in-flight limit."""
        if self.next_fetch_offset() != self._end + 1:
            return True
        return self._in_flight_count() < self.config.max_in_flight_records

    def next_lock_deadline(self) -> int | None:
        """The earliest lock deadline of an ACQUIRED record, for the shell's timer."""
        deadlines = [d.deadline_ms for key in self._keys for _, _, d in self._batches[key].deliveries()
                     if d.state is RecordState.ACQUIRED and d.deadline_ms is not None]
        return min(deadlines, default=None)

    # -- acquisition --------------------------------------------------------------------------------------

    def acquire(self, member_id: str, batches: Sequence[FetchedBatch], *, fetch_offset: int, now_ms: int,
                max_records: int, batch_size: int, read_committed: bool | None = None,
                aborted_transactions: Iterable[FetchedAbort] = ()) -> Acquired:
        """Acquire for `member_id` what the log returned reading from `fetch_offset` (batch-optimized mode):
        new records past the end, and AVAILABLE in-flight records again (their delivery count goes up).
        `max_records` is soft (whole batches are acquired); `batch_size` splits new ranges on batch
        boundaries. Under read_committed the records of `aborted_transactions` are archived, not handed out."""
        if max_records <= 0 or not batches:
            return Acquired([], 0)
        last_to_acquire, most = self._acquire_limits(fetch_offset, max_records, batches[-1].last_offset)
        if most <= 0:
            return Acquired([], 0)
        first_fetched = batches[0].base_offset
        self._archive_stale(fetch_offset, first_fetched)
        base = first_fetched
        floor = self._floor(base)
        if floor is None:
            base = max(base, self._start)
        elif floor.last >= base:
            base = floor.first
        overlapping = self._between(base, last_to_acquire)
        if not overlapping:
            fresh = self._acquire_new(member_id, batches, first_fetched, last_to_acquire, batch_size, most, now_ms)
            return self._without_aborted(fresh, batches, read_committed, aborted_transactions)
        result: list[AcquiredRecords] = []
        count = 0
        limit, lock_until = self.config.delivery_count_limit, now_ms + self.config.record_lock_duration_ms
        for batch in overlapping:
            if count >= most:
                break
            whole_match = batch.first >= first_fetched and batch.last <= last_to_acquire
            throttle = self._throttled(batch, first_fetched, last_to_acquire)
            if throttle and count > 0:
                most = 0
                break
            if not whole_match or batch.offsets is not None or throttle:
                if batch.offsets is None:
                    assert batch.whole is not None
                    if batch.whole.state is not RecordState.AVAILABLE:
                        continue
                    batch.split()
                taken = self._acquire_offsets(member_id, first_fetched, last_to_acquire, batch, result, lock_until)
                count += taken
                if throttle and taken > 0:
                    most = 0
                    break
                continue
            assert batch.whole is not None
            if batch.whole.state is not RecordState.AVAILABLE:
                continue
            if not batch.whole.move(RecordState.ACQUIRED, 1, limit, member_id, lock_until):
                continue
            result.append(AcquiredRecords(batch.first, batch.last, batch.whole.delivery_count))
            count += batch.last - batch.first + 1
        if count < most and overlapping[-1].last < last_to_acquire:
            fresh = self._acquire_new(member_id, batches, overlapping[-1].last + 1, last_to_acquire, batch_size,
                                      most - count, now_ms)
            result += fresh.records
            count += fresh.record_count
        if not result:
            return Acquired(result, count)
        return self._without_aborted(Acquired(result, count), batches, read_committed, aborted_transactions)

    def _acquire_limits(self, fetch_offset: int, max_records: int, last_offset: int) -> tuple[int, int]:
        """The last offset and the number of records this fetch may acquire under the in-flight limit; at
        the limit only records already in flight (up to the end offset) can be acquired again."""
        most = min(max_records, self.config.max_in_flight_records - self._in_flight_count())
        if most <= 0 and fetch_offset <= self._end:
            return min(last_offset, self._end), min(max_records, self._end - fetch_offset + 1)
        return last_offset, most

    def _acquire_new(self, member_id: str, batches: Sequence[FetchedBatch], first: int, last: int,
                     batch_size: int, most: int, now_ms: int) -> Acquired:
        if not self._keys and self._end > first:
            first = self._end
        if most < last - first + 1:
            last = _last_offset_of_batch_holding(batches, first + most - 1)
        lock_until = now_ms + self.config.record_lock_duration_ms
        ranges: list[AcquiredRecords] = []
        current = first
        if last - first + 1 > batch_size:
            for fetched in batches:
                if fetched.base_offset > last:
                    break
                if fetched.base_offset - current >= batch_size:
                    ranges.append(AcquiredRecords(current, fetched.base_offset - 1, 1))
                    current = fetched.base_offset
        ranges.append(AcquiredRecords(current, last, 1))
        for acquired in ranges:
            self._add(_Batch(acquired.first_offset, acquired.last_offset,
                             _Delivery(RecordState.ACQUIRED, 1, member_id, lock_until)))
        if self._keys[0] == first:
            self._start = first
        self._end = max(self._end, last)
        return Acquired(ranges, last - first + 1)

    def _acquire_offsets(self, member_id: str, first: int, last: int, batch: _Batch,
                         result: list[AcquiredRecords], lock_until: int) -> int:
        """Acquire the AVAILABLE offsets of a split batch within [first, last]. A record on its last
        delivery goes alone; past the throttle limit ever fewer records of the batch go at once."""
        offsets = batch.split()
        limit, throttle_limit = self.config.delivery_count_limit, self.config.throttle_delivery_limit
        taken, throttled_most = 0, -1
        for offset, delivery in offsets.items():
            if offset < first:
                continue
            if offset > last:
                break
            if delivery.state is not RecordState.AVAILABLE:
                continue
            count = delivery.delivery_count
            if limit > 2 and count == limit - 1 and taken > 0:
                break
            if count >= throttle_limit and throttled_most < 0:
                throttled_most = max(1, len(offsets) >> (count - throttle_limit + 1))
            if not delivery.move(RecordState.ACQUIRED, 1, limit, member_id, lock_until):
                continue
            result.append(AcquiredRecords(offset, offset, delivery.delivery_count))
            taken += 1
            if limit > 2 and delivery.delivery_count == limit:
                break
            if taken == throttled_most:
                break
        return taken

    def _throttled(self, batch: _Batch, first: int, last: int) -> bool:
        throttle_limit = self.config.throttle_delivery_limit
        if batch.offsets is None:
            assert batch.whole is not None
            return batch.whole.delivery_count >= throttle_limit
        counts = [d.delivery_count for offset, d in batch.offsets.items()
                  if first <= offset <= last and d.state is RecordState.AVAILABLE]
        return max(counts, default=0) >= throttle_limit

    def _archive_stale(self, fetch_offset: int, first_fetched: int) -> None:
        """A fetch whose first batch starts past the fetch offset skipped records compaction removed: the
        AVAILABLE ones in between are archived so the start offset can pass them."""
        if not self._keys or fetch_offset >= first_fetched:
            return
        floor = self._floor(fetch_offset)
        low = floor.first if floor is not None and floor.last >= fetch_offset else fetch_offset
        stale = [batch for batch in self._between(low, first_fetched) if batch.first < first_fetched]
        self._archive(fetch_offset, first_fetched, stale, RecordState.AVAILABLE)

    def _archive(self, low: int, end: int, batches: Iterable[_Batch], initial: RecordState) -> bool:
        """Archive the records in `initial` state within [low, end); whether any was."""
        archived = False
        for batch in batches:
            if batch.first >= end:
                break
            if batch.offsets is None and batch.first >= low and batch.last <= end - 1:
                assert batch.whole is not None
                if batch.whole.state is initial:
                    batch.whole.archive()
                    archived = True
                continue
            if batch.offsets is None:
                assert batch.whole is not None
                if batch.whole.state is not initial:
                    continue
            for offset, delivery in batch.split().items():
                if low <= offset <= end - 1 and delivery.state is initial:
                    delivery.archive()
                    archived = True
        return archived

    def _without_aborted(self, acquired: Acquired, batches: Sequence[FetchedBatch], read_committed: bool | None,
                         aborted_transactions: Iterable[FetchedAbort]) -> Acquired:
        if read_committed is None:
            read_committed = self.config.read_committed
        aborted = sorted(aborted_transactions, key=lambda txn: txn.first_offset)
        if not read_committed or not aborted:
            return acquired
        dropped = _aborted_batches(batches, aborted)
        for fetched in dropped:
            floor = self._floor(fetched.base_offset)
            if floor is not None:
                self._archive(fetched.base_offset, fetched.last_offset + 1,
                              self._between(floor.first, fetched.last_offset), RecordState.ACQUIRED)
        records = _cut(acquired.records, [(b.base_offset, b.last_offset) for b in dropped])
        return Acquired(records, sum(r.last_offset - r.first_offset + 1 for r in records))

    # -- acknowledgement ----------------------------------------------------------------------------------

    def acknowledge(self, member_id: str, batches: Sequence[AcknowledgementBatch], *, now_ms: int,
                    renew_allowed: bool = False) -> AckOutcome:
        """Apply a member's acknowledgements for this partition, all or nothing: the first refused one rolls
        back the others. `renew_allowed` is a v2 request's is_renew_ack."""
        refused = validate_acknowledgement_batches(batches, renew_allowed=renew_allowed)
        if not refused.ok:
            return refused
        saved: list[tuple[_Delivery, _Delivery]] = []
        try:
            for ack in batches:
                types = [AcknowledgeType(t) for t in ack.acknowledge_types]
                if ack.last_offset < self._start:
                    continue
                self._acknowledge_batch(member_id, ack, types, self._acknowledged_batches(ack), saved, now_ms)
        except _AcknowledgementRefused as exc:
            for delivery, before in reversed(saved):
                delivery.restore(before)
            return AckOutcome(exc.error, exc.message)
        self._advance_start()
        return AckOutcome()

    def _acknowledged_batches(self, ack: AcknowledgementBatch) -> list[_Batch]:
        floor = self._floor(ack.first_offset)
        if floor is None and self._start_within(ack.first_offset, ack.last_offset):
            floor = self._floor(self._start)
        if floor is None:
            raise _invalid_state("Batch record not found. The request batch offsets are not found in the cache.")
        found = self._between(floor.first, ack.last_offset)
        if found[-1].last < ack.first_offset:
            raise _AcknowledgementRefused(ErrorCode.INVALID_REQUEST,
                           "Batch record not found. The first offset in request is past acquired records.")
        if ack.last_offset > found[-1].last:
            raise _AcknowledgementRefused(ErrorCode.INVALID_REQUEST,
                           "Batch record not found. The last offset in request is past acquired records.")
        return found

    def _acknowledge_batch(self, member_id: str, ack: AcknowledgementBatch, types: list[AcknowledgeType],
                           found: list[_Batch], saved: list[tuple[_Delivery, _Delivery]], now_ms: int) -> None:
        for batch in found:
            if batch.last < self._start:
                continue
            if batch.whole is not None:
                if batch.whole.member_id == NO_MEMBER:
                    raise _invalid_state("The batch cannot be acknowledged. The batch is not in the acquired state.")
                if batch.whole.member_id != member_id:
                    raise _invalid_state("Member is not the owner of batch record")
            whole_match = batch.first >= ack.first_offset and batch.last <= ack.last_offset
            if (whole_match and batch.whole is not None and len(types) == 1
                    and not self._start_within(batch.first, batch.last)):
                if batch.whole.state is not RecordState.ACQUIRED:
                    raise _invalid_state("The batch cannot be acknowledged. The batch is not in the acquired state.")
                self._apply(batch.whole, types[0], member_id, saved, now_ms)
                continue
            if batch.whole is not None and batch.whole.state is not RecordState.ACQUIRED:
                raise _invalid_state("The batch cannot be acknowledged. The subset batch is not in the acquired state.")
            for offset, delivery in batch.split().items():
                if offset < ack.first_offset or offset < self._start:
                    continue
                if offset > ack.last_offset:
                    break
                if delivery.state is not RecordState.ACQUIRED:
                    raise _invalid_state("The offset cannot be acknowledged. The offset is not acquired.")
                if delivery.member_id != member_id:
                    raise _invalid_state("Member is not the owner of offset")
                ack_type = types[offset - ack.first_offset] if len(types) > 1 else types[0]
                self._apply(delivery, ack_type, member_id, saved, now_ms)

    def _apply(self, delivery: _Delivery, ack_type: AcknowledgeType, member_id: str,
               saved: list[tuple[_Delivery, _Delivery]], now_ms: int) -> None:
        saved.append((delivery, delivery.copy()))
        if ack_type is AcknowledgeType.RENEW:
            delivery.deadline_ms = now_ms + self.config.record_lock_duration_ms
            return
        if not delivery.move(_STATE_FOR_ACK[ack_type], 0, self.config.delivery_count_limit, NO_MEMBER):
            raise _invalid_state("Unable to acknowledge records for the batch")

    # -- release, expiry, log start -----------------------------------------------------------------------

    def release_acquired_records(self, member_id: str) -> int:
        """A member left (or closed its share session): what it holds becomes AVAILABLE again, or ARCHIVED
        at the delivery limit or below the start offset. Returns how many records it held."""
        released = 0
        limit = self.config.delivery_count_limit
        for key in list(self._keys):
            batch = self._batches[key]
            if (batch.whole is not None and batch.whole.state is RecordState.ACQUIRED
                    and batch.whole.member_id == member_id and self._start_within(batch.first, batch.last)):
                batch.split()
            if batch.offsets is not None:
                for offset, delivery in batch.offsets.items():
                    if delivery.member_id not in (member_id, NO_MEMBER):
                        break  # as Kafka: another member's offset ends the release within this batch
                    if delivery.state is RecordState.ACQUIRED:
                        new = RecordState.ARCHIVED if offset < self._start else RecordState.AVAILABLE
                        released += delivery.move(new, 0, limit, NO_MEMBER)
                continue
            assert batch.whole is not None
            if batch.whole.member_id == member_id and batch.whole.state is RecordState.ACQUIRED:
                new = RecordState.ARCHIVED if batch.last < self._start else RecordState.AVAILABLE
                if batch.whole.move(new, 0, limit, NO_MEMBER):
                    released += batch.last - batch.first + 1
        self._advance_start()
        return released

    def expire_locks(self, now_ms: int) -> int:
        """Release every ACQUIRED record whose lock deadline is at or before `now_ms` (AVAILABLE again, or
        ARCHIVED at the delivery limit or below the start offset). Returns how many records expired."""
        expired = 0
        limit = self.config.delivery_count_limit
        for key in list(self._keys):
            batch = self._batches[key]
            whole = batch.whole
            if (whole is not None and _expired(whole, now_ms)
                    and self._start_within(batch.first, batch.last)):
                batch.split()
            if batch.whole is not None:
                if _expired(batch.whole, now_ms):
                    new = RecordState.ARCHIVED if batch.last < self._start else RecordState.AVAILABLE
                    if batch.whole.move(new, 0, limit, NO_MEMBER):
                        expired += batch.last - batch.first + 1
                continue
            assert batch.offsets is not None
            for offset, delivery in batch.offsets.items():
                if _expired(delivery, now_ms):
                    new = RecordState.ARCHIVED if offset < self._start else RecordState.AVAILABLE
                    expired += delivery.move(new, 0, limit, NO_MEMBER)
        if expired:
            self._advance_start()
        return expired

    def update_log_start_offset(self, log_start_offset: int) -> None:
        """The log's start moved (retention, DeleteRecords): the start offset follows it, and AVAILABLE
        records below it are archived (ACQUIRED ones are archived when their lock is released)."""
        if log_start_offset <= self._start:
            return
        if not self._keys:
            self._start = self._end = log_start_offset
            return
        self._archive(self._start, log_start_offset, [self._batches[key] for key in self._keys],
                      RecordState.AVAILABLE)
        self._start = log_start_offset
        self._end = max(self._end, self._start)

    def _advance_start(self) -> None:
        """Move the start offset past the terminal records at the front, forgetting the batches it passed
        whole (Kafka's maybeUpdateCachedStateAndOffsets)."""
        if not self._can_move_start():
            return
        last_done = -1
        for key in self._keys:
            stop = False
            for _, last, delivery in self._batches[key].deliveries():
                if not delivery.state.is_terminal:
                    stop = True
                    break
                last_done = last
            if stop:
                break
        if last_done == -1:
            return
        last_cached = self._batches[self._keys[-1]].last
        if last_done == last_cached:
            self._start = self._end = last_cached + 1
            self._keys.clear()
            self._batches.clear()
            return
        holder = self._floor(last_done)
        assert holder is not None
        if last_done == holder.last:
            higher = self._keys[bisect.bisect_right(self._keys, last_done)]
            self._start = max(self._start, higher)
            self._drop_through(holder.first)
            return
        self._start = max(self._start, last_done + 1)
        index = self._keys.index(holder.first)
        if index:
            self._drop_through(self._keys[index - 1])

    def _can_move_start(self) -> bool:
        holder = self._floor(self._start)
        if holder is None:
            return False
        if holder.whole is not None:
            return holder.whole.state.is_terminal
        assert holder.offsets is not None
        delivery = holder.offsets.get(self._start)
        return delivery is not None and delivery.state.is_terminal


def _expired(delivery: _Delivery, now_ms: int) -> bool:
    return (delivery.state is RecordState.ACQUIRED and delivery.deadline_ms is not None
            and delivery.deadline_ms <= now_ms)


def _last_offset_of_batch_holding(batches: Sequence[FetchedBatch], offset: int) -> int:
    """The last offset of the fetched batch holding `offset`, so whole batches are acquired."""
    holder = None
    for fetched in batches:
        if offset < fetched.base_offset:
            break
        holder = fetched
    return holder.last_offset if holder is not None and offset <= holder.last_offset else offset


def _aborted_batches(batches: Sequence[FetchedBatch], aborted: list[FetchedAbort]) -> list[FetchedBatch]:
    """The transactional batches of aborted transactions, as a read_committed consumer skips them: a
    producer's transaction is aborted from its first offset up to its ABORT marker."""
    pending = list(aborted)
    open_aborts: set[int] = set()
    found = []
    for fetched in batches:
        if fetched.producer_id < 0:
            continue
        while pending and pending[0].first_offset <= fetched.last_offset:
            open_aborts.add(pending.pop(0).producer_id)
        if fetched.is_abort_marker:
            open_aborts.discard(fetched.producer_id)
        elif fetched.is_transactional and fetched.producer_id in open_aborts:
            found.append(fetched)
    return found


def _cut(records: list[AcquiredRecords], holes: list[tuple[int, int]]) -> list[AcquiredRecords]:
    """The acquired ranges without the offsets of `holes` (sorted, disjoint)."""
    out: list[AcquiredRecords] = []
    for first, last, count in records:
        for low, high in holes:
            if high < first or low > last:
                continue
            if low > first:
                out.append(AcquiredRecords(first, low - 1, count))
            first = high + 1
            if first > last:
                break
        if first <= last:
            out.append(AcquiredRecords(first, last, count))
    return out


def validate_acknowledgement_batches(batches: Sequence[AcknowledgementBatch], *,
                                     renew_allowed: bool = False) -> AckOutcome:
    """The checks Kafka's request handler makes of one partition's acknowledgement batches before the
    share-partition sees them (KafkaApis.validateAcknowledgementBatches), then SharePartition's own check
    of the types; any failure is INVALID_REQUEST for the partition."""
    previous_last = -1
    highest = AcknowledgeType.RENEW if renew_allowed else AcknowledgeType.REJECT
    for ack in batches:
        types = list(ack.acknowledge_types)
        if ack.first_offset > ack.last_offset:
            return AckOutcome(ErrorCode.INVALID_REQUEST, "First offset is greater than the last offset.")
        if ack.first_offset < previous_last:
            return AckOutcome(ErrorCode.INVALID_REQUEST, "Acknowledgement batches overlap or are out of order.")
        if not types:
            return AckOutcome(ErrorCode.INVALID_REQUEST, "Acknowledge types are missing.")
        if len(types) > 1 and ack.last_offset - ack.first_offset != len(types) - 1:
            return AckOutcome(ErrorCode.INVALID_REQUEST, "Acknowledge types do not match the offsets.")
        if any(t < 0 or t > highest for t in types):
            return AckOutcome(ErrorCode.INVALID_REQUEST, f"Invalid acknowledge type: {types}")
        previous_last = ack.last_offset
    return AckOutcome()


# -- the initial position -----------------------------------------------------------------------------------

_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?",
    re.IGNORECASE)


def parse_iso_duration_ms(text: str) -> int:
    """Java's Duration.parse (PnDTnHnMn.nS), in milliseconds."""
    match = _DURATION.fullmatch(text)
    if match is None or match.group(3) == "T" or not any(match.group(i) for i in (2, 4, 5, 6)):
        raise ValueError(f"Text cannot be parsed to a Duration: {text}")
    sign, days, _, hours, minutes, seconds, fraction = match.groups()
    fraction_sign = -1 if (seconds or "").startswith("-") else 1
    total = (int(days or 0) * 86_400_000 + int(hours or 0) * 3_600_000 + int(minutes or 0) * 60_000
             + int(seconds or 0) * 1000 + fraction_sign * int(((fraction or "") + "000")[:3]))
    return -total if sign == "-" else total


def parse_auto_offset_reset(text: str) -> tuple[str, int | None]:
    """share.auto.offset.reset: ("latest", None), ("earliest", None) or ("by_duration", milliseconds)."""
    lowered = text.strip().lower()
    if lowered in ("latest", "earliest"):
        return lowered, None
    if lowered.startswith("by_duration:"):
        duration_ms = parse_iso_duration_ms(text.strip()[len("by_duration:"):])
        if duration_ms < 0:
            raise ValueError(f"Negative duration is not supported in share.auto.offset.reset: {text}")
        return "by_duration", duration_ms
    raise ValueError(f"Invalid value {text} for configuration share.auto.offset.reset")


def initial_start_offset(auto_offset_reset: str, log: OffsetLookup, now_ms: int) -> int:
    """The start offset of a share-partition the group has no state for: the high watermark (latest, the
    default), the log start (earliest), or the first offset stamped at or after now - duration."""
    strategy, duration_ms = parse_auto_offset_reset(auto_offset_reset)
    if strategy == "latest":
        return log.high_watermark()
    if strategy == "earliest":
        return log.log_start_offset()
    assert duration_ms is not None
    offset = log.offset_for_timestamp(now_ms - duration_ms)
    if offset is None:
        raise ShareOffsetError(f"No offset found for timestamp {now_ms - duration_ms}")
    return offset


def fetched_batches(data: bytes | bytearray | memoryview) -> list[FetchedBatch]:
    """What `acquire` needs of the v2 record batches a log read returned."""
    found = []
    for batch in iter_batches(data):
        header = batch.header
        abort = False
        if header.is_control and header.records_count:
            records = batch.records()
            abort = bool(records) and decode_control_key(records[0].key)[1] == ControlRecordType.ABORT
        found.append(FetchedBatch(header.base_offset, header.last_offset, header.producer_id,
                                  header.is_transactional, abort))
    return found
