"""Broker configs: Kafka's names, defaults and dynamic flags, the static layer kemu was started with, the
dynamic layers (persisted), and the entries DescribeConfigs reports for the BROKER resource."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.broker import broker_configs
from kemu.broker.broker import BrokerCore
from kemu.broker.broker_configs import (
    BROKER_CONFIGS,
    DEFAULTS,
    KEMU_ONLY,
    BrokerConfigRefused,
    ConfigLayers,
    ConfigSource,
    DynamicBrokerConfigs,
    broker_synonyms,
    kafka_doc,
    validate_dynamic,
)
from kemu.broker.config import BrokerConfig
from kemu.clock import VirtualClock
from kemu.kafka_defaults import KAFKA_BROKER_KEYS
from kemu.log.config import TOPIC_CONFIGS

# BrokerConfig fields that are not Kafka settings of their own (listeners, log.dirs are built from them).
NOT_KAFKA_SETTINGS = {"host", "port", "advertised_host", "advertised_port", "rack", "brokers", "racks", "data_dir",
                      "cluster_id", "properties", "settings_given"}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerCore]:
    created = BrokerCore(BrokerConfig(data_dir=str(tmp_path)), VirtualClock())
    yield created
    created.close()


def test_every_broker_setting_kemu_honours_is_described() -> None:
    for field in dataclasses.fields(BrokerConfig):
        if field.name not in NOT_KAFKA_SETTINGS:
            assert field.name.replace("_", ".") in BROKER_CONFIGS, field.name


def test_every_topic_synonym_has_a_broker_definition() -> None:
    for key in TOPIC_CONFIGS.values():
        for index, synonym in enumerate(key.synonyms):
            broker_key = BROKER_CONFIGS[synonym.name]
            assert broker_key.dynamic == (index == 0), synonym.name


@pytest.mark.parametrize(("name", "default", "kind", "dynamic"), [
    ("log.retention.ms", None, "LONG", True),
    ("log.retention.hours", "168", "INT", False),
    ("log.retention.minutes", None, "INT", False),
    ("log.roll.hours", "168", "INT", False),
    ("log.flush.scheduler.interval.ms", "9223372036854775807", "LONG", False),
    ("message.max.bytes", "1048588", "INT", True),
    ("log.cleanup.policy", "delete", "LIST", True),
    ("log.cleaner.min.cleanable.ratio", "0.5", "DOUBLE", True),
    ("log.message.timestamp.after.max.ms", "3600000", "LONG", True),
    ("offsets.topic.replication.factor", "3", "SHORT", False),
    ("transaction.state.log.min.isr", "2", "INT", False),
    ("num.partitions", "1", "INT", False),
    ("listeners", "PLAINTEXT://:9092", "LIST", False),
    ("log.dirs", None, "LIST", False),
])
def test_kafka_defaults(name: str, default: str | None, kind: str, dynamic: bool) -> None:
    key = BROKER_CONFIGS[name]
    assert (key.default, key.type, key.dynamic) == (default, kind, dynamic)
    assert (name in DEFAULTS) == (default is not None)


@pytest.mark.parametrize(("name", "synonyms"), [
    ("log.retention.ms", ("log.retention.ms", "log.retention.minutes", "log.retention.hours")),
    ("log.retention.hours", ("log.retention.ms", "log.retention.minutes", "log.retention.hours")),
    ("log.roll.hours", ("log.roll.ms", "log.roll.hours")),
    ("log.flush.interval.ms", ("log.flush.interval.ms", "log.flush.scheduler.interval.ms")),
    ("log.flush.scheduler.interval.ms", ("log.flush.scheduler.interval.ms",)),
    ("message.max.bytes", ("message.max.bytes",)),
])
def test_broker_synonyms_as_kafka_groups_them(name: str, synonyms: tuple[str, ...]) -> None:
    assert broker_synonyms(name) == synonyms


def test_static_layer_is_what_kemu_was_started_with(broker: BrokerCore) -> None:
    broker.bound_port = 4321
    static = broker.config_layers().static
    assert static["node.id"] == static["broker.id"] == "1"
    assert static["listeners"] == "PLAINTEXT://127.0.0.1:4321"
    assert static["log.dirs"] == str(broker.data_dir.absolute())
    assert static["process.roles"] == "broker,controller"
    # kemu's single-node replication factors differ from Kafka's defaults, as in a single-node server.properties.
    assert static["offsets.topic.replication.factor"] == "1"
    assert static["transaction.state.log.min.isr"] == "1"
    assert "num.partitions" not in static and "advertised.listeners" not in static and "broker.rack" not in static
    broker.config.advertised_host, broker.config.rack, broker.config.num_partitions = "kafka.example", "r1", 3
    static = broker.config_layers().static
    assert static["advertised.listeners"] == "PLAINTEXT://kafka.example:4321"
    assert (static["broker.rack"], static["num.partitions"]) == ("r1", "3")


def test_dynamic_layers_persist(tmp_path: Path) -> None:
    dynamic = DynamicBrokerConfigs(tmp_path, node_id=1)
    dynamic.replace("", {"log.retention.ms": "1000"})
    dynamic.replace("1", {"message.max.bytes": "2000"})
    reloaded = DynamicBrokerConfigs(tmp_path, node_id=1)
    assert reloaded.cluster_default == {"log.retention.ms": "1000"}
    assert reloaded.per_broker == {"message.max.bytes": "2000"}
    # Another node id keeps the cluster default, not node 1's own values.
    other = DynamicBrokerConfigs(tmp_path, node_id=2)
    assert (other.cluster_default, other.per_broker) == ({"log.retention.ms": "1000"}, {})


@pytest.mark.parametrize(("values", "message"), [
    ({"log.dirs": "/x", "num.partitions": "2"},  # in java.util.HashSet's order, as Java 17 printed it
     "Cannot update these configs dynamically: [num.partitions, log.dirs]"),
    ({"log.dirs": "/x", "num.partitions": "2", "log.retention.hours": "1", "broker.id": "1", "node.id": "1",
      "process.roles": "broker"},
     "Cannot update these configs dynamically: [log.retention.hours, node.id, num.partitions, process.roles, "
     "broker.id, log.dirs]"),
    ({"log.retention.hours": "1"}, "Cannot update these configs dynamically: [log.retention.hours]"),
    ({"log.retention.ms": "abc"}, "Invalid value abc for configuration log.retention.ms: Not a number of type LONG"),
    ({"log.segment.bytes": "10"},
     "Invalid value 10 for configuration log.segment.bytes: Value must be at least 1048576"),
    ({"log.cleanup.policy": "forever"},
     "Invalid value forever for configuration log.cleanup.policy: String must be one of: compact, delete"),
    # Validators kemu takes from Kafka's ConfigDef for configs it keeps but does not act on.
    ({"background.threads": "0"}, "Invalid value 0 for configuration background.threads: Value must be at least 1"),
    ({"group.coordinator.cached.buffer.max.bytes": "5"},
     "Invalid value 5 for configuration group.coordinator.cached.buffer.max.bytes: Value must be at least 524288"),
    ({"ssl.keystore.location": "/k", "ssl.truststore.location": "/t"},
     "These security configs can be dynamically updated only per-listener using the listener prefix: "
     "[ssl.truststore.location, ssl.keystore.location]"),
    ({"log.roll.ms": "0"}, "requirement failed: log.roll.ms must be greater than or equal to 1"),
    ({"log.roll.jitter.ms": "-1"}, "requirement failed: log.roll.jitter.ms must be greater than or equal to 0"),
    ({"log.cleaner.threads": "2", "log.cleaner.dedupe.buffer.size": "2097152"},
     "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread."),
])
def test_dynamic_changes_kafka_refuses(values: dict[str, str], message: str) -> None:
    with pytest.raises(BrokerConfigRefused) as caught:
        validate_dynamic(values)
    assert str(caught.value) == message


def test_cordoned_log_dirs_must_be_the_brokers() -> None:
    validate_dynamic({"cordoned.log.dirs": "/data"}, log_dirs=("/data",))
    validate_dynamic({"cordoned.log.dirs": "*"}, log_dirs=("/data",))
    with pytest.raises(BrokerConfigRefused) as caught:
        validate_dynamic({"cordoned.log.dirs": "/data,/else,/other"}, log_dirs=("/data",))
    assert str(caught.value) == ("requirement failed: All entries in cordoned.log.dirs must be present in log.dirs "
                                 "or log.dir. Missing entries : /else, /other")
    with pytest.raises(BrokerConfigRefused) as caught:
        validate_dynamic({"cordoned.log.dirs": "*,/data"}, log_dirs=("/data",))
    assert str(caught.value) == ("requirement failed: When cordoned.log.dirs is set to *, it must not contain "
                                 "other values")


def test_per_broker_configs_refused_as_cluster_defaults() -> None:
    validate_dynamic({"sasl.kerberos.kinit.cmd": "/bin/kinit", "num.io.threads": "4"})
    with pytest.raises(BrokerConfigRefused) as caught:
        validate_dynamic({"sasl.kerberos.kinit.cmd": "/bin/kinit", "num.io.threads": "4"}, per_broker=False)
    assert str(caught.value) == ("Cannot update these configs at default cluster level, broker id must be "
                                 "specified: [sasl.kerberos.kinit.cmd]")


def test_dynamic_changes_kafka_accepts() -> None:
    # Unknown names are custom configs to Kafka; negative retention means "forever".
    validate_dynamic({"log.retention.ms": "-5", "message.max.bytes": "100", "my.plugin.setting": "x"})


def test_describe_this_broker() -> None:
    layers = ConfigLayers({"log.retention.ms": "9"}, {"log.retention.ms": "5", "message.max.bytes": "2000"},
                          {"node.id": "1", "offsets.topic.replication.factor": "1"})
    entries = {e.name: e for e in broker_configs.describe(layers, False, include_synonyms=True,
                                                          include_documentation=True)}
    assert set(BROKER_CONFIGS) - KEMU_ONLY == set(entries)
    retention = entries["log.retention.ms"]
    assert (retention.value, retention.source, retention.read_only) == ("9", ConfigSource.DYNAMIC_BROKER_CONFIG, False)
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("log.retention.ms", "9", ConfigSource.DYNAMIC_BROKER_CONFIG),
        ("log.retention.ms", "5", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    ]
    hours = entries["log.retention.hours"]
    assert (hours.value, hours.source, hours.read_only) == ("168", ConfigSource.DEFAULT_CONFIG, True)
    factor = entries["offsets.topic.replication.factor"]
    assert (factor.value, factor.source, factor.config_type) == ("1", ConfigSource.STATIC_BROKER_CONFIG, "SHORT")
    assert [(s.value, s.source) for s in factor.synonyms] == [("1", ConfigSource.STATIC_BROKER_CONFIG),
                                                              ("3", ConfigSource.DEFAULT_CONFIG)]
    unset = entries["log.roll.ms"]
    assert (unset.value, unset.source, unset.synonyms) == (None, ConfigSource.DEFAULT_CONFIG, ())
    assert entries["num.partitions"].documentation


def test_describe_cluster_default_lists_only_what_is_set() -> None:
    layers = ConfigLayers({"log.retention.ms": "9"}, {"log.retention.ms": " 5 ", "custom.thing": "x"}, {})
    entries = broker_configs.describe(layers, True, include_synonyms=True, include_documentation=False)
    assert [e.name for e in entries] == ["custom.thing", "log.retention.ms"]
    custom, retention = entries
    # A config Kafka does not define is treated as sensitive: no value, and read-only.
    assert (custom.value, custom.is_sensitive, custom.read_only, custom.config_type) == (None, True, True, "UNKNOWN")
    assert (retention.value, retention.source) == (" 5 ", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert [(s.value, s.source) for s in retention.synonyms] == [(" 5 ", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)]
    assert broker_configs.describe(ConfigLayers({}, {}, {}), True, True, True) == []


def test_kafkas_broker_configs_and_kemus_own() -> None:
    """Every config Kafka's broker lists is kemu's too, with Kafka's type and default; the few of kemu's own
    are described only once set, as Kafka describes a setting it does not define."""
    assert KEMU_ONLY == {"allow.everyone.if.no.acl.found", "kemu.client.telemetry.enable", "kemu.features",
                         "kemu.scram.credentials", "producer.id.expiration.check.interval.ms", "super.users"}
    for name, kind, default, _, _ in KAFKA_BROKER_KEYS:
        assert (BROKER_CONFIGS[name].type, BROKER_CONFIGS[name].default) == (kind, default), name
    layers = ConfigLayers({}, {}, {"super.users": "User:admin"})
    entries = {e.name: e for e in broker_configs.describe(layers, False, False, True)}
    assert "super.users" in entries and "kemu.scram.credentials" not in entries
    assert entries["background.threads"].documentation == kafka_doc("broker", "background.threads")
    assert (entries["background.threads"].value, entries["background.threads"].read_only) == ("10", False)
