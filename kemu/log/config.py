"""Topic-level log configuration with Kafka's names, types, defaults, validators and broker synonyms.

`TOPIC_CONFIGS` describes every topic config a Kafka 4 broker knows (DescribeConfigs lists them all, and
CreateTopics/AlterConfigs validate against them). `LogConfig` is the typed view the log reads; it can be
built directly (tests may use tiny segments) or from Kafka-style string properties with Kafka's
validation (`LogConfig.from_props`), which raises `InvalidConfigError` with Kafka's message.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from kemu.wire.compression import DEFAULT_LZ4_LEVEL, DEFAULT_ZSTD_LEVEL
from kemu.wire.records import TimestampType

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
INT_MIN = -(2**31)
LONG_MIN = -(2**63)

CLEANUP_POLICY_DELETE = "delete"
CLEANUP_POLICY_COMPACT = "compact"
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
INTERNAL_SEGMENT_BYTES = "internal.segment.bytes"
"""Kafka's test-only override that lets a segment be smaller than segment.bytes' 1 MiB minimum."""


class InvalidConfigError(ValueError):
    """Kafka's ConfigException / InvalidConfigurationException: INVALID_CONFIG in admin responses."""


Validator = Callable[[Any], str | None]


def _at_least(minimum: int | float) -> Validator:
    return lambda value: None if value >= minimum else f"Value must be at least {minimum}"


def _between(low: int | float, high: int | float) -> Validator:
    return lambda value: None if low <= value <= high else f"Value must be no less than {low} and no greater than {high}"


def _one_of(*allowed: str) -> Validator:
    return lambda value: None if value in allowed else f"String must be one of: {', '.join(allowed)}"


def _list_of(*allowed: str) -> Validator:
    def check(value: tuple[str, ...]) -> str | None:
        bad = [item for item in value if item not in allowed]
        return f"String must be one of: {', '.join(allowed)}" if bad else None

    return check


def _gzip_level(value: int) -> str | None:
    # java.util.zip.Deflater: DEFAULT_COMPRESSION (-1) or 1..9.
    return None if value == -1 or 1 <= value <= 9 else "Value must be -1 or in the range [1, 9]"


@dataclass(frozen=True, slots=True)
class ConfigKey:
    name: str
    type: str
    """Kafka's ConfigDef type: BOOLEAN STRING INT SHORT LONG DOUBLE LIST CLASS PASSWORD."""
    default: Any
    validator: Validator | None = None
    server_default_property: str | None = None
    """The broker-level synonym a topic inherits its default from (DescribeConfigs synonyms)."""

    @property
    def default_string(self) -> str | None:
        return format_config_value(self.type, self.default)


def format_config_value(config_type: str, value: Any) -> str | None:
    """A typed value as Kafka prints it in DescribeConfigs."""
    if value is None:
        return None
    if config_type == "BOOLEAN":
        return "true" if value else "false"
    if config_type == "LIST":
        return ",".join(value)
    if config_type == "DOUBLE":
        return repr(float(value))
    return str(value)


_KEYS = [
    ConfigKey("cleanup.policy", "LIST", (CLEANUP_POLICY_DELETE,), _list_of(CLEANUP_POLICY_COMPACT, CLEANUP_POLICY_DELETE), "log.cleanup.policy"),
    ConfigKey("compression.gzip.level", "INT", -1, _gzip_level, "compression.gzip.level"),
    ConfigKey("compression.lz4.level", "INT", DEFAULT_LZ4_LEVEL, _between(1, 17), "compression.lz4.level"),
    ConfigKey("compression.type", "STRING", "producer", _one_of(*COMPRESSION_TYPES), "compression.type"),
    ConfigKey("compression.zstd.level", "INT", DEFAULT_ZSTD_LEVEL, _between(-131072, 22), "compression.zstd.level"),
    ConfigKey("delete.retention.ms", "LONG", 86_400_000, _at_least(0), "log.cleaner.delete.retention.ms"),
    ConfigKey("file.delete.delay.ms", "LONG", 60_000, _at_least(0), "log.segment.delete.delay.ms"),
    ConfigKey("flush.messages", "LONG", LONG_MAX, _at_least(1), "log.flush.interval.messages"),
    ConfigKey("flush.ms", "LONG", LONG_MAX, _at_least(0), "log.flush.interval.ms"),
    ConfigKey("follower.replication.throttled.replicas", "LIST", (), None, "follower.replication.throttled.replicas"),
    ConfigKey("index.interval.bytes", "INT", 4096, _at_least(0), "log.index.interval.bytes"),
    ConfigKey("leader.replication.throttled.replicas", "LIST", (), None, "leader.replication.throttled.replicas"),
    ConfigKey("local.retention.bytes", "LONG", -2, _at_least(-2), "log.local.retention.bytes"),
    ConfigKey("local.retention.ms", "LONG", -2, _at_least(-2), "log.local.retention.ms"),
    ConfigKey("max.compaction.lag.ms", "LONG", LONG_MAX, _at_least(1), "log.cleaner.max.compaction.lag.ms"),
    ConfigKey("max.message.bytes", "INT", 1024 * 1024 + 12, _at_least(0), "message.max.bytes"),
    ConfigKey("message.downconversion.enable", "BOOLEAN", True, None, "log.message.downconversion.enable"),
    ConfigKey("message.timestamp.after.max.ms", "LONG", 3_600_000, _at_least(0), "log.message.timestamp.after.max.ms"),
    ConfigKey("message.timestamp.before.max.ms", "LONG", LONG_MAX, _at_least(0), "log.message.timestamp.before.max.ms"),
    ConfigKey("message.timestamp.type", "STRING", "CreateTime", _one_of("CreateTime", "LogAppendTime"), "log.message.timestamp.type"),
    ConfigKey("min.cleanable.dirty.ratio", "DOUBLE", 0.5, _between(0, 1), "log.cleaner.min.cleanable.ratio"),
    ConfigKey("min.compaction.lag.ms", "LONG", 0, _at_least(0), "log.cleaner.min.compaction.lag.ms"),
    ConfigKey("min.insync.replicas", "INT", 1, _at_least(1), "min.insync.replicas"),
    ConfigKey("preallocate", "BOOLEAN", False, None, "log.preallocate"),
    ConfigKey("remote.log.copy.disable", "BOOLEAN", False, None, None),
    ConfigKey("remote.log.delete.on.disable", "BOOLEAN", False, None, None),
    ConfigKey("remote.storage.enable", "BOOLEAN", False, None, None),
    ConfigKey("retention.bytes", "LONG", -1, None, "log.retention.bytes"),
    ConfigKey("retention.ms", "LONG", 604_800_000, _at_least(-1), "log.retention.ms"),
    ConfigKey("segment.bytes", "INT", 1024 * 1024 * 1024, _at_least(1024 * 1024), "log.segment.bytes"),
    ConfigKey("segment.index.bytes", "INT", 10 * 1024 * 1024, _at_least(4), "log.index.size.max.bytes"),
    ConfigKey("segment.jitter.ms", "LONG", 0, _at_least(0), "log.roll.jitter.ms"),
    ConfigKey("segment.ms", "LONG", 604_800_000, _at_least(1), "log.roll.ms"),
    ConfigKey("unclean.leader.election.enable", "BOOLEAN", False, None, "unclean.leader.election.enable"),
]

TOPIC_CONFIGS: dict[str, ConfigKey] = {key.name: key for key in _KEYS}
"""Every topic config a Kafka 4 broker accepts, by name (sorted like Kafka's DescribeConfigs output)."""

TOPIC_CONFIG_DEFAULTS: dict[str, str | None] = {key.name: key.default_string for key in _KEYS}


def parse_config_value(name: str, raw: Any) -> Any:
    """A property value (string, or already typed) converted and validated the way Kafka's ConfigDef does."""
    key = TOPIC_CONFIGS.get(name)
    if key is None:
        if name == INTERNAL_SEGMENT_BYTES:
            return _parse_number(name, raw, "INT")
        raise InvalidConfigError(f"Unknown topic config name: {name}")
    if raw is None:
        raise InvalidConfigError(f"Invalid value null for configuration {name}: entry must be non null")
    value = _parse_typed(key, raw)
    if key.validator is not None:
        problem = key.validator(value)
        if problem is not None:
            raise InvalidConfigError(f"Invalid value {_shown(raw)} for configuration {name}: {problem}")
    return value


def _shown(raw: Any) -> str:
    if isinstance(raw, (tuple, list)):
        return ",".join(map(str, raw))
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return str(raw)


def _parse_typed(key: ConfigKey, raw: Any) -> Any:
    if key.type in ("INT", "LONG", "SHORT"):
        return _parse_number(key.name, raw, key.type)
    if key.type == "DOUBLE":
        try:
            value = float(raw.strip() if isinstance(raw, str) else raw)
        except (TypeError, ValueError):
            raise InvalidConfigError(f"Invalid value {_shown(raw)} for configuration {key.name}: Not a number of type DOUBLE") from None
        if math.isnan(value):
            raise InvalidConfigError(f"Invalid value {_shown(raw)} for configuration {key.name}: Not a number of type DOUBLE")
        return value
    if key.type == "BOOLEAN":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise InvalidConfigError(f"Invalid value {_shown(raw)} for configuration {key.name}: Expected value to be either true or false")
    if key.type == "LIST":
        if isinstance(raw, (tuple, list)):
            return tuple(str(item).strip() for item in raw)
        text = str(raw).strip()
        return tuple(item.strip() for item in text.split(",")) if text else ()
    return str(raw).strip()


def _parse_number(name: str, raw: Any, config_type: str) -> int:
    low, high = (LONG_MIN, LONG_MAX) if config_type == "LONG" else (INT_MIN, INT_MAX)
    try:
        value = int(raw.strip()) if isinstance(raw, str) else int(raw)
        if isinstance(raw, float) and raw != value:
            raise ValueError
    except (TypeError, ValueError):
        raise InvalidConfigError(f"Invalid value {_shown(raw)} for configuration {name}: Not a number of type {config_type}") from None
    if not low <= value <= high:
        raise InvalidConfigError(f"Invalid value {_shown(raw)} for configuration {name}: Not a number of type {config_type}")
    return value


_FIELD_OF = {key.name: key.name.replace(".", "_") for key in _KEYS}


@dataclass(frozen=True, slots=True)
class LogConfig:
    """The typed topic config. Field names are Kafka's config names in snake_case."""

    cleanup_policy: tuple[str, ...] = (CLEANUP_POLICY_DELETE,)
    compression_gzip_level: int = -1
    compression_lz4_level: int = DEFAULT_LZ4_LEVEL
    compression_type: str = "producer"
    compression_zstd_level: int = DEFAULT_ZSTD_LEVEL
    delete_retention_ms: int = 86_400_000
    file_delete_delay_ms: int = 60_000
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    follower_replication_throttled_replicas: tuple[str, ...] = ()
    index_interval_bytes: int = 4096
    leader_replication_throttled_replicas: tuple[str, ...] = ()
    local_retention_bytes: int = -2
    local_retention_ms: int = -2
    max_compaction_lag_ms: int = LONG_MAX
    max_message_bytes: int = 1024 * 1024 + 12
    message_downconversion_enable: bool = True
    message_timestamp_after_max_ms: int = 3_600_000
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_type: str = "CreateTime"
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    min_insync_replicas: int = 1
    preallocate: bool = False
    remote_log_copy_disable: bool = False
    remote_log_delete_on_disable: bool = False
    remote_storage_enable: bool = False
    retention_bytes: int = -1
    retention_ms: int = 604_800_000
    segment_bytes: int = 1024 * 1024 * 1024
    segment_index_bytes: int = 10 * 1024 * 1024
    segment_jitter_ms: int = 0
    segment_ms: int = 604_800_000
    unclean_leader_election_enable: bool = False
    overridden: frozenset[str] = field(default=frozenset(), compare=False)
    """Names set explicitly for this topic (DescribeConfigs reports them as TOPIC_CONFIG, the rest as default)."""

    @classmethod
    def from_props(cls, props: Mapping[str, Any], base: LogConfig | None = None) -> LogConfig:
        """Overrides (Kafka property names, string or typed values) on top of `base` (Kafka defaults)."""
        changes: dict[str, Any] = {}
        for name, raw in props.items():
            value = parse_config_value(name, raw)
            if name == INTERNAL_SEGMENT_BYTES:
                changes["segment_bytes"] = value
            else:
                changes[_FIELD_OF[name]] = value
        start = base if base is not None else cls()
        lag_min = changes.get("min_compaction_lag_ms", start.min_compaction_lag_ms)
        lag_max = changes.get("max_compaction_lag_ms", start.max_compaction_lag_ms)
        if lag_min > lag_max:
            raise InvalidConfigError(
                f"conflict topic config setting min.compaction.lag.ms ({lag_min}) > max.compaction.lag.ms ({lag_max})"
            )
        overridden = start.overridden | {name for name in props if name != INTERNAL_SEGMENT_BYTES}
        return replace(start, **changes, overridden=frozenset(overridden))

    def value_of(self, name: str) -> Any:
        return getattr(self, _FIELD_OF[name])

    def to_props(self) -> dict[str, str | None]:
        """Every topic config as Kafka prints it."""
        return {key.name: format_config_value(key.type, getattr(self, _FIELD_OF[key.name])) for key in _KEYS}

    @property
    def compact(self) -> bool:
        return CLEANUP_POLICY_COMPACT in (policy.lower() for policy in self.cleanup_policy)

    @property
    def delete(self) -> bool:
        return CLEANUP_POLICY_DELETE in (policy.lower() for policy in self.cleanup_policy)

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType.LOG_APPEND_TIME if self.message_timestamp_type == "LogAppendTime" else TimestampType.CREATE_TIME

    @property
    def max_segment_ms(self) -> int:
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms


def _check_field_names() -> None:
    # The dataclass and the key table must describe the same configs.
    declared = {f.name for f in fields(LogConfig)} - {"overridden"}
    if declared != set(_FIELD_OF.values()):
        raise RuntimeError(f"LogConfig fields and TOPIC_CONFIGS disagree: {declared ^ set(_FIELD_OF.values())}")


_check_field_names()
