"""The group coordinator on the broker: its journal in `__consumer_offsets`, its replay at start-up, its timers.

`kemu.groups.GroupCoordinator` is sans I/O; this is the thin shell that Kafka's CoordinatorRuntime is:

- **Journal.** Every `CoordinatorRecord` the coordinator journals during one operation (a request, a timer)
  is appended to `__consumer_offsets` partition `partition_for(group_id, partitions)`, as one batch per
  partition (Kafka writes one operation's records atomically), encoded with Kafka's coordinator record
  schemas, tombstones as null values, with `AppendOrigin.COORDINATOR`. Transactional offsets (TxnOffsetCommit)
  go in as transactional batches with the producer id and epoch, as Kafka writes them, so that the
  COMMIT/ABORT marker the transactions layer writes to that partition decides them.
- **Markers.** The service listens to its partitions' logs: a batch appended by someone else (a marker of the
  transactions layer) is applied as it lands — a marker completes the producer's staged offsets of the
  groups on that partition (`GroupCoordinator.complete_txn`). Nobody needs to call the service for it.
- **Start-up.** Every `__consumer_offsets` partition is replayed batch by batch (data records through
  `replay`, markers through `complete_txn`), then `loaded()` starts the session timers of the members found.
  Replay happens in the constructor, so the broker never answers COORDINATOR_LOAD_IN_PROGRESS.
- **Time.** The coordinator's timers (session and rebalance timeouts, the initial rebalance delay, offsets
  retention) run from the broker's housekeeping under the name "groups"; after each operation that moved the
  earliest deadline forward in time, the housekeeper is woken.
- **Placement.** A group belongs to this broker when it leads the group's `__consumer_offsets` partition;
  until that topic exists no broker coordinates anything (NOT_COORDINATOR). FindCoordinator creates it.

Handlers call `run(lambda coordinator: coordinator.<method>(body, context))` for every coordinator request (and
wait on a JoinGroup/SyncGroup `Pending` themselves). For the transactions layer:
`txn_offset_commit(body, context)` is TxnOffsetCommit minus the producer's transaction checks.

If an append fails (a disk error, a fenced producer epoch) the request fails with Kafka's error for it, but
the in-memory state keeps the change; Kafka would roll it back. Only a broken disk gets there.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NamedTuple, TypeVar

from kemu.broker import group_configs
from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.broker.errors import ApiError
from kemu.broker.partition import Partition
from kemu.broker.topic_names import GROUP_METADATA_TOPIC
from kemu.broker.topics import Topic
from kemu.coordinators.journal import JOURNAL_ERRORS, InternalTopicJournal, group_write_error
from kemu.groups import CoordinatorRecord, GroupConfig, GroupCoordinator, GroupRequestContext, TopicInfo, log_records
from kemu.groups.config import no_overrides
from kemu.groups.offset_ops import partition_errors
from kemu.groups.share_manager import no_listener as no_share_listener
from kemu.hashing import partition_for
from kemu.kafka_defaults import int_default
from kemu.log import AppendOrigin, LogEvent, PartitionLog
from kemu.log.producer_state import ProducerStateError
from kemu.wire.coordinator_records import CoordinatorRecordError, UnknownRecordType
from kemu.wire.errors import ErrorCode
from kemu.wire.records import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    ControlRecordType,
    NewRecord,
    RecordBatch,
    RecordsError,
    build_batch,
    decode_control_key,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
Body = dict[str, Any]

HOUSEKEEPING_NAME = "groups"
# Kafka cuts a coordinator's writes into batches below the topic's max.message.bytes (1 MiB by default).
_MAX_BATCH_BYTES = 512 * 1024


class _Run(NamedTuple):
    partition: int
    producer_id: int
    producer_epoch: int
    records: list[tuple[bytes, bytes | None]]
    size: int


class GroupService:
    def __init__(self, broker: BrokerCore, config: GroupConfig | None = None,
                 on_share_member_left: Callable[[str, str], None] = no_share_listener) -> None:
        """`on_share_member_left(group_id, member_id)`: told when a share-group member leaves or its session
        expires (GroupCoordinator's argument of that name); `coordinator.share_member(group_id, member_id)`
        says whether one is a member now."""
        self.broker = broker
        self.journal = InternalTopicJournal(broker, GROUP_METADATA_TOPIC, broker.config.offsets_topic_num_partitions,
                                            group_write_error)
        self.coordinator = GroupCoordinator(broker.clock, config=config or group_config(broker.config, broker),
                                            journal=self._journal, topics=self._topics,
                                            on_share_member_left=on_share_member_left)
        self._buffer: list[CoordinatorRecord] | None = None
        self._watched: dict[int, Partition] = {}
        # The topic whose every partition (that many) was open and watched by the last `_watch_all`: the same
        # topic object, neither re-created nor grown, leaves nothing new to watch.
        self._all_watched: tuple[Topic, int] | None = None
        # Per partition, the log end offset the coordinator's state reflects.
        self._applied: dict[int, int] = {}
        self._own_append = False
        self._due_ms: int | None = None
        self._load()
        broker.housekeeping.add(HOUSEKEEPING_NAME, self._tick)

    # ---- placement --------------------------------------------------------------------------------
    def partition_count(self) -> int:
        return self.journal.partition_count()

    def partition_of(self, group_id: str) -> int:
        return self.journal.partition_of(group_id)

    def coordinator_error(self, group_id: str, node_id: int | None = None) -> ErrorCode:
        """NONE when node `node_id` (default: the first) coordinates `group_id`, else NOT_COORDINATOR (the
        client looks it up again)."""
        topic = self.broker.topics.get(GROUP_METADATA_TOPIC)
        if topic is None or not topic.partitions:
            return ErrorCode.NOT_COORDINATOR
        partition = topic.partitions[partition_for(group_id, len(topic.partitions))]
        node = self.broker.node_id if node_id is None else node_id
        if partition.leader_id != node or not partition.is_open:
            return ErrorCode.NOT_COORDINATOR
        return ErrorCode.NONE

    def ensure_offsets_topic(self) -> bool:
        """Create `__consumer_offsets` as Kafka does on the first FindCoordinator; False if that failed."""
        if not self.journal.ensure_topic():
            return False
        self._watch_all()
        return True

    # ---- running coordinator operations -----------------------------------------------------------
    def run(self, operation: Callable[[GroupCoordinator], T]) -> T:
        """Run one coordinator operation; what it journals is appended to the log as it returns."""
        with self._batched():
            result = operation(self.coordinator)
        self._rearm()
        return result

    def txn_offset_commit(self, request: Body, context: GroupRequestContext, node_id: int | None = None) -> Body:
        """TxnOffsetCommit (28) once the transactions layer has checked the producer's transaction (and that
        AddOffsetsToTxn added the group): the rest of Kafka's handling, without throttle_time_ms.

        The request's topics are ones this broker hosts (the handler answers the others). A group led
        elsewhere (or before `__consumer_offsets` exists) is NOT_COORDINATOR; a producer epoch older than the
        one that last wrote to the group's partition INVALID_PRODUCER_EPOCH. The offsets stay invisible until
        the transaction's marker reaches the group's partition.
        """
        error = self.coordinator_error(request["group_id"], node_id)
        if error is ErrorCode.NONE:
            error = self._check_producer(request["group_id"], request["producer_id"], request["producer_epoch"])
        if error is not ErrorCode.NONE:
            return {"topics": partition_errors(request["topics"], error)}
        return self.run(lambda c: c.txn_offset_commit(request, context))

    def _check_producer(self, group_id: str, producer_id: int, producer_epoch: int) -> ErrorCode:
        plog = self._partition(self.partition_of(group_id))
        try:
            plog.producers.check_batch(producer_id=producer_id, epoch=producer_epoch, first_seq=0, last_seq=0,
                                       transactional=True, from_client=False)
        except ProducerStateError as error:
            return error.code
        return ErrorCode.NONE

    # ---- time -------------------------------------------------------------------------------------
    def tick(self) -> None:
        """Fire the coordinator's due timers now (the housekeeping task does this on its own)."""
        with self._batched():
            self.coordinator.tick()

    def _tick(self, now_ms: int) -> int | None:
        self.tick()
        self._due_ms = self._next_due_ms()
        return self._due_ms

    def _next_due_ms(self) -> int | None:
        """The coordinator's next deadline (monotonic) as broker wall-clock time, which housekeeping uses."""
        until = self.coordinator.ms_until_next_deadline()
        return None if until is None else self.broker.clock.now_ms() + until

    def _rearm(self) -> None:
        due = self._next_due_ms()
        if due is not None and (self._due_ms is None or due < self._due_ms):
            self._due_ms = due
            self.broker.housekeeping.wake(HOUSEKEEPING_NAME)

    # ---- the journal ------------------------------------------------------------------------------
    def _topics(self) -> list[TopicInfo]:
        return [TopicInfo(t.name, t.topic_id, len(t.partitions), t.is_internal) for t in self.broker.topics]

    def _journal(self, record: CoordinatorRecord) -> None:
        if self._buffer is not None:
            self._buffer.append(record)
        else:
            self._write([record])

    @contextmanager
    def _batched(self) -> Iterator[None]:
        if self._buffer is not None:
            yield
            return
        self._buffer = []
        try:
            yield
        finally:
            # Records of an operation that then failed were applied to the state all the same: keep them.
            records, self._buffer = self._buffer, None
            if records:
                self._write(records)

    def _write(self, records: list[CoordinatorRecord]) -> None:
        runs: list[_Run] = []
        for record in records:
            index = self.partition_of(_group_of(record))
            key, value = log_records.encode(record)
            size = len(key) + (len(value) if value is not None else 0)
            last = runs[-1] if runs else None
            if (last is not None and (last.partition, last.producer_id, last.producer_epoch)
                    == (index, record.producer_id, record.producer_epoch)
                    and last.size + size <= _MAX_BATCH_BYTES):
                last.records.append((key, value))
                runs[-1] = last._replace(size=last.size + size)
            else:
                runs.append(_Run(index, record.producer_id, record.producer_epoch, [(key, value)], size))
        failure: ApiError | None = None
        for run in runs:
            try:
                self._append(run)
            except JOURNAL_ERRORS as error:
                log.error("could not write %d group coordinator records to %s-%d: %s", len(run.records),
                          GROUP_METADATA_TOPIC, run.partition, error)
                failure = failure or self.journal.write_failure(error)
        if failure is not None:
            raise failure

    def _append(self, run: _Run) -> None:
        plog = self._partition(run.partition)
        now = self.broker.clock.now_ms()
        transactional = run.producer_id != NO_PRODUCER_ID
        batch = build_batch(
            [NewRecord(value=value, key=key, timestamp=now) for key, value in run.records],
            producer_id=run.producer_id if transactional else NO_PRODUCER_ID,
            producer_epoch=run.producer_epoch if transactional else NO_PRODUCER_EPOCH,
            base_sequence=0 if transactional else NO_SEQUENCE,
            transactional=transactional,
        )
        self._own_append = True
        try:
            plog.append(batch, origin=AppendOrigin.COORDINATOR, built=True)
        finally:
            self._own_append = False
        self._applied[run.partition] = plog.log_end_offset

    def _partition(self, index: int) -> Partition:
        if GROUP_METADATA_TOPIC not in self.broker.topics:
            self.ensure_offsets_topic()
        plog = self.journal.partition(index)
        self._watch(index, plog)
        return plog

    # ---- reading the log: start-up and other writers' batches -------------------------------------
    def _load(self) -> None:
        if GROUP_METADATA_TOPIC in self.broker.topics:
            for index, plog in self.journal.partitions():
                self._replay_from(index, plog, 0)
                self._watch(index, plog)
            log.info("group coordinator loaded %d groups from %s", len(self.coordinator.groups),
                     GROUP_METADATA_TOPIC)
        self.coordinator.loaded()

    def _watch_all(self) -> None:
        # Every FindCoordinator for a group comes here: walking 50 partitions each time was a third of its cost.
        topic = self.broker.topics.get(GROUP_METADATA_TOPIC)
        if topic is None:
            return
        if self._all_watched is not None and self._all_watched[0] is topic \
                and self._all_watched[1] == len(topic.partitions):
            return
        watched = 0
        for index, plog in self.journal.partitions():
            self._watch(index, plog)
            watched += 1
        # A partition without an open log is not watched: the next call looks again.
        self._all_watched = (topic, watched) if watched == len(topic.partitions) else None

    def _watch(self, index: int, plog: Partition) -> None:
        if self._watched.get(index) is plog:
            return
        # A partition seen for the first time (or a re-created topic's): its content so far is either
        # replayed already (start-up) or empty.
        self._watched[index] = plog
        self._applied[index] = plog.log_end_offset
        plog.add_listener(functools.partial(self._on_log_event, index, plog))

    def _on_log_event(self, index: int, partition: Partition, _log: PartitionLog, event: LogEvent) -> None:
        if event is not LogEvent.APPENDED or self._own_append:
            return
        if self._watched.get(index) is not partition:  # a re-created topic's partition is watched instead
            return
        try:
            with self._batched():
                self._replay_from(index, partition, self._applied.get(index, 0))
        except Exception:
            # Another component's append must not fail because of the group coordinator.
            log.exception("group coordinator could not apply a batch appended to %s-%d", partition.topic,
                          partition.index)
        self._applied[index] = partition.log_end_offset

    def _replay_from(self, index: int, partition: Partition, start: int) -> None:
        for batch in partition.batches(start):
            self._apply(index, batch)
        self._applied[index] = partition.log_end_offset

    def _apply(self, index: int, batch: RecordBatch) -> None:
        header = batch.header
        if header.is_control:
            records = batch.records()
            if not records:
                return
            try:
                _, kind = decode_control_key(records[0].key)
            except RecordsError:
                return
            if kind in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
                count = self.partition_count()
                self.coordinator.complete_txn(header.producer_id, kind == ControlRecordType.COMMIT,
                                              lambda group_id: partition_for(group_id, count) == index)
            return
        producer = (header.producer_id, header.producer_epoch) if header.is_transactional else (-1, -1)
        for item in log_records.decode_all(batch.records(), *producer):
            if isinstance(item, UnknownRecordType):
                continue  # a record type of a newer Kafka: skipped, as Kafka does (KIP-915)
            if isinstance(item, CoordinatorRecordError):
                log.warning("skipping a malformed record in %s-%d: %s", GROUP_METADATA_TOPIC, index, item)
                continue
            try:
                self.coordinator.replay(item)
            except Exception:
                log.exception("skipping a %s record the group coordinator cannot apply", item.type)


def group_config(config: BrokerConfig, broker: BrokerCore | None = None) -> GroupConfig:
    """The coordinator's settings from the broker's (Kafka's group.* and offsets.* configs), and with a broker
    each group's own (resource type GROUP)."""
    return GroupConfig(
        overrides=_group_overrides(broker) if broker is not None else no_overrides,
        min_session_timeout_ms=config.group_min_session_timeout_ms,
        max_session_timeout_ms=config.group_max_session_timeout_ms,
        initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
        max_size=config.group_max_size,
        consumer_session_timeout_ms=config.group_consumer_session_timeout_ms,
        consumer_heartbeat_interval_ms=config.group_consumer_heartbeat_interval_ms,
        consumer_assignment_interval_ms=config.group_consumer_assignment_interval_ms,
        share_session_timeout_ms=_share_setting(broker, "group.share.session.timeout.ms"),
        share_heartbeat_interval_ms=_share_setting(broker, "group.share.heartbeat.interval.ms"),
        share_max_size=_share_setting(broker, "group.share.max.size"),
        share_assignment_interval_ms=_share_setting(broker, "group.share.assignment.interval.ms"),
        streams_session_timeout_ms=_share_setting(broker, "group.streams.session.timeout.ms"),
        streams_heartbeat_interval_ms=_share_setting(broker, "group.streams.heartbeat.interval.ms"),
        streams_max_size=_share_setting(broker, "group.streams.max.size"),
        streams_num_standby_replicas=_share_setting(broker, "group.streams.num.standby.replicas"),
        streams_initial_rebalance_delay_ms=_share_setting(broker, "group.streams.initial.rebalance.delay.ms"),
        streams_assignment_interval_ms=_share_setting(broker, "group.streams.assignment.interval.ms"),
        offset_metadata_max_bytes=config.offset_metadata_max_bytes,
        offsets_retention_minutes=config.offsets_retention_minutes,
        offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
    )


def _share_setting(broker: BrokerCore | None, name: str) -> int:
    """A share- or streams-group broker setting (no BrokerConfig field of its own): the broker's value, else
    Kafka's default."""
    value = None if broker is None else broker.config_layers().value(name)
    return int_default(name) if value is None else int(value)


def _group_overrides(broker: BrokerCore) -> Callable[[str], Mapping[str, int]]:
    def of(group_id: str) -> Mapping[str, int]:
        values = broker.group_configs.get(group_id)
        if not values:
            return {}
        layers = broker.config_layers()
        return {name: group_configs.effective_int(name, values, layers) for name in values
                if group_configs.GROUP_CONFIGS[name].type == "INT"}
    return of


def _group_of(record: CoordinatorRecord) -> str:
    group_id = record.key.get("group", record.key.get("group_id"))
    assert isinstance(group_id, str)
    return group_id
