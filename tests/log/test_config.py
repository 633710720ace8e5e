"""Topic configs: Kafka's names, defaults, parsing and validation messages."""

from __future__ import annotations

import pytest

from kemu.log import TOPIC_CONFIG_DEFAULTS, TOPIC_CONFIGS, InvalidConfigError, LogConfig
from kemu.wire.records import TimestampType


def test_kafka_4_defaults() -> None:
    expected = {
        "segment.bytes": "1073741824",
        "segment.ms": "604800000",
        "retention.ms": "604800000",
        "retention.bytes": "-1",
        "max.message.bytes": "1048588",
        "message.timestamp.type": "CreateTime",
        "message.timestamp.before.max.ms": "9223372036854775807",
        "message.timestamp.after.max.ms": "3600000",  # KIP-1030 (Kafka 4.0)
        "cleanup.policy": "delete",
        "index.interval.bytes": "4096",
        "segment.index.bytes": "10485760",
        "compression.type": "producer",
        "min.insync.replicas": "1",
        "min.cleanable.dirty.ratio": "0.5",
        "unclean.leader.election.enable": "false",
        "leader.replication.throttled.replicas": "",
    }
    for name, value in expected.items():
        assert TOPIC_CONFIG_DEFAULTS[name] == value, name
    assert LogConfig().to_props() == TOPIC_CONFIG_DEFAULTS
    assert list(TOPIC_CONFIGS) == sorted(TOPIC_CONFIGS)
    assert TOPIC_CONFIGS["segment.ms"].server_default_property == "log.roll.ms"


def test_from_props_parses_strings_and_records_overrides() -> None:
    config = LogConfig.from_props({"retention.ms": "1000", "cleanup.policy": "compact,delete",
                                   "message.timestamp.type": "LogAppendTime", "preallocate": "TRUE"})
    assert config.retention_ms == 1000 and config.compact and config.delete and config.preallocate
    assert config.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert config.overridden == {"retention.ms", "cleanup.policy", "message.timestamp.type", "preallocate"}
    assert config.value_of("retention.ms") == 1000
    assert LogConfig.from_props({"segment.ms": 5}, base=config).retention_ms == 1000


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"segment.bytes": "1000"},
         "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576"),
        ({"retention.ms": "abc"}, "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
        ({"segment.bytes": str(2**31)}, "Not a number of type INT"),
        ({"cleanup.policy": "compact,bogus"}, "String must be one of: compact, delete"),
        ({"message.timestamp.type": "Now"}, "String must be one of: CreateTime, LogAppendTime"),
        ({"min.cleanable.dirty.ratio": "1.5"},
         "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
        ({"preallocate": "yes"}, "Expected value to be either true or false"),
        ({"no.such.config": "1"}, "Unknown topic config name: no.such.config"),
        ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
         "min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
    ],
)
def test_invalid_values_are_refused_with_kafkas_message(props: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        LogConfig.from_props(props)


def test_internal_segment_bytes_allows_small_segments_for_tests() -> None:
    assert LogConfig.from_props({"internal.segment.bytes": "4096"}).segment_bytes == 4096


def test_max_segment_ms_for_compacted_topics() -> None:
    assert LogConfig(cleanup_policy=("compact",), max_compaction_lag_ms=1000).max_segment_ms == 1000
    assert LogConfig(max_compaction_lag_ms=1000).max_segment_ms == 604800000
