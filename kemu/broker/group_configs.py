"""Group configs (DescribeConfigs/IncrementalAlterConfigs resource type GROUP, KIP-848/932/1071): Kafka 4.3's
GroupConfig — per-group overrides of the group coordinator's consumer, share and streams settings.

A group's overrides are kept whether or not the group exists (Kafka keeps them in its metadata log, apart from
the group), in the data directory (`kemu-group-configs.json`). Changes are validated as Kafka's
GroupConfig.validate does: the names, then every value parsed with its ConfigDef type and validator (the broker's
defaults merged under the group's values), then each against the broker's min/max bounds, then session timeouts
above heartbeat intervals — with Kafka's messages. What a group runs with is its override clamped to the
broker's bounds, else the broker's own setting (GroupConfig.evaluate).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from kemu.broker.broker_configs import BROKER_CONFIGS, ConfigEntry, ConfigLayers, ConfigSource, SynonymEntry, kafka_doc
from kemu.log.config import InvalidConfigError, at_least, format_value, invalid, parse_value

GROUP_CONFIGS_FILE = "kemu-group-configs.json"

Validator = Callable[[str, Any], None]

# ISO-8601 as Java's Duration.parse reads it: PnDTnHnMn.nS, with an optional sign on the whole and on each part.
_DURATION = re.compile(r"([-+]?)P(?:([-+]?\d+)D)?"
                       r"(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,]\d{0,9})?S)?)?", re.IGNORECASE)


def _offset_reset(name: str, value: Any) -> None:
    """ShareGroupAutoOffsetResetStrategy.Validator over the clients' AutoOffsetResetStrategy.fromString (case
    sensitive)."""
    text = str(value)
    if text in ("earliest", "latest") or _is_duration(text):
        return
    raise invalid(name, value, f"Invalid value `{value}` for configuration {name}. The value must be either "
                               "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.")


def _is_duration(text: str) -> bool:
    prefix = "by_duration:"
    if not text.startswith(prefix):
        return False
    spec = text[len(prefix):].strip()
    found = _DURATION.fullmatch(spec)
    if found is None or not any(found.groups()[1:]) or spec.upper().endswith("T"):
        return False
    # A negative duration is refused (Duration.isNegative); a sign on a part counts as its own.
    sign = -1 if found.group(1) == "-" else 1
    days, hours, minutes, seconds = (int(part or 0) for part in found.groups()[1:])
    return sign * (((days * 24 + hours) * 60 + minutes) * 60 + seconds) >= 0


def _one_of(*choices: str) -> Validator:
    def check(name: str, value: Any) -> None:
        if value not in choices:
            raise invalid(name, value, "String must be one of: " + ", ".join(choices))
    return check


class GroupConfigKey(NamedTuple):
    name: str
    type: str
    synonym: str | None
    """The broker config whose value is the default (None: the key's own default)."""
    default: str | None
    validator: Validator | None
    bounds: tuple[str, str] | None = None
    """The broker configs holding the lowest and highest value a group may set ("" for none)."""
    bounded_when_set: bool = False
    """Checked against its bounds only when the group sets it (the assignment intervals, KAFKA-20337)."""


# In the order Kafka's DescribeConfigs lists them (its HashMap's), which GroupConfig's validation does not follow.
_KEYS = (
    GroupConfigKey("consumer.session.timeout.ms", "INT", "group.consumer.session.timeout.ms", None, at_least(1),
                   ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms")),
    GroupConfigKey("consumer.assignment.interval.ms", "INT", "group.consumer.assignment.interval.ms", None,
                   at_least(0), ("group.consumer.min.assignment.interval.ms",
                                 "group.consumer.max.assignment.interval.ms"), bounded_when_set=True),
    GroupConfigKey("share.auto.offset.reset", "STRING", None, "latest", _offset_reset),
    GroupConfigKey("share.renew.acknowledge.enable", "BOOLEAN", None, "true", None),
    GroupConfigKey("streams.initial.rebalance.delay.ms", "INT", "group.streams.initial.rebalance.delay.ms", None,
                   at_least(0)),
    GroupConfigKey("share.session.timeout.ms", "INT", "group.share.session.timeout.ms", None, at_least(1),
                   ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms")),
    GroupConfigKey("streams.assignment.interval.ms", "INT", "group.streams.assignment.interval.ms", None,
                   at_least(0), ("group.streams.min.assignment.interval.ms",
                                 "group.streams.max.assignment.interval.ms"), bounded_when_set=True),
    GroupConfigKey("share.heartbeat.interval.ms", "INT", "group.share.heartbeat.interval.ms", None, at_least(1),
                   ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms")),
    GroupConfigKey("streams.heartbeat.interval.ms", "INT", "group.streams.heartbeat.interval.ms", None,
                   at_least(1), ("group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms")),
    GroupConfigKey("share.delivery.count.limit", "INT", "group.share.delivery.count.limit", None, at_least(2),
                   ("group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit")),
    GroupConfigKey("consumer.heartbeat.interval.ms", "INT", "group.consumer.heartbeat.interval.ms", None,
                   at_least(1), ("group.consumer.min.heartbeat.interval.ms",
                                 "group.consumer.max.heartbeat.interval.ms")),
    GroupConfigKey("share.record.lock.duration.ms", "INT", "group.share.record.lock.duration.ms", None,
                   at_least(1000), ("group.share.min.record.lock.duration.ms",
                                    "group.share.max.record.lock.duration.ms")),
    GroupConfigKey("share.assignment.interval.ms", "INT", "group.share.assignment.interval.ms", None, at_least(0),
                   ("group.share.min.assignment.interval.ms", "group.share.max.assignment.interval.ms"),
                   bounded_when_set=True),
    GroupConfigKey("share.isolation.level", "STRING", None, "read_uncommitted",
                   _one_of("read_committed", "read_uncommitted")),
    GroupConfigKey("streams.session.timeout.ms", "INT", "group.streams.session.timeout.ms", None, at_least(1),
                   ("group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms")),
    GroupConfigKey("share.partition.max.record.locks", "INT", "group.share.partition.max.record.locks", None,
                   at_least(100), ("group.share.min.partition.max.record.locks",
                                   "group.share.max.partition.max.record.locks")),
    GroupConfigKey("streams.num.standby.replicas", "INT", "group.streams.num.standby.replicas", None, at_least(0),
                   ("", "group.streams.max.standby.replicas")),
)
GROUP_CONFIGS: Mapping[str, GroupConfigKey] = {key.name: key for key in _KEYS}
# GroupConfig's CONFIG_DEF order, which ConfigDef.parse and the bound checks follow (first failure wins).
_VALIDATION_ORDER = (
    "consumer.heartbeat.interval.ms", "consumer.session.timeout.ms", "consumer.assignment.interval.ms",
    "share.heartbeat.interval.ms", "share.session.timeout.ms", "share.record.lock.duration.ms",
    "share.delivery.count.limit", "share.partition.max.record.locks", "share.assignment.interval.ms",
    "streams.heartbeat.interval.ms", "streams.session.timeout.ms", "streams.num.standby.replicas",
    "streams.assignment.interval.ms",
)
_DEFINITION_ORDER = (
    "consumer.session.timeout.ms", "consumer.heartbeat.interval.ms", "consumer.assignment.interval.ms",
    "share.session.timeout.ms", "share.heartbeat.interval.ms", "share.record.lock.duration.ms",
    "share.delivery.count.limit", "share.partition.max.record.locks", "share.auto.offset.reset",
    "share.isolation.level", "share.renew.acknowledge.enable", "share.assignment.interval.ms",
    "streams.session.timeout.ms", "streams.heartbeat.interval.ms", "streams.num.standby.replicas",
    "streams.initial.rebalance.delay.ms", "streams.assignment.interval.ms",
)
_SESSION_ABOVE_HEARTBEAT = (("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
                            ("share.session.timeout.ms", "share.heartbeat.interval.ms"),
                            ("streams.session.timeout.ms", "streams.heartbeat.interval.ms"))


def _broker_int(layers: ConfigLayers, name: str) -> int:
    key = BROKER_CONFIGS[name]
    raw = layers.value(name)
    return int(key.parse(raw if raw is not None else key.default or "0"))


def default_value(key: GroupConfigKey, layers: ConfigLayers) -> str | None:
    """The broker's value for a group that sets none: its synonym's, or the key's own default."""
    if key.synonym is None:
        return key.default
    broker_key = BROKER_CONFIGS[key.synonym]
    raw = layers.value(key.synonym)
    return format_value(broker_key.type, broker_key.parse(raw)) if raw is not None else broker_key.default


def validate(overrides: Mapping[str, str], layers: ConfigLayers) -> None:
    """GroupConfig.validate over the broker's defaults and a group's full set of overrides; raises
    InvalidConfigError with Kafka's message."""
    for name in overrides:
        if name not in GROUP_CONFIGS:
            raise InvalidConfigError(f"Unknown group config name: {name}")
    parsed: dict[str, Any] = {}
    for name in _DEFINITION_ORDER:
        key = GROUP_CONFIGS[name]
        raw = overrides.get(name)
        if raw is None:
            raw = default_value(key, layers)
        value = parse_value(name, key.type, raw)
        if key.validator is not None:
            key.validator(name, value)
        parsed[name] = value
    for name in _VALIDATION_ORDER:
        key = GROUP_CONFIGS[name]
        if key.bounds is None or (key.bounded_when_set and name not in overrides):
            continue
        low, high = key.bounds
        if low and parsed[name] < _broker_int(layers, low):
            raise InvalidConfigError(f"{name} must be greater than or equal to {low}")
        if high and parsed[name] > _broker_int(layers, high):
            raise InvalidConfigError(f"{name} must be less than or equal to {high}")
    for session, heartbeat in _SESSION_ABOVE_HEARTBEAT:
        if parsed[session] <= parsed[heartbeat]:
            raise InvalidConfigError(f"{session} must be greater than {heartbeat}")


def effective_int(name: str, overrides: Mapping[str, str], layers: ConfigLayers) -> int:
    """What the group runs with: its override clamped to the broker's bounds (GroupConfig.evaluate), else the
    broker's setting."""
    key = GROUP_CONFIGS[name]
    raw = overrides.get(name)
    if raw is None:
        return int(parse_value(name, key.type, default_value(key, layers)))
    value = int(parse_value(name, key.type, raw))
    if key.bounds is not None:
        low, high = key.bounds
        if low:
            value = max(value, _broker_int(layers, low))
        if high:
            value = min(value, _broker_int(layers, high))
    return value


def describe(overrides: Mapping[str, str], layers: ConfigLayers, include_synonyms: bool,
             include_documentation: bool) -> list[ConfigEntry]:
    """A GROUP resource as Kafka's ConfigHelper answers it: every group config, an override's source
    GROUP_CONFIG, the broker's default (under its broker synonym's name) DEFAULT_CONFIG."""
    entries = []
    for key in _KEYS:
        default = default_value(key, layers)
        fallback = SynonymEntry(key.synonym or key.name, default, ConfigSource.DEFAULT_CONFIG)
        override = overrides.get(key.name)
        if override is not None:
            value = format_value(key.type, parse_value(key.name, key.type, override))
            synonyms: tuple[SynonymEntry, ...] = (SynonymEntry(key.name, value, ConfigSource.GROUP_CONFIG), fallback)
            source = ConfigSource.GROUP_CONFIG
        else:
            value, synonyms, source = default, (fallback,), ConfigSource.DEFAULT_CONFIG
        entries.append(ConfigEntry(
            name=key.name, value=value, source=source, read_only=False, is_sensitive=False,
            synonyms=synonyms if include_synonyms else (), config_type=key.type,
            documentation=kafka_doc("group", key.name) if include_documentation else None))
    return entries


class GroupConfigStore:
    """Every group's overrides, kept in the data directory; a group with none is not listed."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / GROUP_CONFIGS_FILE
        self._groups: dict[str, dict[str, str]] = {}
        if self._path.exists():
            stored = json.loads(self._path.read_text(encoding="utf-8"))
            self._groups = {str(group): {str(k): str(v) for k, v in values.items()}
                            for group, values in stored.items() if values}

    def get(self, group_id: str) -> dict[str, str]:
        return dict(self._groups.get(group_id, {}))

    def groups(self) -> list[str]:
        return sorted(self._groups)

    def replace(self, group_id: str, values: Mapping[str, str]) -> None:
        if values:
            self._groups[group_id] = dict(values)
        else:
            self._groups.pop(group_id, None)
        temporary = self._path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self._groups, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(temporary, self._path)
