"""Streams groups (KIP-1071): a member's StreamsGroupHeartbeat join with a stateless topology (the assignment
held back by the initial rebalance delay, then the tasks), StreamsGroupDescribe, the group in ListGroups and
DescribeGroups, the leave; a topology whose source topic is missing (MISSING_SOURCE_TOPICS); and the requests
Kafka refuses before the coordinator looks at the group (INVALID_REQUEST with its messages, STREAMS_INVALID_TOPOLOGY
for internal or invalid topic names and for a changelog with a partition count), an unknown member, and
StreamsGroupDescribe of an unknown group and of the empty group id; and a second member joining within the group's
assignment interval (its group configs streams.assignment.interval.ms=15000, streams.initial.rebalance.delay.ms=0):
ASSIGNMENT_DELAYED, each member answered from the last target."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import COORDINATOR_SETTLING, barrier, create_topic, step
from compat_tests.conformance.scripts.groups import GROUPS, LOADING, find_coordinator
from compat_tests.conformance.steps import Script

TOPIC = "conf-streams-{run}"
PROCESS = "11111111-2222-3333-4444-555555555555"


def topology(source: str, epoch: int = 0, changelog_partitions: int = 0,
             changelog: bool = False) -> dict[str, Any]:
    """One sub-topology reading `source` (with a state store's changelog if `changelog`)."""
    changelogs = [{"name": f"{source}-store-changelog", "partitions": changelog_partitions, "replication_factor": 0,
                   "topic_configs": []}] if changelog else []
    return {"epoch": epoch, "subtopologies": [
        {"subtopology_id": "0", "source_topics": [source], "source_topic_regex": [],
         "state_changelog_topics": changelogs, "repartition_sink_topics": [], "repartition_source_topics": [],
         "copartition_groups": []}]}


def heartbeat(group: str, member: str, epoch: int | str, **fields: Any) -> dict[str, Any]:
    joining = epoch == 0
    body: dict[str, Any] = {
        "group_id": group, "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": 0,
        "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000 if joining else -1,
        "topology": topology(TOPIC) if joining else None,
        "active_tasks": [], "standby_tasks": [], "warmup_tasks": [],
        "process_id": PROCESS if joining else None, "user_endpoint": None,
        "client_tags": [] if joining else None, "task_offsets": None, "task_end_offsets": None,
        "shutdown_application": False}
    return body | fields


def describe(*groups: str) -> dict[str, Any]:
    return {"group_ids": list(groups), "include_authorized_operations": False}


def membership() -> Script:
    group, member = "conf-streams-group-{run}", "conf-streams-member-{run}"
    return Script("streams_group.membership", [
        *create_topic(TOPIC, partitions=2),
        find_coordinator(4, group),
        step("join", 88, 0, heartbeat(group, member, 0), retry_on=COORDINATOR_SETTLING, why=LOADING,
             capture={"epoch": "member_epoch"}),
        step("heartbeat until assigned", 88, 0, heartbeat(group, member, "{$epoch}"),
             retry_unless="active_tasks/0", capture={"epoch": "member_epoch"},
             why="a new streams group's first assignment waits group.streams.initial.rebalance.delay.ms (3 s) for "
                 "more members to join"),
        step("heartbeat", 88, 0, heartbeat(group, member, "{$epoch}",
                                           active_tasks=[{"subtopology_id": "0", "partitions": [0, 1]}])),
        step("heartbeat with a wrong epoch", 88, 0, heartbeat(group, member, 99)),
        step("unknown member", 88, 0, heartbeat(group, "conf-streams-nobody-{run}", 3)),
        step("owned tasks of no sub-topology", 88, 0, heartbeat(group, member, "{$epoch}", active_tasks=[
            {"subtopology_id": "9", "partitions": [0]}])),
        step("describe", 89, 0, describe(group, "conf-streams-missing-{run}"), key_by=GROUPS),
        step("describe as classic v6", 15, 6, {"groups": [group], "include_authorized_operations": False}),
        step("list", 16, 5, {"states_filter": [], "types_filter": ["streams"]}, only_run=("groups",), key_by=GROUPS),
        step("delete while a member remains", 42, 2, {"groups_names": [group]}),
        step("leave", 88, 0, heartbeat(group, member, -1)),
        step("describe after leaving", 89, 0, describe(group)),
        step("delete", 42, 2, {"groups_names": [group]}),
        step("describe after deleting", 89, 0, describe(group)),
    ])


def missing_source() -> Script:
    group = "conf-streams-nosource-{run}"
    absent = "conf-streams-absent-{run}"
    return Script("streams_group.missing_source", [
        find_coordinator(4, group),
        step("join", 88, 0, heartbeat(group, "conf-streams-m-{run}", 0, topology=topology(absent)),
             retry_on=COORDINATOR_SETTLING, why=LOADING),
        step("describe", 89, 0, describe(group)),
    ])


def invalid() -> Script:
    group, member = "conf-streams-invalid-{run}", "conf-streams-invalid-m-{run}"
    return Script("streams_group.invalid", [
        find_coordinator(4, group),
        step("empty member id", 88, 0, heartbeat(group, "", 0), retry_on=COORDINATOR_SETTLING, why=LOADING),
        step("empty group id", 88, 0, heartbeat("", member, 0)),
        step("no rebalance timeout", 88, 0, heartbeat(group, member, 0, rebalance_timeout_ms=-1)),
        step("no topology", 88, 0, heartbeat(group, member, 0, topology=None)),
        step("null active tasks", 88, 0, heartbeat(group, member, 0, active_tasks=None)),
        step("topology when not joining", 88, 0, heartbeat(group, member, 3, topology=topology(TOPIC))),
        step("one task kind null", 88, 0, heartbeat(group, member, 3, standby_tasks=None)),
        step("epoch -3", 88, 0, heartbeat(group, member, -3)),
        step("static member", 88, 0, heartbeat(group, member, 0, instance_id="conf-streams-i-{run}")),
        step("task offsets", 88, 0, heartbeat(group, member, 0, task_offsets=[])),
        step("changelog with partitions", 88, 0, heartbeat(group, member, 0, topology=topology(
            TOPIC, changelog=True, changelog_partitions=2))),
        step("internal topic", 88, 0, heartbeat(group, member, 0, topology=topology("__consumer_offsets"))),
        step("invalid topic name", 88, 0, heartbeat(group, member, 0, topology=topology("no good"))),
        step("heartbeat of no group", 88, 0, heartbeat(group, member, 3)),
        step("describe unknown and empty", 89, 0, describe(group, "")),
    ])


def group_configs(group: str, configs: dict[str, str]) -> dict[str, Any]:
    """IncrementalAlterConfigs v1 setting `configs` on the group."""
    return {"resources": [{"resource_type": 32, "resource_name": group, "configs": [
        {"name": name, "config_operation": 0, "value": value} for name, value in configs.items()]}],
        "validate_only": False}


def assignment_interval() -> Script:
    """The group's first target assignment is made at once (no initial rebalance delay); a second member joining
    well within streams.assignment.interval.ms (15 s, the highest group.streams.max.assignment.interval.ms allows)
    bumps the group epoch but the next assignment waits: status 5, the joiner answered from the last target (no
    tasks of its own), the first member keeping its tasks."""
    topic = "conf-streams-interval-{run}"
    group = "conf-streams-interval-group-{run}"
    first, second = "conf-streams-interval-a-{run}", "conf-streams-interval-b-{run}"
    joining = {"topology": topology(topic)}
    return Script("streams_group.assignment_interval", [
        *create_topic(topic, partitions=2),
        find_coordinator(4, group),
        step("set the group's assignment interval", 44, 1, group_configs(group, {
            "streams.assignment.interval.ms": "15000", "streams.initial.rebalance.delay.ms": "0"})),
        *barrier("streams-interval"),
        step("first member joins", 88, 0, heartbeat(group, first, 0, **joining), retry_on=COORDINATOR_SETTLING,
             why=LOADING, capture={"first_epoch": "member_epoch"}),
        step("first member heartbeats", 88, 0, heartbeat(
            group, first, "{$first_epoch}", active_tasks=[{"subtopology_id": "0", "partitions": [0, 1]}]),
             capture={"first_epoch": "member_epoch"}),
        step("second member joins", 88, 0, heartbeat(group, second, 0, **joining),
             capture={"second_epoch": "member_epoch"}),
        step("first member within the interval", 88, 0, heartbeat(
            group, first, "{$first_epoch}", active_tasks=[{"subtopology_id": "0", "partitions": [0, 1]}])),
        step("second member within the interval", 88, 0, heartbeat(group, second, "{$second_epoch}")),
        step("describe", 89, 0, describe(group), key_by={**GROUPS, "members": "member_id"},
             why="no order of a group's members is promised"),
        step("second member leaves", 88, 0, heartbeat(group, second, -1)),
        step("first member leaves", 88, 0, heartbeat(group, first, -1)),
    ])


def scripts() -> list[Script]:
    return [membership(), missing_source(), invalid(), assignment_interval()]
