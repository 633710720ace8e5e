"""The inspector over a broker with every kind of state in it: an idempotent producer, a committed, an
aborted and an open transaction, a simple group's offsets and a classic consumer group's members. What it
shows is checked against what was done; the same as JSON and as the tables a terminal gets."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator
from typing import Any

import pytest

from kemu.testing import Broker
from kemu.testing.inspector import (
    AbortedTransaction,
    CommittedOffset,
    Inspection,
    OpenTransaction,
    inspect,
)
from kemu.wire.records import NewRecord, build_batch
from tests.server.kafka_socket import KafkaSocket

FIND_COORDINATOR, JOIN, SYNC, OFFSET_COMMIT, CG_HEARTBEAT = 10, 11, 14, 8, 68
SETTINGS = {"offsets.topic.num.partitions": "2", "transaction.state.log.num.partitions": "2",
            "group.initial.rebalance.delay.ms": "0"}


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker(config=SETTINGS, virtual_clock=True) as running:
        running.create_topic("orders", partitions=2)
        yield running


def append(broker: Broker, values: list[bytes], *, partition: int = 0, producer_id: int = -1, epoch: int = -1,
           sequence: int = -1, transactional: bool = False) -> int:
    now = broker.clock.now_ms()
    data = build_batch([NewRecord(value=v, timestamp=now) for v in values], producer_id=producer_id,
                       producer_epoch=epoch, base_sequence=sequence, transactional=transactional)

    def run() -> int:
        found = broker.core.partition("orders", partition)
        assert found is not None
        return found.append(data).base_offset

    return broker.call(run)


def transaction(broker: Broker, tid: str, values: list[bytes], commit: bool | None) -> tuple[int, int]:
    """A transaction on orders-0 through the coordinator's core (the wire is the compat tests' business):
    returns (producer id, epoch); `commit` None leaves it open."""
    def begin() -> tuple[int, int]:
        coordinator = broker.coordinators.txn.coordinator
        init = coordinator.init_producer_id(tid, 60_000)
        coordinator.add_partitions(tid, init.producer_id, init.producer_epoch, [("orders", 0)])
        return init.producer_id, init.producer_epoch

    pid, epoch = broker.call(begin)
    append(broker, values, producer_id=pid, epoch=epoch, sequence=0, transactional=True)
    if commit is not None:
        broker.call(lambda: broker.coordinators.txn.coordinator.end_txn(tid, pid, epoch, commit=commit))
        broker.advance(0)  # the housekeeper writes the markers
    return pid, epoch


def assignment(topics: dict[str, list[int]]) -> bytes:
    """A ConsumerProtocolAssignment v0, as a consumer group leader's SyncGroup carries it."""
    out = bytearray(struct.pack(">hi", 0, len(topics)))
    for topic, partitions in topics.items():
        out += struct.pack(">h", len(topic)) + topic.encode()
        out += struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    return bytes(out + struct.pack(">i", -1))


def join_and_sync(conn: KafkaSocket, group: str, topics: dict[str, list[int]]) -> tuple[str, int]:
    body: dict[str, Any] = {"group_id": group, "session_timeout_ms": 30_000, "rebalance_timeout_ms": 30_000,
                            "member_id": "", "group_instance_id": "instance-1", "protocol_type": "consumer",
                            "protocols": [{"name": "range", "metadata": b""}], "reason": None}
    joined = conn.request(JOIN, 9, body)
    if joined["error_code"] == 79:  # MEMBER_ID_REQUIRED
        joined = conn.request(JOIN, 9, {**body, "member_id": joined["member_id"]})
    assert joined["error_code"] == 0, joined
    member = joined["member_id"]
    synced = conn.request(SYNC, 5, {
        "group_id": group, "generation_id": joined["generation_id"], "member_id": member,
        "group_instance_id": "instance-1", "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": member, "assignment": assignment(topics)}]})
    assert synced["error_code"] == 0, synced
    return str(member), int(joined["generation_id"])


def commit_offsets(conn: KafkaSocket, group: str, offsets: dict[tuple[str, int], int], member: str,
                   generation: int) -> None:
    answer = conn.request(OFFSET_COMMIT, 8, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member, "topics": [
            {"name": topic, "partitions": [{"partition_index": p, "committed_offset": o, "committed_metadata": "m"}]}
            for (topic, p), o in offsets.items()]})
    assert all(p["error_code"] == 0 for t in answer["topics"] for p in t["partitions"]), answer


@pytest.fixture
def busy(broker: Broker) -> Iterator[Broker]:
    """orders-0: an idempotent batch (0-1), a committed transaction (2, marker 3), an aborted one (4-5,
    marker 6), a plain record (7), an open transaction (8); orders-1: one plain record."""
    append(broker, [b"i0", b"i1"], producer_id=4242, epoch=0, sequence=0)
    transaction(broker, "committer", [b"c"], commit=True)
    transaction(broker, "aborter", [b"a0", b"a1"], commit=False)
    broker.produce("orders", "plain")
    transaction(broker, "opener", [b"o"], commit=None)
    broker.produce("orders", "other", partition=1)
    with KafkaSocket(("127.0.0.1", broker.port), client_id="inspector-test") as conn:
        assert conn.request(FIND_COORDINATOR, 3, {"key": "readers", "key_type": 0})["error_code"] == 0
        member, generation = join_and_sync(conn, "readers", {"orders": [0, 1]})
        commit_offsets(conn, "readers", {("orders", 0): 3, ("orders", 1): 1}, member, generation)
        yield broker


def test_partitions_show_offsets_segments_producers_and_transactions(busy: Broker) -> None:
    seen = busy.inspect()
    pids = {t.transactional_id: t.producer_id for t in seen.transactions}
    orders = seen.partition("orders", 0)
    assert (orders.log_start_offset, orders.last_stable_offset, orders.high_watermark, orders.log_end_offset) == (
        0, 8, 9, 9)
    assert not orders.internal and orders.leader_epoch == 0
    [segment] = orders.segments
    assert segment.base_offset == 0 and segment.size_bytes > 0
    producers = {p.producer_id: p for p in orders.producers}
    assert set(producers) == {4242, *pids.values()}
    assert (producers[4242].epoch, producers[4242].last_sequence, producers[4242].last_offset) == (0, 1, 1)
    assert producers[pids["opener"]].open_txn_first_offset == 8
    assert producers[pids["committer"]].open_txn_first_offset is None
    assert orders.open_transactions == [OpenTransaction(pids["opener"], 8)]
    assert orders.aborted_transactions == [AbortedTransaction(pids["aborter"], 4, 6, 7)]
    other = seen.partition("orders", 1)
    assert (other.last_stable_offset, other.log_end_offset, other.producers) == (1, 1, [])
    internal = [p for p in seen.partitions if p.internal]
    assert {p.topic for p in internal} == {"__consumer_offsets", "__transaction_state"} and len(internal) == 4
    assert seen.violations == []


def test_transactions_show_state_producer_partitions_and_deadline(busy: Broker) -> None:
    seen = busy.inspect()
    states = {t.transactional_id: t.state for t in seen.transactions}
    assert states == {"aborter": "CompleteAbort", "committer": "CompleteCommit", "opener": "Ongoing"}
    opener = seen.transaction("opener")
    assert opener.partitions == [("orders", 0)] and opener.producer_epoch == 0 and opener.timeout_ms == 60_000
    assert (opener.deadline_action, opener.deadline_ms) == ("abort", opener.start_ms + 60_001)
    done = seen.transaction("committer")
    assert done.partitions == [] and done.deadline_action == "expire"
    assert done.deadline_ms == done.last_update_ms + 7 * 24 * 3600 * 1000


def test_groups_show_members_assignments_and_offsets(busy: Broker) -> None:
    group = busy.inspect().group("readers")
    assert (group.type, group.state, group.protocol_type, group.protocol, group.generation) == (
        "classic", "Stable", "consumer", "range", 1)
    [member] = group.members
    assert group.leader_id == member.member_id
    assert (member.instance_id, member.client_id, member.assignment) == (
        "instance-1", "inspector-test", {"orders": [0, 1]})
    assert [(o.topic, o.partition, o.offset, o.metadata) for o in group.offsets] == [
        ("orders", 0, 3, "m"), ("orders", 1, 1, "m")]
    assert isinstance(group.offsets[0], CommittedOffset)


def test_a_kip848_consumer_group_shows_its_members_assignment_by_topic_name(broker: Broker) -> None:
    with KafkaSocket(("127.0.0.1", broker.port), client_id="next-gen") as conn:
        assert conn.request(FIND_COORDINATOR, 3, {"key": "modern", "key_type": 0})["error_code"] == 0
        answer = conn.request(CG_HEARTBEAT, 0, {
            "group_id": "modern", "member_id": "m-1", "member_epoch": 0, "rebalance_timeout_ms": 30_000,
            "subscribed_topic_names": ["orders"], "topic_partitions": []})
        assert answer["error_code"] == 0, answer
    group = broker.inspect().group("modern")
    # A KIP-848 group starts at epoch 1, as in Kafka 4.3: its first member makes it 2.
    assert (group.type, group.protocol_type, group.generation, group.leader_id) == ("consumer", "consumer", 2, None)
    [member] = group.members
    assert (member.member_id, member.client_id, member.assignment) == ("m-1", "next-gen", {"orders": [0, 1]})
    assert group.offsets == []


def test_json_is_plain_and_complete(busy: Broker) -> None:
    seen = busy.inspect()
    data = json.loads(json.dumps(seen.to_json()))
    orders = next(p for p in data["partitions"] if p["topic"] == "orders" and p["partition"] == 0)
    assert orders["last_stable_offset"] == 8 and orders["aborted_transactions"][0]["first_offset"] == 4
    opener = next(t for t in data["transactions"] if t["transactional_id"] == "opener")
    assert opener["state"] == "Ongoing" and opener["partitions"] == [["orders", 0]]
    [group] = data["groups"]
    assert group["members"][0]["assignment"] == {"orders": [0, 1]}
    assert data["violations"] == [] and data["violations_omitted"] == 0
    assert data["node_id"] == 1 and data["cluster_id"] == seen.cluster_id


def test_render_is_tables_a_person_reads(busy: Broker) -> None:
    seen = busy.inspect()
    lines = seen.render().splitlines()

    def row(title: str, first: str) -> list[str]:
        start = lines.index(title)
        header, rule = lines[start + 1], lines[start + 2]
        assert set(rule.replace(" ", "")) == {"-"} and len(rule) >= len(header.rstrip())
        return next(line.split() for line in lines[start + 3:] if line.startswith(first + " "))

    assert lines[lines.index("Partitions") + 1].split() == [
        "partition", "log", "start", "LSO", "HW", "log", "end", "epoch", "segments"]
    assert row("Partitions", "orders-0")[:6] == ["orders-0", "0", "8", "9", "9", "0"]
    pid = seen.transaction("opener").producer_id
    assert ["orders-0", str(pid), "0", "0", "8", "-1", "8"] in [line.split() for line in lines]
    assert row("Aborted transactions (index)", "orders-0")[2:] == ["4", "6", "7"]
    assert row("Transactions", "opener")[:3] == ["opener", "Ongoing", str(pid)]
    assert row("Transactions", "opener")[-4:] == ["abort", "in", "60.0", "s"]
    assert row("Transactions", "committer")[-4:] == ["expire", "in", "7.0", "d"]
    assert row("Groups", "readers")[:5] == ["readers", "classic", "Stable", "consumer/range", "1"]
    assert row("Members", "readers")[-1] == "orders:0,1"
    assert row("Committed offsets", "readers")[:3] == ["readers", "orders-0", "3"]
    assert any(re.fullmatch(r"\(\d+ empty internal partitions not shown\)", line) for line in lines)
    assert lines[-2:] == ["Exactly-once violations", "(none)"]


def test_an_empty_broker_starts_no_coordinator_to_be_inspected() -> None:
    with Broker() as broker:
        seen = broker.inspect()
        assert seen == Inspection(seen.node_id, seen.cluster_id, seen.time_ms, [], [], [], [])
        assert "__transaction_state" not in broker.call(lambda: [t.name for t in broker.core.topics])
        assert "Partitions\n(none)" in seen.render()


def test_inspect_is_the_function_of_the_core(broker: Broker) -> None:
    """What the control endpoint calls: the same snapshot as the handle's."""
    broker.produce("orders", "x")
    direct = broker.call(lambda: inspect(broker.core, broker.coordinators))
    assert direct == broker.inspect()


STREAMS_HEARTBEAT, STREAMS_DESCRIBE = 88, 89
STREAMS_SETTINGS = {**SETTINGS, "group.streams.num.standby.replicas": "1",
                    "group.streams.initial.rebalance.delay.ms": "0", "group.streams.assignment.interval.ms": "0"}


def streams_heartbeat(conn: KafkaSocket, member: str, epoch: int, owned: dict[str, dict[str, list[int]]] | None,
                      ) -> dict[str, Any]:
    """A streams member's heartbeat: joining (epoch 0) with a word count's topology (a stateless sub-topology 0
    reading orders, a stateful 1 with a store's changelog), else reporting the tasks it owns by kind."""
    joining = epoch == 0
    topology = {"epoch": 0, "subtopologies": [
        {"subtopology_id": "0", "source_topics": ["orders"], "source_topic_regex": [], "state_changelog_topics": [],
         "repartition_sink_topics": ["app-count-repartition"], "repartition_source_topics": [],
         "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [], "repartition_sink_topics": [],
         "state_changelog_topics": [{"name": "app-store-changelog", "partitions": 0, "replication_factor": 0,
                                     "topic_configs": []}],
         "repartition_source_topics": [{"name": "app-count-repartition", "partitions": 0, "replication_factor": 0,
                                        "topic_configs": []}], "copartition_groups": []}]}
    owned = owned or {}
    answer = conn.request(STREAMS_HEARTBEAT, 0, {
        "group_id": "app", "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": 0,
        "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30_000 if joining else -1,
        "topology": topology if joining else None,
        **{f"{kind}_tasks": [{"subtopology_id": s, "partitions": ps} for s, ps in owned.get(kind, {}).items()]
           for kind in ("active", "standby", "warmup")},
        "process_id": f"process-{member}" if joining else None, "user_endpoint": None,
        "client_tags": [] if joining else None, "task_offsets": None, "task_end_offsets": None,
        "shutdown_application": False})
    assert answer["error_code"] == 0, answer
    return answer


def test_a_streams_group_shows_each_members_active_standby_and_warmup_tasks() -> None:
    """Two members of a streams group with one standby replica: once both hold their target, inspect() shows
    each member's tasks by sub-topology and kind, the same as StreamsGroupDescribe's current assignment."""
    kinds = ("active", "standby", "warmup")
    with Broker(config=STREAMS_SETTINGS, virtual_clock=True) as streams, \
            KafkaSocket(("127.0.0.1", streams.port), client_id="streams-app") as conn:
        streams.create_topic("orders", partitions=2)
        assert conn.request(FIND_COORDINATOR, 3, {"key": "app", "key_type": 0})["error_code"] == 0
        epochs = {m: streams_heartbeat(conn, m, 0, None)["member_epoch"] for m in ("a", "b")}
        owned: dict[str, dict[str, dict[str, list[int]]]] = {"a": {}, "b": {}}
        described: dict[str, Any] = {}
        # Each round the members report what they own and take what they are given: a few rounds reconcile.
        for _ in range(10):
            for member in ("a", "b"):
                answer = streams_heartbeat(conn, member, epochs[member], owned[member])
                epochs[member] = answer["member_epoch"]
                if answer["active_tasks"] is not None:
                    owned[member] = {kind: {t["subtopology_id"]: t["partitions"] for t in answer[f"{kind}_tasks"]}
                                     for kind in kinds}
            [described] = conn.request(STREAMS_DESCRIBE, 0, {"group_ids": ["app"],
                                                             "include_authorized_operations": False})["groups"]
            if described["group_state"] == "Stable" and all(
                    m["assignment"] == m["target_assignment"] for m in described["members"]):
                break
        assert described["group_state"] == "Stable", described
        group = streams.inspect().group("app")

    assert (group.type, group.state, group.protocol_type, group.generation) == (
        "streams", "Stable", "streams", described["group_epoch"])
    shown = {m.member_id: m.assignment for m in group.members}
    assert {m.member_id: m.client_id for m in group.members} == {"a": "streams-app", "b": "streams-app"}
    assert shown == {m["member_id"]: {f"{t['subtopology_id']} {kind}": sorted(t["partitions"])
                                      for kind in kinds for t in m["assignment"][f"{kind}_tasks"]}
                     for m in described["members"]}
    # Every task active on one member; each task of the stateful sub-topology (1) a standby on the other.
    for sub in ("0", "1"):
        active = sorted(p for tasks in shown.values() if tasks for p in tasks.get(f"{sub} active", []))
        assert active == [0, 1], shown
    standby = {m: set((tasks or {}).get("1 standby", [])) for m, tasks in shown.items()}
    assert sorted(p for ps in standby.values() for p in ps) == [0, 1]
    assert all(not standby[m] & set((tasks or {}).get("1 active", [])) for m, tasks in shown.items())
    assert not any(key.startswith("0 standby") for tasks in shown.values() if tasks for key in tasks)
