"""Topic and broker configs with kafka-python's KafkaAdminClient: described (its "modified" and "all"
filters read the config sources), altered incrementally and with the legacy AlterConfigs, reset, Kafka's
errors per resource, and a produce refused once max.message.bytes is lowered."""

from __future__ import annotations

import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.errors import MessageSizeTooLargeError

from compat_tests.kemu_process import KemuServeProcess

TIMEOUT_S = 15


@pytest.fixture
def admin(kemu_server: KemuServeProcess):  # type: ignore[no-untyped-def]
    client = KafkaAdminClient(bootstrap_servers=kemu_server.bootstrap, client_id="kemu-compat-kafka-python")
    yield client
    client.close()


def _topic(name: str, configs: dict | list | None = None) -> ConfigResource:  # type: ignore[type-arg]
    return ConfigResource(ConfigResourceType.TOPIC, name, configs=configs)


def _produce(server: KemuServeProcess, topic: str, size: int) -> None:
    producer = KafkaProducer(bootstrap_servers=server.bootstrap, client_id="kemu-compat-kafka-python")
    try:
        producer.send(topic, b"x" * size).get(timeout=TIMEOUT_S)
    finally:
        producer.close()


def test_describe_alter_reset(kemu_server: KemuServeProcess, admin: KafkaAdminClient, topic_name: str) -> None:
    admin.create_topics([NewTopic(topic_name, 1, 1, topic_configs={"retention.ms": "86400000"})])

    modified = admin.describe_configs([_topic(topic_name)])["topic"][topic_name]
    assert {name: (c["value"], c["config_source"]) for name, c in modified.items()} == {
        "retention.ms": ("86400000", "DYNAMIC_TOPIC_CONFIG")}
    described = admin.describe_configs([_topic(topic_name)], include_synonyms=True, config_filter="all")
    every = described["topic"][topic_name]
    assert len(every) == 33  # Kafka 4.3: message.downconversion.enable is gone
    assert (every["cleanup.policy"]["value"], every["cleanup.policy"]["config_source"]) == ("delete", "DEFAULT_CONFIG")
    assert every["cleanup.policy"]["synonyms"] == [
        {"name": "log.cleanup.policy", "value": "delete", "source": "DEFAULT_CONFIG"}]
    assert every["max.message.bytes"]["config_type"] == "INT"

    _produce(kemu_server, topic_name, 2000)
    result = admin.alter_configs([_topic(topic_name, {"max.message.bytes": "1000",
                                                      "cleanup.policy": ("APPEND", "compact")})])
    assert result == {"topic": {topic_name: "OK"}}
    modified = admin.describe_configs([_topic(topic_name)])["topic"][topic_name]
    assert {name: c["value"] for name, c in modified.items()} == {
        "retention.ms": "86400000", "max.message.bytes": "1000", "cleanup.policy": "delete,compact"}
    with pytest.raises(MessageSizeTooLargeError):
        _produce(kemu_server, topic_name, 2000)

    assert admin.reset_configs([_topic(topic_name, ["max.message.bytes", "cleanup.policy"])]) == {
        "topic": {topic_name: "OK"}}
    _produce(kemu_server, topic_name, 2000)

    # The legacy request replaces every override; kafka-python re-sends the other modified ones itself.
    assert admin.alter_configs([_topic(topic_name, {"segment.ms": "3600000"})], incremental=False) == {
        "topic": {topic_name: "OK"}}
    modified = admin.describe_configs([_topic(topic_name)])["topic"][topic_name]
    assert {name: c["value"] for name, c in modified.items()} == {"retention.ms": "86400000", "segment.ms": "3600000"}


def test_errors_per_resource(admin: KafkaAdminClient, topic_name: str) -> None:
    admin.create_topics([NewTopic(topic_name, 1, 1)])
    missing = f"{topic_name}-missing"
    result = admin.alter_configs([_topic(topic_name, {"retention.ms": ("APPEND", "1")}),
                                  _topic(missing, {"retention.ms": "1"})], raise_on_unknown=False)
    assert result == {"topic": {
        topic_name: "[Error 40] InvalidConfigurationError: Can't APPEND to key retention.ms because its type is not "
                    "LIST.",
        missing: f"[Error 3] UnknownTopicOrPartitionError: The topic '{missing}' does not exist."}}


def test_broker_configs(admin: KafkaAdminClient) -> None:
    described = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")], config_filter="all")
    configs = described["broker"]["1"]
    assert (configs["node.id"]["value"], configs["node.id"]["config_source"]) == ("1", "STATIC_BROKER_CONFIG")
    assert configs["log.retention.ms"] == {"value": None, "read_only": False, "config_source": "DEFAULT_CONFIG",
                                           "is_sensitive": False, "synonyms": [], "config_type": "LONG",
                                           "documentation": None}
    # A change Kafka refuses: validate_only keeps the shared server untouched either way.
    result = admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1", {"log.dirs": "/elsewhere"})],
                                 validate_only=True, raise_on_unknown=False)
    assert result == {"broker": {"1": "[Error 42] InvalidRequestError: Cannot update these configs dynamically: "
                                      "[log.dirs]"}}
