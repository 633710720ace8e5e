"""Kafka's topic-level configs (Kafka 4.0's `LogConfig`): names, types, defaults and validation.

Definitions are in Kafka's definition order, which is also the order Kafka validates values in, so the
first bad value reported is the one Kafka would report. Values are kept as the strings the client sent
(Kafka stores and echoes them that way); `validate` only checks that they parse and are in range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
LONG_MAX = str(INT64_MAX)

# ConfigEntry.ConfigSource ids as DescribeConfigs / CreateTopics v5+ report them.
SOURCE_DYNAMIC_TOPIC = 1
SOURCE_DEFAULT = 5


class ConfigError(Exception):
    """An invalid topic config; the message is Kafka's (INVALID_CONFIG)."""


Parsed = int | float | bool | str | list[str]
Validator = Callable[[str, Parsed], None]


@dataclass(frozen=True, slots=True)
class TopicConfigDef:
    name: str
    type: str  # Kafka's ConfigDef type: int, long, double, boolean, string, list
    default: str  # the default as Kafka renders it
    validator: Validator | None = None
    broker_synonym: str | None = None


def _invalid(name: str, value: object, why: str) -> ConfigError:
    return ConfigError(f"Invalid value {_java_text(value)} for configuration {name}: {why}")


def _java_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


def at_least(low: int) -> Validator:
    def check(name: str, value: Parsed) -> None:
        if value < low:  # type: ignore[operator]
            raise _invalid(name, value, f"Value must be at least {low}")
    return check


def between(low: int, high: int) -> Validator:
    def check(name: str, value: Parsed) -> None:
        if value < low:  # type: ignore[operator]
            raise _invalid(name, value, f"Value must be at least {low}")
        if value > high:  # type: ignore[operator]
            raise _invalid(name, value, f"Value must be no more than {high}")
    return check


def one_of(*choices: str) -> Validator:
    def check(name: str, value: Parsed) -> None:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if item not in choices:
                raise _invalid(name, item, "String must be one of: " + ", ".join(choices))
    return check


def _gzip_level(name: str, value: Parsed) -> None:
    if value != -1 and not 1 <= value <= 9:  # type: ignore[operator]
        raise _invalid(name, value, "Value must be between 1 and 9, or -1")


def _throttled_replicas(name: str, value: Parsed) -> None:
    items = [item.strip() for item in value] if isinstance(value, list) else []
    if items == ["*"]:
        return
    for item in items:
        parts = item.split(":")
        if len(parts) != 2 or not all(p.strip().lstrip("-").isdigit() for p in parts):
            raise _invalid(name, value, f"{name} must be the literal '*' or a list of replicas in the following "
                                        "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


TOPIC_CONFIGS: tuple[TopicConfigDef, ...] = (
    TopicConfigDef("segment.bytes", "int", "1073741824", at_least(1024 * 1024), "log.segment.bytes"),
    TopicConfigDef("segment.ms", "long", "604800000", at_least(1), "log.roll.ms"),
    TopicConfigDef("segment.jitter.ms", "long", "0", at_least(0), "log.roll.jitter.ms"),
    TopicConfigDef("segment.index.bytes", "int", "10485760", at_least(4), "log.index.size.max.bytes"),
    TopicConfigDef("flush.messages", "long", LONG_MAX, at_least(1), "log.flush.interval.messages"),
    TopicConfigDef("flush.ms", "long", LONG_MAX, at_least(0), "log.flush.interval.ms"),
    TopicConfigDef("retention.bytes", "long", "-1", None, "log.retention.bytes"),
    TopicConfigDef("retention.ms", "long", "604800000", at_least(-1), "log.retention.ms"),
    TopicConfigDef("max.message.bytes", "int", "1048588", at_least(0), "message.max.bytes"),
    TopicConfigDef("index.interval.bytes", "int", "4096", at_least(0), "log.index.interval.bytes"),
    TopicConfigDef("delete.retention.ms", "long", "86400000", at_least(0), "log.cleaner.delete.retention.ms"),
    TopicConfigDef("min.compaction.lag.ms", "long", "0", at_least(0), "log.cleaner.min.compaction.lag.ms"),
    TopicConfigDef("max.compaction.lag.ms", "long", LONG_MAX, at_least(1), "log.cleaner.max.compaction.lag.ms"),
    TopicConfigDef("file.delete.delay.ms", "long", "60000", at_least(0), "log.segment.delete.delay.ms"),
    TopicConfigDef("min.cleanable.dirty.ratio", "double", "0.5", between(0, 1), "log.cleaner.min.cleanable.ratio"),
    TopicConfigDef("cleanup.policy", "list", "delete", one_of("compact", "delete"), "log.cleanup.policy"),
    TopicConfigDef("unclean.leader.election.enable", "boolean", "false", None, "unclean.leader.election.enable"),
    TopicConfigDef("min.insync.replicas", "int", "1", at_least(1), "min.insync.replicas"),
    TopicConfigDef("compression.type", "string", "producer",
                   one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"), "compression.type"),
    TopicConfigDef("compression.gzip.level", "int", "-1", _gzip_level, "compression.gzip.level"),
    TopicConfigDef("compression.lz4.level", "int", "9", between(1, 17), "compression.lz4.level"),
    TopicConfigDef("compression.zstd.level", "int", "3", between(-131072, 22), "compression.zstd.level"),
    TopicConfigDef("preallocate", "boolean", "false", None, "log.preallocate"),
    # A no-op since Kafka 4.0 (down-conversion is gone), still accepted until 5.0.
    TopicConfigDef("message.downconversion.enable", "boolean", "true", None, "log.message.downconversion.enable"),
    TopicConfigDef("message.timestamp.type", "string", "CreateTime", one_of("CreateTime", "LogAppendTime"),
                   "log.message.timestamp.type"),
    TopicConfigDef("message.timestamp.before.max.ms", "long", LONG_MAX, at_least(0),
                   "log.message.timestamp.before.max.ms"),
    # Kafka 4.0 (KIP-1030) lowered this default from Long.MAX_VALUE to one hour.
    TopicConfigDef("message.timestamp.after.max.ms", "long", "3600000", at_least(0),
                   "log.message.timestamp.after.max.ms"),
    TopicConfigDef("leader.replication.throttled.replicas", "list", "", _throttled_replicas, None),
    TopicConfigDef("follower.replication.throttled.replicas", "list", "", _throttled_replicas, None),
    TopicConfigDef("remote.storage.enable", "boolean", "false", None, None),
    TopicConfigDef("local.retention.ms", "long", "-2", at_least(-2), "log.local.retention.ms"),
    TopicConfigDef("local.retention.bytes", "long", "-2", at_least(-2), "log.local.retention.bytes"),
    TopicConfigDef("remote.log.copy.disable", "boolean", "false", None, None),
    TopicConfigDef("remote.log.delete.on.disable", "boolean", "false", None, None),
)

BY_NAME: dict[str, TopicConfigDef] = {d.name: d for d in TOPIC_CONFIGS}


def parse(definition: TopicConfigDef, text: str) -> Parsed:
    """Parse one value as Kafka's ConfigDef.parseType does (trimmed, Java number ranges)."""
    name, kind, trimmed = definition.name, definition.type, text.strip()
    if kind in ("int", "long"):
        low, high = (INT32_MIN, INT32_MAX) if kind == "int" else (INT64_MIN, INT64_MAX)
        try:
            number = int(trimmed, 10)
        except ValueError:
            number = None
        if number is None or not low <= number <= high or not trimmed.lstrip("+-").isdigit():
            raise _invalid(name, text, f"Not a number of type {kind.upper()}")
        return number
    if kind == "double":
        try:
            if "_" in trimmed:  # Python reads "1_0" as a number; Java does not
                raise ValueError(trimmed)
            return float(trimmed)
        except ValueError:
            raise _invalid(name, text, "Not a number of type DOUBLE") from None
    if kind == "boolean":
        lowered = trimmed.lower()
        if lowered not in ("true", "false"):
            raise _invalid(name, text, "Expected value to be either true or false")
        return lowered == "true"
    if kind == "list":
        return [item.strip() for item in trimmed.split(",")] if trimmed else []
    return trimmed


def validate(configs: Mapping[str, str | None]) -> None:
    """Raise ConfigError with Kafka's message for the first problem Kafka would report."""
    nulls = [name for name, value in configs.items() if value is None]
    if nulls:
        raise ConfigError("Null value not supported for topic configs: " + ",".join(nulls))
    for name in configs:
        if name not in BY_NAME:
            raise ConfigError(f"Unknown topic config name: {name}")
    parsed: dict[str, Parsed] = {}
    for definition in TOPIC_CONFIGS:
        text = configs.get(definition.name)
        value = parse(definition, text if text is not None else definition.default)
        if definition.validator is not None:
            definition.validator(definition.name, value)
        parsed[definition.name] = value
    low, high = parsed["min.compaction.lag.ms"], parsed["max.compaction.lag.ms"]
    if low > high:  # type: ignore[operator]
        raise ConfigError(f"conflict topic config setting min.compaction.lag.ms ({low}) > "
                          f"max.compaction.lag.ms ({high})")
    if parsed["remote.storage.enable"]:
        raise ConfigError("Tiered Storage functionality is disabled in the broker. "
                          "Topic cannot be configured with remote log storage.")


@dataclass(frozen=True, slots=True)
class EffectiveConfig:
    name: str
    value: str
    source: int  # SOURCE_DYNAMIC_TOPIC when set on the topic, else SOURCE_DEFAULT
    read_only: bool = False
    is_sensitive: bool = False


def effective(overrides: Mapping[str, str]) -> Sequence[EffectiveConfig]:
    """Every topic config with the value in force, sorted by name, as Kafka lists them."""
    out = []
    for definition in sorted(TOPIC_CONFIGS, key=lambda d: d.name):
        if definition.name in overrides:
            out.append(EffectiveConfig(definition.name, overrides[definition.name], SOURCE_DYNAMIC_TOPIC))
        else:
            out.append(EffectiveConfig(definition.name, definition.default, SOURCE_DEFAULT))
    return out
