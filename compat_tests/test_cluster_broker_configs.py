"""Each broker of a three-broker kemu is a BROKER config resource of its own, as each Kafka broker is:
confluent-kafka's admin (which sends a resource named by a broker's id to that broker) sets a value on broker 2
alone and another on broker 3, describes each broker's own value, rack and id, and removes one again; the values
outlive a restart. (A broker asked for another's id refuses it: the conformance corpus's cluster.broker_alter,
recorded from a three-node Kafka.)"""

from __future__ import annotations

import pytest
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourceType,
)

from compat_tests.test_cluster_metadata import RACKS
from kemu.testing import Broker

NAME = "message.max.bytes"
DEFAULT = "1048588"


def _admin(broker: Broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def _described(admin: AdminClient, node: int) -> dict[str, ConfigEntry]:
    [future] = admin.describe_configs([ConfigResource(ResourceType.BROKER, str(node))]).values()
    described: dict[str, ConfigEntry] = future.result(10)
    return described


def _set_on(admin: AdminClient, node: int, op: AlterConfigOpType, value: str | None = None) -> None:
    resource = ConfigResource(ResourceType.BROKER, str(node),
                              incremental_configs=[ConfigEntry(NAME, value, incremental_operation=op)])
    [future] = admin.incremental_alter_configs([resource]).values()
    future.result(10)


def _values(admin: AdminClient) -> dict[int, tuple[str | None, ConfigSource]]:
    found = {}
    for node in (1, 2, 3):
        entry = _described(admin, node)[NAME]
        found[node] = (entry.value, ConfigSource(entry.source))
    return found


@pytest.mark.kemu(brokers=3, racks=RACKS)
def test_a_broker_config_set_on_one_broker_is_that_brokers_alone(kemu_broker: Broker) -> None:
    admin = _admin(kemu_broker)
    for node, rack in zip((1, 2, 3), RACKS, strict=True):
        described = _described(admin, node)
        assert (described["node.id"].value, described["broker.rack"].value) == (str(node), rack)

    _set_on(admin, 2, AlterConfigOpType.SET, "2000000")
    default = (DEFAULT, ConfigSource.DEFAULT_CONFIG)
    assert _values(admin) == {1: default, 2: ("2000000", ConfigSource.DYNAMIC_BROKER_CONFIG), 3: default}
    _set_on(admin, 3, AlterConfigOpType.SET, "1500000")
    own = ConfigSource.DYNAMIC_BROKER_CONFIG
    assert _values(admin) == {1: default, 2: ("2000000", own), 3: ("1500000", own)}

    kemu_broker.restart()
    admin = _admin(kemu_broker)
    assert _values(admin) == {1: default, 2: ("2000000", own), 3: ("1500000", own)}
    _set_on(admin, 2, AlterConfigOpType.DELETE)
    assert _values(admin) == {1: default, 2: default, 3: ("1500000", own)}
