"""Kafka's topic-level configs — the one table of them in kemu — and the typed `LogConfig` the log reads.

`TOPIC_CONFIGS` holds every topic config a Kafka 4.0 broker knows: its ConfigDef type, default, validator,
the broker-level configs a topic inherits its default from (`synonyms`, in Kafka's order of preference and
with the unit conversion Kafka applies: `log.retention.hours` is multiplied into milliseconds), and a line
of documentation. CreateTopics and AlterConfigs validation, DescribeConfigs entries and the broker-level
defaults all read this table.

Everything follows Kafka's ConfigDef: `parse_value` reads a property as `ConfigDef.parseType` does
(trimmed, Java number ranges), validators raise `InvalidConfigError` with Kafka's ConfigException text
(`Invalid value <v> for configuration <name>: <why>`), `validate_topic_configs` checks a whole set of
overrides in Kafka's order (so the first problem reported is the one Kafka reports), and `format_value`
prints a value as `ConfigDef.convertToString` does.

`LogConfig` is the typed view; it can be built directly (tests may use tiny segments) or from Kafka-style
properties (`LogConfig.from_props`) on top of a base (Kafka's defaults, or the broker's current defaults).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, NamedTuple

from kemu.wire.compression import DEFAULT_LZ4_LEVEL, DEFAULT_ZSTD_LEVEL
from kemu.wire.records import TimestampType

LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)
INT_MAX = 2**31 - 1
INT_MIN = -(2**31)
SHORT_MAX = 2**15 - 1
SHORT_MIN = -(2**15)

CLEANUP_POLICY_DELETE = "delete"
CLEANUP_POLICY_COMPACT = "compact"
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
INTERNAL_SEGMENT_BYTES = "internal.segment.bytes"
"""Kafka's test-only override that lets a segment be smaller than segment.bytes' 1 MiB minimum. Accepted by
`LogConfig.from_props` for kemu's own tests; clients setting it get "Unknown topic config name"."""

MS_PER_MINUTE = 60_000
MS_PER_HOUR = 3_600_000


class InvalidConfigError(ValueError):
    """Kafka's ConfigException / InvalidConfigurationException: INVALID_CONFIG in admin responses."""


Validator = Callable[[str, Any], None]
"""Checks a parsed value of the named config; raises InvalidConfigError with Kafka's message."""


def java_text(value: Any) -> str:
    """A value as Java's toString prints it inside Kafka's error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_text(item) for item in value) + "]"
    if isinstance(value, float):
        return java_double(value)
    return str(value)


def java_double(value: float) -> str:
    """Java's Double.toString: plain decimals in [1e-3, 1e7), computerized scientific notation outside."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        return sign + repr(magnitude)  # Python's shortest round-trip form is plain decimal in this range
    from decimal import Decimal  # only for these rare magnitudes: its import is ~1 ms of every start-up

    exponent_digits = Decimal(repr(magnitude)).normalize().as_tuple()
    digits = "".join(map(str, exponent_digits.digits))
    exponent = int(exponent_digits.exponent) + len(digits) - 1
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def invalid(name: str, value: Any, why: str | None) -> InvalidConfigError:
    """Kafka's `new ConfigException(name, value, message)`."""
    suffix = f": {why}" if why else ""
    return InvalidConfigError(f"Invalid value {java_text(value)} for configuration {name}{suffix}")


def at_least(low: int | float) -> Validator:
    """ConfigDef.Range.atLeast."""
    def check(name: str, value: Any) -> None:
        if value < low:
            raise invalid(name, value, f"Value must be at least {low}")
    return check


def between(low: int | float, high: int | float) -> Validator:
    """ConfigDef.Range.between: each bound reported on its own."""
    def check(name: str, value: Any) -> None:
        if value < low:
            raise invalid(name, value, f"Value must be at least {low}")
        if value > high:
            raise invalid(name, value, f"Value must be no more than {high}")
    return check


def one_of(*choices: str) -> Validator:
    """ConfigDef.ValidString.in."""
    def check(name: str, value: Any) -> None:
        if value not in choices:
            raise invalid(name, value, "String must be one of: " + ", ".join(choices))
    return check


def each_one_of(*choices: str) -> Validator:
    """ConfigDef.ValidList.in: every item checked, the first bad item reported."""
    item_check = one_of(*choices)

    def check(name: str, value: Any) -> None:
        for item in value:
            item_check(name, item)
    return check


def _gzip_level(name: str, value: Any) -> None:
    # java.util.zip.Deflater: DEFAULT_COMPRESSION (-1) or BEST_SPEED (1) .. BEST_COMPRESSION (9).
    if value > 9 or (value < 1 and value != -1):
        raise invalid(name, value, "Value must be between 1 and 9 or equal to -1")


_REPLICA = re.compile(r"([0-9]+:[0-9]+)?")


def _throttled_replicas(name: str, value: Any) -> None:
    items = [item.strip() for item in value]
    if items == ["*"] or all(_REPLICA.fullmatch(item) for item in items):
        return
    raise invalid(name, value, f"{name} must be the literal '*' or a list of replicas in the following format: "
                               "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


# NamedTuples, not frozen dataclasses: every start-up defines them and builds the table below (~90 keys),
# and a dataclass definition compiles its generated methods (~0.5 ms each on a slow machine).
class Synonym(NamedTuple):
    """A broker-level config a topic config inherits its default from."""

    name: str
    unit_ms: int = 1
    """What one unit of the broker value is in the topic's unit (hours and minutes become milliseconds)."""

    def to_topic_value(self, text: str) -> str:
        if self.unit_ms == 1:
            return text
        converted = int(text.strip()) * self.unit_ms
        return str(converted if converted >= 0 else -1)  # Kafka: any negative retention means "forever"


class ConfigKey(NamedTuple):
    name: str
    type: str
    """Kafka's ConfigDef type: BOOLEAN STRING INT SHORT LONG DOUBLE LIST CLASS PASSWORD."""
    default: Any
    validator: Validator | None = None
    synonyms: tuple[Synonym, ...] = ()
    """The broker-level configs this one inherits its default from, most preferred first."""
    doc: str = ""

    @property
    def server_default_property(self) -> str | None:
        """The broker config Kafka documents as this topic config's server default."""
        return self.synonyms[0].name if self.synonyms else None

    @property
    def default_string(self) -> str | None:
        return format_value(self.type, self.default)

    @property
    def is_sensitive(self) -> bool:
        return self.type == "PASSWORD"

    def parse(self, raw: Any) -> Any:
        """The value converted and validated the way Kafka's ConfigDef does."""
        if raw is None:
            raise invalid(self.name, None, "entry must be non null")
        value = parse_value(self.name, self.type, raw)
        if self.validator is not None:
            self.validator(self.name, value)
        return value


def parse_value(name: str, config_type: str, raw: Any) -> Any:
    """ConfigDef.parseType: strings are trimmed; numbers must fit the Java type; lists split on commas."""
    if config_type in ("INT", "LONG", "SHORT"):
        return _parse_integer(name, config_type, raw)
    if config_type == "DOUBLE":
        return _parse_double(name, raw)
    if config_type == "BOOLEAN":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise invalid(name, raw, "Expected value to be either true or false")
    if config_type == "LIST":
        if isinstance(raw, (tuple, list)):
            return tuple(str(item).strip() for item in raw)
        text = str(raw).strip()
        # Java's split on "\s*,\s*" with limit -1: empty items (a trailing comma) are kept.
        return tuple(re.split(r"\s*,\s*", text)) if text else ()
    return str(raw).strip()


_RANGES = {"INT": (INT_MIN, INT_MAX), "LONG": (LONG_MIN, LONG_MAX), "SHORT": (SHORT_MIN, SHORT_MAX)}
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
_LONG_DIGITS = len(str(LONG_MAX))
# Linear-time on any input: `[0-9]+\.?[0-9]*` let a long run of digits split n ways before failing, and a
# client-chosen 20,000-digit value held the broker's thread for seconds.
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)")


def _parse_integer(name: str, config_type: str, raw: Any) -> int:
    low, high = _RANGES[config_type]
    if isinstance(raw, bool):
        raise invalid(name, raw, f"Not a number of type {config_type}")
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, float) and raw.is_integer():
        value = int(raw)
    else:
        text = str(raw).strip()
        if not _JAVA_INTEGER.fullmatch(text):
            raise invalid(name, raw, f"Not a number of type {config_type}")
        digits = text.lstrip("+-").lstrip("0") or "0"
        if len(digits) > _LONG_DIGITS:
            # Out of any Java range, and Python's int() refuses (ValueError) past 4300 digits.
            raise invalid(name, raw, f"Not a number of type {config_type}")
        value = -int(digits) if text.startswith("-") else int(digits)
    if not low <= value <= high:
        raise invalid(name, raw, f"Not a number of type {config_type}")
    return value


def _parse_double(name: str, raw: Any) -> float:
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return float(raw)
    text = str(raw).strip()
    if not _JAVA_DOUBLE.fullmatch(text):
        raise invalid(name, raw, "Not a number of type DOUBLE")
    return float(text.rstrip("fFdD").replace("Infinity", "inf"))


def format_value(config_type: str, value: Any) -> str | None:
    """ConfigDef.convertToString: how Kafka prints a typed value in DescribeConfigs."""
    if value is None:
        return None
    if config_type == "BOOLEAN":
        return "true" if value else "false"
    if config_type == "LIST":
        return ",".join(value)
    if config_type == "DOUBLE":
        return java_double(float(value))
    return str(value)


format_config_value = format_value


def _log(name: str) -> tuple[Synonym, ...]:
    return (Synonym(name),)


# Kafka's definition order (LogConfig's ConfigDef), which is also the order it checks values in.
_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("segment.bytes", "INT", 1024 * 1024 * 1024, at_least(1024 * 1024), _log("log.segment.bytes"),
              "The segment file size for the log; a new segment is rolled when it would be exceeded."),
    ConfigKey("segment.ms", "LONG", 604_800_000, at_least(1),
              (Synonym("log.roll.ms"), Synonym("log.roll.hours", MS_PER_HOUR)),
              "The time after which a segment is rolled even if it is not full."),
    ConfigKey("segment.jitter.ms", "LONG", 0, at_least(0),
              (Synonym("log.roll.jitter.ms"), Synonym("log.roll.jitter.hours", MS_PER_HOUR)),
              "The maximum random jitter subtracted from segment.ms to avoid rolling every segment at once."),
    ConfigKey("segment.index.bytes", "INT", 10 * 1024 * 1024, at_least(4), _log("log.index.size.max.bytes"),
              "The size of the index that maps offsets to file positions."),
    ConfigKey("flush.messages", "LONG", LONG_MAX, at_least(1), _log("log.flush.interval.messages"),
              "The number of messages appended before the log is forced to disk."),
    ConfigKey("flush.ms", "LONG", LONG_MAX, at_least(0),
              (Synonym("log.flush.interval.ms"), Synonym("log.flush.scheduler.interval.ms")),
              "The time after which the log is forced to disk."),
    ConfigKey("retention.bytes", "LONG", -1, None, _log("log.retention.bytes"),
              "The maximum size a partition can grow to before old segments are discarded; -1 means no limit."),
    ConfigKey("retention.ms", "LONG", 604_800_000, at_least(-1),
              (Synonym("log.retention.ms"), Synonym("log.retention.minutes", MS_PER_MINUTE),
               Synonym("log.retention.hours", MS_PER_HOUR)),
              "The time a segment is kept before it is discarded; -1 means no time limit."),
    ConfigKey("max.message.bytes", "INT", 1024 * 1024 + 12, at_least(0), _log("message.max.bytes"),
              "The largest record batch size allowed."),
    ConfigKey("index.interval.bytes", "INT", 4096, at_least(0), _log("log.index.interval.bytes"),
              "How often an entry is added to the offset index."),
    ConfigKey("delete.retention.ms", "LONG", 86_400_000, at_least(0), _log("log.cleaner.delete.retention.ms"),
              "How long delete tombstones are kept on compacted topics."),
    ConfigKey("min.compaction.lag.ms", "LONG", 0, at_least(0), _log("log.cleaner.min.compaction.lag.ms"),
              "The minimum time a message remains uncompacted."),
    ConfigKey("max.compaction.lag.ms", "LONG", LONG_MAX, at_least(1), _log("log.cleaner.max.compaction.lag.ms"),
              "The maximum time a message remains ineligible for compaction."),
    ConfigKey("file.delete.delay.ms", "LONG", 60_000, at_least(0), _log("log.segment.delete.delay.ms"),
              "The time to wait before deleting a file from the filesystem."),
    ConfigKey("min.cleanable.dirty.ratio", "DOUBLE", 0.5, between(0, 1), _log("log.cleaner.min.cleanable.ratio"),
              "How dirty the log must be before the cleaner compacts it."),
    ConfigKey("cleanup.policy", "LIST", (CLEANUP_POLICY_DELETE,),
              each_one_of(CLEANUP_POLICY_COMPACT, CLEANUP_POLICY_DELETE), _log("log.cleanup.policy"),
              "The retention policy for old segments: delete, compact, or both."),
    ConfigKey("unclean.leader.election.enable", "BOOLEAN", False, None, _log("unclean.leader.election.enable"),
              "Whether replicas outside the ISR may be elected leader."),
    ConfigKey("min.insync.replicas", "INT", 1, at_least(1), _log("min.insync.replicas"),
              "The minimum number of in-sync replicas for an acks=all write to succeed."),
    ConfigKey("compression.type", "STRING", "producer", one_of(*COMPRESSION_TYPES), _log("compression.type"),
              "The compression of the stored batches; 'producer' keeps the producer's codec."),
    ConfigKey("compression.gzip.level", "INT", -1, _gzip_level, _log("compression.gzip.level"),
              "The gzip level used when compression.type is gzip."),
    ConfigKey("compression.lz4.level", "INT", DEFAULT_LZ4_LEVEL, between(1, 17), _log("compression.lz4.level"),
              "The lz4 level used when compression.type is lz4."),
    ConfigKey("compression.zstd.level", "INT", DEFAULT_ZSTD_LEVEL, between(-131072, 22),
              _log("compression.zstd.level"), "The zstd level used when compression.type is zstd."),
    ConfigKey("preallocate", "BOOLEAN", False, None, _log("log.preallocate"),
              "Whether a new segment file is preallocated on disk."),
    ConfigKey("message.timestamp.type", "STRING", "CreateTime", one_of("CreateTime", "LogAppendTime"),
              _log("log.message.timestamp.type"),
              "Whether record timestamps are the producer's (CreateTime) or the broker's (LogAppendTime)."),
    ConfigKey("message.timestamp.before.max.ms", "LONG", LONG_MAX, at_least(0),
              _log("log.message.timestamp.before.max.ms"),
              "How far in the past a record timestamp may be from the broker's time."),
    # Kafka 4.0 (KIP-1030) lowered this default from Long.MAX_VALUE to one hour.
    ConfigKey("message.timestamp.after.max.ms", "LONG", 3_600_000, at_least(0),
              _log("log.message.timestamp.after.max.ms"),
              "How far in the future a record timestamp may be from the broker's time."),
    ConfigKey("leader.replication.throttled.replicas", "LIST", (), _throttled_replicas, (),
              "Replicas whose log replication is throttled on the leader side."),
    ConfigKey("follower.replication.throttled.replicas", "LIST", (), _throttled_replicas, (),
              "Replicas whose log replication is throttled on the follower side."),
    ConfigKey("remote.storage.enable", "BOOLEAN", False, None, (),
              "Whether tiered storage is enabled for the topic."),
    ConfigKey("local.retention.ms", "LONG", -2, at_least(-2), _log("log.local.retention.ms"),
              "The time a segment is kept locally with tiered storage; -2 means retention.ms."),
    ConfigKey("local.retention.bytes", "LONG", -2, at_least(-2), _log("log.local.retention.bytes"),
              "The local size limit with tiered storage; -2 means retention.bytes."),
    ConfigKey("remote.log.copy.disable", "BOOLEAN", False, None, (),
              "Whether copying segments to remote storage is disabled."),
    ConfigKey("remote.log.delete.on.disable", "BOOLEAN", False, None, (),
              "Whether remote data is deleted when tiered storage is disabled."),
)

TOPIC_CONFIGS: dict[str, ConfigKey] = {key.name: key for key in sorted(_KEYS, key=lambda k: k.name)}
"""Every topic config a Kafka 4 broker accepts, by name (sorted, as kemu lists them)."""

TOPIC_CONFIG_DEFAULTS: dict[str, str | None] = {key.name: key.default_string for key in TOPIC_CONFIGS.values()}

SYNONYM_OWNERS: dict[str, tuple[ConfigKey, Synonym]] = {
    synonym.name: (key, synonym) for key in _KEYS for synonym in key.synonyms
}
"""Each broker-level config that feeds a topic config, with that topic config."""


def parse_config_value(name: str, raw: Any) -> Any:
    """One property (string, or already typed) converted and validated the way Kafka's ConfigDef does."""
    key = TOPIC_CONFIGS.get(name)
    if key is None:
        if name == INTERNAL_SEGMENT_BYTES:
            return parse_value(name, "INT", raw)
        raise InvalidConfigError(f"Unknown topic config name: {name}")
    return key.parse(raw)


def validate_topic_configs(configs: Mapping[str, str | None]) -> dict[str, Any]:
    """Check a topic's complete set of overrides as Kafka's controller does; the parsed value of every config
    (defaults filled in). Raises InvalidConfigError with the message of the first problem Kafka reports."""
    nulls = [name for name, value in configs.items() if value is None]
    if nulls:
        raise InvalidConfigError("Null value not supported for topic configs: " + ",".join(nulls))
    for name in configs:
        if name not in TOPIC_CONFIGS:
            raise InvalidConfigError(f"Unknown topic config name: {name}")
    parsed: dict[str, Any] = {}
    for key in _KEYS:
        text = configs.get(key.name)
        parsed[key.name] = key.parse(text) if text is not None else key.default
    _check_compaction_lags(parsed["min.compaction.lag.ms"], parsed["max.compaction.lag.ms"])
    if parsed["remote.storage.enable"]:
        raise InvalidConfigError("Tiered Storage functionality is disabled in the broker. "
                                 "Topic cannot be configured with remote log storage.")
    return parsed


def _check_compaction_lags(low: int, high: int) -> None:
    if low > high:
        raise InvalidConfigError(f"conflict topic config setting min.compaction.lag.ms ({low}) > "
                                 f"max.compaction.lag.ms ({high})")


def list_items(text: str | None) -> list[str]:
    """The non-empty items of a comma-separated list value, as the controller splits them for APPEND."""
    return [item for item in (text or "").split(",") if item]


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
    """Names set explicitly for this topic (as Kafka's LogConfig.overriddenConfigs)."""
    # Derived once, when the config is made: every append reads them.
    compact: bool = field(init=False, repr=False, compare=False)
    delete: bool = field(init=False, repr=False, compare=False)
    timestamp_type: TimestampType = field(init=False, repr=False, compare=False)
    max_segment_ms: int = field(init=False, repr=False, compare=False)
    """segment.ms, or max.compaction.lag.ms when that is shorter on a compacted topic."""

    def __post_init__(self) -> None:
        policies = {policy.lower() for policy in self.cleanup_policy}
        compact = CLEANUP_POLICY_COMPACT in policies
        object.__setattr__(self, "compact", compact)
        object.__setattr__(self, "delete", CLEANUP_POLICY_DELETE in policies)
        object.__setattr__(self, "timestamp_type", TimestampType.LOG_APPEND_TIME
                           if self.message_timestamp_type == "LogAppendTime" else TimestampType.CREATE_TIME)
        object.__setattr__(self, "max_segment_ms", min(self.max_compaction_lag_ms, self.segment_ms)
                           if compact and self.max_compaction_lag_ms > 0 else self.segment_ms)

    @classmethod
    def from_props(cls, props: Mapping[str, Any], base: LogConfig | None = None) -> LogConfig:
        """Overrides (Kafka property names, string or typed values) on top of `base` (Kafka defaults)."""
        changes: dict[str, Any] = {}
        for name, raw in props.items():
            value = parse_config_value(name, raw)
            changes["segment_bytes" if name == INTERNAL_SEGMENT_BYTES else _FIELD_OF[name]] = value
        start = base if base is not None else cls()
        _check_compaction_lags(changes.get("min_compaction_lag_ms", start.min_compaction_lag_ms),
                               changes.get("max_compaction_lag_ms", start.max_compaction_lag_ms))
        overridden = start.overridden | {name for name in props if name != INTERNAL_SEGMENT_BYTES}
        return replace(start, **changes, overridden=frozenset(overridden))

    @classmethod
    def defaults_from(cls, values: Mapping[str, Any]) -> LogConfig:
        """Kafka's defaults with some replaced by already-parsed values (the broker's log.* configs):
        nothing counts as overridden."""
        return replace(cls(), **{_FIELD_OF[name]: value for name, value in values.items()})

    def value_of(self, name: str) -> Any:
        return getattr(self, _FIELD_OF[name])

    def to_props(self) -> dict[str, str | None]:
        """Every topic config as Kafka prints it."""
        return {key.name: format_value(key.type, getattr(self, _FIELD_OF[key.name])) for key in TOPIC_CONFIGS.values()}



def _check_table(keys: Iterable[ConfigKey]) -> None:
    # The dataclass and the key table must describe the same configs with the same defaults.
    declared = {f.name: f.default for f in fields(LogConfig) if f.init and f.name != "overridden"}
    table = {_FIELD_OF[key.name]: key.default for key in keys}
    if declared != table:
        differing = {name for name in declared.keys() | table.keys() if declared.get(name) != table.get(name)}
        raise RuntimeError(f"LogConfig fields and TOPIC_CONFIGS disagree: {sorted(differing)}")


_check_table(_KEYS)
