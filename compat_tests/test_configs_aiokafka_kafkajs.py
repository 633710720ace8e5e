"""Topic and broker configs with aiokafka's admin (DescribeConfigs v2, legacy AlterConfigs) and kafkajs's
admin (describeConfigs with synonyms, alterConfigs): defaults and sources, the change seen again, and
Kafka's errors."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from compat_tests.external_clients import Kafkajs, KafkajsError
from compat_tests.kemu_process import KemuServeProcess

DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5


def _entries(responses: list) -> dict[str, tuple[str | None, int]]:  # type: ignore[type-arg]
    [response] = responses
    [(error_code, _message, _type, _name, entries)] = response.resources
    assert error_code == 0
    return {entry[0]: (entry[1], entry[3]) for entry in entries}


async def _aiokafka_configs(server: KemuServeProcess, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=server.bootstrap, client_id="kemu-compat-aiokafka")
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"retention.ms": "86400000"})])
        described = _entries(await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)]))
        assert len(described) == 33  # Kafka 4.3: message.downconversion.enable is gone
        assert described["retention.ms"] == ("86400000", DYNAMIC_TOPIC_CONFIG)
        assert described["cleanup.policy"] == ("delete", DEFAULT_CONFIG)

        [response] = await admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic, configs={"max.message.bytes": "2500"})])
        assert [(r[0], r[3]) for r in response.resources] == [(0, topic)]
        wanted = ConfigResource(ConfigResourceType.TOPIC, topic, configs={"max.message.bytes": None,
                                                                         "retention.ms": None})
        # The legacy AlterConfigs replaced every override: retention.ms is back to its default.
        assert _entries(await admin.describe_configs([wanted])) == {
            "max.message.bytes": ("2500", DYNAMIC_TOPIC_CONFIG), "retention.ms": ("604800000", DEFAULT_CONFIG)}

        [response] = await admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic, configs={"segment.bytes": "10"})])
        [(error_code, message, _type, _name)] = response.resources
        assert (error_code, message) == (40, "Invalid value 10 for configuration segment.bytes: Value must be at "
                                             "least 1048576")
    finally:
        await admin.close()


def test_aiokafka_describe_and_alter(kemu_server: KemuServeProcess, topic_name: str) -> None:
    asyncio.run(_aiokafka_configs(kemu_server, topic_name))


def test_kafkajs_describe_and_alter(kemu_server: KemuServeProcess, kafkajs: Kafkajs, topic_name: str) -> None:
    assert kafkajs.admin(kemu_server.bootstrap, "create", topic_name, "1") == {"created": True}
    described = kafkajs.run("configs", kemu_server.bootstrap, "describe", "topic", topic_name)
    assert described["errorCode"] == 0 and len(described["configs"]) == 33
    assert described["configs"]["max.message.bytes"] == {
        "value": "1048588", "source": DEFAULT_CONFIG, "isDefault": True, "readOnly": False, "isSensitive": False,
        "synonyms": [["message.max.bytes", "1048588", DEFAULT_CONFIG]]}

    answer = kafkajs.run("configs", kemu_server.bootstrap, "alter", "topic", topic_name, "retention.ms=3600000",
                         "cleanup.policy=compact,delete")
    assert answer == [{"errorCode": 0, "errorMessage": None, "resourceType": 2, "resourceName": topic_name}]
    described = kafkajs.run("configs", kemu_server.bootstrap, "describe", "topic", topic_name, "retention.ms",
                            "cleanup.policy")
    assert {name: (c["value"], c["source"]) for name, c in described["configs"].items()} == {
        "retention.ms": ("3600000", DYNAMIC_TOPIC_CONFIG), "cleanup.policy": ("compact,delete", DYNAMIC_TOPIC_CONFIG)}

    with pytest.raises(KafkajsError) as caught:
        kafkajs.run("configs", kemu_server.bootstrap, "alter", "topic", topic_name, "retention.ms=soon")
    assert caught.value.type == "INVALID_CONFIG"
    with pytest.raises(KafkajsError) as caught:
        kafkajs.run("configs", kemu_server.bootstrap, "describe", "topic", f"{topic_name}-missing")
    assert caught.value.type == "UNKNOWN_TOPIC_OR_PARTITION"


def test_kafkajs_broker_configs(kemu_server: KemuServeProcess, kafkajs: Kafkajs) -> None:
    described = kafkajs.run("configs", kemu_server.bootstrap, "describe", "broker", "1", "node.id",
                            "log.retention.hours", "message.max.bytes")
    configs = described["configs"]
    assert (configs["node.id"]["value"], configs["node.id"]["source"]) == ("1", STATIC_BROKER_CONFIG)
    assert (configs["log.retention.hours"]["readOnly"], configs["message.max.bytes"]["readOnly"]) == (True, False)
    with pytest.raises(KafkajsError) as caught:
        kafkajs.run("configs", kemu_server.bootstrap, "validate-alter", "broker", "1", "num.partitions=3")
    assert caught.value.type == "INVALID_REQUEST"
