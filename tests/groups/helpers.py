"""Request builders and a small harness for driving the group coordinator with a virtual clock."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from kemu.clock import VirtualClock
from kemu.groups import GroupConfig, GroupCoordinator, GroupRequestContext, TopicInfo
from kemu.groups.records import CoordinatorRecord
from kemu.wire.errors import ErrorCode

START_MS = 1_700_000_000_000
HOST = "/127.0.0.1"


def ctx(version: int, client_id: str = "client") -> GroupRequestContext:
    return GroupRequestContext(api_version=version, client_id=client_id, client_host=HOST)


def uuid_counter() -> Any:
    counter = itertools.count(1)
    return lambda: uuid.UUID(int=next(counter))


def join_request(
    group: str = "g",
    member_id: str = "",
    *,
    protocols: list[tuple[str, bytes]] | None = None,
    protocol_type: str = "consumer",
    instance_id: str | None = None,
    session_timeout_ms: int = 10_000,
    rebalance_timeout_ms: int = 30_000,
) -> dict[str, Any]:
    protocols = [("range", b"range-meta")] if protocols is None else protocols
    return {
        "group_id": group, "session_timeout_ms": session_timeout_ms, "rebalance_timeout_ms": rebalance_timeout_ms,
        "member_id": member_id, "group_instance_id": instance_id, "protocol_type": protocol_type,
        "protocols": [{"name": name, "metadata": metadata} for name, metadata in protocols], "reason": None,
    }


def sync_request(
    group: str, member_id: str, generation: int, assignments: dict[str, bytes] | None = None, *,
    instance_id: str | None = None, protocol_type: str | None = None, protocol_name: str | None = None,
) -> dict[str, Any]:
    return {
        "group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": instance_id,
        "protocol_type": protocol_type, "protocol_name": protocol_name,
        "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()],
    }


def heartbeat_request(group: str, member_id: str, generation: int, instance_id: str | None = None) -> dict[str, Any]:
    return {"group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": instance_id}


def leave_request(group: str, *members: tuple[str, str | None]) -> dict[str, Any]:
    return {"group_id": group, "member_id": "",
            "members": [{"member_id": m, "group_instance_id": i, "reason": None} for m, i in members]}


def commit_request(
    group: str, offsets: dict[tuple[str, int], int], *, generation: int = -1, member_id: str = "",
    instance_id: str | None = None, metadata: str | None = "", leader_epoch: int = -1,
    retention_time_ms: int = -1, commit_timestamp: int = -1,
) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append({
            "partition_index": partition, "committed_offset": offset, "committed_leader_epoch": leader_epoch,
            "commit_timestamp": commit_timestamp, "committed_metadata": metadata,
        })
    return {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
            "group_instance_id": instance_id, "retention_time_ms": retention_time_ms,
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}


def txn_commit_request(
    group: str, producer_id: int, offsets: dict[tuple[str, int], int], *, producer_epoch: int = 0,
    generation: int = -1, member_id: str = "", instance_id: str | None = None, metadata: str | None = "",
) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append({"partition_index": partition, "committed_offset": offset,
                                              "committed_leader_epoch": -1, "committed_metadata": metadata})
    return {"transactional_id": "tx", "group_id": group, "producer_id": producer_id,
            "producer_epoch": producer_epoch, "generation_id": generation, "member_id": member_id,
            "group_instance_id": instance_id, "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}


def fetch_group(group: str, topics: dict[str, list[int]] | None, *, member_id: str | None = None,
                member_epoch: int = -1) -> dict[str, Any]:
    return {"group_id": group, "member_id": member_id, "member_epoch": member_epoch,
            "topics": None if topics is None else [{"name": t, "partition_indexes": ps} for t, ps in topics.items()]}


def cg_heartbeat(
    group: str, member_id: str, epoch: int, *, topics: list[str] | None = None, regex: str | None = None,
    owned: list[dict[str, Any]] | None = None, instance_id: str | None = None, rebalance_timeout_ms: int = -1,
    assignor: str | None = None, rack_id: str | None = None,
) -> dict[str, Any]:
    return {"group_id": group, "member_id": member_id, "member_epoch": epoch, "instance_id": instance_id,
            "rack_id": rack_id, "rebalance_timeout_ms": rebalance_timeout_ms, "subscribed_topic_names": topics,
            "subscribed_topic_regex": regex, "server_assignor": assignor, "topic_partitions": owned}


def partitions_of(response: dict[str, Any], topic_id: uuid.UUID) -> set[int]:
    assignment = response["assignment"]
    assert assignment is not None
    for entry in assignment["topic_partitions"]:
        if entry["topic_id"] == topic_id:
            return set(entry["partitions"])
    return set()


def owned(topic_id: uuid.UUID, partitions: set[int] | list[int]) -> list[dict[str, Any]]:
    return [{"topic_id": topic_id, "partitions": sorted(partitions)}] if partitions else []


class Topics:
    """A mutable topic catalogue standing in for the broker's."""

    def __init__(self) -> None:
        self.topics: dict[str, TopicInfo] = {}
        self._ids = itertools.count(1000)

    def create(self, name: str, partitions: int, *, internal: bool = False) -> uuid.UUID:
        topic_id = uuid.UUID(int=next(self._ids))
        self.topics[name] = TopicInfo(name, topic_id, partitions, internal)
        return topic_id

    def grow(self, name: str, partitions: int) -> None:
        old = self.topics[name]
        self.topics[name] = TopicInfo(name, old.topic_id, partitions, old.internal)

    def __call__(self) -> list[TopicInfo]:
        return list(self.topics.values())


# Kafka's defaults, but a KIP-848 target assignment at every group epoch (no assignment interval), so that a
# test about something else needs no clock steps between joins; the interval's tests pass GroupConfig().
TEST_CONFIG = GroupConfig(consumer_assignment_interval_ms=0)


class Harness:
    """A coordinator, its virtual clock, its journal and its topics."""

    def __init__(self, config: GroupConfig | None = None) -> None:
        self.clock = VirtualClock(START_MS)
        self.journal: list[CoordinatorRecord] = []
        self.topics = Topics()
        self.config = config or TEST_CONFIG
        self.coordinator = GroupCoordinator(self.clock, config=self.config, journal=self.journal.append,
                                            topics=self.topics, new_uuid=uuid_counter())

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)
        self.coordinator.tick()

    def run_until(self, condition: Any, limit_ms: int = 600_000) -> None:
        """Advance the clock from deadline to deadline until `condition()` holds."""
        waited = 0
        while not condition():
            step = self.coordinator.ms_until_next_deadline()
            assert step is not None and waited + step <= limit_ms, "condition never reached"
            self.advance(step)
            waited += step

    def rebuilt(self) -> GroupCoordinator:
        """A fresh coordinator that replayed this one's journal (a restart)."""
        fresh = GroupCoordinator(self.clock, config=self.config, journal=lambda record: None, topics=self.topics,
                                 new_uuid=uuid_counter())
        for record in self.journal:
            fresh.replay(record)
        fresh.loaded()
        return fresh

    # ---- classic shortcuts ------------------------------------------------------------------------
    def join(self, group: str = "g", member_id: str = "", version: int = 9, client_id: str = "client",
             **kwargs: Any) -> Any:
        return self.coordinator.join_group(join_request(group, member_id, **kwargs), ctx(version, client_id))

    def join_with_id(self, group: str = "g", version: int = 9, client_id: str = "client",
                     **kwargs: Any) -> tuple[str, Any]:
        """The v4+ two-step join: get a member id, then join with it. Returns (member id, pending)."""
        first = self.join(group, "", version, client_id, **kwargs).result()
        assert first["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
        member_id = first["member_id"]
        return member_id, self.join(group, member_id, version, client_id, **kwargs)

    def sync(self, group: str, member_id: str, generation: int, assignments: dict[str, bytes] | None = None,
             version: int = 5, **kwargs: Any) -> Any:
        return self.coordinator.sync_group(sync_request(group, member_id, generation, assignments, **kwargs),
                                           ctx(version))

    def heartbeat(self, group: str, member_id: str, generation: int, instance_id: str | None = None,
                  version: int = 4) -> ErrorCode:
        response = self.coordinator.heartbeat(heartbeat_request(group, member_id, generation, instance_id),
                                              ctx(version))
        return ErrorCode(response["error_code"])

    def stable_group(self, group: str = "g", members: int = 2, **kwargs: Any) -> list[dict[str, Any]]:
        """Join `members` members, let the initial delay pass, sync; returns their join responses."""
        pendings = [self.join_with_id(group, client_id=f"c{i}", **kwargs)[1] for i in range(members)]
        self.run_until(lambda: all(p.done for p in pendings))
        joins = [p.result() for p in pendings]
        assert all(j["error_code"] == ErrorCode.NONE for j in joins), joins
        leader = next(j for j in joins if j["member_id"] == j["leader"])
        assignment = {j["member_id"]: f"assignment-{j['member_id']}".encode() for j in joins}
        syncs = [self.sync(group, j["member_id"], j["generation_id"],
                           assignment if j is leader else None) for j in joins]
        assert all(s.result()["error_code"] == ErrorCode.NONE for s in syncs)
        return joins

    # ---- consumer group shortcuts -----------------------------------------------------------------
    def cg(self, request: dict[str, Any], version: int = 0, client_id: str = "client") -> dict[str, Any]:
        return self.coordinator.consumer_group_heartbeat(request, ctx(version, client_id))
