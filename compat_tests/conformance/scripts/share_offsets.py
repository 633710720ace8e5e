"""Share-group offsets (KIP-932): DescribeShareGroupOffsets at both versions (start offsets, lag, -1 where there
is no state, unknown topics, the empty group id), AlterShareGroupOffsets (a group made for it, unknown topics
and partitions, an offset beyond the end, refused while a member is in the group), a share fetch starting at
the altered offset, DeleteShareGroupOffsets (deleted, nothing to delete, unknown groups, a classic group), and
a group whose partitions were initialised by a member's assignment.

No step describes a group after an acknowledgement: Kafka's start offset is the one its share coordinator
last persisted, one state write behind kemu's (the lag agrees); nor between a join and the heartbeat that
gets the partitions, while Kafka's share coordinator is still initialising them (kemu's are at once)."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import COORDINATOR_SETTLING, create_topic, produce, step
from compat_tests.conformance.scripts.groups import GROUPS, LOADING, find_coordinator
from compat_tests.conformance.steps import Script, Step

TOPIC = "conf-share-offsets-{run}"
UNKNOWN = "conf-share-offsets-nope-{run}"


def _describe(name: str, group: str, topics: list[tuple[str, list[int]]] | None, version: int = 1,
              **options: Any) -> Step:
    body = None if topics is None else [{"topic_name": t, "partitions": parts} for t, parts in topics]
    return step(name, 90, version, {"groups": [{"group_id": group, "topics": body}]}, **options)


def _alter(name: str, group: str, topics: dict[str, dict[int, int]]) -> Step:
    return step(name, 91, 0, {"group_id": group, "topics": [
        {"topic_name": t, "partitions": [{"partition_index": i, "start_offset": o} for i, o in parts.items()]}
        for t, parts in topics.items()]})


def _delete(name: str, group: str, *topics: str) -> Step:
    return step(name, 92, 0, {"group_id": group, "topics": [{"topic_name": t} for t in topics]})


def _heartbeat(name: str, group: str, member: str, epoch: int | str, topics: list[str] | None,
               **options: Any) -> Step:
    return step(name, 76, 1, {"group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": None,
                              "subscribed_topic_names": topics}, **options)


def _fetch(group: str, member: str) -> dict[str, Any]:
    return {"group_id": group, "member_id": member, "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 1048576, "max_records": 500, "batch_size": 500, "share_acquire_mode": 0,
            "is_renew_ack": False, "topics": [{"topic_id": "{$topic_id}", "partitions": [
                {"partition_index": 0, "acknowledgement_batches": []}]}], "forgotten_topics_data": []}


def altered() -> Script:
    group, member, classic = "conf-so-{run}", "conf-so-member-{run}", "conf-so-classic-{run}"
    return Script("share_offsets.alter_describe_delete", [
        *create_topic(TOPIC, partitions=2),
        produce(TOPIC, ["a", "b", "c", "d", "e"]),
        find_coordinator(4, group),
        _describe("describe an unknown group", group, None, retry_on=COORDINATOR_SETTLING, why=LOADING),
        _describe("describe partitions of an unknown group", group, [(TOPIC, [0, 1]), (UNKNOWN, [0])]),
        _describe("describe v0", group, [(TOPIC, [0])], version=0),
        _describe("describe no topics", group, []),
        _describe("describe the empty group id", "", None),
        _describe("describe partitions of the empty group id", "", [(TOPIC, [0])]),
        _delete("delete for an unknown group", group, TOPIC),
        _delete("delete for the empty group id", "", TOPIC),
        _alter("alter for the empty group id", "", {TOPIC: {0: 1}}),
        _alter("alter making the group", group, {UNKNOWN: {0: 0}, TOPIC: {0: 2, 5: 2}}),
        step("list share groups", 16, 5, {"states_filter": [], "types_filter": ["share"]}, only_run=("groups",),
             key_by=GROUPS),
        _describe("describe after altering", group, None),
        _describe("describe partitions after altering", group, [(TOPIC, [0, 1])]),
        _describe("describe v0 after altering", group, [(TOPIC, [0, 1])], version=0),
        _alter("alter beyond the end", group, {TOPIC: {1: 100}}),
        _describe("describe beyond the end", group, None),
        _heartbeat("join", group, member, 0, [TOPIC], retry_on=COORDINATOR_SETTLING, why=LOADING),
        _alter("alter with a member", group, {TOPIC: {0: 1}}),
        _alter("alter an unknown topic with a member", group, {UNKNOWN: {0: 1}}),
        _delete("delete with a member", group, TOPIC),
        step("fetch from the altered offset", 78, 2, _fetch(group, member),
             retry_unless="responses/0/partitions/0/acquired_records/0",
             why="Kafka's share-partition reads its state from the share coordinator on the first fetch and "
                 "answers that fetch with nothing"),
        _describe("describe after fetching", group, None),
        _heartbeat("leave", group, member, -1, None),
        _delete("delete", group, TOPIC, UNKNOWN),
        _describe("describe after deleting", group, None),
        _describe("describe partitions after deleting", group, [(TOPIC, [0])]),
        _delete("delete again", group, TOPIC, UNKNOWN),
        _delete("delete no topics", group),
        _alter("alter no topics", group, {}),
        step("commit for a classic group", 8, 9, {
            "group_id": classic, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                       "committed_leader_epoch": -1, "committed_metadata": None}]}]}),
        _describe("describe a classic group", classic, None),
        _describe("describe partitions of a classic group", classic, [(TOPIC, [0])]),
        _alter("alter a classic group", classic, {TOPIC: {0: 1}}),
        _delete("delete for a classic group", classic, TOPIC),
    ])


def assigned() -> Script:
    group, member = "conf-so-assigned-{run}", "conf-so-am-{run}"
    return Script("share_offsets.assigned", [
        *create_topic(TOPIC, partitions=2),
        find_coordinator(4, group),
        _heartbeat("join", group, member, 0, [TOPIC], retry_on=COORDINATOR_SETTLING, why=LOADING,
                   capture={"epoch": "member_epoch"}),
        _heartbeat("heartbeat until assigned", group, member, "{$epoch}", None,
                   retry_unless="assignment/topic_partitions/0", capture={"epoch": "member_epoch"},
                   why="the share coordinator initialises the partitions' state a moment after the join asked "
                       "for it; until then the member is assigned nothing"),
        _describe("describe initialised partitions", group, None),
        _describe("describe initialised partitions by name", group, [(TOPIC, [1, 0])]),
        _describe("describe initialised partitions v0", group, [(TOPIC, [0])], version=0),
        _heartbeat("leave", group, member, -1, None),
        _delete("delete", group, TOPIC),
        _describe("describe after deleting", group, None),
    ])


def scripts() -> list[Script]:
    return [altered(), assigned()]
