"""The exactly-once checker: what no real broker tells a test — that its read_committed consumer was handed
aborted or uncommitted records, that an idempotent producer's retry landed twice, that offsets went missing.

It keeps its own account of every partition's log (a *ledger*), read batch by batch from the log itself and
not from the broker's producer state or aborted-transaction index, since those are what it checks: which
transactions are open (so the last stable offset by the log), which ended in an ABORT marker, which producer
sequences are stored where, and the next offset the log must continue at. Three rules:

- **aborted-read / uncommitted-read** — a read_committed Fetch response carried records at or after the last
  stable offset (an open transaction's, or behind one), or a batch of an aborted transaction that its
  `aborted_transactions` does not declare, so the client could not filter it. Judged when the exchange is
  observed (on the broker's thread, just after the handler answered): the last stable offset only moves
  forward, so a response can only look better then than when it was read, never worse.
- **duplicate-append** — the log holds the same producer id, epoch and (overlapping) sequences twice, at
  different offsets: a retry the broker appended instead of acknowledging.
- **offset-gap** — consecutive batches do not continue each other's offsets, or the log end lies past the last
  batch. Nothing in kemu may leave one: it does not compact, control records take offsets like any record,
  and DeleteRecords and retention only move the log start (the ledger starts again there).

Traffic reaches it as a request observer of the server (`hooks.observe(checker.observe)`); the log rules are
also brought up to date by every `inspect()`, so a broker served without the observer still gets those two.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from kemu.broker.broker import BrokerCore
from kemu.broker.partition import Partition
from kemu.log import LogError
from kemu.wire.records import (
    HEADER_SIZE,
    MAGIC_OFFSET,
    BatchHeader,
    ControlRecordType,
    RecordBatch,
    RecordsError,
    batch_slices,
    decode_control_key,
)

if TYPE_CHECKING:
    from kemu.server.hooks import Exchange

PRODUCE = 0
FETCH = 1
SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79
ACCEPT = 1
READ_COMMITTED = 1
# A response of a broken broker could repeat one mistake in every poll; the first ones tell the story.
MAX_VIOLATIONS = 1000
INT32_MAX = 0x7FFFFFFF
MAGIC_V2 = 2


# ---- violations ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Violation:
    """One broken exactly-once promise, in the partition where it happened."""

    rule: ClassVar[str] = "violation"
    topic: str
    partition: int

    def describe(self) -> str:
        """What went wrong, in a sentence; each kind of violation says it in its own words."""
        details = {k: v for k, v in asdict(self).items() if k not in ("topic", "partition")}
        return ", ".join(f"{name} {value}" for name, value in details.items()) or self.rule

    def __str__(self) -> str:
        return f"{self.rule} in {self.topic}-{self.partition}: {self.describe()}"

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, **asdict(self), "description": self.describe()}


@dataclass(frozen=True, slots=True)
class AbortedRead(Violation):
    """A read_committed Fetch response carried a batch of an aborted transaction without declaring that
    transaction in its aborted_transactions: the client had no way to drop it."""

    rule: ClassVar[str] = "aborted-read"
    producer_id: int
    first_offset: int
    last_offset: int
    transaction_first_offset: int
    abort_marker_offset: int
    client_id: str | None
    correlation_id: int

    def describe(self) -> str:
        return (f"a read_committed fetch (client {self.client_id!r}, correlation id {self.correlation_id}) "
                f"returned offsets {self.first_offset}-{self.last_offset} of producer {self.producer_id}'s "
                f"transaction aborted at offset {self.abort_marker_offset}, and did not declare it aborted")


@dataclass(frozen=True, slots=True)
class UncommittedRead(Violation):
    """A read_committed Fetch response carried records at or after the last stable offset."""

    rule: ClassVar[str] = "uncommitted-read"
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    # The first offset of the batch's own transaction when it is still open; None for records merely
    # behind another producer's open transaction.
    open_transaction_first_offset: int | None
    client_id: str | None
    correlation_id: int

    def describe(self) -> str:
        own = (f" of producer {self.producer_id}'s transaction, open since offset "
               f"{self.open_transaction_first_offset}," if self.open_transaction_first_offset is not None else "")
        return (f"a read_committed fetch (client {self.client_id!r}, correlation id {self.correlation_id}) "
                f"returned offsets {self.first_offset}-{self.last_offset}{own} at or after the last stable "
                f"offset {self.last_stable_offset}")


@dataclass(frozen=True, slots=True)
class DuplicateAppend(Violation):
    """The same producer id, epoch and sequences are stored twice: an idempotent retry appended again."""

    rule: ClassVar[str] = "duplicate-append"
    producer_id: int
    producer_epoch: int
    first_sequence: int
    last_sequence: int
    original_offsets: tuple[int, int]
    duplicate_offsets: tuple[int, int]

    def describe(self) -> str:
        first, last = self.original_offsets
        again_first, again_last = self.duplicate_offsets
        return (f"producer {self.producer_id} epoch {self.producer_epoch} sequences {self.first_sequence}-"
                f"{self.last_sequence} were appended at offsets {first}-{last} and again at "
                f"{again_first}-{again_last}")


@dataclass(frozen=True, slots=True)
class OffsetGap(Violation):
    """The log does not continue where it left off: offsets are missing, or used twice."""

    rule: ClassVar[str] = "offset-gap"
    expected_offset: int
    found_offset: int

    def describe(self) -> str:
        if self.found_offset > self.expected_offset:
            return f"offsets {self.expected_offset}-{self.found_offset - 1} are missing from the log"
        return (f"a batch starts at offset {self.found_offset}, but offsets up to {self.expected_offset - 1} "
                f"were already used")


@dataclass(frozen=True, slots=True)
class _ShareViolation(Violation):
    """Records of a share group's partition that one exchange of a member got wrong."""

    group_id: str
    first_offset: int
    last_offset: int
    member_id: str
    client_id: str | None
    correlation_id: int

    def _who(self) -> str:
        return f"member {self.member_id!r}, client {self.client_id!r}, correlation id {self.correlation_id}"


@dataclass(frozen=True, slots=True)
class ShareRedelivered(_ShareViolation):
    """A share group was handed records again after it had accepted them (KIP-932: an accepted record is
    delivered to no one again)."""

    rule: ClassVar[str] = "share-redelivered"

    def describe(self) -> str:
        return (f"share group {self.group_id!r} acquired offsets {self.first_offset}-{self.last_offset} "
                f"({self._who()}) after it had accepted them")


@dataclass(frozen=True, slots=True)
class ShareAcceptedTwice(_ShareViolation):
    """The broker took an ACCEPT of records a share group had accepted before."""

    rule: ClassVar[str] = "share-accepted-twice"

    def describe(self) -> str:
        return (f"share group {self.group_id!r} accepted offsets {self.first_offset}-{self.last_offset} again "
                f"({self._who()})")


# ---- the ledger of one partition -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Sequences:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int


@dataclass(frozen=True, slots=True)
class _Ended:
    producer_id: int
    first_offset: int
    marker_offset: int
    aborted: bool


@dataclass(slots=True)
class _Producer:
    """The sequences one producer id and epoch has stored, in log order."""

    ranges: list[_Sequences] = field(default_factory=list)
    highest: int = -1


@dataclass(slots=True)
class _Ledger:
    topic_id: uuid.UUID
    # The next offset the log must continue at; None until the first batch (or the log start) is read.
    next_offset: int | None = None
    # Where the log started when the ledger last looked: what is below it is gone and forgotten.
    log_start: int = 0
    open: dict[int, int] = field(default_factory=dict)
    ended: dict[int, list[_Ended]] = field(default_factory=dict)
    sequences: dict[tuple[int, int], _Producer] = field(default_factory=dict)

    def last_stable_offset(self, high_watermark: int) -> int:
        unstable = min(self.open.values(), default=high_watermark)
        return max(min(unstable, high_watermark), self.log_start)

    def transaction_of(self, producer_id: int, offset: int) -> tuple[_Ended | None, int]:
        """The ended transaction of this producer holding `offset`, and the marker offset of the producer's
        transaction before it (-1 if none)."""
        before = -1
        for ended in self.ended.get(producer_id, ()):
            if ended.marker_offset < offset:
                before = ended.marker_offset
                continue
            return ended, before
        return None, before

    def forget_below(self, offset: int) -> None:
        for producer_id, ended in list(self.ended.items()):
            kept = [e for e in ended if e.marker_offset >= offset]
            if kept:
                self.ended[producer_id] = kept
            else:
                del self.ended[producer_id]
        for key, producer in list(self.sequences.items()):
            producer.ranges = [r for r in producer.ranges if r.last_offset >= offset]
            if not producer.ranges:
                del self.sequences[key]


# ---- the checker -----------------------------------------------------------------------------------------
class ExactlyOnceChecker:
    """Watches one broker core at a time (`attach`); keeps its violations across attachments, so a handle's
    checker remembers what happened before a restart. Touch it only from the broker's thread."""

    def __init__(self) -> None:
        # Weakly: the registry of checkers (`checker_for`) is keyed by the core weakly, and a checker holding its
        # core kept every core it ever watched alive, and with it the handle and all it held (each test's broker).
        self._core: weakref.ref[BrokerCore] | None = None
        self._violations: list[Violation] = []
        self.omitted = 0
        # What the logs showed is reported once, though a restarted broker's logs are read again.
        self._found_in_logs: set[Violation] = set()
        self._ledgers: dict[tuple[str, int], _Ledger] = {}
        # Per (share group, topic, partition): the offsets the group accepted, as the broker confirmed them.
        self._accepted: dict[tuple[str, str, int], set[int]] = {}

    # ---- life ------------------------------------------------------------------------------------------
    @property
    def core(self) -> BrokerCore | None:
        """The core watched: None before `attach`, and once that core is gone."""
        return None if self._core is None else self._core()

    def attach(self, core: BrokerCore) -> None:
        """Watch `core` from now on (a restarted broker is a new core on the same data: its logs are read
        again from their start)."""
        if self.core is not None and _CHECKERS.get(self.core) is self:
            del _CHECKERS[self.core]
        self._core = weakref.ref(core)
        self._ledgers.clear()
        _CHECKERS[core] = self

    def clear(self) -> None:
        """Forget every violation and ledger (a broker emptied between tests)."""
        self._violations.clear()
        self.omitted = 0
        self._found_in_logs.clear()
        self._ledgers.clear()
        self._accepted.clear()

    @property
    def violations(self) -> list[Violation]:
        return list(self._violations)

    def _report(self, violation: Violation, *, in_log: bool = False) -> None:
        if in_log:
            if violation in self._found_in_logs:
                return
            self._found_in_logs.add(violation)
        if len(self._violations) < MAX_VIOLATIONS:
            self._violations.append(violation)
        else:
            self.omitted += 1

    # ---- traffic ---------------------------------------------------------------------------------------
    def observe(self, exchange: Exchange) -> None:
        """The request observer: Produce brings the ledgers of its partitions up to date (a duplicate is
        caught while its batch is fresh), Fetch is judged against them."""
        if exchange.ctx.broker is not self.core or exchange.response is None:
            return
        if exchange.api_key == FETCH:
            if not exchange.sent:
                return  # dropped by a fault: the client never saw these records
            self.check_fetch(exchange.request.body, exchange.response, client_id=exchange.client_id,
                             correlation_id=exchange.correlation_id)
        elif exchange.api_key in (SHARE_FETCH, SHARE_ACKNOWLEDGE):
            if exchange.sent:
                self.check_share(exchange.api_key, exchange.request.body, exchange.response,
                                 client_id=exchange.client_id, correlation_id=exchange.correlation_id)
        elif exchange.api_key == PRODUCE:
            for topic in exchange.request.body.get("topic_data") or ():
                for data in topic.get("partition_data") or ():
                    partition = self._partition(topic.get("name"), topic.get("topic_id"), data["index"])
                    if partition is not None:
                        self._catch_up(partition)

    def check_share(self, api_key: int, request: Mapping[str, Any], response: Mapping[str, Any], *,
                    client_id: str | None = None, correlation_id: int = -1) -> None:
        """Judge one ShareFetch or ShareAcknowledge exchange: what it acquired must not have been accepted
        before; what it accepted (confirmed by the answer) must not have been accepted before either."""
        if response.get("error_code", 0) != 0:
            return
        group, member = str(request.get("group_id")), str(request.get("member_id"))
        confirmed = {(t["topic_id"], p["partition_index"]) for t in response.get("responses") or ()
                     for p in t.get("partitions") or ()
                     if p.get("acknowledge_error_code" if api_key == SHARE_FETCH else "error_code", 0) == 0}
        if api_key == SHARE_FETCH:
            # Acquired in this answer, after its own acknowledgements were applied.
            for topic in response.get("responses") or ():
                for answer in topic.get("partitions") or ():
                    name = self._topic_name(topic["topic_id"])
                    accepted = self._accepted.get((group, name, answer["partition_index"]), set())
                    for acquired in answer.get("acquired_records") or ():
                        again = [o for o in range(acquired["first_offset"], acquired["last_offset"] + 1)
                                 if o in accepted]
                        if again:
                            self._report(ShareRedelivered(name, answer["partition_index"], group, again[0], again[-1],
                                                          member, client_id, correlation_id))
        for topic in request.get("topics") or ():
            for part in topic.get("partitions") or ():
                if (topic["topic_id"], part["partition_index"]) not in confirmed:
                    continue
                name = self._topic_name(topic["topic_id"])
                accepted = self._accepted.setdefault((group, name, part["partition_index"]), set())
                for ack in part.get("acknowledgement_batches") or ():
                    offsets = _accepted_offsets(ack)
                    twice = sorted(offsets & accepted)
                    if twice:
                        self._report(ShareAcceptedTwice(name, part["partition_index"], group, twice[0], twice[-1],
                                                        member, client_id, correlation_id))
                    accepted |= offsets

    def _topic_name(self, topic_id: uuid.UUID) -> str:
        topic = self.core.topics.by_id(topic_id) if self.core is not None else None
        return topic.name if topic is not None else str(topic_id)

    def check_fetch(self, request: Mapping[str, Any], response: Mapping[str, Any], *,
                    client_id: str | None = None, correlation_id: int = -1) -> None:
        """Judge one Fetch exchange (decoded bodies, Kafka's field names) against the logs as they are now."""
        if request.get("isolation_level", 0) != READ_COMMITTED:
            return
        for topic in response.get("responses") or ():
            for answer in topic.get("partitions") or ():
                records = answer.get("records")
                if answer.get("error_code", 0) != 0 or not records:
                    continue
                partition = self._partition(topic.get("topic"), topic.get("topic_id"), answer["partition_index"])
                if partition is None:
                    continue
                ledger = self._catch_up(partition)
                declared = [(a["producer_id"], a["first_offset"]) for a in answer.get("aborted_transactions") or ()]
                self._check_fetched(partition, ledger, records, declared, client_id, correlation_id)

    def _check_fetched(self, partition: Partition, ledger: _Ledger, records: bytes | memoryview,
                       declared: list[tuple[int, int]], client_id: str | None, correlation_id: int) -> None:
        stable = ledger.last_stable_offset(partition.high_watermark)
        for header in _whole_batches(records):
            if header.is_control:
                continue
            pid = header.producer_id
            if header.last_offset >= stable:
                opened = ledger.open.get(pid) if header.is_transactional else None
                self._report(UncommittedRead(
                    partition.topic, partition.index, pid, header.base_offset, header.last_offset, stable,
                    opened if opened is not None and opened <= header.base_offset else None,
                    client_id, correlation_id))
                continue
            if not header.is_transactional:
                continue
            ended, before = ledger.transaction_of(pid, header.base_offset)
            if ended is None or not ended.aborted:
                continue
            # Kafka's consumer drops a producer's batches from the first declared offset of an aborted
            # transaction up to that producer's ABORT marker: a declaration after the producer's previous
            # transaction ended, and at or before this batch, covers it.
            if not any(p == pid and before < first <= header.base_offset for p, first in declared):
                self._report(AbortedRead(
                    partition.topic, partition.index, pid, header.base_offset, header.last_offset,
                    ended.first_offset, ended.marker_offset, client_id, correlation_id))

    # ---- the logs --------------------------------------------------------------------------------------
    def check_logs(self) -> None:
        """Bring every partition's ledger up to date: duplicates and gaps appended since are reported."""
        if self.core is None:
            return
        seen: set[tuple[str, int]] = set()
        for topic in self.core.topics:
            for partition in topic.partitions:
                if partition.is_open:
                    self._catch_up(partition)
                    seen.add((partition.topic, partition.index))
        for gone in [key for key in self._ledgers if key not in seen]:
            del self._ledgers[gone]

    def _partition(self, name: str | None, topic_id: uuid.UUID | None, index: int) -> Partition | None:
        if self.core is None:
            return None
        topic = self.core.topics.get(name) if name else (
            self.core.topics.by_id(topic_id) if topic_id is not None else None)
        if topic is None or not 0 <= index < len(topic.partitions):
            return None
        partition = topic.partitions[index]
        return partition if partition.is_open else None

    def _catch_up(self, partition: Partition) -> _Ledger:
        assert self.core is not None
        key = (partition.topic, partition.index)
        topic = self.core.topics.get(partition.topic)
        topic_id = topic.topic_id if topic is not None else uuid.UUID(int=0)
        ledger = self._ledgers.get(key)
        if (ledger is None or ledger.topic_id != topic_id
                or (ledger.next_offset is not None and partition.log_end_offset < ledger.next_offset)):
            # New, recreated, or truncated below what was read: read it again from its start.
            ledger = self._ledgers[key] = _Ledger(topic_id, log_start=partition.log_start_offset)
        start = partition.log_start_offset
        if start > ledger.log_start:
            ledger.log_start = start
            ledger.forget_below(start)
            if ledger.next_offset is not None and ledger.next_offset < start:
                # Removed before it was read: whatever ended in there is unknown, so nothing is held open.
                ledger.next_offset = None
                ledger.open.clear()
        if ledger.next_offset is None:
            ledger.next_offset = start
            first = True
        else:
            first = False
        if ledger.next_offset >= partition.log_end_offset:
            return ledger
        try:
            batches = partition.batches(ledger.next_offset, None)
        except LogError:
            return ledger
        for batch in batches:
            self._read(partition, ledger, batch, first)
            first = False
        if ledger.next_offset < partition.log_end_offset:
            self._report(OffsetGap(partition.topic, partition.index, ledger.next_offset, partition.log_end_offset),
                         in_log=True)
            ledger.next_offset = partition.log_end_offset
        return ledger

    def _read(self, partition: Partition, ledger: _Ledger, batch: RecordBatch, first: bool) -> None:
        header = batch.header
        expected = ledger.next_offset
        assert expected is not None
        # The first batch read may begin below the log start (DeleteRecords cuts inside batches), never above.
        if header.base_offset > expected if first else header.base_offset != expected:
            self._report(OffsetGap(partition.topic, partition.index, expected, header.base_offset), in_log=True)
        ledger.next_offset = max(expected, header.next_offset)
        if not header.has_producer_id:
            return
        pid = header.producer_id
        if header.is_control:
            commit = _marker_commits(batch)
            if commit is None:
                return
            opened = ledger.open.pop(pid, header.base_offset)
            ledger.ended.setdefault(pid, []).append(_Ended(pid, opened, header.base_offset, not commit))
            return
        if header.is_transactional:
            ledger.open.setdefault(pid, header.base_offset)
        if header.base_sequence >= 0:
            self._sequences(partition, ledger, header)

    def _sequences(self, partition: Partition, ledger: _Ledger, header: BatchHeader) -> None:
        key = (header.producer_id, header.producer_epoch)
        first_seq, last_seq = header.base_sequence, header.last_sequence
        producer = ledger.sequences.setdefault(key, _Producer())
        if last_seq < first_seq or (first_seq == 0 and producer.highest == INT32_MAX):
            # Sequences wrapped at Int32.MAX_VALUE: what came before is two billion records ago.
            producer.ranges.clear()
            producer.highest = -1
            last_seq = INT32_MAX if last_seq < first_seq else last_seq
        if first_seq <= producer.highest:
            for earlier in producer.ranges:
                if first_seq <= earlier.last_seq and earlier.first_seq <= last_seq:
                    self._report(DuplicateAppend(
                        partition.topic, partition.index, header.producer_id, header.producer_epoch,
                        max(first_seq, earlier.first_seq), min(last_seq, earlier.last_seq),
                        (earlier.first_offset, earlier.last_offset), (header.base_offset, header.last_offset)),
                        in_log=True)
        producer.ranges.append(_Sequences(first_seq, last_seq, header.base_offset, header.last_offset))
        producer.highest = max(producer.highest, last_seq)


# The checker watching each live core, so `inspect(core, coordinators)` finds it without being handed it.
_CHECKERS: weakref.WeakKeyDictionary[BrokerCore, ExactlyOnceChecker] = weakref.WeakKeyDictionary()


def _accepted_offsets(ack: Mapping[str, Any]) -> set[int]:
    """The offsets an acknowledgement batch accepts: one type for the whole range, or one per offset."""
    first, last, types = ack["first_offset"], ack["last_offset"], list(ack.get("acknowledge_types") or ())
    if len(types) == 1:
        return set(range(first, last + 1)) if types[0] == ACCEPT else set()
    return {offset for offset, kind in zip(range(first, last + 1), types, strict=False) if kind == ACCEPT}


def checker_for(core: BrokerCore) -> ExactlyOnceChecker:
    """The checker watching `core`; one is attached on first use (it then checks the logs only, until it is
    also registered as a request observer of the server serving `core`)."""
    checker = _CHECKERS.get(core)
    if checker is None:
        checker = ExactlyOnceChecker()
        checker.attach(core)
    return checker


def _whole_batches(records: bytes | memoryview) -> Iterable[BatchHeader]:
    # A fetch's last batch may be cut short by max_bytes; batch_slices leaves it out, as clients do.
    try:
        for piece in batch_slices(records):
            if len(piece) >= HEADER_SIZE and piece[MAGIC_OFFSET] == MAGIC_V2:
                yield BatchHeader.parse(piece)
    except RecordsError:
        return


def _marker_commits(batch: RecordBatch) -> bool | None:
    """True for a COMMIT marker, False for an ABORT, None for any other control batch."""
    try:
        records = batch.records()
        if not records:
            return None
        _, kind = decode_control_key(records[0].key)
    except (RecordsError, ValueError):
        return None
    if kind == ControlRecordType.COMMIT:
        return True
    if kind == ControlRecordType.ABORT:
        return False
    return None
