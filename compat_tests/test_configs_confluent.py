"""Topic and broker configs with confluent-kafka (librdkafka): described with their defaults, sources and
synonyms, altered incrementally and with the legacy AlterConfigs, Kafka's errors, and the changes taking
effect — a produce refused once max.message.bytes is lowered on the topic, or on the broker for topics
without an override, which lasts across a restart."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
    ResourceType,
)

from compat_tests.kemu_process import KemuServeProcess

TIMEOUT_S = 15
SMALL, LARGE = 100, 2000
LOWERED_MAX = "1000"


def _admin(server: KemuServeProcess) -> AdminClient:
    return AdminClient({"bootstrap.servers": server.bootstrap})


def _create(admin: AdminClient, topic: str, **configs: str) -> None:
    futures = admin.create_topics([NewTopic(topic, num_partitions=1, config=configs)], operation_timeout=10)
    assert futures[topic].result(timeout=TIMEOUT_S) is None


def _describe(admin: AdminClient, resource: ConfigResource) -> dict[str, ConfigEntry]:
    return admin.describe_configs([resource])[resource].result(timeout=TIMEOUT_S)  # type: ignore[no-any-return]


def _incremental(admin: AdminClient, kind: ResourceType, name: str, *entries: ConfigEntry) -> None:
    resource = ConfigResource(kind, name, incremental_configs=list(entries))
    assert admin.incremental_alter_configs([resource])[resource].result(timeout=TIMEOUT_S) is None


def _source(entry: ConfigEntry) -> ConfigSource:
    # The stubs say ConfigSource; librdkafka's binding hands over the plain id.
    return ConfigSource(entry.source)


def _set(name: str, value: str) -> ConfigEntry:
    return ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)


def produce_error(server: KemuServeProcess, topic: str, size: int) -> KafkaError | None:
    """Produce one record of `size` bytes; the delivery error, or None once it is acknowledged."""
    outcome: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 0})
    producer.produce(topic, b"x" * size, on_delivery=lambda err, _msg: outcome.append(err))
    assert producer.flush(TIMEOUT_S) == 0
    [error] = outcome
    return error


def test_topic_configs_described_with_defaults_and_sources(kemu_server: KemuServeProcess, topic_name: str) -> None:
    admin = _admin(kemu_server)
    _create(admin, topic_name, **{"retention.ms": "86400000"})
    configs = _describe(admin, ConfigResource(ResourceType.TOPIC, topic_name))
    assert len(configs) == 33  # Kafka 4.3: message.downconversion.enable is gone
    retention, policy, max_bytes = configs["retention.ms"], configs["cleanup.policy"], configs["max.message.bytes"]
    assert (retention.value, _source(retention), retention.is_default) == (
        "86400000", ConfigSource.DYNAMIC_TOPIC_CONFIG, False)
    assert (policy.value, _source(policy), policy.is_default, policy.is_read_only) == (
        "delete", ConfigSource.DEFAULT_CONFIG, True, False)
    assert max_bytes.value == "1048588" and list(max_bytes.synonyms) == ["message.max.bytes"]
    assert configs["message.timestamp.after.max.ms"].value == "3600000"  # Kafka 4.0's default
    assert configs["segment.bytes"].value == "1073741824"


def test_incremental_alter_takes_effect_on_produce(kemu_server: KemuServeProcess, topic_name: str) -> None:
    admin = _admin(kemu_server)
    _create(admin, topic_name)
    assert produce_error(kemu_server, topic_name, LARGE) is None
    _incremental(admin, ResourceType.TOPIC, topic_name, _set("max.message.bytes", LOWERED_MAX),
                 ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND))
    configs = _describe(admin, ConfigResource(ResourceType.TOPIC, topic_name))
    assert (configs["max.message.bytes"].value, _source(configs["max.message.bytes"])) == (
        LOWERED_MAX, ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert configs["cleanup.policy"].value == "delete,compact"

    refused = produce_error(kemu_server, topic_name, LARGE)
    assert refused is not None and refused.code() == KafkaError.MSG_SIZE_TOO_LARGE
    # A compacted topic needs keyed records; put the policy back before producing a small one.
    _incremental(admin, ResourceType.TOPIC, topic_name,
                 ConfigEntry("cleanup.policy", None, incremental_operation=AlterConfigOpType.DELETE))
    assert produce_error(kemu_server, topic_name, SMALL) is None

    _incremental(admin, ResourceType.TOPIC, topic_name,
                 ConfigEntry("max.message.bytes", None, incremental_operation=AlterConfigOpType.DELETE))
    assert _describe(admin, ConfigResource(ResourceType.TOPIC, topic_name))["max.message.bytes"].is_default
    assert produce_error(kemu_server, topic_name, LARGE) is None


def test_legacy_alter_replaces_every_override(kemu_server: KemuServeProcess, topic_name: str) -> None:
    admin = _admin(kemu_server)
    _create(admin, topic_name, **{"retention.ms": "86400000"})
    resource = ConfigResource(ResourceType.TOPIC, topic_name, set_config={"segment.ms": "3600000"})
    with pytest.warns(DeprecationWarning):
        future = admin.alter_configs([resource])[resource]
    assert future.result(timeout=TIMEOUT_S) is None
    configs = _describe(admin, ConfigResource(ResourceType.TOPIC, topic_name))
    assert (configs["segment.ms"].value, _source(configs["segment.ms"])) == (
        "3600000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert (configs["retention.ms"].value, _source(configs["retention.ms"])) == (
        "604800000", ConfigSource.DEFAULT_CONFIG)


@pytest.mark.parametrize(("entry", "code", "message"), [
    (ConfigEntry("retention.ms", "1", incremental_operation=AlterConfigOpType.APPEND), KafkaError.INVALID_CONFIG,
     "Can't APPEND to key retention.ms because its type is not LIST."),
    (_set("no.such.config", "1"), KafkaError.INVALID_CONFIG, "Unknown topic config name: no.such.config"),
    (_set("retention.ms", "soon"), KafkaError.INVALID_CONFIG,
     "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
])
def test_invalid_changes_are_refused(kemu_server: KemuServeProcess, topic_name: str, entry: ConfigEntry,
                                     code: int, message: str) -> None:
    admin = _admin(kemu_server)
    _create(admin, topic_name)
    resource = ConfigResource(ResourceType.TOPIC, topic_name, incremental_configs=[entry])
    with pytest.raises(KafkaException) as caught:
        admin.incremental_alter_configs([resource])[resource].result(timeout=TIMEOUT_S)
    error = caught.value.args[0]
    assert (error.code(), error.str()) == (code, message)


def test_unknown_topic(kemu_server: KemuServeProcess, topic_name: str) -> None:
    admin = _admin(kemu_server)
    resource = ConfigResource(ResourceType.TOPIC, topic_name)
    with pytest.raises(KafkaException) as caught:
        _describe(admin, resource)
    assert caught.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_broker_configs_described(kemu_server: KemuServeProcess) -> None:
    admin = _admin(kemu_server)
    configs = _describe(admin, ConfigResource(ResourceType.BROKER, "1"))
    listeners = configs["listeners"]
    assert (listeners.value, _source(listeners), listeners.is_read_only) == (
        f"PLAINTEXT://{kemu_server.host}:{kemu_server.port}", ConfigSource.STATIC_BROKER_CONFIG, True)
    hours = configs["log.retention.hours"]
    assert (hours.value, _source(hours), hours.is_read_only) == ("168", ConfigSource.DEFAULT_CONFIG, True)
    assert configs["log.retention.ms"].is_read_only is False
    assert configs["offsets.topic.replication.factor"].value == "1"


def test_broker_config_applies_to_topics_and_survives_restart(fresh_kemu_server: KemuServeProcess,
                                                              topic_name: str) -> None:
    # librdkafka refuses an empty resource name, so this sets the value for broker 1 rather than the
    # cluster-wide default (kafka-python's test covers that one).
    admin = _admin(fresh_kemu_server)
    _create(admin, topic_name)
    _incremental(admin, ResourceType.BROKER, "1", _set("message.max.bytes", LOWERED_MAX))
    refused = produce_error(fresh_kemu_server, topic_name, LARGE)
    assert refused is not None and refused.code() == KafkaError.MSG_SIZE_TOO_LARGE

    fresh_kemu_server.restart()
    admin = _admin(fresh_kemu_server)
    configs = _describe(admin, ConfigResource(ResourceType.TOPIC, topic_name))
    assert (configs["max.message.bytes"].value, _source(configs["max.message.bytes"])) == (
        LOWERED_MAX, ConfigSource.DYNAMIC_BROKER_CONFIG)
    broker = _describe(admin, ConfigResource(ResourceType.BROKER, "1"))["message.max.bytes"]
    assert (broker.value, _source(broker), broker.is_read_only) == (
        LOWERED_MAX, ConfigSource.DYNAMIC_BROKER_CONFIG, False)
    refused = produce_error(fresh_kemu_server, topic_name, LARGE)
    assert refused is not None and refused.code() == KafkaError.MSG_SIZE_TOO_LARGE

    resource = ConfigResource(ResourceType.BROKER, "1", incremental_configs=[_set("num.partitions", "3")])
    with pytest.raises(KafkaException) as caught:
        admin.incremental_alter_configs([resource])[resource].result(timeout=TIMEOUT_S)
    error = caught.value.args[0]
    assert (error.code(), error.str()) == (KafkaError.INVALID_REQUEST,
                                           "Cannot update these configs dynamically: [num.partitions]")
