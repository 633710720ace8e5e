"""The broker's own configs as DescribeConfigs and AlterConfigs see them: Kafka's KafkaConfig with its
KIP-226 dynamic layers.

Kafka resolves a broker config from four layers, highest first: a dynamic value for this broker (the
BROKER resource named by its node id), a dynamic cluster-wide default (the BROKER resource named ""), the
static server.properties, and the ConfigDef default. kemu's static layer is what it was started with
(its BrokerConfig, under Kafka's names: a value differing from Kafka's default, plus what every Kafka
server.properties sets — node.id, process.roles, listeners, log.dirs). Dynamic values are kept in
`kemu-broker-configs.json` in the data directory, as Kafka keeps them in its metadata log.

Only what Kafka can change at runtime (DynamicBrokerConfig's list) may be altered. Of those, kemu listens
to the log.* defaults that topics without an override inherit (log.retention.ms, message.max.bytes, ...);
`listeners` and `advertised.listeners`, dynamic in Kafka, are read-only here because kemu cannot rebind.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from enum import IntEnum
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from kemu.authorizer.config import AUTHORIZER_CLASSES
from kemu.broker.config import PROPERTY_FIELDS, BrokerConfig
from kemu.broker.features import FeatureSettingError, parse_levels
from kemu.kafka_defaults import KAFKA_BROKER_KEYS, kafka_default, kafka_type
from kemu.log.config import (
    MS_PER_HOUR,
    TOPIC_CONFIGS,
    InvalidConfigError,
    Validator,
    at_least,
    format_value,
    invalid,
    parse_value,
)
from kemu.security.errors import SecurityConfigError
from kemu.security.scram import parse_add_scram
from kemu.security.settings import SECURITY_CONFIGS, is_security_config, security_settings

DYNAMIC_CONFIGS_FILE = "kemu-broker-configs.json"
_FORMAT_VERSION = 1


# Compiled (and kept by re's cache) on first use rather than at import: start-up parses no client's number.
_JAVA_INT = r"[+-]?[0-9]+"


def parse_java_int(text: str) -> int | None:
    """Java's Integer.parseInt: an optional sign and ASCII digits within int32 (no spaces), else None."""
    digits = text.lstrip("+-").lstrip("0") or "0"
    if not re.fullmatch(_JAVA_INT, text) or len(digits) > 10:
        return None  # more than 10 digits is out of range, and int() refuses past 4300 (a client's string)
    value = -int(digits) if text.startswith("-") else int(digits)
    return value if -(2**31) <= value < 2**31 else None


@cache
def _kafka_docs() -> dict[str, dict[str, str | None]]:
    # Read on the first DescribeConfigs asking for documentation: ~100 KB no start-up needs.
    import json

    docs: dict[str, dict[str, str | None]] = json.loads(
        (Path(__file__).parent / "kafka_config_docs.json").read_text(encoding="utf-8"))
    return docs


def kafka_doc(kind: str, name: str) -> str | None:
    """Kafka's documentation of a "broker" or "topic" config (kafka_config_docs.json, generated from Kafka)."""
    return _kafka_docs()[kind].get(name)


def kafka_docs_version() -> str:
    """The Kafka version kafka_config_docs.json was generated from."""
    return str(_kafka_docs()["kafka_version"])


class ConfigSource(IntEnum):
    """DescribeConfigsResponse.ConfigSource ids."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


CONFIG_TYPE_IDS = {"UNKNOWN": 0, "BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6,
                   "LIST": 7, "CLASS": 8, "PASSWORD": 9}
"""DescribeConfigsResponse.ConfigType ids (v3+)."""


# NamedTuples, not frozen dataclasses: every start-up imports this module (its table checks the settings),
# and a dataclass definition compiles its generated methods (~0.5 ms each on a slow machine).
class SynonymEntry(NamedTuple):
    name: str
    value: str | None
    source: ConfigSource


class ConfigEntry(NamedTuple):
    """One config as DescribeConfigs (and CreateTopics v5+) reports it."""

    name: str
    value: str | None
    source: ConfigSource
    read_only: bool = False
    is_sensitive: bool = False
    synonyms: tuple[SynonymEntry, ...] = ()
    config_type: str = "UNKNOWN"
    documentation: str | None = None


class ConfigLayers(NamedTuple):
    """A broker's config values by layer, highest first. Values are the strings as set."""

    per_broker: Mapping[str, str]
    cluster_default: Mapping[str, str]
    static: Mapping[str, str]

    def ordered(self) -> tuple[tuple[ConfigSource, Mapping[str, str]], ...]:
        return ((ConfigSource.DYNAMIC_BROKER_CONFIG, self.per_broker),
                (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, self.cluster_default),
                (ConfigSource.STATIC_BROKER_CONFIG, self.static))

    def value(self, name: str) -> str | None:
        """The value in force for `name` (no default), as Kafka's merged KafkaConfig holds it."""
        for _, layer in self.ordered():
            if name in layer:
                return layer[name]
        return None

    def synonyms(self, name: str, sensitive: bool) -> list[SynonymEntry]:
        """Kafka's ConfigHelper.configSynonyms: every layer's value of `name` and its synonyms, layer by
        layer, then the defaults — dropping those before `name` itself (so describing log.retention.ms lists
        nothing for an unset log.retention.hours)."""
        names = broker_synonyms(name)
        found: list[SynonymEntry] = []
        for source, layer in (*self.ordered(), (ConfigSource.DEFAULT_CONFIG, DEFAULTS)):
            for synonym in names:
                if synonym in layer:
                    found.append(SynonymEntry(synonym, None if sensitive else layer[synonym], source))
        while found and found[0].name != name:
            found.pop(0)
        return found


class BrokerConfigKey(NamedTuple):
    name: str
    type: str
    default: str | None
    """As Kafka prints it; None when the config has no default."""
    validator: Validator | None = None
    dynamic: bool = False
    """Kafka can change it at runtime (DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS) and so can kemu."""
    doc: str = ""

    @property
    def is_sensitive(self) -> bool:
        return self.type == "PASSWORD"

    def parse(self, raw: str) -> Any:
        value = parse_value(self.name, self.type, raw)
        if self.validator is not None:
            self.validator(self.name, value)
        return value


def config_key(name: str, validator: Validator | None = None, dynamic: bool = False, doc: str = "") -> BrokerConfigKey:
    """kemu's definition of a broker config: its type and default from the one table (kemu.kafka_defaults:
    Kafka's, and kemu's own few); kemu adds its validator, whether kemu can change it at runtime, and its doc."""
    return BrokerConfigKey(name, kafka_type(name), kafka_default(name), validator, dynamic, doc)


def _known_authorizer(name: str, value: Any) -> None:
    # Kafka fails to load a class it cannot find; kemu has the two ACL authorizers Kafka ships.
    if value.strip() and value.strip() not in AUTHORIZER_CLASSES:
        raise invalid(name, value, f"Class {value} cannot be found")


def _feature_levels(name: str, value: Any) -> None:
    try:
        parse_levels(value)
    except FeatureSettingError as exc:
        raise invalid(name, value, str(exc)) from None


def _server_keys() -> Iterator[BrokerConfigKey]:
    yield config_key("advertised.listeners", doc="The listeners clients are told to use.")
    yield config_key("allow.everyone.if.no.acl.found",
                     doc="Whether a resource no ACL names is open to everyone (with an authorizer).")
    yield config_key("authorizer.class.name", _known_authorizer,
                     doc="The authorizer: StandardAuthorizer or AclAuthorizer turn ACLs on; empty, off.")
    yield config_key("auto.create.topics.enable",
                     doc="Whether a topic asked for in Metadata is created when missing.")
    yield config_key("broker.id", doc="The broker's id; in KRaft mode the node.id.")
    yield config_key("broker.rack", doc="The rack of the broker.")
    yield config_key("default.replication.factor",
                     doc="The replication factor of topics created without one.")
    yield config_key("delete.topic.enable", doc="Whether topics may be deleted.")
    yield config_key("listeners", doc="The addresses the broker listens on.")
    yield config_key(
        "kemu.features", _feature_levels,
        doc="kemu's own: the cluster's finalized feature levels, in kafka-storage format's --feature syntax "
            "(NAME=LEVEL, comma-separated); only transaction.version may be set, 0-2 (default 2, as a new "
            "Kafka 4.x cluster; 1 or 0 make clients run transactions the version-1 way). The levels are kept in "
            "the data directory and UpdateFeatures (kafka-features) changes them too; given, this sets them again "
            "at every start.")
    yield config_key(
        "kemu.client.telemetry.enable",
        doc="kemu's own: a client telemetry receiver (KIP-714), as a Kafka broker has when a metric.reporters "
            "plugin implements ClientTelemetry: ApiVersions then lists GetTelemetrySubscriptions and "
            "PushTelemetry, so clients subscribed by a CLIENT_METRICS resource push their metrics, which "
            "inspect() shows. Off, as Kafka without such a plugin, the two APIs are served but not advertised "
            "and pushed metrics are dropped.")
    yield config_key("telemetry.max.bytes", at_least(1),
                     doc="The largest telemetry push a client may send (after compression), and the most "
                         "it may decompress to.")
    yield config_key("group.consumer.assignment.interval.ms", at_least(0),
                     doc="The least time between two target assignments of a consumer-protocol group.")
    yield config_key("group.consumer.heartbeat.interval.ms", at_least(1),
                     doc="The heartbeat interval of consumer-protocol group members.")
    yield config_key("group.consumer.session.timeout.ms", at_least(1),
                     doc="The session timeout of consumer-protocol group members.")
    yield config_key("group.initial.rebalance.delay.ms",
                     doc="How long a new classic group waits for more members before its first rebalance.")
    yield config_key("group.max.session.timeout.ms",
                     doc="The largest session timeout a classic group member may ask for.")
    yield config_key("group.max.size", at_least(1),
                     doc="The largest number of members a classic group may have.")
    yield config_key("group.min.session.timeout.ms",
                     doc="The smallest session timeout a classic group member may ask for.")
    yield config_key("log.dir", doc="The log directory when log.dirs is unset.")
    yield config_key("log.dirs", doc="The directories the log data is kept in.")
    yield config_key("log.cleaner.backoff.ms", at_least(0), dynamic=True,
                     doc="The amount of time to sleep when there are no logs to clean")
    yield config_key("log.retention.check.interval.ms", at_least(1),
                     doc="How often the log cleaner checks for segments to delete.")
    yield config_key("max.request.partition.size.limit", at_least(1),
                     doc="The most partitions one DescribeTopicPartitions answer may describe.")
    yield config_key("node.id", doc="The node id of this server.")
    yield config_key("num.partitions", at_least(1),
                     doc="The partition count of topics created without one.")
    yield config_key("offset.metadata.max.bytes",
                     doc="The largest metadata an offset commit may carry.")
    yield config_key("offsets.retention.check.interval.ms", at_least(1),
                     doc="How often committed offsets are checked for expiry.")
    yield config_key("offsets.retention.minutes", at_least(1),
                     doc="How long the offsets of an empty group are kept.")
    yield config_key("offsets.topic.num.partitions", at_least(1),
                     doc="The partition count of __consumer_offsets.")
    yield config_key("offsets.topic.replication.factor", at_least(1),
                     doc="The replication factor of __consumer_offsets.")
    yield config_key("offsets.topic.segment.bytes", at_least(1),
                     doc="The segment size of __consumer_offsets.")
    yield config_key("process.roles", doc="The roles of this server: broker, controller.")
    yield config_key("super.users",
                     doc="Principals the authorizer allows everything, separated by semicolons.")
    yield config_key("replica.selector.class",
                     doc="KIP-392: org.apache.kafka.common.replica.RackAwareReplicaSelector sends a consumer "
                         "with client.rack to a replica in its rack.")
    yield config_key("socket.request.max.bytes", at_least(1),
                     doc="The largest request the broker accepts.")
    yield config_key("queued.max.requests", at_least(1),
                     doc="The requests read and waiting for their turn before connections stop reading.")
    yield config_key("max.connections", at_least(0),
                     doc="The most connections the broker serves; further ones wait to be accepted.")
    yield config_key("max.connections.per.ip", at_least(0),
                     doc="The most connections from one address; a further one is closed.")
    yield config_key("max.connections.per.ip.overrides",
                     doc="Per-address maxima overriding max.connections.per.ip, as host:count,host:count.")
    yield config_key("connections.max.idle.ms",
                     doc="How long a connection may be idle before the broker closes it.")
    yield config_key("transaction.state.log.min.isr", at_least(1),
                     doc="min.insync.replicas of __transaction_state.")
    yield config_key("transaction.state.log.num.partitions", at_least(1),
                     doc="The partition count of __transaction_state.")
    yield config_key("transaction.state.log.replication.factor", at_least(1),
                     doc="The replication factor of __transaction_state.")
    yield config_key("transaction.state.log.segment.bytes", at_least(1),
                     doc="The segment size of __transaction_state.")
    yield config_key("transaction.max.timeout.ms", at_least(1),
                     doc="The largest transaction.timeout.ms a producer may ask for.")
    yield config_key("transactional.id.expiration.ms", at_least(1),
                     doc="How long an idle transactional id is kept before it expires.")
    yield config_key("producer.id.expiration.ms", at_least(1), dynamic=True,
                     doc="How long an idle producer's state is kept on a partition.")
    yield config_key("producer.id.expiration.check.interval.ms", at_least(1),
                     doc="How often idle producers are looked for.")
    yield config_key("transaction.partition.verification.enable", dynamic=True,
                     doc="Whether a transactional produce must go to a partition added to the transaction.")


LIVE_SETTINGS: dict[str, str] = {
    "producer.id.expiration.ms": "producer_id_expiration_ms",
    "transaction.partition.verification.enable": "transaction_partition_verification_enable",
    "log.cleaner.backoff.ms": "log_cleaner_backoff_ms",  # read at each cleaner run (BrokerCore._run_cleaner)
}
"""Dynamic settings kemu reads from its BrokerConfig as it runs (the Broker sets them to the value in force
after every change), by name: BrokerConfig field."""


# The broker side of the topic configs' synonyms. A topic's first synonym is the broker config Kafka can
# change at runtime; the alternatives in other units (hours, minutes) are read-only. Where the broker
# config's type, default or validator differs from the topic config's, it is taken from Kafka's table here.
_SYNONYM_OVERRIDES: dict[str, BrokerConfigKey] = {key.name: key for key in (
    config_key("log.roll.ms", dynamic=True),
    config_key("log.roll.hours", at_least(1)),
    config_key("log.roll.jitter.ms", dynamic=True),
    config_key("log.roll.jitter.hours", at_least(0)),
    config_key("log.flush.interval.ms", dynamic=True),
    config_key("log.flush.scheduler.interval.ms"),
    config_key("log.retention.ms", dynamic=True),
    config_key("log.retention.minutes"),
    config_key("log.retention.hours"),
)}


def _log_keys() -> Iterator[BrokerConfigKey]:
    for topic_key in TOPIC_CONFIGS.values():
        for index, synonym in enumerate(topic_key.synonyms):
            doc = f"The default of the topic config {topic_key.name}: {topic_key.doc}"
            override = _SYNONYM_OVERRIDES.get(synonym.name)
            if override is not None:
                unit = "hours" if synonym.unit_ms == MS_PER_HOUR else "minutes" if synonym.unit_ms > 1 else ""
                yield BrokerConfigKey(override.name, override.type, override.default, override.validator,
                                      override.dynamic, doc + (f" (in {unit})" if unit else ""))
            elif index == 0:
                yield BrokerConfigKey(synonym.name, topic_key.type, topic_key.default_string, topic_key.validator,
                                      dynamic=True, doc=doc)
            else:
                raise RuntimeError(f"no broker definition for {synonym.name}")


# SslConfigs.RECONFIGURABLE_CONFIGS: dynamic in Kafka, but only under a listener's prefix, so that an
# unprefixed change is always refused (with its own message) and kemu can list them as dynamic too.
_LISTENER_PREFIX_ONLY = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates"})
# DynamicBrokerConfig.PER_BROKER_CONFIGS: no cluster-wide default may set them.
_PER_BROKER_ONLY = _LISTENER_PREFIX_ONLY | {
    "listeners", "listener.security.protocol.map", "principal.builder.class", "ssl.protocol", "ssl.provider",
    "ssl.cipher.suites", "ssl.enabled.protocols", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
    "ssl.endpoint.identification.algorithm", "ssl.secure.random.implementation", "ssl.client.auth",
    "ssl.engine.factory.class", "sasl.mechanism.inter.broker.protocol", "sasl.jaas.config",
    "sasl.enabled.mechanisms", "sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.min.time.before.relogin", "sasl.kerberos.principal.to.local.rules",
    "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.buffer.seconds", "cordoned.log.dirs"}


def _security_keys() -> Iterator[BrokerConfigKey]:
    for name, doc in SECURITY_CONFIGS:
        yield config_key(name, dynamic=name in _LISTENER_PREFIX_ONLY, doc=doc)


def _range(name: str, value: Any, low: str, high: str) -> None:
    # ConfigDef.Range, its bounds printed as Java printed them.
    if low and value < float(low):
        raise invalid(name, value, f"Value must be at least {low}")
    if high and value > float(high):
        raise invalid(name, value, f"Value must be no more than {high}")


def _choice(name: str, value: Any, choices: tuple[str, ...], case_insensitive: bool) -> None:
    # ConfigDef.ValidString and CaseInsensitiveValidString.
    if case_insensitive and (value is None or value.upper() not in choices):
        raise invalid(name, value, "String must be one of (case insensitive): " + ", ".join(choices))
    if not case_insensitive and value not in choices:
        raise invalid(name, value, "String must be one of: " + ", ".join(choices))


def kafka_validator(spec: tuple[str, ...] | None) -> Validator | None:
    """The validator a generated spec describes (kemu/kafka_defaults/broker_keys.py): a Range or a ValidString."""
    if spec is None:
        return None
    kind, *rest = spec
    if kind == "range":
        low, high = rest
        return lambda name, value: _range(name, value, low, high)
    choices = tuple(rest)
    return lambda name, value: _choice(name, value, choices, kind == "in_ci")


def _kafka_keys(own: list[BrokerConfigKey]) -> Iterator[BrokerConfigKey]:
    """Kafka's broker configs (kemu/kafka_defaults/broker_keys.py, generated from Kafka): kemu's own definition
    where it has one (given Kafka's validator if it has none), else one kemu keeps and shows but does not act
    on, with Kafka's type, default, dynamism and validator."""
    by_name = {key.name: key for key in own}
    for name, kind, default, dynamic, spec in KAFKA_BROKER_KEYS:
        mine = by_name.pop(name, None)
        if mine is None:
            yield BrokerConfigKey(name, kind, default, kafka_validator(spec), dynamic)
        else:
            yield mine if mine.validator is not None else mine._replace(validator=kafka_validator(spec))
    yield from by_name.values()


def _all_keys() -> list[BrokerConfigKey]:
    return sorted(_kafka_keys([*_server_keys(), *_log_keys(), *_security_keys()]), key=lambda k: k.name)


def kemu_definitions() -> frozenset[str]:
    """The broker settings kemu defines itself (the server's and the listeners' security settings), which
    its code reads; not the log.* defaults of topic configs (those follow their topic config) nor the rest of
    Kafka's. Built on each call: only the settings reference (kemu.broker.settings_reference) asks."""
    return frozenset(key.name for key in (*_server_keys(), *_security_keys()))


BROKER_CONFIGS: dict[str, BrokerConfigKey] = {key.name: key for key in _all_keys()}
"""Every broker config kemu knows, by name: Kafka's, and a few of kemu's own (KEMU_ONLY)."""

KAFKA_NAMES = frozenset(key[0] for key in KAFKA_BROKER_KEYS)
KEMU_ONLY = frozenset(BROKER_CONFIGS) - KAFKA_NAMES
"""Settings Kafka's broker config does not define (the authorizer's, kemu's SCRAM credentials, an internal
one): like Kafka's originals, described only when set."""

DEFAULTS: dict[str, str] = {key.name: key.default for key in BROKER_CONFIGS.values() if key.default is not None}
"""Kafka's static defaults (ConfigDef.defaultValues as strings): the DEFAULT_CONFIG synonyms."""

_GROUPS: tuple[tuple[str, ...], ...] = tuple(
    tuple(synonym.name for synonym in key.synonyms) for key in TOPIC_CONFIGS.values() if len(key.synonyms) > 1
)


def broker_synonyms(name: str) -> tuple[str, ...]:
    """DynamicBrokerConfig.brokerConfigSynonyms: a time config and its alternatives in other units
    (log.retention.ms/minutes/hours, log.roll.ms/hours, ...) are synonyms; log.flush.interval.ms falls back
    on log.flush.scheduler.interval.ms but not the reverse; anything else is its own only synonym."""
    for group in _GROUPS:
        if name == group[0] or (name in group and group[-1].endswith(("hours", "minutes"))):
            return group
    return (name,)


def static_values(cfg: BrokerConfig, *, bound_port: int | None, data_dir: Path, advertised: tuple[str, int],
                  started_with: Mapping[str, Any] | None = None) -> dict[str, str]:
    """What kemu was started with, under Kafka's names: the STATIC_BROKER_CONFIG layer. `started_with`: the
    values some fields had at start (the live settings, which a dynamic value changes since), by field."""
    started = started_with or {}
    values = {
        "node.id": str(cfg.node_id),
        "broker.id": str(cfg.node_id),
        "process.roles": "broker,controller",
        "listeners": f"PLAINTEXT://{cfg.host}:{bound_port or cfg.port}",
        "log.dirs": str(data_dir.absolute()),
    }
    if cfg.advertised_host is not None or cfg.advertised_port is not None:
        host, port = advertised
        values["advertised.listeners"] = f"PLAINTEXT://{host}:{port}"
    if cfg.rack is not None:
        values["broker.rack"] = cfg.rack
    values.update(cfg.properties)
    # A many-broker kemu's other nodes share the first's properties but not its id or rack.
    for name in ("node.id", "broker.id"):
        if name in cfg.properties:
            values[name] = str(cfg.node_id)
    if cfg.rack is not None:
        values["broker.rack"] = cfg.rack
    for name, attribute, kind, default in _FIELD_KEYS:
        if name not in values:
            text = format_value(kind, started[attribute] if attribute in started else getattr(cfg, attribute))
            if text != default or name in cfg.settings_given:
                values[name] = text  # type: ignore[assignment]
    return values


_FIELD_KEYS: tuple[tuple[str, str, str, str | None], ...] = tuple(
    (key.name, attribute, key.type, key.default) for key in BROKER_CONFIGS.values()
    if hasattr(BrokerConfig, attribute := key.name.replace(".", "_")))
"""(name, BrokerConfig field, type, default) of every config a BrokerConfig field holds, in BROKER_CONFIGS'
order: what static_values reads of a config, without looking through all ~340 names on every call."""


class DynamicBrokerConfigs:
    """The dynamic layers, persisted: each node's own values (a many-broker kemu's nodes each have theirs, as
    each Kafka broker has its BROKER resource) and the cluster-wide defaults."""

    def __init__(self, data_dir: Path, node_id: int, min_insync_replicas: int = 1) -> None:
        self._path = data_dir / DYNAMIC_CONFIGS_FILE
        self._node_id = str(node_id)
        self.cluster_default: dict[str, str] = {}
        self._brokers: dict[str, dict[str, str]] = {}
        if self._path.exists():
            import json  # only for a data directory that has dynamic configs

            doc = json.loads(self._path.read_text())
            self.cluster_default = dict(doc.get("cluster_default", {}))
            self._brokers = {node: dict(values) for node, values in doc.get("brokers", {}).items() if values}
        else:
            # A new Kafka 4.1+ cluster (ELR on, ActivationRecordsGenerator) starts with the static
            # min.insync.replicas as a dynamic cluster-wide default, which topics then show as their source.
            self.cluster_default["min.insync.replicas"] = str(min_insync_replicas)

    @property
    def per_broker(self) -> dict[str, str]:
        """The first node's own values: those the process's logs and live settings follow."""
        return self.node_layer(int(self._node_id))

    def node_layer(self, node_id: int) -> dict[str, str]:
        return dict(self._brokers.get(str(node_id), {}))

    def layer(self, resource_name: str) -> dict[str, str]:
        """The layer a BROKER resource names: "" is the cluster default, a node id that node's own."""
        return dict(self.cluster_default) if resource_name == "" else dict(self._brokers.get(resource_name, {}))

    def replace(self, resource_name: str, values: Mapping[str, str]) -> None:
        if resource_name == "":
            self.cluster_default = dict(values)
        elif values:
            self._brokers[resource_name] = dict(values)
        else:
            self._brokers.pop(resource_name, None)
        self._save()

    def _save(self) -> None:
        import json

        doc: dict[str, Any] = {"version": _FORMAT_VERSION, "cluster_default": self.cluster_default,
                               "brokers": self._brokers}
        tmp = self._path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True))
        os.replace(tmp, self._path)

    def layers(self, static: dict[str, str], node_id: int | None = None) -> ConfigLayers:
        own = self.node_layer(int(self._node_id) if node_id is None else node_id)
        return ConfigLayers(own, dict(self.cluster_default), static)


class BrokerConfigRefused(Exception):
    """A dynamic broker config change Kafka refuses; INVALID_REQUEST with this message."""


def validate_dynamic(values: Mapping[str, str], per_broker: bool = True, log_dirs: tuple[str, ...] = ()) -> None:
    """Kafka's DynamicBrokerConfig.validateConfigs for the complete set a BROKER resource would hold (a
    broker's own, or the cluster default when not `per_broker`): non-dynamic names, unprefixed listener
    security settings, then values (names Kafka does not know are accepted, as custom configs are), then
    configs only a broker may have; `log_dirs` are the broker's, which cordoned.log.dirs must name."""
    fixed = [name for name in values if name in BROKER_CONFIGS and not BROKER_CONFIGS[name].dynamic]
    if fixed:
        raise BrokerConfigRefused(f"Cannot update these configs dynamically: {_java_set(fixed)}")
    unprefixed = [name for name in values if name in _LISTENER_PREFIX_ONLY]
    if unprefixed:
        raise BrokerConfigRefused("These security configs can be dynamically updated only per-listener using the "
                                  f"listener prefix: {_java_set(unprefixed)}")
    for name, text in values.items():
        key = BROKER_CONFIGS.get(name)
        if key is not None:
            try:
                key.parse(text)
            except InvalidConfigError as exc:
                raise BrokerConfigRefused(str(exc)) from None
    own = [name for name in values if name in _PER_BROKER_ONLY]
    if own and not per_broker:
        raise BrokerConfigRefused("Cannot update these configs at default cluster level, broker id must be "
                                  f"specified: {_java_set(own)}")
    _check_merged(values, log_dirs)


def _check_merged(values: Mapping[str, str], log_dirs: tuple[str, ...]) -> None:
    """KafkaConfig.validateValues' requirements that a dynamic change can break (on the values given, over
    Kafka's defaults)."""
    def value(name: str) -> Any:
        text = values.get(name, DEFAULTS.get(name))
        return None if text is None else BROKER_CONFIGS[name].parse(text)

    roll, jitter = value("log.roll.ms"), value("log.roll.jitter.ms")
    if roll is not None and roll < 1:
        raise BrokerConfigRefused("requirement failed: log.roll.ms must be greater than or equal to 1")
    if jitter is not None and jitter < 0:
        raise BrokerConfigRefused("requirement failed: log.roll.jitter.ms must be greater than or equal to 0")
    cordoned = value("cordoned.log.dirs") or []
    if "*" in cordoned and len(cordoned) != 1:
        raise BrokerConfigRefused("requirement failed: When cordoned.log.dirs is set to *, it must not contain "
                                  "other values")
    missing = [entry for entry in cordoned if entry != "*" and entry not in log_dirs]
    if missing:
        raise BrokerConfigRefused("requirement failed: All entries in cordoned.log.dirs must be present in "
                                  f"log.dirs or log.dir. Missing entries : {', '.join(missing)}")
    threads = value("log.cleaner.threads")
    if threads and value("log.cleaner.dedupe.buffer.size") // threads <= 1024 * 1024:
        raise BrokerConfigRefused("requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per "
                                  "cleaner thread.")


def _java_set(names: list[str]) -> str:
    """A java.util.HashSet of these names as Java prints it: in the order of its hash buckets."""
    size = 16
    while len(names) > size * 3 // 4:
        size *= 2

    def bucket(name: str) -> int:
        code = 0  # String.hashCode, over UTF-16 code units
        encoded = name.encode("utf-16-be", "surrogatepass")
        for index in range(0, len(encoded), 2):
            code = (31 * code + (encoded[index] << 8 | encoded[index + 1])) & 0xFFFFFFFF
        return (code ^ (code >> 16)) & (size - 1)

    ordered = sorted(enumerate(dict.fromkeys(names)), key=lambda item: (bucket(item[1]), item[0]))
    return "[" + ", ".join(name for _, name in ordered) + "]"


def describe(layers: ConfigLayers, cluster_default: bool, include_synonyms: bool,
             include_documentation: bool) -> list[ConfigEntry]:
    """The BROKER resource: every config of this broker (its node id), or only the dynamic cluster-wide
    defaults that are set (the resource named "")."""
    if cluster_default:
        names = sorted(layers.cluster_default)
    else:
        names = sorted(KAFKA_NAMES | set(layers.per_broker) | set(layers.cluster_default) | set(layers.static))
    return [_entry(name, layers, cluster_default, include_synonyms, include_documentation) for name in names]


def _entry(name: str, layers: ConfigLayers, cluster_default: bool, include_synonyms: bool,
           include_documentation: bool) -> ConfigEntry:
    key = BROKER_CONFIGS.get(name)
    # Kafka treats a config it has no definition for (a custom one) as sensitive, to be safe.
    sensitive = key is None or key.is_sensitive
    synonyms = layers.synonyms(name, sensitive)
    if cluster_default:
        synonyms = [s for s in synonyms if s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        raw = layers.cluster_default.get(name)
        value = raw
    else:
        raw = layers.value(name)
        value = _printed(key, raw) if key is not None else raw
    return ConfigEntry(
        name=name,
        value=None if sensitive else value,
        source=synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG,
        read_only=key is None or not key.dynamic,
        is_sensitive=sensitive,
        synonyms=tuple(synonyms) if include_synonyms else (),
        config_type=key.type if key is not None else "UNKNOWN",
        documentation=(kafka_doc("broker", name) or (key.doc if key is not None else None))
        if include_documentation else None,
    )


def _printed(key: BrokerConfigKey, raw: str | None) -> str | None:
    """The merged value as Kafka's parsed KafkaConfig prints it (" 5 " becomes "5"); the default if unset."""
    if raw is None:
        return key.default
    try:
        return format_value(key.type, key.parse(raw))
    except InvalidConfigError:
        return raw  # only a static value kemu was started with can be out of range; show it as given


def apply_properties(config: BrokerConfig, properties: Mapping[str, str]) -> list[str]:
    """Set Kafka server.properties values on a BrokerConfig (`kemu serve --override name=value`).

    A known setting is parsed and validated as Kafka does at start-up (a bad value raises
    `InvalidConfigError` with Kafka's message). Names with a BrokerConfig field set that field; the rest
    (the log.* defaults topics inherit) are kept as given in `config.properties`. Names kemu does not know
    are returned: Kafka only warns about a setting it does not know, and so does kemu.
    """
    unknown = []
    for name, raw in properties.items():
        key = BROKER_CONFIGS.get(name)
        if key is None and is_security_config(name):
            config.properties[name] = raw  # a listener's own setting (listener.name.<listener>.<setting>)
            continue
        if key is None:
            unknown.append(name)
            continue
        value = key.parse(raw)
        attribute = PROPERTY_FIELDS.get(name, name.replace(".", "_"))
        if attribute in BrokerConfig.__dataclass_fields__ and attribute not in ("properties", "settings_given"):
            setattr(config, attribute, value)
            config.settings_given.add(name)
        else:
            config.properties[name] = raw
    check_security(config)
    return unknown


def default_listeners(config: BrokerConfig) -> str:
    """The one PLAINTEXT listener of kemu's --host and --port, when `listeners` is not set."""
    host = f"[{config.host}]" if ":" in config.host else config.host
    return f"PLAINTEXT://{host}:{config.port}"


def check_security(config: BrokerConfig) -> None:
    """Kafka's start-up checks of the listeners and their security settings, as InvalidConfigError."""
    try:
        security_settings(config.properties, default_listeners(config))
        parse_add_scram(config.properties.get("kemu.scram.credentials", ""))
    except SecurityConfigError as exc:
        raise InvalidConfigError(str(exc)) from None
