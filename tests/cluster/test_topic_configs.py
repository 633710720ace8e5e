from __future__ import annotations

import pytest

from kemu.cluster import topic_configs
from kemu.cluster.topic_configs import SOURCE_DEFAULT, SOURCE_DYNAMIC_TOPIC, ConfigError


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
    ({"preallocate": "yes"}, "Invalid value yes for configuration preallocate: Expected value to be either true or false"),
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
