"""The journal: records Kafka's schemas can carry, and a restart that rebuilds the same state from them."""

from __future__ import annotations

from typing import Any

from kemu.groups import (
    ClassicGroup,
    ClassicGroupState,
    CommitOffset,
    ConsumerGroup,
    CoordinatorRecord,
    GroupCoordinator,
    RecordType,
)
from kemu.groups.subscription_bytes import encode_subscription
from kemu.wire import coordinator_records as schemas
from kemu.wire.errors import ErrorCode
from tests.groups.helpers import Harness, cg_heartbeat, commit_request, ctx, leave_request, owned, uuid_counter

# The versions Kafka writes today: the key version names the record type; values at the highest
# non-flexible version (OffsetCommit v1 when it carries an expire timestamp).
KEY_VERSION = {
    RecordType.OFFSET_COMMIT: 1, RecordType.GROUP_METADATA: 2, RecordType.CONSUMER_GROUP_METADATA: 3,
    RecordType.CONSUMER_GROUP_PARTITION_METADATA: 4, RecordType.CONSUMER_GROUP_MEMBER_METADATA: 5,
    RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: 6, RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: 7,
    RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: 8,
}


def value_version(record: CoordinatorRecord) -> int:
    if record.type == RecordType.OFFSET_COMMIT:
        assert record.value is not None
        return 1 if record.value["expire_timestamp"] != -1 else 3
    if record.type == RecordType.GROUP_METADATA:
        return 3
    return 0


def through_the_log(record: CoordinatorRecord) -> CoordinatorRecord:
    """Encode a journaled record with Kafka's schemas and decode it back, as a restart reads it."""
    key_bytes = schemas.encode_key(record.type, KEY_VERSION[RecordType(record.type)], record.key)
    key = schemas.decode_key(key_bytes, schemas.CONSUMER_OFFSETS)
    assert key.record_type == record.type
    if record.value is None:
        return CoordinatorRecord(key.fields, None, key.record_type, record.producer_id, record.producer_epoch)
    value = schemas.decode_value(record.type, schemas.encode_value(record.type, value_version(record), record.value))
    return CoordinatorRecord(key.fields, value.fields, key.record_type, record.producer_id, record.producer_epoch)


def summary(coordinator: GroupCoordinator) -> dict[str, Any]:
    """Everything the journal must preserve."""
    groups: dict[str, Any] = {}
    for group_id, group in coordinator.groups.items():
        if isinstance(group, ClassicGroup):
            groups[group_id] = {
                "state": group.state, "generation": group.generation_id, "protocol_type": group.protocol_type,
                "protocol": group.protocol_name, "leader": group.leader_id,
                "static": dict(group.static_members), "subscribed": group.subscribed_topics,
                # A Stable group's record is written just before it becomes Stable.
                "since": None if group.is_in_state(ClassicGroupState.STABLE) else group.current_state_timestamp,
                "members": {m.member_id: (m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                                          m.session_timeout_ms, m.assignment,
                                          m.metadata(group.protocol_name) if group.protocol_name else None)
                            for m in group.members.values()},
            }
        else:
            assert isinstance(group, ConsumerGroup)
            groups[group_id] = {
                "state": group.state, "epoch": group.group_epoch, "assignment_epoch": group.target_assignment_epoch,
                "members": dict(group.members), "static": dict(group.static_members),
                "metadata": dict(group.subscription_metadata), "target": dict(group.target_assignment),
                "partition_epochs": {t: dict(p) for t, p in group.partition_epochs.items()},
            }
    offsets = {
        group_id: {(topic, partition): (o.offset, o.leader_epoch, o.metadata, o.commit_timestamp, o.expire_timestamp)
                   for topic, parts in coordinator.committed_offsets(group_id).items()
                   for partition, o in parts.items()}
        for group_id in coordinator.groups
    }
    return {"groups": groups, "offsets": offsets}


class Recorder(Harness):
    """A harness that also remembers where transaction markers fell among the records."""

    def __init__(self) -> None:
        super().__init__()
        self.markers: list[tuple[int, int, bool]] = []

    def complete_txn(self, producer_id: int, committed: bool) -> None:
        self.coordinator.complete_txn(producer_id, committed)
        self.markers.append((len(self.journal), producer_id, committed))

    def restart(self) -> GroupCoordinator:
        fresh = GroupCoordinator(self.clock, config=self.config, topics=self.topics, new_uuid=uuid_counter())
        markers = list(self.markers)
        for position, record in enumerate(self.journal):
            while markers and markers[0][0] == position:
                _, producer_id, committed = markers.pop(0)
                fresh.complete_txn(producer_id, committed)
            fresh.replay(through_the_log(record))
        for _, producer_id, committed in markers:
            fresh.complete_txn(producer_id, committed)
        fresh.loaded()
        return fresh


def busy_coordinator() -> Recorder:
    """Classic, static, simple and KIP-848 groups, offsets, deletions, expiries and transactions."""
    h = Recorder()
    t = h.topics.create("t", 4)
    h.topics.create("u", 2)

    # A classic consumer group, one static member replaced since.
    subscription = [("range", encode_subscription(["t"]))]
    joins = h.stable_group("classic", members=2, protocols=subscription)
    static = h.join("classic-static", client_id="s", instance_id="i1", protocols=subscription)
    h.run_until(lambda: static.done)
    h.sync("classic-static", static.result()["member_id"], 1, {static.result()["member_id"]: b"p0-3"})
    h.join("classic-static", client_id="s", instance_id="i1", protocols=subscription)
    h.coordinator.offset_commit(commit_request("classic", {("t", 0): 11, ("t", 1): 12}, generation=1,
                                               member_id=joins[0]["member_id"], metadata="m", leader_epoch=2), ctx(8))

    # A classic group that emptied, a simple group, a deleted group, an explicit retention.
    (gone,) = h.stable_group("emptied", members=1)
    h.coordinator.leave_group(leave_request("emptied", (gone["member_id"], None)), ctx(3))
    h.coordinator.offset_commit(commit_request("simple", {("u", 0): 5}, retention_time_ms=3_600_000), ctx(2))
    h.coordinator.offset_commit(commit_request("doomed", {("u", 1): 5}), ctx(8))
    h.coordinator.delete_groups({"groups_names": ["doomed"]}, ctx(2))

    # A KIP-848 group in the middle of a rebalance, and one with a static member away for a restart.
    a = h.cg(cg_heartbeat("cg", "a", 0, topics=["t"], owned=[], rebalance_timeout_ms=60_000), version=1)
    h.cg(cg_heartbeat("cg", "b", 0, topics=["t", "u"], owned=[], rebalance_timeout_ms=60_000), version=1)
    h.cg(cg_heartbeat("cg", "a", a["member_epoch"], owned=owned(t, [0, 1, 2, 3])), version=1)  # now revoking
    h.cg(cg_heartbeat("cg2", "s1", 0, topics=["t"], owned=[], rebalance_timeout_ms=60_000, instance_id="x"),
         version=1)
    h.cg(cg_heartbeat("cg2", "s1", -2, instance_id="x"), version=1)

    # Transactions: one committed, one aborted, one still open.
    h.coordinator.stage_txn_offsets(1, 0, "classic", [CommitOffset("t", 1, 100)])
    h.coordinator.offset_commit(commit_request("simple", {("u", 1): 50}), ctx(8))
    h.coordinator.stage_txn_offsets(2, 0, "simple", [CommitOffset("u", 1, 40)])
    h.complete_txn(1, True)
    h.complete_txn(2, False)
    h.coordinator.stage_txn_offsets(3, 0, "simple", [CommitOffset("u", 0, 6)])
    return h


def test_every_record_fits_kafkas_coordinator_record_schemas() -> None:
    h = busy_coordinator()
    types = {record.type for record in h.journal}
    assert types == set(KEY_VERSION)
    for record in h.journal:
        decoded = through_the_log(record)
        assert decoded.key == record.key
        if record.value is not None:
            assert decoded.value is not None
            assert set(record.value) == set(decoded.value), record.type


def test_a_restart_rebuilds_the_same_state() -> None:
    h = busy_coordinator()
    fresh = h.restart()
    assert summary(fresh) == summary(h.coordinator)
    assert fresh.has_pending_txn_offsets("simple", "u", 0)
    assert not fresh.has_pending_txn_offsets("simple", "u", 1)
    assert fresh.committed_offset("classic", "t", 1).offset == 100
    assert fresh.committed_offset("simple", "u", 1).offset == 50
    assert "doomed" not in fresh.groups and fresh.committed_offsets("doomed") == {}
    assert fresh.group("emptied").is_in_state(ClassicGroupState.EMPTY)
    assert fresh.group("classic").is_in_state(ClassicGroupState.STABLE)


def test_after_a_restart_members_carry_on_or_time_out() -> None:
    h = busy_coordinator()
    fresh = h.restart()
    classic = fresh.group("classic")
    member_ids = list(classic.members)
    response = fresh.heartbeat({"group_id": "classic", "generation_id": 1, "member_id": member_ids[0],
                                "group_instance_id": None}, ctx(4))
    assert response["error_code"] == ErrorCode.NONE
    again = fresh.sync_group({"group_id": "classic", "generation_id": 1, "member_id": member_ids[1],
                              "group_instance_id": None, "protocol_type": None, "protocol_name": None,
                              "assignments": []}, ctx(5)).result()
    assert again["assignment"] == classic.members[member_ids[1]].assignment != b""

    # Nobody heartbeats any more: classic sessions (10 s) and KIP-848 sessions (45 s) run out.
    h.clock.advance(45_000)
    fresh.tick()
    assert fresh.group("classic").is_in_state(ClassicGroupState.EMPTY)
    assert fresh.group("cg").is_empty() and fresh.group("cg2").is_empty()


def test_a_restart_continues_a_kip848_rebalance() -> None:
    h = busy_coordinator()
    fresh = h.restart()
    t = h.topics.topics["t"].topic_id
    group = fresh.group("cg")
    a, b = group.members["a"], group.members["b"]
    done = fresh.consumer_group_heartbeat(
        cg_heartbeat("cg", "a", a.member_epoch, owned=owned(t, a.assigned_partitions[t])), ctx(1))
    assert done["member_epoch"] == group.group_epoch
    taken = fresh.consumer_group_heartbeat(cg_heartbeat("cg", "b", b.member_epoch, owned=[]), ctx(1))
    partitions = {p for e in taken["assignment"]["topic_partitions"] for p in e["partitions"] if e["topic_id"] == t}
    assert partitions and not partitions & set(group.members["a"].assigned_partitions[t])
    assert fresh.group("cg").state.value == "Stable"


def test_the_static_member_returns_to_a_restarted_coordinator() -> None:
    h = busy_coordinator()
    fresh = h.restart()
    before = fresh.group("cg2").members["s1"].assigned_partitions
    back = fresh.consumer_group_heartbeat(
        cg_heartbeat("cg2", "s1-again", 0, topics=["t"], owned=[], rebalance_timeout_ms=60_000, instance_id="x"),
        ctx(1))
    assert back["error_code"] == ErrorCode.NONE
    assert {e["topic_id"]: frozenset(e["partitions"]) for e in back["assignment"]["topic_partitions"]} == before
