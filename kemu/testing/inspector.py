"""The inspector: a broker's state as a test (or a person at a terminal) wants to see it, in one snapshot.

`inspect(core, coordinators)` reads, on the broker's thread, every partition (offsets, segments, producer
state, open transactions, the aborted-transaction index), every transactional id and every group, and the
exactly-once checker's violations (kemu.testing.checker), into plain dataclasses that hold no reference to
the broker: safe to hand to another thread, compare in an assertion, or keep after the broker is gone.
`.to_json()` is the same as JSON-able dicts; `.render()` the same as tables for a terminal.
"""

from __future__ import annotations

import struct
from dataclasses import asdict, dataclass, field
from typing import Any

from kemu.broker.broker import BrokerCore
from kemu.broker.partition import Partition
from kemu.broker.topic_names import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC
from kemu.coordinators import Coordinators
from kemu.groups import ClassicGroup, ConsumerGroup, ConsumerGroupMember, ShareGroup, ShareGroupMember, StreamsGroup
from kemu.testing import telemetry
from kemu.testing.checker import Violation, checker_for
from kemu.testing.telemetry import TelemetryClientInspection, TelemetryPushInspection
from kemu.txn.state import TxnMetadata, TxnState

# Past any offset: asked for the transactions overlapping [0, this), the index gives all it holds.
_ALL_OFFSETS = (1 << 63) - 1
_IDLE = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


# ---- the model -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Segment:
    base_offset: int
    size_bytes: int


@dataclass(frozen=True, slots=True)
class ProducerState:
    """What the partition remembers of one producer id (Kafka's ProducerStateEntry)."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    last_timestamp: int
    coordinator_epoch: int
    # The first offset of its transaction open on this partition, None when none is.
    open_txn_first_offset: int | None


@dataclass(frozen=True, slots=True)
class OpenTransaction:
    producer_id: int
    first_offset: int


@dataclass(frozen=True, slots=True)
class AbortedTransaction:
    """One entry of the aborted-transaction index (`.txnindex`)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass(frozen=True, slots=True)
class PartitionInspection:
    topic: str
    partition: int
    internal: bool
    leader_epoch: int
    log_start_offset: int
    last_stable_offset: int
    high_watermark: int
    log_end_offset: int
    segments: list[Segment]
    producers: list[ProducerState]
    open_transactions: list[OpenTransaction]
    aborted_transactions: list[AbortedTransaction]


@dataclass(frozen=True, slots=True)
class TransactionInspection:
    transactional_id: str
    state: str  # Kafka's name: Empty, Ongoing, PrepareCommit, CompleteAbort...
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    partitions: list[tuple[str, int]]
    start_ms: int
    last_update_ms: int
    # When the coordinator acts on its own: aborts an Ongoing transaction past its timeout, expires an idle
    # transactional id. None while the transaction is completing.
    deadline_ms: int | None
    deadline_action: str | None  # "abort" or "expire"


@dataclass(frozen=True, slots=True)
class MemberInspection:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    # topic -> partitions; a streams group's member: "<sub-topology> active" (standby, warmup) -> partitions;
    # None when the assignment is not a consumer protocol one (opaque bytes).
    assignment: dict[str, list[int]] | None


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int


@dataclass(frozen=True, slots=True)
class GroupInspection:
    group_id: str
    type: str  # "classic" or "consumer" (KIP-848)
    state: str
    protocol_type: str | None
    protocol: str | None  # the classic group's chosen protocol (assignor)
    generation: int  # classic: the generation id; consumer: the group epoch
    leader_id: str | None
    members: list[MemberInspection]
    offsets: list[CommittedOffset]


@dataclass(frozen=True, slots=True)
class SharedRecords:
    """A range of a share-partition's in-flight records in one state (KIP-932)."""

    first_offset: int
    last_offset: int
    state: str  # "available", "acquired", "acknowledged" or "archived"
    member_id: str | None  # who holds them (acquired), else None
    delivery_count: int
    lock_deadline_ms: int | None  # when an acquired record's lock expires, on the broker's clock


@dataclass(frozen=True, slots=True)
class SharePartitionInspection:
    """A share group's view of one partition: where it starts (SPSO) and ends, and its in-flight records."""

    group_id: str
    topic: str
    partition: int
    start_offset: int
    end_offset: int
    in_flight: list[SharedRecords]


@dataclass(frozen=True, slots=True)
class Inspection:
    node_id: int
    cluster_id: str
    time_ms: int
    partitions: list[PartitionInspection]
    transactions: list[TransactionInspection]
    groups: list[GroupInspection]
    violations: list[Violation]
    # Violations past the checker's limit, counted but not kept.
    violations_omitted: int = 0
    share_partitions: list[SharePartitionInspection] = field(default_factory=list)
    # Client telemetry (KIP-714): the client instances the broker keeps, and what the receiver was pushed (with
    # `kemu.client.telemetry.enable`; the last 1000 pushes).
    telemetry_clients: list[TelemetryClientInspection] = field(default_factory=list)
    telemetry: list[TelemetryPushInspection] = field(default_factory=list)

    def telemetry_metric_names(self, client_id: str | None = None) -> set[str]:
        """The names of every metric pushed (by the clients of that client.id)."""
        return {metric.name for push in self.telemetry if client_id is None or push.client_id == client_id
                for metric in push.metrics}

    def share_partition(self, group_id: str, topic: str, partition: int = 0) -> SharePartitionInspection:
        for found in self.share_partitions:
            if (found.group_id, found.topic, found.partition) == (group_id, topic, partition):
                return found
        raise KeyError(f"no share-partition {topic}-{partition} of group {group_id!r}")

    def partition(self, topic: str, partition: int = 0) -> PartitionInspection:
        for found in self.partitions:
            if found.topic == topic and found.partition == partition:
                return found
        raise KeyError(f"no partition {topic}-{partition}")

    def transaction(self, transactional_id: str) -> TransactionInspection:
        for found in self.transactions:
            if found.transactional_id == transactional_id:
                return found
        raise KeyError(f"no transactional id {transactional_id!r}")

    def group(self, group_id: str) -> GroupInspection:
        for found in self.groups:
            if found.group_id == group_id:
                return found
        raise KeyError(f"no group {group_id!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "cluster_id": self.cluster_id,
            "time_ms": self.time_ms,
            "partitions": [asdict(p) for p in self.partitions],
            "transactions": [{**asdict(t), "partitions": [list(tp) for tp in t.partitions]}
                             for t in self.transactions],
            "groups": [asdict(g) for g in self.groups],
            "violations": [v.to_json() for v in self.violations],
            "violations_omitted": self.violations_omitted,
            "share_partitions": [asdict(s) for s in self.share_partitions],
            "telemetry_clients": [asdict(c) for c in self.telemetry_clients],
            "telemetry": [asdict(p) for p in self.telemetry],
        }

    def render(self) -> str:
        return _render(self)


# ---- reading the broker --------------------------------------------------------------------------------
def inspect(core: BrokerCore, coordinators: Coordinators) -> Inspection:
    """Everything at once, read on the broker's thread (the core is only ever touched there)."""
    checker = checker_for(core)
    checker.check_logs()
    return Inspection(
        node_id=core.node_id,
        cluster_id=core.cluster_id,
        time_ms=core.clock.now_ms(),
        partitions=[_partition(p, topic.is_internal)
                    for topic in sorted(core.topics, key=lambda t: t.name)
                    for p in topic.partitions if p.is_open],
        transactions=_transactions(core, coordinators),
        groups=_groups(core, coordinators),
        violations=checker.violations,
        violations_omitted=checker.omitted,
        share_partitions=_share_partitions(core, coordinators),
        telemetry_clients=telemetry.clients(core.client_metrics),
        telemetry=telemetry.pushes(core.client_metrics),
    )


def _share_partitions(core: BrokerCore, coordinators: Coordinators) -> list[SharePartitionInspection]:
    if not coordinators.share_made:
        return []
    out = []
    for group_id, topic_id, index, share in coordinators.share.all_share_partitions():
        topic = core.topics.by_id(topic_id)
        state = share.snapshot()
        out.append(SharePartitionInspection(
            group_id, topic.name if topic is not None else str(topic_id), index, state.start_offset,
            state.end_offset,
            [SharedRecords(r.first_offset, r.last_offset, r.state.name.lower(), r.member_id, r.delivery_count,
                           r.lock_deadline_ms) for r in state.in_flight]))
    return sorted(out, key=lambda s: (s.group_id, s.topic, s.partition))


def _partition(partition: Partition, internal: bool) -> PartitionInspection:
    producers = sorted(partition.producers.active_producers(), key=lambda e: e.producer_id)
    return PartitionInspection(
        topic=partition.topic,
        partition=partition.index,
        internal=internal,
        leader_epoch=partition.leader_epoch,
        log_start_offset=partition.log_start_offset,
        last_stable_offset=partition.last_stable_offset,
        high_watermark=partition.high_watermark,
        log_end_offset=partition.log_end_offset,
        segments=[Segment(s.base_offset, s.size) for s in partition.segments],
        producers=[ProducerState(e.producer_id, e.epoch, e.last_seq, e.last_offset, e.last_timestamp,
                                 e.coordinator_epoch, e.txn_first_offset) for e in producers],
        open_transactions=[OpenTransaction(pid, first) for pid, first
                           in sorted(partition.producers.ongoing.items(), key=lambda item: item[1])],
        aborted_transactions=[AbortedTransaction(a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset)
                              for a in partition.aborted_transactions(0, _ALL_OFFSETS)],
    )


def _transactions(core: BrokerCore, coordinators: Coordinators) -> list[TransactionInspection]:
    # Without its topic there has never been a transactional id here; asking would start the coordinator
    # (and bump its epoch) just to look.
    if TRANSACTION_STATE_TOPIC not in core.topics:
        return []
    coordinator = coordinators.txn.coordinator
    expiration_ms = coordinator.config.id_expiration_ms
    return [_transaction(txn, expiration_ms) for _, txn in sorted(coordinator.txns.items())]


def _transaction(txn: TxnMetadata, expiration_ms: int) -> TransactionInspection:
    deadline: int | None = None
    action: str | None = None
    if txn.state is TxnState.ONGOING:
        # Kafka aborts once start + timeout < now: the first millisecond past the timeout.
        deadline, action = txn.start_ms + txn.timeout_ms + 1, "abort"
    elif txn.state in _IDLE:
        deadline, action = txn.update_ms + expiration_ms, "expire"
    return TransactionInspection(
        transactional_id=txn.transactional_id, state=txn.state.kafka_name, producer_id=txn.producer_id,
        producer_epoch=txn.producer_epoch, timeout_ms=txn.timeout_ms, partitions=sorted(txn.partitions),
        start_ms=txn.start_ms, last_update_ms=txn.update_ms, deadline_ms=deadline, deadline_action=action)


def _groups(core: BrokerCore, coordinators: Coordinators) -> list[GroupInspection]:
    if GROUP_METADATA_TOPIC not in core.topics:
        return []
    coordinator = coordinators.groups.coordinator
    out: list[GroupInspection] = []
    for group_id, group in sorted(coordinator.groups.items()):
        offsets = [CommittedOffset(topic, partition, o.offset, o.leader_epoch, o.metadata, o.commit_timestamp)
                   for topic, partitions in sorted(coordinator.committed_offsets(group_id).items())
                   for partition, o in sorted(partitions.items())]
        if isinstance(group, ClassicGroup):
            members = [MemberInspection(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                        _consumer_assignment(m.assignment) if group.protocol_type == "consumer"
                                        else None)
                       for m in sorted(group.members.values(), key=lambda m: m.member_id)]
            out.append(GroupInspection(group_id, group.group_type, group.state_name(), group.protocol_type,
                                       group.protocol_name, group.generation_id, group.leader_id, members, offsets))
        elif isinstance(group, StreamsGroup):
            out.append(_streams_group(group, offsets))
        else:
            out.append(_consumer_group(core, group, offsets))
    return out


def _streams_group(group: StreamsGroup, offsets: list[CommittedOffset]) -> GroupInspection:
    """A streams group's members with their tasks, keyed "<sub-topology> active" (or standby, warmup)."""
    members = []
    for m in sorted(group.members.values(), key=lambda m: m.member_id):
        tasks: dict[str, list[int]] = {}
        for kind, assigned in (("active", m.assigned.active_task_set()), ("standby", m.assigned.standby),
                               ("warmup", m.assigned.warmup)):
            for subtopology_id, partitions in assigned.items():
                tasks[f"{subtopology_id} {kind}"] = sorted(partitions)
        members.append(MemberInspection(m.member_id, m.instance_id, m.client_id, m.client_host,
                                        dict(sorted(tasks.items()))))
    return GroupInspection(group.group_id, group.group_type, group.state_name(), group.protocol_type, None,
                           group.group_epoch, None, members, offsets)


def _consumer_group(core: BrokerCore, group: ConsumerGroup | ShareGroup,
                    offsets: list[CommittedOffset]) -> GroupInspection:
    members = []
    listed: list[ConsumerGroupMember | ShareGroupMember] = list(group.members.values())
    for m in sorted(listed, key=lambda m: m.member_id):
        assignment: dict[str, list[int]] = {}
        for topic_id, partitions in m.assigned_partitions.items():
            topic = core.topics.by_id(topic_id)
            assignment[topic.name if topic is not None else str(topic_id)] = sorted(partitions)
        members.append(MemberInspection(m.member_id, getattr(m, "instance_id", None), m.client_id, m.client_host,
                                        dict(sorted(assignment.items()))))
    return GroupInspection(group.group_id, group.group_type, group.state_name(), group.protocol_type, None,
                           group.group_epoch, None, members, offsets)


def _consumer_assignment(data: bytes) -> dict[str, list[int]] | None:
    """A ConsumerProtocolAssignment (version int16, then [topic string, [partition int32]]); None when the
    bytes are not one. An empty assignment (a member not synced yet) is {}."""
    if not data:
        return {}
    try:
        (version,) = struct.unpack_from(">h", data, 0)
        (count,) = struct.unpack_from(">i", data, 2)
        if version < 0 or count < 0:
            return None
        pos = 6
        out: dict[str, list[int]] = {}
        for _ in range(count):
            (length,) = struct.unpack_from(">h", data, pos)
            topic = data[pos + 2:pos + 2 + length].decode()
            pos += 2 + length
            (n,) = struct.unpack_from(">i", data, pos)
            out[topic] = sorted(struct.unpack_from(f">{n}i", data, pos + 4)) if n > 0 else []
            pos += 4 + 4 * max(n, 0)
        return dict(sorted(out.items()))
    except (struct.error, UnicodeDecodeError):
        return None


# ---- rendering -----------------------------------------------------------------------------------------
def _render(inspection: Inspection) -> str:
    lines = [f"kemu broker {inspection.node_id} · cluster {inspection.cluster_id} · time {inspection.time_ms} ms"]
    shown = [p for p in inspection.partitions if not p.internal or p.log_end_offset > 0]
    hidden = len(inspection.partitions) - len(shown)

    lines += _section("Partitions", ["partition", "log start", "LSO", "HW", "log end", "epoch", "segments"], [
        [f"{p.topic}-{p.partition}", p.log_start_offset, p.last_stable_offset, p.high_watermark, p.log_end_offset,
         p.leader_epoch, " ".join(f"{s.base_offset}:{_size(s.size_bytes)}" for s in p.segments)]
        for p in shown])
    if hidden:
        lines.append(f"({hidden} empty internal partitions not shown)")
    lines += _section("Producers", ["partition", "producer id", "epoch", "last seq", "last offset",
                                    "coordinator epoch", "open txn from"], [
        [f"{p.topic}-{p.partition}", s.producer_id, s.epoch, s.last_sequence, s.last_offset, s.coordinator_epoch,
         "-" if s.open_txn_first_offset is None else s.open_txn_first_offset]
        for p in shown for s in p.producers])
    lines += _section("Aborted transactions (index)", ["partition", "producer id", "first", "last", "LSO"], [
        [f"{p.topic}-{p.partition}", a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset]
        for p in shown for a in p.aborted_transactions])
    lines += _section("Transactions", ["transactional id", "state", "producer id", "epoch", "timeout",
                                       "partitions", "deadline"], [
        [t.transactional_id, t.state, t.producer_id, t.producer_epoch, f"{t.timeout_ms} ms",
         ", ".join(f"{topic}-{index}" for topic, index in t.partitions) or "-", _deadline(t, inspection.time_ms)]
        for t in inspection.transactions])
    lines += _section("Groups", ["group", "type", "state", "protocol", "generation", "leader", "members"], [
        [g.group_id, g.type, g.state, "/".join(x for x in (g.protocol_type, g.protocol) if x) or "-",
         g.generation, g.leader_id or "-", len(g.members)]
        for g in inspection.groups])
    lines += _section("Members", ["group", "member id", "instance id", "client id", "host", "assignment"], [
        [g.group_id, m.member_id, m.instance_id or "-", m.client_id, m.client_host, _assignment(m.assignment)]
        for g in inspection.groups for m in g.members])
    lines += _section("Committed offsets", ["group", "partition", "offset", "leader epoch", "metadata"], [
        [g.group_id, f"{o.topic}-{o.partition}", o.offset, o.leader_epoch, o.metadata or "-"]
        for g in inspection.groups for o in g.offsets])
    if inspection.share_partitions:
        lines += _section("Share partitions", ["group", "partition", "start", "end", "in flight"], [
            [s.group_id, f"{s.topic}-{s.partition}", s.start_offset, s.end_offset,
             sum(r.last_offset - r.first_offset + 1 for r in s.in_flight)]
            for s in inspection.share_partitions])
        lines += _section("Share records", ["group", "partition", "offsets", "state", "member", "deliveries",
                                            "lock until"], [
            [s.group_id, f"{s.topic}-{s.partition}", f"{r.first_offset}-{r.last_offset}", r.state,
             r.member_id or "-", r.delivery_count, "-" if r.lock_deadline_ms is None else r.lock_deadline_ms]
            for s in inspection.share_partitions for r in s.in_flight])
    if inspection.telemetry_clients or inspection.telemetry:
        lines += _section("Telemetry clients", ["instance", "client id", "software", "interval", "metrics asked",
                                                "pushes kept"], [
            [c.client_instance_id, c.client_id or "-",
             f"{c.client_software_name or '-'} {c.client_software_version or ''}".strip(),
             _duration(c.push_interval_ms), ",".join(c.requested_metrics) or "(none)",
             sum(1 for p in inspection.telemetry if p.client_instance_id == c.client_instance_id)]
            for c in inspection.telemetry_clients])
    lines += ["", "Exactly-once violations"]
    if not inspection.violations:
        lines.append("(none)")
    lines += [f"- {v}" for v in inspection.violations]
    if inspection.violations_omitted:
        lines.append(f"(and {inspection.violations_omitted} more, not kept)")
    return "\n".join(lines) + "\n"


def _section(title: str, headers: list[str], rows: list[list[Any]]) -> list[str]:
    if not rows:
        return ["", title, "(none)"]
    cells = [headers] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["", title]
    for number, row in enumerate(cells):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if number == 0:
            lines.append("  ".join("-" * width for width in widths))
    return lines


def _size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KiB"
    return f"{size / (1024 * 1024):.1f}MiB"


def _deadline(txn: TransactionInspection, now_ms: int) -> str:
    if txn.deadline_ms is None:
        return "-"
    return f"{txn.deadline_action} in {_duration(txn.deadline_ms - now_ms)}"


def _duration(ms: int) -> str:
    seconds = ms / 1000
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if abs(seconds) >= 2 * size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def _assignment(assignment: dict[str, list[int]] | None) -> str:
    if assignment is None:
        return "(opaque)"
    return " ".join(f"{topic}:{','.join(map(str, parts))}" for topic, parts in assignment.items()) or "-"


__all__ = [
    "AbortedTransaction",
    "CommittedOffset",
    "GroupInspection",
    "Inspection",
    "MemberInspection",
    "OpenTransaction",
    "PartitionInspection",
    "ProducerState",
    "Segment",
    "TransactionInspection",
    "inspect",
]
