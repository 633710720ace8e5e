"""The cluster's view of topic configs: validation (CreateTopics, AlterConfigs), the broker-level defaults
topics inherit, and every config's value in force with its source and synonyms (CreateTopics v5+,
DescribeConfigs). The table itself — names, types, defaults, validators, synonyms — is `kemu.log.config`.

A topic config without an override takes its broker synonym's value from the highest broker layer that
sets one (this broker's dynamic value, the dynamic cluster default, the static config), converted to the
topic's unit (log.retention.hours → ms), and otherwise Kafka's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from kemu.broker.broker_configs import ConfigEntry, ConfigLayers, ConfigSource, SynonymEntry, kafka_doc
from kemu.log.config import (
    TOPIC_CONFIGS,
    ConfigKey,
    InvalidConfigError,
    LogConfig,
    format_value,
    validate_topic_configs,
)

ConfigError = InvalidConfigError
EffectiveConfig = ConfigEntry
BY_NAME = TOPIC_CONFIGS
SOURCE_DYNAMIC_TOPIC = ConfigSource.DYNAMIC_TOPIC_CONFIG
SOURCE_DEFAULT = ConfigSource.DEFAULT_CONFIG

NO_BROKER_LAYERS = ConfigLayers({}, {}, {})

# The broker configs a topic config can take its value from (its synonyms). Only these of a broker's layers
# bear on its topics' configs, so what log_defaults and effective make of some layers depends on them alone,
# and is kept by them: every broker start and every CreateTopics would otherwise work it out again, for the
# same few (mostly no) values.
_SYNONYMS = frozenset(synonym.name for key in TOPIC_CONFIGS.values() for synonym in key.synonyms)
_Inheritable = tuple[tuple[tuple[str, str], ...], ...]


def _inheritable(layers: ConfigLayers) -> _Inheritable:
    """The synonyms' values in each layer, highest first: all of `layers` that topic configs can inherit."""
    return tuple(tuple((name, value) for name, value in layer.items() if name in _SYNONYMS) for layer in layers)


def _layers(inheritable: _Inheritable) -> ConfigLayers:
    per_broker, cluster_default, static = (dict(items) for items in inheritable)
    return ConfigLayers(per_broker, cluster_default, static)


def validate(configs: Mapping[str, str | None]) -> dict[str, Any]:
    """Raise ConfigError with Kafka's message for the first problem Kafka would report; else every config's
    parsed value."""
    return validate_topic_configs(configs)


def inherited(key: ConfigKey, layers: ConfigLayers) -> tuple[str, ConfigSource] | None:
    """The broker-level value (in the topic's unit) a topic without an override gets, and its layer."""
    for synonym in key.synonyms:
        for source, layer in layers.ordered():
            if synonym.name in layer:
                return synonym.to_topic_value(layer[synonym.name]), source
    return None


def log_defaults(layers: ConfigLayers) -> LogConfig:
    """The LogConfig a topic without overrides gets on this broker."""
    return _log_defaults(_inheritable(layers))


@lru_cache(maxsize=64)
def _log_defaults(inheritable: _Inheritable) -> LogConfig:  # a LogConfig is frozen: one may serve many brokers
    layers = _layers(inheritable)
    values: dict[str, Any] = {}
    for key in TOPIC_CONFIGS.values():
        found = inherited(key, layers)
        if found is not None:
            values[key.name] = key.parse(found[0])
    return LogConfig.defaults_from(values)


def effective(overrides: Mapping[str, str], layers: ConfigLayers = NO_BROKER_LAYERS) -> list[ConfigEntry]:
    """Every topic config, sorted by name, as CreateTopics v5+ echoes them (Kafka's
    KafkaConfigSchema.resolveEffectiveTopicConfigs): an override exactly as it was sent."""
    return list(_effective(tuple(overrides.items()), _inheritable(layers)))


@lru_cache(maxsize=64)
def _effective(overrides_given: tuple[tuple[str, str], ...], inheritable: _Inheritable) -> tuple[ConfigEntry, ...]:
    overrides, layers = dict(overrides_given), _layers(inheritable)
    out = []
    for key in TOPIC_CONFIGS.values():
        value: str | None
        if key.name in overrides:
            value, source = overrides[key.name], ConfigSource.DYNAMIC_TOPIC_CONFIG
        else:
            value, source = inherited(key, layers) or (key.default_string, ConfigSource.DEFAULT_CONFIG)
        out.append(ConfigEntry(key.name, value, source, is_sensitive=key.is_sensitive, config_type=key.type,
                               documentation=key.doc))
    return tuple(out)


def describe(overrides: Mapping[str, str], layers: ConfigLayers, include_synonyms: bool = False,
             include_documentation: bool = False) -> list[ConfigEntry]:
    """Every topic config, sorted by name, as DescribeConfigs reports them (Kafka's
    ConfigHelper.createTopicConfigEntry): the parsed value printed back, the source of the first synonym,
    and the synonyms — the topic's override, then the broker synonym's layers."""
    config = LogConfig.from_props(overrides, base=log_defaults(layers))
    out = []
    for key in TOPIC_CONFIGS.values():
        sensitive = key.is_sensitive
        value = None if sensitive else format_value(key.type, config.value_of(key.name))
        synonyms = layers.synonyms(key.synonyms[0].name, sensitive) if key.synonyms else []
        if key.name in overrides:
            synonyms.insert(0, SynonymEntry(key.name, value, ConfigSource.DYNAMIC_TOPIC_CONFIG))
        out.append(ConfigEntry(
            name=key.name,
            value=value,
            source=synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG,
            is_sensitive=sensitive,
            synonyms=tuple(synonyms) if include_synonyms else (),
            config_type=key.type,
            documentation=(kafka_doc("topic", key.name) or key.doc) if include_documentation else None,
        ))
    return out
