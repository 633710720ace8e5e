"""StreamsGroupHeartbeat and StreamsGroupDescribe (KIP-1071) over the wire: the internal topics the broker
creates for a topology, the tasks, the checks made before the coordinator, and the authorizer's part."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.authorizer.acls import AclOperation, ResourceType
from kemu.wire.errors import ErrorCode
from tests.groups.test_streams_groups import CHANGELOG, REPARTITION, word_count
from tests.handlers.group_wire import find_coordinator, group_config
from tests.handlers.harness import Broker, Connection, MakeBroker
from tests.handlers.test_authorization import config as authorizer_config
from tests.handlers.test_authorization import deny

HEARTBEAT, DESCRIBE = 88, 89
E = ErrorCode


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    # No initial delay nor assignment interval: the second heartbeat assigns.
    with make_broker(group_config(properties={"group.streams.initial.rebalance.delay.ms": "0",
                                             "group.streams.assignment.interval.ms": "0"})) as running:
        running.call(create_topics, running.broker, [NewTopic("input", 2, 1)])
        yield running


def heartbeat(conn: Connection, member_id: str, epoch: int, *, topology: dict[str, Any] | None = None,
              owned: list[dict[str, Any]] | None = None, group: str = "app") -> dict[str, Any]:
    joining = epoch == 0
    return conn.request(HEARTBEAT, 0, {
        "group_id": group, "member_id": member_id, "member_epoch": epoch, "endpoint_information_epoch": 0,
        "rebalance_timeout_ms": 30000 if joining else -1,
        "topology": (topology or word_count()) if joining else None,
        "active_tasks": [] if joining else owned, "standby_tasks": [] if joining or owned is not None else None,
        "warmup_tasks": [] if joining or owned is not None else None,
        "process_id": "11111111-2222-3333-4444-555555555555" if joining else None,
        "client_tags": [] if joining else None})


def describe(conn: Connection, *groups: str) -> list[dict[str, Any]]:
    answer = conn.request(DESCRIBE, 0, {"group_ids": list(groups), "include_authorized_operations": False})
    described: list[dict[str, Any]] = answer["groups"]
    return described


def test_the_internal_topics_are_created_and_the_tasks_assigned(broker: Broker, conn: Connection) -> None:
    find_coordinator(conn, "app")
    join = heartbeat(conn, "member-a", 0)
    # No initial delay here: an (empty) target assignment at once, the topology not being ready.
    assert (join["error_code"], join["member_epoch"]) == (0, 2)
    assert {s["status_code"]: s["status_detail"] for s in join["status"]} == {
        3: f"Internal topics are missing: {REPARTITION}, {CHANGELOG}"}
    for name, policy in ((REPARTITION, "delete"), (CHANGELOG, "compact")):
        topic = broker.broker.topics.get(name)
        assert topic is not None and len(topic.partitions) == 2, name
        assert topic.configs.get("cleanup.policy") == policy
    second = heartbeat(conn, "member-a", 2, owned=[])
    assert (second["error_code"], second["member_epoch"], second["status"]) == (0, 3, [])
    assert second["active_tasks"] == [{"subtopology_id": "0", "partitions": [0, 1]},
                                      {"subtopology_id": "1", "partitions": [0, 1]}]
    [described] = describe(conn, "app")
    assert (described["group_state"], described["group_epoch"], described["assignment_epoch"]) == ("Stable", 3, 3)
    assert described["topology"]["subtopologies"][1]["state_changelog_topics"][0]["partitions"] == 2
    leave = heartbeat(conn, "member-a", -1)
    assert (leave["error_code"], leave["member_epoch"]) == (0, -1)
    assert describe(conn, "app")[0]["group_state"] == "Empty"


def test_checks_made_before_the_coordinator(broker: Broker, conn: Connection) -> None:
    # no __consumer_offsets yet; no message, as GroupCoordinatorService answers (ApiError drops a generic one,
    # StreamsGroupDescribeRequest.getErrorDescribedGroupList sets none)
    early = heartbeat(conn, "m", 0)
    assert (early["error_code"], early["error_message"]) == (E.NOT_COORDINATOR, None)
    [undescribed] = describe(conn, "app")
    assert (undescribed["error_code"], undescribed["error_message"]) == (E.NOT_COORDINATOR, None)
    find_coordinator(conn, "app")
    internal = word_count()
    internal["subtopologies"][0]["source_topics"] = ["__consumer_offsets"]
    refused = heartbeat(conn, "m", 0, topology=internal)
    assert (refused["error_code"], refused["error_message"]) == (
        E.STREAMS_INVALID_TOPOLOGY,
        "Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is prohibited.")
    invalid = word_count()
    invalid["subtopologies"][0]["source_topics"] = ["no good"]
    refused = heartbeat(conn, "m", 0, topology=invalid)
    assert (refused["error_code"], refused["error_message"]) == (
        E.STREAMS_INVALID_TOPOLOGY, "Topic names no good are not valid topic names.")
    [empty, unknown] = describe(conn, "nope", "")  # Kafka answers the empty id first
    assert (unknown["error_code"], unknown["error_message"], unknown["topology"]) == (
        E.GROUP_ID_NOT_FOUND, "Group nope not found.", None)
    assert empty["error_code"] == E.INVALID_GROUP_ID


def test_the_authorizer_guards_group_topics_and_their_creation(make_broker: MakeBroker) -> None:
    with make_broker(authorizer_config(True)) as running, running.connect() as conn:
        find_coordinator(conn, "app")
        running.call(create_topics, running.broker, [NewTopic("input", 1, 1)])
        deny(running, ResourceType.GROUP, "closed", AclOperation.READ, AclOperation.DESCRIBE)
        assert heartbeat(conn, "m", 0, group="closed")["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        assert describe(conn, "closed")[0]["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        deny(running, ResourceType.TOPIC, CHANGELOG, AclOperation.CREATE)
        deny(running, ResourceType.CLUSTER, "kafka-cluster", AclOperation.CREATE)
        join = heartbeat(conn, "m", 0)
        assert join["status"][-1] == {"status_code": 3, "status_detail": (
            f"Internal topics are missing: {REPARTITION}, {CHANGELOG}; Unauthorized to CREATE on topics "
            f"{CHANGELOG}.")}
        assert running.broker.topics.get(REPARTITION) is None  # none is made while one may not be
