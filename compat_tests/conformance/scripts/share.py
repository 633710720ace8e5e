"""Share groups (KIP-932): a member's ShareGroupHeartbeat join, heartbeat and leave, ShareGroupDescribe, the
group in ListGroups, DescribeGroups and DeleteGroups; ShareFetch and ShareAcknowledge at every version, their
share sessions (open, next epochs, a wrong epoch, an unknown session, close) and the requests Kafka refuses
before reading (acknowledge data on an opening fetch, an acknowledgement opening a session, no group or member
id)."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import COORDINATOR_SETTLING, create_topic, step, versions
from compat_tests.conformance.scripts.groups import GROUPS, LOADING, find_coordinator
from compat_tests.conformance.steps import Script

TOPIC = "conf-share-{run}"


def _fetch(version: int, group: str | None, member: str, epoch: int, acks: list[dict[str, Any]] | None = None,
           topics: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "group_id": group, "member_id": member, "share_session_epoch": epoch, "max_wait_ms": 0, "min_bytes": 1,
        "max_bytes": 1048576, "max_records": 500, "batch_size": 500,
        "topics": [{"topic_id": "{$topic_id}", "partitions": [
            {"partition_index": 0, "acknowledgement_batches": acks or []}]}] if topics else [],
        "forgotten_topics_data": []}
    if version >= 2:
        body |= {"share_acquire_mode": 0, "is_renew_ack": False}
    return body


def _acknowledge(version: int, group: str, member: str, epoch: int) -> dict[str, Any]:
    body: dict[str, Any] = {"group_id": group, "member_id": member, "share_session_epoch": epoch, "topics": []}
    if version >= 2:
        body["is_renew_ack"] = False
    return body


def sessions(version: int) -> Script:
    group, member = f"conf-share-{version}-{{run}}", "conf-share-member-{run}"
    accept = [{"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]
    return Script(f"share_fetch.sessions.v{version}", [
        *create_topic(TOPIC),
        step("open", 78, version, _fetch(version, group, member, 0)),
        step("next epoch", 78, version, _fetch(version, group, member, 1)),
        step("wrong epoch", 78, version, _fetch(version, group, member, 5)),
        step("unknown session", 78, version, _fetch(version, group, "conf-share-nobody-{run}", 3)),
        step("acknowledgements on opening", 78, version, _fetch(version, group, member, 0, accept)),
        step("acknowledge opening a session", 79, version, _acknowledge(version, group, member, 0)),
        step("acknowledge nothing", 79, version, _acknowledge(version, group, member, 1)),
        step("acknowledge a wrong epoch", 79, version, _acknowledge(version, group, member, 9)),
        step("close", 78, version, _fetch(version, group, member, -1, topics=False)),
        step("after closing", 78, version, _fetch(version, group, member, 2)),
        step("acknowledge after closing", 79, version, _acknowledge(version, group, member, 2)),
        step("null group id", 78, version, _fetch(version, None, member, 0)),
        step("empty group id", 78, version, _fetch(version, "", member, 0)),
        step("empty member id", 78, version, _fetch(version, group, "", 0)),
        step("member id over 36", 78, version, _fetch(version, group, "m" * 37, 0)),
        step("acknowledge with an empty member id", 79, version, _acknowledge(version, group, "", 1)),
    ])


def _heartbeat(group: str, member: str, epoch: int | str, topics: list[str] | None) -> dict[str, Any]:
    return {"group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": None,
            "subscribed_topic_names": topics}


def membership() -> Script:
    group, member = "conf-share-group-{run}", "conf-sm-{run}"
    return Script("share_group.membership", [
        *create_topic(TOPIC, partitions=2),
        find_coordinator(4, group),
        step("join", 76, 1, _heartbeat(group, member, 0, [TOPIC]), retry_on=COORDINATOR_SETTLING, why=LOADING,
             capture={"epoch": "member_epoch"}),
        step("heartbeat until assigned", 76, 1, _heartbeat(group, member, "{$epoch}", None),
             retry_unless="assignment/topic_partitions/0", capture={"epoch": "member_epoch"},
             why="the share coordinator initialises the partitions' state a moment after the join asked for it; "
                 "until then the member is assigned nothing"),
        step("heartbeat", 76, 1, _heartbeat(group, member, "{$epoch}", None)),
        step("heartbeat with a wrong epoch", 76, 1, _heartbeat(group, member, 99, None)),
        step("unknown member", 76, 1, _heartbeat(group, "conf-sm-nobody-{run}", 3, None)),
        step("no member id", 76, 1, _heartbeat(group, "", 0, [TOPIC])),
        step("join without topics", 76, 1, _heartbeat(group, "conf-sm-other-{run}", 0, None)),
        step("describe", 77, 1, {"group_ids": [group, "conf-share-missing-{run}"],
                                 "include_authorized_operations": True}, key_by=GROUPS),
        step("describe as classic v5", 15, 5, {"groups": [group], "include_authorized_operations": False}),
        step("describe as classic v6", 15, 6, {"groups": [group], "include_authorized_operations": False}),
        step("list", 16, 5, {"states_filter": [], "types_filter": ["share"]}, only_run=("groups",), key_by=GROUPS),
        step("delete while a member remains", 42, 2, {"groups_names": [group]}),
        step("leave", 76, 1, _heartbeat(group, member, -1, None)),
        step("leave again", 76, 1, _heartbeat(group, member, -1, None)),
        step("list after leaving", 16, 5, {"states_filter": [], "types_filter": ["share"]}, only_run=("groups",),
             key_by=GROUPS),
        step("delete", 42, 2, {"groups_names": [group]}),
        step("describe after deleting", 77, 1, {"group_ids": [group], "include_authorized_operations": False}),
    ])


def scripts() -> list[Script]:
    return [membership(), *(sessions(version) for version in sorted(set(versions(78)) | set(versions(79))))]
