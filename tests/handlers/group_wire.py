"""Request bodies and small flows for the group APIs' tests."""

from __future__ import annotations

from typing import Any

from kemu.broker.config import BrokerConfig
from tests.handlers.harness import Connection, broker_config

FIND_COORDINATOR, JOIN, HEARTBEAT, LEAVE, SYNC, DESCRIBE, LIST, DELETE = 10, 11, 12, 13, 14, 15, 16, 42
OFFSET_COMMIT, OFFSET_FETCH, OFFSET_DELETE = 8, 9, 47
CG_HEARTBEAT, CG_DESCRIBE = 68, 69


def group_config(**settings: Any) -> BrokerConfig:
    """A broker config (for conftest's `make_broker`) with no initial rebalance delay unless asked."""
    return broker_config(**{"group_initial_rebalance_delay_ms": 0, **settings})


def find_coordinator(conn: Connection, key: str, key_type: int = 0, version: int = 3) -> dict[str, Any]:
    if version >= 4:
        return conn.request(FIND_COORDINATOR, version, {"key_type": key_type, "coordinator_keys": [key]})
    return conn.request(FIND_COORDINATOR, version, {"key": key, "key_type": key_type})


def join_body(group: str, member_id: str = "", *, instance_id: str | None = None, session_timeout_ms: int = 10_000,
              rebalance_timeout_ms: int = 10_000, protocols: list[tuple[str, bytes]] | None = None,
              protocol_type: str = "consumer") -> dict[str, Any]:
    return {"group_id": group, "session_timeout_ms": session_timeout_ms, "rebalance_timeout_ms": rebalance_timeout_ms,
            "member_id": member_id, "group_instance_id": instance_id, "protocol_type": protocol_type,
            "protocols": [{"name": n, "metadata": m} for n, m in (protocols or [("range", b"meta")])],
            "reason": None}


def join(conn: Connection, group: str, version: int = 9, **kwargs: Any) -> dict[str, Any]:
    """A complete join: with the v4+ MEMBER_ID_REQUIRED round trip when the version has it."""
    first = conn.request(JOIN, version, join_body(group, **kwargs))
    if first["error_code"] != 79:  # MEMBER_ID_REQUIRED
        return first
    kwargs["member_id"] = first["member_id"]
    return conn.request(JOIN, version, join_body(group, **kwargs))


def send_join(conn: Connection, group: str, version: int = 9, **kwargs: Any) -> None:
    """A complete join whose answer waits (for a rebalance): the v4+ MEMBER_ID_REQUIRED round trip, then the
    join itself sent, its answer left for `conn.receive(JOIN, version)`. In-process, `send` returns once the
    join reached the coordinator; over a real socket, wait for the group to rebalance before moving time."""
    first = conn.request(JOIN, version, join_body(group, **kwargs))
    if first["error_code"] == 79:  # MEMBER_ID_REQUIRED
        kwargs["member_id"] = first["member_id"]
    else:
        assert version < 4, first
    conn.send(JOIN, version, join_body(group, **kwargs))


def sync_body(group: str, member_id: str, generation: int, assignments: dict[str, bytes] | None = None, *,
              instance_id: str | None = None, protocol_type: str | None = "consumer",
              protocol_name: str | None = "range") -> dict[str, Any]:
    return {"group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": instance_id,
            "protocol_type": protocol_type, "protocol_name": protocol_name,
            "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()]}


def heartbeat_body(group: str, member_id: str, generation: int, instance_id: str | None = None) -> dict[str, Any]:
    return {"group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": instance_id}


def commit_body(group: str, offsets: dict[tuple[str, int], int], *, generation: int = -1, member_id: str = "",
                metadata: str | None = "meta") -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append({"partition_index": partition, "committed_offset": offset,
                                             "committed_metadata": metadata})
    return {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}


def partition_codes(topics: list[dict[str, Any]]) -> dict[tuple[str, int], int]:
    return {(t["name"], p["partition_index"]): p["error_code"] for t in topics for p in t["partitions"]}


def stable_single_member_group(conn: Connection, group: str, assignment: bytes = b"all") -> dict[str, Any]:
    """Join and sync one member; returns its JoinGroup response."""
    joined = join(conn, group)
    assert joined["error_code"] == 0, joined
    synced = conn.request(SYNC, 5, sync_body(group, joined["member_id"], joined["generation_id"],
                                             {joined["member_id"]: assignment}))
    assert synced["error_code"] == 0, synced
    return joined
