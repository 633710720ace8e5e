"""ShareGroupHeartbeat and ShareGroupDescribe (KIP-932) over the wire, with and without an authorizer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from kemu.authorizer.acls import AclOperation, ResourceType
from kemu.wire.errors import ErrorCode
from tests.handlers.group_wire import find_coordinator, group_config
from tests.handlers.harness import Broker, Connection, MakeBroker
from tests.handlers.test_authorization import config as authorizer_config
from tests.handlers.test_authorization import deny

SG_HEARTBEAT, SG_DESCRIBE = 76, 77
E = ErrorCode


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    with make_broker(group_config(properties={"group.share.heartbeat.interval.ms": "1500",
                                             # a target assignment at every epoch: tests/groups has the interval
                                             "group.share.assignment.interval.ms": "0"})) as running:
        running.call(create_topics, running.broker, [NewTopic("t", 2, 1)])
        yield running


def heartbeat(conn: Connection, member_id: str, epoch: int, topics: list[str] | None = None,
              group: str = "sg") -> dict[str, Any]:
    return conn.request(SG_HEARTBEAT, 1, {"group_id": group, "member_id": member_id, "member_epoch": epoch,
                                          "rack_id": None, "subscribed_topic_names": topics})


def describe(conn: Connection, *groups: str, operations: bool = False) -> list[dict[str, Any]]:
    answer = conn.request(SG_DESCRIBE, 1, {"group_ids": list(groups), "include_authorized_operations": operations})
    groups_described: list[dict[str, Any]] = answer["groups"]
    return groups_described


def test_not_coordinator_before_the_offsets_topic_exists(conn: Connection) -> None:
    # The heartbeat without a message (ApiError drops a generic one); the describe with Errors.message(), which
    # ShareGroupDescribeRequest.getErrorDescribedGroupList sets, unlike its consumer and streams twins
    early = heartbeat(conn, "m1", 0, ["t"])
    assert (early["error_code"], early["error_message"]) == (E.NOT_COORDINATOR, None)
    [described] = describe(conn, "sg")
    assert (described["error_code"], described["error_message"]) == (
        E.NOT_COORDINATOR, "This is not the correct coordinator.")


def test_join_heartbeat_describe_leave(broker: Broker, conn: Connection) -> None:
    find_coordinator(conn, "sg")
    join = heartbeat(conn, "member-one", 0, ["t"])
    assert (join["error_code"], join["member_id"], join["member_epoch"]) == (0, "member-one", 2)
    assert join["heartbeat_interval_ms"] == 1500  # group.share.heartbeat.interval.ms
    assert join["assignment"] == {"topic_partitions": []}
    second = heartbeat(conn, "member-one", 2)
    topic = broker.broker.topics.get("t")
    assert topic is not None
    assert second["member_epoch"] == 3
    assert second["assignment"] == {"topic_partitions": [{"topic_id": topic.topic_id, "partitions": [0, 1]}]}
    described = describe(conn, "sg")[0]
    assert (described["group_state"], described["group_epoch"], described["assignor_name"]) == ("Stable", 3, "simple")
    assert described["members"][0]["assignment"]["topic_partitions"] == [
        {"topic_id": topic.topic_id, "topic_name": "t", "partitions": [0, 1]}]
    assert broker.call(lambda: broker.coordinators.groups.coordinator.share_member("sg", "member-one"))
    leave = heartbeat(conn, "member-one", -1)
    assert (leave["error_code"], leave["member_epoch"]) == (0, -1)
    assert not broker.call(lambda: broker.coordinators.groups.coordinator.share_member("sg", "member-one"))


def test_describe_errors(broker: Broker, conn: Connection) -> None:
    find_coordinator(conn, "sg")
    groups = describe(conn, "missing", "")
    assert [(g["error_code"], g["error_message"]) for g in groups] == [
        (E.GROUP_ID_NOT_FOUND, "Group missing not found."), (E.INVALID_GROUP_ID, None)]


def test_a_member_id_kafka_refuses_before_the_coordinator(broker: Broker, conn: Connection) -> None:
    find_coordinator(conn, "sg")
    for member_id in ("", "x" * 37):
        answer = heartbeat(conn, member_id, 0, ["t"])
        assert (answer["error_code"], answer["error_message"]) == (E.INVALID_REQUEST, None)
    assert heartbeat(conn, "x" * 36, 0, ["t"])["error_code"] == 0
    missing = heartbeat(conn, "m", 0, None)
    assert (missing["error_code"], missing["error_message"]) == (
        E.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")


@pytest.fixture
def open_broker(make_broker: MakeBroker) -> Iterator[Broker]:
    """An authorizer open where no ACL names a resource, and a target assignment at every epoch."""
    settings = authorizer_config(True)
    settings = replace(settings, properties={**settings.properties, "group.share.assignment.interval.ms": "0"})
    with make_broker(settings) as running, running.connect() as conn:
        find_coordinator(conn, "any")
        running.call(lambda: create_topics(running.broker, [NewTopic("open", 1, 1), NewTopic("closed", 1, 1)]))
        yield running


def test_share_members_need_read_on_the_group_and_describe_on_their_topics(open_broker: Broker) -> None:
    deny(open_broker, ResourceType.GROUP, "denied", AclOperation.READ)
    deny(open_broker, ResourceType.GROUP, "hidden", AclOperation.DESCRIBE)
    deny(open_broker, ResourceType.TOPIC, "closed", AclOperation.DESCRIBE)
    with open_broker.connect() as conn:
        find_coordinator(conn, "members")
        assert heartbeat(conn, "m", 0, ["open"], group="denied")["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        assert heartbeat(conn, "m", 0, ["open", "closed"], group="members")["error_code"] == \
            E.TOPIC_AUTHORIZATION_FAILED
        assert heartbeat(conn, "m", 0, ["open"], group="members")["error_code"] == 0
        assert heartbeat(conn, "n", 0, ["closed"], group="holder")["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        [hidden, members] = describe(conn, "members", "hidden", operations=True)
        assert (hidden["group_id"], hidden["error_code"]) == ("hidden", E.GROUP_AUTHORIZATION_FAILED)
        assert members["error_code"] == 0 and members["authorized_operations"] != -2147483648
        # Once the member holds "open", denying DESCRIBE on it hides the group's members.
        heartbeat(conn, "m", 2, group="members")
        deny(open_broker, ResourceType.TOPIC, "open", AclOperation.DESCRIBE)
        [members] = describe(conn, "members")
        assert (members["error_code"], members["error_message"], members["members"]) == (
            E.TOPIC_AUTHORIZATION_FAILED,
            "The group has described topic(s) that the client is not authorized to describe.", [])
