"""KIP-848 members through raw requests, shared by the consumer-group differential tests: a member that keeps
its id, epoch and owned partitions as the broker said them, ConsumerGroupDescribe by topic name, and the
waits that hold Kafka's asynchronous steps still (a new topic reaching the group coordinator)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from compat_tests.differential.groups_wire import (
    CONSUMER_GROUP_DESCRIBE,
    CONSUMER_GROUP_HEARTBEAT,
    REBALANCE_TIMEOUT_MS,
    consumer_heartbeat_body,
    create_topics,
    ready_coordinator,
    topic_ids,
    unique,
    wait_for,
)
from compat_tests.differential.targets import Pair, Target

Body = dict[str, Any]
# The broker settings of the pair the KIP-848 scenarios share (one Kafka more): a new target assignment at
# every group epoch (otherwise at most one per group.consumer.assignment.interval.ms, 1000, which a slow
# machine makes a matter of timing), and heartbeats every 500 ms, so that a stock client notices a revocation
# without waiting 5 s. kemu honours all three but the minimum heartbeat interval, which it does not check.
CONSUMER_GROUP_SETTINGS = {
    "group.consumer.assignment.interval.ms": "0",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.heartbeat.interval.ms": "500",
}


@pytest.fixture(scope="module")
def cpair(pair_with: Callable[[dict[str, str]], Pair]) -> Pair:
    """The pair with CONSUMER_GROUP_SETTINGS (one Kafka for every module that imports this fixture)."""
    return pair_with(CONSUMER_GROUP_SETTINGS)


class ConsumerMember:
    """One KIP-848 member: its id, epoch and the partitions it owns, as the broker last said."""

    def __init__(self, target: Target, group_id: str, member_id: str, names: dict[uuid.UUID, str], *,
                 instance_id: str | None = None, version: int = 1) -> None:
        self.target, self.group_id, self.member_id, self.names = target, group_id, member_id, names
        self.instance_id, self.version = instance_id, version
        self.epoch = 0
        self.owned: list[Body] = []

    def heartbeat(self, epoch: int | None = None, **fields: Any) -> Body:
        epoch = self.epoch if epoch is None else epoch
        fields.setdefault("instance_id", self.instance_id)
        if epoch == 0:
            fields.setdefault("rebalance_timeout_ms", REBALANCE_TIMEOUT_MS)
        fields.setdefault("owned", self.owned)
        answer = self.target.request(CONSUMER_GROUP_HEARTBEAT, self.version, consumer_heartbeat_body(
            self.group_id, self.member_id, epoch, **fields))
        if answer["error_code"] == 0:
            self.member_id = answer["member_id"] or self.member_id
            self.epoch = answer["member_epoch"]
            if answer["assignment"] is not None:
                self.owned = [{"topic_id": t["topic_id"], "partitions": sorted(t["partitions"])}
                              for t in answer["assignment"]["topic_partitions"]]
        return self.named(answer)

    def named(self, answer: Body) -> Body:
        answer = dict(answer)
        if answer.get("assignment") is not None:
            answer["assignment"] = {self.names[t["topic_id"]]: sorted(t["partitions"])
                                    for t in answer["assignment"]["topic_partitions"]}
        return answer

    def owned_by_name(self) -> dict[str, list[int]]:
        return {self.names[t["topic_id"]]: t["partitions"] for t in self.owned}


def describe(target: Target, group_ids: list[str], names: dict[uuid.UUID, str],
             roles: dict[str, str] | None = None) -> Body:
    # v1: each member's type too (KIP-1099).
    answer = target.request(CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": group_ids,
                                                         "include_authorized_operations": False})
    roles = roles or {}
    groups = {}
    for group in answer["groups"]:
        members = {}
        for member in group["members"]:
            for field in ("assignment", "target_assignment"):
                member[field] = {t["topic_name"]: sorted(t["partitions"])
                                 for t in sorted(member[field]["topic_partitions"], key=lambda t: t["topic_name"])}
            member["subscribed_topic_names"] = sorted(member["subscribed_topic_names"])
            members[roles.get(member["member_id"], member["member_id"])] = member
        group["members"] = {role: members[role] for role in sorted(members)}
        groups[group["group_id"]] = group
    return {"throttle_time_ms": answer["throttle_time_ms"], "groups": groups}


def scrubbed(answer: Body, roles: dict[str, str]) -> Body:
    """An answer whose error message names member ids the broker made up, with their roles instead."""
    answer = dict(answer)
    for member_id, role in roles.items():
        if answer.get("error_message") and member_id:
            answer["error_message"] = answer["error_message"].replace(member_id, f"<{role}>")
    return answer


def settle(members: list[ConsumerMember], rounds: int = 6) -> list[Body]:
    """Heartbeats each member in turn, with what it owns, until nobody's epoch or assignment moves."""
    answers = []
    for _ in range(rounds):
        before = [(m.epoch, m.owned) for m in members]
        answers.append({m.member_id: m.heartbeat() for m in members})
        if before == [(m.epoch, m.owned) for m in members]:
            return answers
    raise AssertionError(f"no stable assignment after {rounds} rounds: {answers[-1]}")


def topics_setup(target: Target, partitions: dict[str, int]) -> dict[uuid.UUID, str]:
    create_topics(target, partitions)
    names = {topic_id: name for name, topic_id in topic_ids(target, partitions).items()}
    ready_for_groups(target, names, sum(partitions.values()))
    return names


def ready_for_groups(target: Target, names: dict[uuid.UUID, str], count: int) -> None:
    """Waits until the group coordinator assigns the topics' partitions to a probe member, then the probe
    leaves with its group."""
    group = unique("cg-probe")
    ready_coordinator(target, group)
    probe = ConsumerMember(target, group, unique("cg-probe-member"), names)

    def assigned() -> bool | None:
        probe.heartbeat(topics=sorted(names.values()))
        return True if sum(len(t["partitions"]) for t in probe.owned) == count else None

    wait_for(f"{target.name}: the coordinator knows {sorted(names.values())}", assigned)
    probe.heartbeat(epoch=-1, owned=None)
