"""Consumer groups: the classic protocol (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup) at each
version, offsets (OffsetCommit, OffsetFetch, OffsetDelete), DescribeGroups, ListGroups, DeleteGroups, and the
KIP-848 protocol (ConsumerGroupHeartbeat, ConsumerGroupDescribe)."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import COORDINATOR_SETTLING, create_topic, step, versions
from compat_tests.conformance.steps import Script, Step

TOPIC = "conf-grp-{run}"
# A consumer protocol subscription (v0) naming no topic: the broker keeps it as opaque bytes.
SUBSCRIPTION = "0000" "00000000" "ffffffff"
ASSIGNMENT = "0000" "00000000" "ffffffff"
GROUPS = {"groups": "group_id"}  # no broker promises an order of the groups it lists or describes
LOADING = ("on a fresh broker the coordinator's partition of its internal topic is still loading a moment after "
           "FindCoordinator answers (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS)")


def find_coordinator(version: int, key: str, key_type: int = 0, name: str | None = None) -> Step:
    return step(name or f"find coordinator v{version}", 10, version,
                {"key": key, "key_type": key_type, "coordinator_keys": [key]}, retry_on=COORDINATOR_SETTLING,
                why=LOADING)


def join(version: int, group: str, member: str = "", name: str = "join", **options: Any) -> Step:
    return step(f"{name} v{version}", 11, version, {
        "group_id": group, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": member,
        "group_instance_id": None, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": SUBSCRIPTION}],
        "reason": "conformance"}, **({"retry_on": COORDINATOR_SETTLING, "why": LOADING} | options))


UNKNOWN_ID = "AAAAAAAAAAAAAAAAAAAAAQ"  # a topic id no topic has


def commit(version: int, group: str, generation: int | str = -1, member: str = "", offset: int = 1,
           topic: str = TOPIC, name: str | None = None) -> Step:
    return step(name or f"commit v{version}", 8, version, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
        "group_instance_id": None, "retention_time_ms": -1,
        "topics": [{"name": topic, "topic_id": "{$topic_id}" if version >= 10 else "AAAAAAAAAAAAAAAAAAAAAA",
                    "partitions": [{"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1,
                                    "committed_metadata": f"m{offset}"}]}]},
                retry_on=COORDINATOR_SETTLING, why=LOADING)


def fetch_offsets(version: int, group: str, topics: list[str] | None = (TOPIC,), name: str | None = None,  # type: ignore[assignment]
                  member: str | None = None, epoch: int | str = -1) -> Step:
    listed = None if topics is None else [
        {"name": topic, "topic_id": "{$topic_id}" if version >= 10 else "AAAAAAAAAAAAAAAAAAAAAA",
         "partition_indexes": [0]} for topic in topics]
    old_style = None if topics is None else [{"name": topic, "partition_indexes": [0]} for topic in topics]
    return step(name or f"fetch offsets v{version}", 9, version, {
        "group_id": group, "topics": old_style, "require_stable": False,
        "groups": [{"group_id": group, "member_id": member, "member_epoch": epoch, "topics": listed}]},
        retry_on=COORDINATOR_SETTLING, why=LOADING)


def classic(index: int) -> Script:
    group = f"conf-classic-{index}-{{run}}"
    pick = {key: min(index, max(versions(key))) for key in (10, 11, 12, 13, 14, 15)}
    joining = pick[11]
    steps = [*create_topic(TOPIC), find_coordinator(pick[10], group)]
    if joining >= 4:
        steps.append(join(joining, group, name="join without member id", capture={"member": "member_id"}))
        steps.append(join(joining, group, "{$member}", capture={"member": "member_id"}))
    else:
        steps.append(join(joining, group, capture={"member": "member_id"}))
    steps += [
        step(f"sync v{pick[14]}", 14, pick[14], {
            "group_id": group, "generation_id": 1, "member_id": "{$member}", "group_instance_id": None,
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": "{$member}", "assignment": ASSIGNMENT}]}),
        step(f"heartbeat v{pick[12]}", 12, pick[12], {"group_id": group, "generation_id": 1,
                                                      "member_id": "{$member}", "group_instance_id": None}),
        step("heartbeat old generation", 12, pick[12], {"group_id": group, "generation_id": 0,
                                                        "member_id": "{$member}", "group_instance_id": None}),
        step("heartbeat unknown member", 12, pick[12], {"group_id": group, "generation_id": 1,
                                                        "member_id": "nobody", "group_instance_id": None}),
        commit(9, group, 1, "{$member}", name="commit as the member"),
        commit(9, group, 7, "{$member}", name="commit with a wrong generation"),
        fetch_offsets(8, group),
        step(f"describe v{pick[15]}", 15, pick[15], {"groups": [group], "include_authorized_operations": False}),
        step(f"leave v{pick[13]}", 13, pick[13], {
            "group_id": group, "member_id": "{$member}",
            "members": [{"member_id": "{$member}", "group_instance_id": None, "reason": "done"}]}),
        step("describe after leaving", 15, pick[15], {"groups": [group], "include_authorized_operations": False}),
    ]
    return Script(f"classic_group.v{index}", steps)


def join_errors() -> Script:
    group = "conf-join-errors-{run}"
    return Script("classic_group.errors", [
        find_coordinator(4, group),
        join(9, group, name="join", capture={"member": "member_id"}),
        join(9, group, "{$member}", name="join as member", capture={"member": "member_id"}),
        join(9, group, "unknown-member", name="join as an unknown member"),
        step("join with a bad session timeout", 11, 9, join(9, group).request | {"session_timeout_ms": 1}),
        step("join with a huge session timeout", 11, 9, join(9, group).request | {"session_timeout_ms": 10_000_000}),
        step("join with another protocol type", 11, 9, join(9, "conf-join-type-{run}").request
             | {"protocol_type": "connect"}),
        step("join with no protocols", 11, 9, join(9, "conf-join-none-{run}").request | {"protocols": []}),
        step("join with an empty group id", 11, 9, join(9, "").request),
        step("sync unknown member", 14, 5, {
            "group_id": group, "generation_id": 1, "member_id": "nobody", "group_instance_id": None,
            "protocol_type": "consumer", "protocol_name": "range", "assignments": []}),
        step("sync wrong protocol", 14, 5, {
            "group_id": group, "generation_id": 1, "member_id": "{$member}", "group_instance_id": None,
            "protocol_type": "connect", "protocol_name": "range", "assignments": []}),
        step("heartbeat unknown group", 12, 4, {"group_id": "conf-nogroup-{run}", "generation_id": 1,
                                                "member_id": "x", "group_instance_id": None}),
        step("leave unknown member", 13, 5, {"group_id": group, "members": [
            {"member_id": "nobody", "group_instance_id": None, "reason": None}]}),
        step("leave unknown group v1", 13, 1, {"group_id": "conf-nogroup-{run}", "member_id": "x"}),
        step("static join", 11, 9, join(9, "conf-static-{run}").request | {"group_instance_id": "instance-1"}),
        step("describe unknown v0", 15, 0, {"groups": ["conf-nogroup-{run}"]}),
        step("describe unknown v6", 15, 6, {"groups": ["conf-nogroup-{run}"], "include_authorized_operations": True}),
        step("describe an empty id v6", 15, 6, {"groups": [""], "include_authorized_operations": False}),
    ])


def offsets() -> list[Script]:
    group = "conf-offsets-{run}"
    steps = [*create_topic(TOPIC), find_coordinator(4, group)]
    for offset, version in enumerate(versions(8), start=1):
        steps.append(commit(version, group, offset=offset))
    steps.append(commit(8, group, offset=100, name="commit 100"))
    for version in versions(9):
        steps.append(fetch_offsets(version, group))
    steps += [
        fetch_offsets(8, group, None, name="fetch all of the group v8"),
        fetch_offsets(5, group, None, name="fetch all of the group v5"),
        fetch_offsets(8, "conf-noffsets-{run}", name="fetch for an unknown group"),
        fetch_offsets(8, group, ["conf-off-missing-{run}"], name="fetch an unknown topic"),
        commit(9, group, topic="conf-off-missing-{run}", name="commit to an unknown topic"),
        commit(9, group, 3, "nobody", name="commit as an unknown member"),
        commit(9, group, offset=-5, name="commit a negative offset"),
        step("commit a long metadata", 8, 9, commit(9, group).request | {"topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 3, "committed_leader_epoch": -1,
                                            "committed_metadata": "m" * 5000}]}]}),
        step("delete offsets", 47, 0, {"group_id": group, "topics": [{"name": TOPIC, "partitions": [
            {"partition_index": 0}]}]}),
        fetch_offsets(8, group, name="fetch after delete"),
        step("delete offsets unknown group", 47, 0, {"group_id": "conf-noffsets-{run}", "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0}]}]}),
        step("delete offsets unknown topic", 47, 0, {"group_id": group, "topics": [
            {"name": "conf-off-missing-{run}", "partitions": [{"partition_index": 0}]}]}),
        # v10 (KIP-848): topics by id both ways; an id no topic has is UNKNOWN_TOPIC_ID.
        commit(10, group, offset=7, name="commit by id after the delete"),
        fetch_offsets(10, group, None, name="fetch all of the group v10"),
        fetch_offsets(9, group, name="fetch by name what was committed by id"),
        step("commit to an unknown topic id", 8, 10, commit(10, group).request | {"topics": [
            {"topic_id": UNKNOWN_ID, "partitions": [{"partition_index": 0, "committed_offset": 3,
                                                     "committed_leader_epoch": -1, "committed_metadata": ""}]}]}),
        step("commit by id to an unknown partition", 8, 10, commit(10, group).request | {"topics": [
            {"topic_id": "{$topic_id}", "partitions": [
                {"partition_index": 4, "committed_offset": 3, "committed_leader_epoch": -1,
                 "committed_metadata": ""},
                {"partition_index": 0, "committed_offset": 8, "committed_leader_epoch": -1,
                 "committed_metadata": "m8"}]}]}),
        step("fetch an unknown topic id and a known one", 9, 10, {"require_stable": False, "groups": [
            {"group_id": group, "member_id": None, "member_epoch": -1, "topics": [
                {"topic_id": UNKNOWN_ID, "partition_indexes": [0, 1]},
                {"topic_id": "{$topic_id}", "partition_indexes": [0, 1]}]}]}),
        step("fetch the zero topic id", 9, 10, {"require_stable": False, "groups": [
            {"group_id": group, "member_id": None, "member_epoch": -1, "topics": [
                {"topic_id": "AAAAAAAAAAAAAAAAAAAAAA", "partition_indexes": [0]}]}]}),
        fetch_offsets(10, "conf-noffsets-{run}", name="fetch v10 for an unknown group"),
    ]
    listing = [find_coordinator(4, "conf-listed-{run}"), commit(9, "conf-listed-{run}", name="make a group"),
               *create_topic(TOPIC)]
    for version in versions(16):
        listing.append(step(f"list v{version}", 16, version, {"states_filter": [], "types_filter": []},
                            only_run=("groups",), key_by=GROUPS))
    listing += [
        step("list by state", 16, 4, {"states_filter": ["Empty"]}, only_run=("groups",), key_by=GROUPS),
        step("list by type", 16, 5, {"states_filter": [], "types_filter": ["classic"]}, only_run=("groups",),
             key_by=GROUPS),
        step("list by unknown state", 16, 5, {"states_filter": ["Sleeping"], "types_filter": []},
             only_run=("groups",), key_by=GROUPS),
        step("list by unknown type", 16, 5, {"states_filter": [], "types_filter": ["odd"]}, only_run=("groups",),
             key_by=GROUPS),
    ]
    deleting = [*create_topic(TOPIC)]
    for version in versions(42):
        group_v = f"conf-del-{version}-{{run}}"
        deleting += [find_coordinator(4, group_v), commit(9, group_v, name=f"make group {version}"),
                     step(f"delete v{version}", 42, version, {"groups_names": [group_v]})]
    deleting += [
        step("delete unknown", 42, 2, {"groups_names": ["conf-del-missing-{run}"]}),
        find_coordinator(4, "conf-del-busy-{run}", name="find the busy group's coordinator"),
        join(9, "conf-del-busy-{run}", name="join the busy group", capture={"member": "member_id"}),
        join(9, "conf-del-busy-{run}", "{$member}", name="join the busy group as member"),
        step("delete a group with a member", 42, 2, {"groups_names": ["conf-del-busy-{run}"]}),
        step("delete an empty name", 42, 2, {"groups_names": [""]}),
    ]
    return [Script("offsets.versions", steps), Script("list_groups.versions", listing),
            Script("delete_groups.versions", deleting)]


def probe(topic: str, name: str) -> list[Step]:
    """A member of a group of its own joins until it is assigned the topic, then leaves: after it, the group
    coordinator knows the new topic, and a member joining is assigned it in its first answer."""
    body = {"group_id": f"conf-848-probe-{name}-{{run}}", "member_id": "conf-probe-{run}-eeeeeeeeeeee",
            "member_epoch": 0, "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": [topic], "subscribed_topic_regex": None, "server_assignor": None,
            "topic_partitions": []}
    return [
        step("probe joins", 68, 1, body, retry_on=COORDINATOR_SETTLING, retry_unless="assignment/topic_partitions/0",
             varying={"member_epoch": "any:member_epoch"},
             why="the group coordinator learns of a new topic a moment after the broker serves it: until then a "
                 "member subscribing to it is assigned nothing; each join until then bumps the probe's epoch"),
        step("probe leaves", 68, 1, body | {"member_epoch": -1, "subscribed_topic_names": None}),
    ]


def consumer_protocol() -> list[Script]:
    scripts = []
    for version in versions(68):
        group = f"conf-848-{version}-{{run}}"
        member = "" if version == 0 else "conf-member-{run}-aaaaaaaaaaaa"
        heartbeat = {"group_id": group, "member_id": member, "member_epoch": 0, "instance_id": None, "rack_id": None,
                     "rebalance_timeout_ms": 30000, "subscribed_topic_names": [TOPIC], "subscribed_topic_regex": None,
                     "server_assignor": None, "topic_partitions": []}
        steps = [
            *create_topic(TOPIC, partitions=2),
            find_coordinator(4, group),
            *probe(TOPIC, str(version)),
            step(f"join v{version}", 68, version, heartbeat, retry_on=COORDINATOR_SETTLING, why=LOADING,
                 capture={"member": "member_id", "epoch": "member_epoch", "assigned": "assignment/topic_partitions"}),
            step("heartbeat with the assignment", 68, version, heartbeat | {
                "member_id": "{$member}", "member_epoch": "{$epoch}", "rebalance_timeout_ms": -1,
                "subscribed_topic_names": None, "topic_partitions": "{$assigned}"}),
            step("heartbeat with a wrong epoch", 68, version, heartbeat | {
                "member_id": "{$member}", "member_epoch": 99, "subscribed_topic_names": None}),
            step("describe v0", 69, 0, {"group_ids": [group], "include_authorized_operations": False}),
            step("describe v1", 69, 1, {"group_ids": [group, "conf-848-missing-{run}"],
                                        "include_authorized_operations": True}, key_by=GROUPS),
            step("describe as classic", 15, 5, {"groups": [group], "include_authorized_operations": False}),
            step("describe as classic v6", 15, 6, {"groups": [group], "include_authorized_operations": True}),
            step("list", 16, 5, {"states_filter": [], "types_filter": ["consumer"]}, only_run=("groups",),
                 key_by=GROUPS),
            step("leave", 68, version, heartbeat | {"member_id": "{$member}", "member_epoch": -1,
                                                    "subscribed_topic_names": None}),
            step("describe after leaving", 69, 1, {"group_ids": [group], "include_authorized_operations": False}),
        ]
        scripts.append(Script(f"consumer_group.v{version}", steps))
    group = "conf-848-errors-{run}"
    base = {"group_id": group, "member_id": "conf-member-{run}-bbbbbbbbbbbb", "member_epoch": 0, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": [TOPIC],
            "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": []}
    scripts.append(Script("consumer_group.errors", [
        *create_topic(TOPIC),
        find_coordinator(4, group),
        *probe(TOPIC, "errors"),
        step("join", 68, 1, base | {"member_id": "conf-member-{run}-dddddddddddd"}, retry_on=COORDINATOR_SETTLING,
             why=LOADING),
        step("no subscription", 68, 1, base | {"subscribed_topic_names": None}),
        step("no rebalance timeout", 68, 1, base | {"rebalance_timeout_ms": -1}),
        step("empty group id", 68, 1, base | {"group_id": ""}),
        step("no member id v1", 68, 1, base | {"member_id": ""}),
        step("unknown assignor", 68, 1, base | {"server_assignor": "fancy"}),
        step("bad regex", 68, 1, base | {"subscribed_topic_names": None, "subscribed_topic_regex": "(("}),
        step("unknown member", 68, 1, base | {"member_id": "nobody", "member_epoch": 3}),
        step("describe unknown", 69, 1, {"group_ids": ["conf-848-missing-{run}"],
                                         "include_authorized_operations": False}),
        step("join a classic group's id", 68, 1, base | {"group_id": "conf-848-classic-{run}"}),
    ]))
    return scripts


def scripts() -> list[Script]:
    return [*(classic(index) for index in range(10)), join_errors(), *offsets(), *consumer_protocol()]
