"""Group configs with a stock client: confluent-kafka's admin sets a KIP-848 group's own session timeout and
heartbeat interval (resource type GROUP) and describes them as Kafka does; the group then runs with them. With the
movable clock, a member of that group whose heartbeats stop outlives a member of a group without configs (the
broker's 45 s) and is expelled once its group's 50 s pass; its heartbeat interval is the group's."""

from __future__ import annotations

import uuid
from typing import Any

from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from compat_tests.polling import wait_for
from kemu.testing import Broker
from tests.server.kafka_socket import KafkaSocket

FIND_COORDINATOR, CONSUMER_GROUP_HEARTBEAT = 10, 68


def set_group_configs(admin: AdminClient, group: str, values: dict[str, str]) -> None:
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET) for name, value in values.items()])
    admin.incremental_alter_configs([resource])[resource].result(10)


def described(admin: AdminClient, group: str) -> dict[str, tuple[str, int]]:
    resource = ConfigResource(ResourceType.GROUP, group)
    return {name: (entry.value, entry.source) for name, entry in admin.describe_configs([resource])[resource]
            .result(10).items()}


def join(broker: Broker, group: str) -> dict[str, Any]:
    """A KIP-848 member's first heartbeat, sent by hand so that no later one follows."""
    host, port = broker.bootstrap_servers.split(":")
    with KafkaSocket((host, int(port))) as connection:
        # As a client does first: the lookup also creates __consumer_offsets, without which no group is served.
        wait_for(lambda: connection.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})[
            "coordinators"][0]["error_code"] == 0, what=f"the coordinator of {group}")
        return connection.request(CONSUMER_GROUP_HEARTBEAT, 1, {
            "group_id": group, "member_id": uuid.uuid4().hex[:22], "member_epoch": 0, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["orders"],
            "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": []})


def groups_with_members(broker: Broker) -> set[str]:
    return {g.group_id for g in broker.inspect().groups if g.members}


def test_a_group_runs_with_its_own_session_timeout_and_heartbeat_interval() -> None:
    with Broker(virtual_clock=True) as broker:
        broker.create_topic("orders", partitions=2)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        set_group_configs(admin, "configured", {"consumer.session.timeout.ms": "50000",
                                                "consumer.heartbeat.interval.ms": "6000"})
        configs = described(admin, "configured")
        assert configs["consumer.session.timeout.ms"] == ("50000", 8)  # GROUP_CONFIG
        assert configs["consumer.heartbeat.interval.ms"] == ("6000", 8)
        assert configs["consumer.assignment.interval.ms"] == ("1000", 5)  # the broker's: DEFAULT_CONFIG

        configured, plain = join(broker, "configured"), join(broker, "plain")
        assert (configured["error_code"], configured["heartbeat_interval_ms"]) == (0, 6000)
        assert (plain["error_code"], plain["heartbeat_interval_ms"]) == (0, 5000)
        assert groups_with_members(broker) >= {"configured", "plain"}

        broker.advance(46)
        assert "plain" not in groups_with_members(broker)
        assert "configured" in groups_with_members(broker)
        broker.advance(5)
        assert "configured" not in groups_with_members(broker)
