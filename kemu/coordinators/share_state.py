"""The share coordinator's durable state (KIP-932): every share-partition's start offset and state batches in
`__share_group_state`, with Kafka 4.3's ShareSnapshot record (key type 0), read back at start-up.

Kafka's share coordinator writes a ShareUpdate record per change and a ShareSnapshot every
`share.coordinator.snapshot.update.records.per.snapshot` updates; kemu writes a ShareSnapshot on every change (a
test's share-partitions are small), and reads both at start-up: the last snapshot of each share-partition, with
any later updates applied over it. The topic is created as Kafka creates it (cleanup.policy=delete,
retention.ms=-1, compression.type=producer). A share-partition's records go to the partition its key
"group:topic-id:partition" hashes to (kemu's placement: Kafka hashes the key object).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from kemu.broker.broker import BrokerCore
from kemu.broker.errors import ApiError
from kemu.broker.topic_names import SHARE_GROUP_STATE_TOPIC
from kemu.coordinators.journal import InternalTopicJournal
from kemu.groups.share_partition import RecordState, ShareState
from kemu.kafka_defaults import int_default
from kemu.wire.coordinator_records import CoordinatorRecordError, decode_key, decode_value, encode_key, encode_value
from kemu.wire.errors import ErrorCode
from kemu.wire.records import build_one_record_batch

log = logging.getLogger(__name__)

SNAPSHOT, UPDATE = "ShareSnapshot", "ShareUpdate"
DEFAULT_PARTITIONS = int_default("share.coordinator.state.topic.num.partitions")
# The delivery states Kafka persists: what a record in flight is after a restart.
_PERSISTED = {RecordState.AVAILABLE: 0, RecordState.ACQUIRED: 0, RecordState.ACKNOWLEDGED: 2,
              RecordState.ARCHIVED: 4}
_RESTORED = {0: RecordState.AVAILABLE, 2: RecordState.ACKNOWLEDGED, 4: RecordState.ARCHIVED}

StateKey = tuple[str, uuid.UUID, int]


class PersistedState(NamedTuple):
    start_offset: int
    batches: list[tuple[int, int, RecordState, int]]  # first, last, state, delivery count
    create_timestamp: int


def _write_error(code: ErrorCode) -> ErrorCode:
    return code


class ShareStateJournal:
    def __init__(self, broker: BrokerCore) -> None:
        self.broker = broker
        raw = broker.config_layers().value("share.coordinator.state.topic.num.partitions")
        self.journal = InternalTopicJournal(broker, SHARE_GROUP_STATE_TOPIC,
                                            int(raw) if raw else DEFAULT_PARTITIONS, _write_error)
        self._created: dict[StateKey, int] = {}

    def _partition_of(self, key: StateKey) -> int:
        group_id, topic_id, index = key
        return self.journal.partition_of(f"{group_id}:{topic_id}:{index}")

    def write(self, key: StateKey, state: ShareState, leader_epoch: int) -> None:
        """A ShareSnapshot of the share-partition as it is now. A failed write is logged: the state in memory
        is what the broker serves until the next one succeeds."""
        group_id, topic_id, index = key
        now = self.broker.clock.now_ms()
        created = self._created.setdefault(key, now)
        value = {
            "snapshot_epoch": 0, "state_epoch": 0, "leader_epoch": leader_epoch, "start_offset": state.start_offset,
            "delivery_complete_count": sum(r.last_offset - r.first_offset + 1 for r in state.in_flight
                                           if r.state.is_terminal),
            "create_timestamp": created, "write_timestamp": now,
            "state_batches": [{"first_offset": r.first_offset, "last_offset": r.last_offset,
                               "delivery_state": _PERSISTED[r.state], "delivery_count": r.delivery_count}
                              for r in state.in_flight],
        }
        record_key = encode_key(SNAPSHOT, 0, {"group_id": group_id, "topic_id": topic_id, "partition": index})
        batch = build_one_record_batch(record_key, encode_value(SNAPSHOT, 0, value), now)
        try:
            self.journal.append(self._partition_of(key), batch)
        except ApiError as error:
            log.error("could not write the share state of %s to %s: %s", key, SHARE_GROUP_STATE_TOPIC, error)

    def forget(self, key: StateKey) -> None:
        """The share-partition's state is gone (DeleteShareGroupOffsets, or an alter leaving the start to
        share.auto.offset.reset): a snapshot with start offset -1, which a restart reads as no state."""
        self.write(key, ShareState(-1, -1, ()), 0)

    def load(self) -> dict[StateKey, PersistedState]:
        """Every share-partition's last persisted state, from the topic's logs."""
        found: dict[StateKey, PersistedState] = {}
        for _, partition in self.journal.partitions():
            for record_type, key, value in _records(partition.batches(0)):
                if record_type == SNAPSHOT:
                    found[key] = PersistedState(value["start_offset"], _batches(value["state_batches"]),
                                                value["create_timestamp"])
                    self._created[key] = value["create_timestamp"]
                elif key in found:
                    found[key] = _updated(found[key], value)
        return {key: state for key, state in found.items() if state.start_offset >= 0}


def _records(batches: Iterable[Any]) -> Iterator[tuple[str, StateKey, dict[str, Any]]]:
    for batch in batches:
        if batch.header.is_control:
            continue
        for record in batch.records():
            if record.key is None or record.value is None:
                continue
            try:
                decoded = decode_key(record.key, SHARE_GROUP_STATE_TOPIC)
                value = decode_value(decoded.record_type, record.value).fields
            except CoordinatorRecordError as error:
                log.warning("skipping a record of %s kemu cannot read: %s", SHARE_GROUP_STATE_TOPIC, error)
                continue
            fields = decoded.fields
            yield decoded.record_type, (fields["group_id"], fields["topic_id"], fields["partition"]), value


def _batches(raw: list[dict[str, Any]]) -> list[tuple[int, int, RecordState, int]]:
    return [(b["first_offset"], b["last_offset"], _RESTORED.get(b["delivery_state"], RecordState.AVAILABLE),
             b["delivery_count"]) for b in raw]


def _updated(state: PersistedState, update: dict[str, Any]) -> PersistedState:
    """A ShareUpdate over the state before it: a new start offset (unless -1), the batches it names replacing
    the offsets they cover."""
    start = state.start_offset if update["start_offset"] < 0 else update["start_offset"]
    changed = _batches(update["state_batches"])
    kept = [b for b in state.batches
            if b[1] >= start and not any(first <= b[1] and b[0] <= last for first, last, _, _ in changed)]
    return PersistedState(start, sorted(kept + changed), state.create_timestamp)
