"""Topic configs as the cluster sees them: Kafka's validation messages, inherited broker values, and the
entries CreateTopics and DescribeConfigs report."""

from __future__ import annotations

import pytest

from kemu.broker import topic_configs
from kemu.broker.broker_configs import ConfigLayers, ConfigSource
from kemu.broker.topic_configs import SOURCE_DEFAULT, SOURCE_DYNAMIC_TOPIC, ConfigError
from kemu.log.config import TOPIC_CONFIGS, LogConfig


def test_defaults_validate() -> None:
    topic_configs.validate({})


@pytest.mark.parametrize("configs", [
    {"cleanup.policy": "compact"},
    {"cleanup.policy": "compact,delete"},
    {"retention.ms": "-1"},
    {"retention.ms": " 1000 "},
    {"min.cleanable.dirty.ratio": "0.1"},
    {"unclean.leader.election.enable": "TRUE"},
    {"compression.type": "zstd", "compression.zstd.level": "-5"},
    {"compression.gzip.level": "-1"},
    {"message.timestamp.type": "LogAppendTime"},
    {"leader.replication.throttled.replicas": "*"},
    {"leader.replication.throttled.replicas": "0:1,1:1"},
    {"segment.bytes": "1048576"},
])
def test_valid_values(configs: dict[str, str]) -> None:
    topic_configs.validate(configs)


@pytest.mark.parametrize(("configs", "message"), [
    ({"no.such.config": "1"}, "Unknown topic config name: no.such.config"),
    ({"retention.ms": None}, "Null value not supported for topic configs: retention.ms"),
    ({"retention.ms": "abc"}, "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ({"retention.ms": "1_000"}, "Invalid value 1_000 for configuration retention.ms: Not a number of type LONG"),
    ({"retention.ms": "-5"}, "Invalid value -5 for configuration retention.ms: Value must be at least -1"),
    ({"segment.bytes": "2147483648"},
     "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT"),
    ({"segment.bytes": "1024"}, "Invalid value 1024 for configuration segment.bytes: Value must be at least 1048576"),
    ({"min.cleanable.dirty.ratio": "1.5"},
     "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
    ({"preallocate": "yes"},
     "Invalid value yes for configuration preallocate: Expected value to be either true or false"),
    ({"cleanup.policy": "compact,forever"},
     "Invalid value forever for configuration cleanup.policy: String must be one of: compact, delete"),
    ({"compression.type": "brotli"}, "Invalid value brotli for configuration compression.type: String must be one of: "
                                     "uncompressed, zstd, lz4, snappy, gzip, producer"),
    ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
     "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
    ({"remote.storage.enable": "true"},
     "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."),
])
def test_invalid_values_get_kafkas_message(configs: dict[str, str | None], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        topic_configs.validate(configs)
    assert str(caught.value) == message


def test_unknown_names_are_reported_before_bad_values() -> None:
    with pytest.raises(ConfigError, match="Unknown topic config name: zzz"):
        topic_configs.validate({"retention.ms": "abc", "zzz": "1"})


def test_effective_configs_are_sorted_and_sourced() -> None:
    listed = topic_configs.effective({"retention.ms": "1000"})
    names = [c.name for c in listed]
    assert names == sorted(names)
    assert set(names) == set(topic_configs.BY_NAME)
    by_name = {c.name: c for c in listed}
    assert (by_name["retention.ms"].value, by_name["retention.ms"].source) == ("1000", SOURCE_DYNAMIC_TOPIC)
    assert (by_name["cleanup.policy"].value, by_name["cleanup.policy"].source) == ("delete", SOURCE_DEFAULT)
    assert by_name["max.message.bytes"].value == "1048588"


@pytest.mark.parametrize(("configs", "message"), [
    ({"compression.gzip.level": "10"},
     "Invalid value 10 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1"),
    ({"compression.lz4.level": "0"},
     "Invalid value 0 for configuration compression.lz4.level: Value must be at least 1"),
    ({"cleanup.policy": "compact,"},
     "Invalid value  for configuration cleanup.policy: String must be one of: compact, delete"),
    ({"leader.replication.throttled.replicas": "0:x"},
     "Invalid value [0:x] for configuration leader.replication.throttled.replicas: leader.replication.throttled."
     "replicas must be the literal '*' or a list of replicas in the following format: "
     "[partitionId]:[brokerId],[partitionId]:[brokerId],..."),
    ({"min.cleanable.dirty.ratio": "-1"},
     "Invalid value -1.0 for configuration min.cleanable.dirty.ratio: Value must be at least 0"),
    ({"min.cleanable.dirty.ratio": "nan"}, "Invalid value nan for configuration min.cleanable.dirty.ratio: "
                                          "Not a number of type DOUBLE"),
    ({"internal.segment.bytes": "4096"}, "Unknown topic config name: internal.segment.bytes"),
])
def test_more_kafka_messages(configs: dict[str, str | None], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        topic_configs.validate(configs)
    assert str(caught.value) == message


def test_values_are_checked_in_kafkas_definition_order() -> None:
    # segment.bytes is LogConfig's first definition, cleanup.policy a later one.
    with pytest.raises(ConfigError, match="segment.bytes"):
        topic_configs.validate({"cleanup.policy": "bogus", "segment.bytes": "1"})


LAYERS = ConfigLayers({}, {"log.retention.ms": "5000", "message.max.bytes": "2000"}, {"log.roll.hours": "2"})


def test_inherited_values_come_from_the_highest_layer_in_the_topics_unit() -> None:
    assert topic_configs.inherited(TOPIC_CONFIGS["retention.ms"], LAYERS) == (
        "5000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert topic_configs.inherited(TOPIC_CONFIGS["segment.ms"], LAYERS) == (
        str(2 * 3_600_000), ConfigSource.STATIC_BROKER_CONFIG)
    per_broker = ConfigLayers({"log.retention.ms": "7"}, LAYERS.cluster_default, {})
    assert topic_configs.inherited(TOPIC_CONFIGS["retention.ms"], per_broker) == (
        "7", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert topic_configs.inherited(TOPIC_CONFIGS["cleanup.policy"], LAYERS) is None


def test_negative_retention_in_hours_means_forever() -> None:
    layers = ConfigLayers({}, {}, {"log.retention.hours": "-1"})
    assert topic_configs.inherited(TOPIC_CONFIGS["retention.ms"], layers) == ("-1", ConfigSource.STATIC_BROKER_CONFIG)


def test_log_defaults_follow_the_broker_layers() -> None:
    defaults = topic_configs.log_defaults(LAYERS)
    assert (defaults.retention_ms, defaults.max_message_bytes, defaults.segment_ms) == (5000, 2000, 7_200_000)
    assert defaults.overridden == frozenset()
    assert LogConfig.from_props({"retention.ms": "9"}, base=defaults).max_message_bytes == 2000


def test_effective_echoes_overrides_as_sent_and_inherited_values_with_their_layer() -> None:
    listed = {c.name: c for c in topic_configs.effective({"retention.ms": " 1000 "}, LAYERS)}
    assert (listed["retention.ms"].value, listed["retention.ms"].source) == (
        " 1000 ", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert (listed["max.message.bytes"].value, listed["max.message.bytes"].source) == (
        "2000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert (listed["segment.ms"].value, listed["segment.ms"].source) == ("7200000", ConfigSource.STATIC_BROKER_CONFIG)


def test_describe_prints_parsed_values_with_sources_and_synonyms() -> None:
    described = {c.name: c for c in topic_configs.describe(
        {"retention.ms": " 1000 ", "cleanup.policy": "compact , delete", "preallocate": "TRUE"}, LAYERS,
        include_synonyms=True, include_documentation=True)}
    assert list(described) == sorted(described) and set(described) == set(TOPIC_CONFIGS)
    retention = described["retention.ms"]
    assert (retention.value, retention.source, retention.config_type) == ("1000", ConfigSource.DYNAMIC_TOPIC_CONFIG,
                                                                        "LONG")
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("retention.ms", "1000", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        ("log.retention.ms", "5000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    ]
    assert described["cleanup.policy"].value == "compact,delete"
    assert described["preallocate"].value == "true"
    assert [(s.name, s.value, s.source) for s in described["max.message.bytes"].synonyms] == [
        ("message.max.bytes", "2000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("message.max.bytes", "1048588", ConfigSource.DEFAULT_CONFIG),
    ]
    assert retention.documentation and not retention.read_only and not retention.is_sensitive


def test_describe_without_broker_values() -> None:
    described = {c.name: c for c in topic_configs.describe({}, topic_configs.NO_BROKER_LAYERS, include_synonyms=True)}
    # Kafka drops synonyms listed before the topic's own broker config: an unset log.retention.ms leaves
    # nothing, even though log.retention.hours has a default.
    assert described["retention.ms"].synonyms == () and described["retention.ms"].source == ConfigSource.DEFAULT_CONFIG
    assert described["segment.ms"].synonyms == () and described["flush.ms"].synonyms == ()
    assert [(s.name, s.source) for s in described["cleanup.policy"].synonyms] == [
        ("log.cleanup.policy", ConfigSource.DEFAULT_CONFIG)]
    assert described["remote.storage.enable"].synonyms == ()
    assert described["min.cleanable.dirty.ratio"].value == "0.5"
    assert described["message.timestamp.after.max.ms"].value == "3600000"
    assert described["retention.ms"].documentation is None
    no_synonyms = {c.name: c for c in topic_configs.describe({}, LAYERS)}
    assert no_synonyms["max.message.bytes"].synonyms == ()
    assert no_synonyms["max.message.bytes"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
