"""What the group differential tests share: topics and the coordinator made ready, classic members each on a
connection of its own, and the request bodies, all raw through kemu's codec.

A classic member's JoinGroup parks until the rebalance completes, so a `ClassicMember` can send a request and
read its answer later, while other members act on their own connections. Waits are bounded polls of what the
broker says (never sleeps standing in for an order), so a slow broker makes a test slower, not different.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from compat_tests.differential.admin_requests import INCREMENTAL_ALTER_CONFIGS, RESOURCE_GROUP
from compat_tests.differential.targets import Target
from kemu.groups.subscription_bytes import encode_subscription
from tests.server.kafka_socket import KafkaSocket

T = TypeVar("T")
Body = dict[str, Any]

METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = 3, 8, 9, 10
JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 11, 12, 13, 14
DESCRIBE_GROUPS, LIST_GROUPS, CREATE_TOPICS, DELETE_GROUPS = 15, 16, 19, 42
OFFSET_DELETE, CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE = 47, 68, 69

WAIT_S = 30.0
# Short enough that a member a test leaves behind is gone within a test, long enough for a loaded machine.
SESSION_TIMEOUT_MS = 6000
REBALANCE_TIMEOUT_MS = 6000
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_BASE64_UUID = re.compile(r"^[A-Za-z0-9_-]{22}$")


def unique(prefix: str) -> str:
    """A name for a group or topic, the same on both brokers within one scenario run."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def wait_for(what: str, probe: Callable[[], T | None], timeout_s: float = WAIT_S) -> T:
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def member_id_shape(member_id: str) -> str:
    """A member id with its random part replaced: Kafka's classic ids are `<client id or instance id>-<uuid>`,
    KIP-848 server-made ids a base64 UUID."""
    if _BASE64_UUID.match(member_id):
        return "<base64 uuid>"
    return _UUID.sub("<uuid>", member_id)


# ---- topics and the coordinator ------------------------------------------------------------------
def create_topics(target: Target, partitions: dict[str, int]) -> None:
    """Creates the topics and waits until every partition has a leader in Metadata."""
    body = {"topics": [{"name": name, "num_partitions": count, "replication_factor": 1, "assignments": [],
                        "configs": []} for name, count in partitions.items()],
            "timeout_ms": 15000, "validate_only": False}
    answer = target.request(CREATE_TOPICS, 5, body)
    failed = [t for t in answer["topics"] if t["error_code"] != 0]
    assert not failed, f"{target.name}: CreateTopics failed: {failed}"

    def led() -> bool | None:
        metadata = target.request(METADATA, 9, {"topics": [{"name": n} for n in partitions],
                                                "allow_auto_topic_creation": False,
                                                "include_topic_authorized_operations": False})
        ready = all(t["error_code"] == 0 and len(t["partitions"]) == partitions[t["name"]]
                    and all(p["leader_id"] >= 0 for p in t["partitions"]) for t in metadata["topics"])
        return True if ready else None

    wait_for(f"{target.name}: leaders of {sorted(partitions)}", led)


def topic_ids(target: Target, names: Iterable[str]) -> dict[str, uuid.UUID]:
    metadata = target.request(METADATA, 12, {"topics": [{"name": n, "topic_id": uuid.UUID(int=0)} for n in names],
                                             "allow_auto_topic_creation": False,
                                             "include_topic_authorized_operations": False})
    return {t["name"]: t["topic_id"] for t in metadata["topics"]}


Change = tuple[str, "str | None", int]  # a group config's name, value and operation (0 SET, 1 DELETE, 2 APPEND)


def incremental(target: Target, group: str, changes: list[Change], validate_only: bool = False) -> list[Any]:
    """IncrementalAlterConfigs of one group's configs: its (error code, message)."""
    body = target.request(INCREMENTAL_ALTER_CONFIGS, 1, {
        "resources": [{"resource_type": RESOURCE_GROUP, "resource_name": group,
                       "configs": [{"name": n, "value": v, "config_operation": op} for n, v, op in changes]}],
        "validate_only": validate_only})
    return [(r["error_code"], r["error_message"]) for r in body["responses"]]


def ready_coordinator(target: Target, group_id: str) -> None:
    """Waits until FindCoordinator finds the group's coordinator: Kafka answers COORDINATOR_NOT_AVAILABLE while
    it creates __consumer_offsets on the first lookup, and each group's partition must be loaded."""
    def found() -> bool | None:
        answer = target.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group_id]})
        return True if answer["coordinators"][0]["error_code"] == 0 else None

    wait_for(f"{target.name}: coordinator of {group_id}", found)

    def loaded() -> bool | None:
        # The group's __consumer_offsets partition is led, but its coordinator may still be loading it
        # (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS): a group that does not exist is described Dead once
        # it is loaded.
        return True if describe_group(target, group_id)["error_code"] == 0 else None

    wait_for(f"{target.name}: coordinator of {group_id} loaded", loaded)


# ---- request bodies ------------------------------------------------------------------------------
def consumer_protocols(topics: list[str], *names: str, user_data: bytes | None = None) -> list[Body]:
    metadata = encode_subscription(topics, user_data)
    return [{"name": name, "metadata": metadata} for name in names or ("range",)]


def join_body(group_id: str, member_id: str = "", *, protocols: list[Body], protocol_type: str = "consumer",
              instance_id: str | None = None, session_timeout_ms: int = SESSION_TIMEOUT_MS,
              rebalance_timeout_ms: int = REBALANCE_TIMEOUT_MS, reason: str | None = None) -> Body:
    return {"group_id": group_id, "session_timeout_ms": session_timeout_ms,
            "rebalance_timeout_ms": rebalance_timeout_ms, "member_id": member_id,
            "group_instance_id": instance_id, "protocol_type": protocol_type, "protocols": protocols,
            "reason": reason}


def sync_body(group_id: str, member_id: str, generation: int, assignments: dict[str, bytes] | None = None, *,
              instance_id: str | None = None, protocol_type: str | None = "consumer",
              protocol_name: str | None = None) -> Body:
    return {"group_id": group_id, "generation_id": generation, "member_id": member_id,
            "group_instance_id": instance_id, "protocol_type": protocol_type, "protocol_name": protocol_name,
            "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()]}


def heartbeat_body(group_id: str, member_id: str, generation: int, instance_id: str | None = None) -> Body:
    return {"group_id": group_id, "generation_id": generation, "member_id": member_id,
            "group_instance_id": instance_id}


def commit_body(group_id: str, offsets: dict[tuple[str, int], int], *, generation: int = -1,
                member_id: str = "", instance_id: str | None = None, metadata: str | None = "",
                retention_time_ms: int = -1) -> Body:
    topics: dict[str, list[Body]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append({
            "partition_index": partition, "committed_offset": offset, "committed_leader_epoch": -1,
            "commit_timestamp": -1, "committed_metadata": metadata})
    return {"group_id": group_id, "generation_id_or_member_epoch": generation, "member_id": member_id,
            "group_instance_id": instance_id, "retention_time_ms": retention_time_ms,
            "topics": [{"name": topic, "partitions": parts} for topic, parts in topics.items()]}


# ---- a classic member on a connection of its own -------------------------------------------------
class ClassicMember:
    """One classic group member: its connection, its member id and generation as the broker gave them."""

    def __init__(self, target: Target, group_id: str, client_id: str, *, instance_id: str | None = None,
                 protocols: list[Body] | None = None) -> None:
        self.target, self.group_id, self.instance_id = target, group_id, instance_id
        self.connection: KafkaSocket = target.connect(client_id=client_id)
        self.protocols = protocols if protocols is not None else consumer_protocols(["t"])
        self.member_id = ""
        self.generation = -1
        self.protocol_name: str | None = None

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> ClassicMember:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_join(self, version: int = 9, **fields: Any) -> None:
        fields.setdefault("instance_id", self.instance_id)
        fields.setdefault("protocols", self.protocols)
        self.connection.send(JOIN_GROUP, version, join_body(self.group_id, self.member_id, **fields))

    def receive_join(self, version: int = 9) -> Body:
        answer = self.connection.receive(JOIN_GROUP, version)[1]
        if answer["member_id"]:
            self.member_id = answer["member_id"]
        if answer["error_code"] == 0:
            self.generation = answer["generation_id"]
            self.protocol_name = answer["protocol_name"] or None
        return answer

    def join(self, version: int = 9, **fields: Any) -> Body:
        self.send_join(version, **fields)
        return self.receive_join(version)

    def join_with_id(self, version: int = 9, **fields: Any) -> tuple[Body, Body]:
        """v4+: the first JoinGroup hands out the member id (MEMBER_ID_REQUIRED); the second joins with it."""
        first = self.join(version, **fields)
        return first, self.join(version, **fields)

    def lead(self) -> None:
        """Joins (v9, with the member-id handshake) a group with no other member and hands itself an empty
        assignment: the group is Stable, led by this member."""
        self.join_with_id()
        self.sync({self.member_id: b""})

    def send_sync(self, assignments: dict[str, bytes] | None = None, version: int = 5, **fields: Any) -> None:
        fields.setdefault("instance_id", self.instance_id)
        # The protocol the broker chose, as a client states it from v5 on.
        fields.setdefault("protocol_name", self.protocol_name if version >= 5 else None)
        self.connection.send(SYNC_GROUP, version, sync_body(self.group_id, self.member_id, fields.pop(
            "generation", self.generation), assignments, **fields))

    def receive_sync(self, version: int = 5) -> Body:
        return self.connection.receive(SYNC_GROUP, version)[1]

    def sync(self, assignments: dict[str, bytes] | None = None, version: int = 5, **fields: Any) -> Body:
        self.send_sync(assignments, version, **fields)
        return self.receive_sync(version)

    def heartbeat(self, version: int = 4, generation: int | None = None, member_id: str | None = None) -> Body:
        return self.connection.request(HEARTBEAT, version, heartbeat_body(
            self.group_id, self.member_id if member_id is None else member_id,
            self.generation if generation is None else generation, self.instance_id))

    def await_rebalance(self) -> Body:
        """Heartbeats until the broker says a rebalance is under way (another member's join reached it)."""
        def rebalancing() -> Body | None:
            answer = self.heartbeat()
            return answer if answer["error_code"] == REBALANCE_IN_PROGRESS else None

        return wait_for(f"{self.target.name}: rebalance of {self.group_id}", rebalancing)

    def leave(self, version: int = 5) -> Body:
        return self.connection.request(LEAVE_GROUP, version, {
            "group_id": self.group_id, "member_id": self.member_id,
            "members": [{"member_id": self.member_id, "group_instance_id": self.instance_id,
                         "reason": None}]})


REBALANCE_IN_PROGRESS = 27


def describe_group(target: Target, group_id: str, version: int = 5) -> Body:
    return target.request(DESCRIBE_GROUPS, version, {"groups": [group_id],
                                                     "include_authorized_operations": False})["groups"][0]


def await_state(target: Target, group_id: str, state: str) -> Body:
    """DescribeGroups until the group is in `state`: what a member's leave or expiry does happens in the
    coordinator's own time on Kafka (its event loop), after the response."""
    def in_state() -> Body | None:
        group = describe_group(target, group_id)
        return group if group["group_state"] == state else None

    return wait_for(f"{target.name}: {group_id} in state {state}", in_state)


# ---- KIP-848 consumer groups ---------------------------------------------------------------------
def consumer_heartbeat_body(group_id: str, member_id: str, epoch: int, *, topics: list[str] | None = None,
                            regex: str | None = None, assignor: str | None = None,
                            instance_id: str | None = None, rack_id: str | None = None,
                            rebalance_timeout_ms: int = -1, owned: list[Body] | None = None) -> Body:
    return {"group_id": group_id, "member_id": member_id, "member_epoch": epoch, "instance_id": instance_id,
            "rack_id": rack_id, "rebalance_timeout_ms": rebalance_timeout_ms, "subscribed_topic_names": topics,
            "subscribed_topic_regex": regex, "server_assignor": assignor, "topic_partitions": owned}


def new_member_id() -> str:
    """A KIP-848 member id, which a v1 client makes itself (a base64 UUID in Kafka's client)."""
    return uuid.uuid4().hex[:22]


def consumer_join(target: Target, group_id: str, topics: list[str], *, member_id: str | None = None,
                  assignor: str | None = None, version: int = 1) -> Body:
    return target.request(CONSUMER_GROUP_HEARTBEAT, version, consumer_heartbeat_body(
        group_id, new_member_id() if member_id is None else member_id, 0, topics=topics, assignor=assignor,
        rebalance_timeout_ms=REBALANCE_TIMEOUT_MS, owned=[]))


def admit(leader: ClassicMember, newcomer: ClassicMember, others: Iterable[ClassicMember] = (), *,
          while_rebalancing: Callable[[], object] | None = None) -> None:
    """Brings `newcomer` into the Stable group `leader` leads with `others`: its join parks until the leader
    has seen the rebalance and everyone has rejoined; then the leader hands out empty assignments."""
    others = list(others)
    if newcomer.instance_id is None and not newcomer.member_id:
        newcomer.join()  # v4+: the member id
    newcomer.send_join()
    leader.await_rebalance()
    if while_rebalancing is not None:
        while_rebalancing()
    for member in (leader, *others):
        member.send_join()
    for member in (leader, *others, newcomer):
        member.receive_join()
    for member in (*others, newcomer):
        member.send_sync()
    leader.sync({member.member_id: b"" for member in (leader, *others, newcomer)})
    for member in (*others, newcomer):
        member.receive_sync()
