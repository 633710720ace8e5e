"""AlterConfigs and IncrementalAlterConfigs in the core: Kafka's checks in Kafka's order, topic changes
reaching the partition logs and kemu-topics.json, broker changes reaching topics that inherit them."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.admin.configs import (
    ALTER_SLICE_RESOURCES,
    RESOURCE_BROKER,
    RESOURCE_BROKER_LOGGER,
    RESOURCE_TOPIC,
    ConfigChange,
    OpType,
    Outcome,
    ResourceChange,
    alter,
    altering,
)
from kemu.admin.topics import NewTopic, create_topics
from kemu.broker import storage
from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.clock import VirtualClock
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch

SET, DELETE, APPEND, SUBTRACT = OpType.SET, OpType.DELETE, OpType.APPEND, OpType.SUBTRACT


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerCore]:
    created = BrokerCore(BrokerConfig(data_dir=str(tmp_path)), VirtualClock())
    [outcome] = create_topics(created, [NewTopic("t", 2, configs=[("retention.ms", "1000")])])
    assert outcome.error == ErrorCode.NONE
    yield created
    created.close()


def topic(name: str, *changes: tuple[str, int, str | None]) -> ResourceChange:
    return ResourceChange(RESOURCE_TOPIC, name, [ConfigChange(*c) for c in changes])


def incremental(broker: BrokerCore, *resources: ResourceChange, validate_only: bool = False) -> list[Outcome]:
    return alter(broker, resources, validate_only, incremental=True)


def legacy(broker: BrokerCore, *resources: ResourceChange, validate_only: bool = False) -> list[Outcome]:
    return alter(broker, resources, validate_only, incremental=False)


def log_config(broker: BrokerCore, partition: int = 0):  # type: ignore[no-untyped-def]
    found = broker.partition("t", partition)
    assert found is not None
    return found.log.config


def test_incremental_set_and_delete_reach_the_logs_and_the_topic_file(broker: BrokerCore, tmp_path: Path) -> None:
    changes = topic("t", ("max.message.bytes", SET, "2000"), ("retention.ms", DELETE, None))
    assert incremental(broker, changes) == [Outcome()]
    assert broker.topics.get("t").configs == {"max.message.bytes": "2000"}  # type: ignore[union-attr]
    assert [(log_config(broker, p).max_message_bytes, log_config(broker, p).retention_ms) for p in (0, 1)] == [
        (2000, 604_800_000)] * 2
    assert '"max.message.bytes": "2000"' in (tmp_path / "kemu-topics.json").read_text()


def test_many_resources_are_altered_a_slice_at_a_time_and_saved_once(
        broker: BrokerCore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    create_topics(broker, [NewTopic(f"m{i}") for i in range(300)])
    saves: list[str] = []  # each rewrite of the topic file
    real_replace = os.replace
    monkeypatch.setattr(storage.os, "replace", lambda src, dst: (saves.append(str(dst)), real_replace(src, dst)))
    resources = [topic(f"m{i}", ("retention.ms", SET, str(1000 + i))) for i in range(300)]
    outcomes: list[Outcome] = []
    yields = 0
    for _ in altering(broker, resources, False, True, outcomes):
        yields += 1
        # Between slices: every resource of the slices so far is changed; nothing is answered yet, so nothing
        # need be written yet.
        assert len(outcomes) == yields * ALTER_SLICE_RESOURCES
        assert broker.topics.get(f"m{len(outcomes) - 1}").configs["retention.ms"] == str(999 + len(outcomes))  # type: ignore[union-attr]
        assert saves == []
    assert yields == 300 // ALTER_SLICE_RESOURCES and outcomes == [Outcome()] * 300
    assert len(saves) == 1  # once a request, not once a slice (nor once a topic)
    saved = (tmp_path / "kemu-topics.json").read_text()
    assert '"retention.ms": "1000"' in saved and '"retention.ms": "1299"' in saved


def test_a_save_between_slices_writes_the_topics_changed_so_far(broker: BrokerCore, tmp_path: Path) -> None:
    """Another request's save between two slices writes every topic as the slices left it: each changed
    topic's entry is encoded with its change, not at the end."""
    create_topics(broker, [NewTopic(f"m{i}") for i in range(200)])
    resources = [topic(f"m{i}", ("retention.ms", SET, str(1000 + i))) for i in range(200)]
    outcomes: list[Outcome] = []
    slices = altering(broker, resources, False, True, outcomes)
    next(slices)
    create_topics(broker, [NewTopic("other")])  # saves the topic list
    saved = (tmp_path / "kemu-topics.json").read_text()
    assert f'"retention.ms": "{1000 + ALTER_SLICE_RESOURCES - 1}"' in saved and '"other"' in saved
    assert f'"retention.ms": "{1000 + ALTER_SLICE_RESOURCES}"' not in saved
    for _ in slices:
        pass
    assert '"retention.ms": "1199"' in (tmp_path / "kemu-topics.json").read_text()


def test_legacy_alter_replaces_every_override(broker: BrokerCore) -> None:
    assert legacy(broker, topic("t", ("cleanup.policy", SET, "compact"))) == [Outcome()]
    assert broker.topics.get("t").configs == {"cleanup.policy": "compact"}  # type: ignore[union-attr]
    assert log_config(broker).compact and log_config(broker).retention_ms == 604_800_000


def test_validate_only_changes_nothing(broker: BrokerCore) -> None:
    assert incremental(broker, topic("t", ("retention.ms", SET, "5")), validate_only=True) == [Outcome()]
    assert legacy(broker, topic("t"), validate_only=True) == [Outcome()]
    assert broker.topics.get("t").configs == {"retention.ms": "1000"}  # type: ignore[union-attr]
    assert log_config(broker).retention_ms == 1000


def test_append_and_subtract_on_lists(broker: BrokerCore) -> None:
    assert incremental(broker, topic("t", ("cleanup.policy", APPEND, "compact"))) == [Outcome()]
    assert broker.topics.get("t").configs["cleanup.policy"] == "delete,compact"  # type: ignore[union-attr]
    assert incremental(broker, topic("t", ("cleanup.policy", SUBTRACT, "delete,nothing"))) == [Outcome()]
    assert broker.topics.get("t").configs["cleanup.policy"] == "compact"  # type: ignore[union-attr]
    assert incremental(broker, topic("t", ("leader.replication.throttled.replicas", APPEND, "0:1,1:1"),
                                     )) == [Outcome()]
    assert incremental(broker, topic("t", ("leader.replication.throttled.replicas", APPEND, "1:1,2:1"))) == [Outcome()]
    assert broker.topics.get("t").configs["leader.replication.throttled.replicas"] == "0:1,1:1,2:1"  # type: ignore[union-attr]
    assert log_config(broker).compact and not log_config(broker).delete


@pytest.mark.parametrize(("resource", "error", "message"), [
    (topic("t", ("retention.ms", APPEND, "1")), ErrorCode.INVALID_CONFIG,
     "Can't APPEND to key retention.ms because its type is not LIST."),
    (topic("t", ("no.such", SUBTRACT, "1")), ErrorCode.INVALID_CONFIG,
     "Can't SUBTRACT to key no.such because its type is not LIST."),
    (topic("t", ("no.such", SET, "1")), ErrorCode.INVALID_CONFIG, "Unknown topic config name: no.such"),
    (topic("t", ("retention.ms", SET, "abc")), ErrorCode.INVALID_CONFIG,
     "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    (topic("t", ("min.compaction.lag.ms", SET, "5000"), ("max.compaction.lag.ms", SET, "10")),
     ErrorCode.INVALID_CONFIG,
     "conflict topic config setting min.compaction.lag.ms (5000) > max.compaction.lag.ms (10)"),
    (topic("t", ("retention.ms", SET, "1"), ("retention.ms", DELETE, None)), ErrorCode.INVALID_REQUEST,
     "Error due to duplicate config keys"),
    (topic("t", ("retention.ms", SET, None), ("segment.ms", APPEND, None)), ErrorCode.INVALID_REQUEST,
     "Null value not supported for : retention.ms, segment.ms"),
    (topic("t", ("retention.ms", 7, "1")), ErrorCode.UNKNOWN_SERVER_ERROR, None),
    (topic("missing", ("retention.ms", SET, "1")), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
     "The topic 'missing' does not exist."),
    # Kafka validates the configs before it looks for the topic.
    (topic("missing", ("retention.ms", SET, "x")), ErrorCode.INVALID_CONFIG,
     "Invalid value x for configuration retention.ms: Not a number of type LONG"),
    (topic("", ("retention.ms", SET, "1")), ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed."),
    (topic("bad name", ("retention.ms", SET, "1")), ErrorCode.INVALID_TOPIC_EXCEPTION,
     "Topic name is invalid: 'bad name' contains one or more characters other than ASCII alphanumerics, '.', '_' "
     "and '-'"),
    (ResourceChange(64, "x", []), ErrorCode.INVALID_REQUEST, "Unknown resource type 64"),
    (ResourceChange(16, "", []), ErrorCode.INVALID_REQUEST, "Subscription name can't be empty"),
])
def test_incremental_refusals(broker: BrokerCore, resource: ResourceChange, error: ErrorCode, message: str) -> None:
    assert incremental(broker, resource) == [Outcome(error, message)]
    assert broker.topics.get("t").configs == {"retention.ms": "1000"}  # type: ignore[union-attr]


def test_each_resource_answers_alone(broker: BrokerCore) -> None:
    outcomes = incremental(broker, topic("t", ("retention.ms", SET, "2")), topic("t", ("retention.ms", SET, "3")),
                           topic("missing", ("retention.ms", SET, "1")),
                           ResourceChange(RESOURCE_BROKER, "", [ConfigChange("log.retention.ms", SET, "99")]))
    assert outcomes == [Outcome(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")] * 2 + [
        Outcome(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'missing' does not exist."), Outcome()]
    assert broker.dynamic_configs.cluster_default == {"log.retention.ms": "99", "min.insync.replicas": "1"}


def test_legacy_refusals(broker: BrokerCore) -> None:
    assert legacy(broker, topic("t", ("retention.ms", SET, None))) == [
        Outcome(ErrorCode.INVALID_REQUEST, "Null value not supported for : retention.ms")]
    assert legacy(broker, ResourceChange(RESOURCE_BROKER_LOGGER, "1", [ConfigChange("root", SET, "INFO")])) == [
        Outcome(ErrorCode.INVALID_REQUEST, "Unknown resource type 8")]


def broker_resource(name: str, *changes: tuple[str, int, str | None]) -> ResourceChange:
    return ResourceChange(RESOURCE_BROKER, name, [ConfigChange(*c) for c in changes])


def test_broker_defaults_reach_topics_without_overrides(broker: BrokerCore, tmp_path: Path) -> None:
    assert incremental(broker, broker_resource("", ("log.retention.ms", SET, "5000"),
                                               ("message.max.bytes", SET, "2000"))) == [Outcome()]
    # retention.ms is overridden on the topic; max.message.bytes is inherited.
    assert (log_config(broker).retention_ms, log_config(broker).max_message_bytes) == (1000, 2000)
    assert incremental(broker, broker_resource("1", ("message.max.bytes", SET, "3000"))) == [Outcome()]
    assert log_config(broker).max_message_bytes == 3000
    [created] = create_topics(broker, [NewTopic("u")])
    inherited = {c.name: (c.value, c.source) for c in created.configs}
    assert inherited["max.message.bytes"] == ("3000", 2) and inherited["retention.ms"] == ("5000", 3)
    assert incremental(broker, broker_resource("1", ("message.max.bytes", DELETE, None))) == [Outcome()]
    assert log_config(broker).max_message_bytes == 2000
    broker.close()
    reopened = BrokerCore(BrokerConfig(data_dir=str(tmp_path)), VirtualClock())
    try:
        found = reopened.partition("u", 0)
        assert found is not None and (found.log.config.retention_ms, found.log.config.max_message_bytes) == (5000, 2000)
    finally:
        reopened.close()


@pytest.mark.parametrize(("resource", "error", "message"), [
    (broker_resource("2", ("log.retention.ms", SET, "1")), ErrorCode.INVALID_REQUEST,
     "Unexpected broker id, expected 1, but received 2"),
    (broker_resource("one", ("log.retention.ms", SET, "1")), ErrorCode.INVALID_REQUEST,
     "Node id must be an integer, but it is: one"),
    (broker_resource("", ("num.partitions", SET, "3")), ErrorCode.INVALID_REQUEST,
     "Cannot update these configs dynamically: [num.partitions]"),
    (broker_resource("1", ("log.retention.ms", SET, "x")), ErrorCode.INVALID_REQUEST,
     "Invalid value x for configuration log.retention.ms: Not a number of type LONG"),
    (broker_resource("", ("message.max.bytes", APPEND, "1")), ErrorCode.INVALID_CONFIG,
     "Config value append is not allowed for config key: message.max.bytes"),
    (broker_resource("", ("log.retention.ms", SUBTRACT, "1")), ErrorCode.INVALID_CONFIG,
     "Config value subtract is not allowed for config key: log.retention.ms"),
])
def test_broker_refusals(broker: BrokerCore, resource: ResourceChange, error: ErrorCode, message: str) -> None:
    assert incremental(broker, resource) == [Outcome(error, message)]
    assert broker.dynamic_configs.cluster_default == {"min.insync.replicas": "1"}
    assert broker.dynamic_configs.per_broker == {}


def test_broker_list_configs_append(broker: BrokerCore) -> None:
    assert incremental(broker, broker_resource("", ("log.cleanup.policy", APPEND, "compact"))) == [Outcome()]
    assert broker.dynamic_configs.cluster_default == {"log.cleanup.policy": "delete,compact",
                                                      "min.insync.replicas": "1"}
    assert log_config(broker).compact


def test_legacy_broker_alter_replaces_the_layer(broker: BrokerCore) -> None:
    assert incremental(broker, broker_resource("", ("log.retention.ms", SET, "5"))) == [Outcome()]
    assert legacy(broker, broker_resource("", ("message.max.bytes", SET, "7"))) == [
        Outcome(ErrorCode.INVALID_CONFIG, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")]
    assert legacy(broker, broker_resource("", ("message.max.bytes", SET, "7"), ("min.insync.replicas", SET, "1"))) == [
        Outcome()]
    assert broker.dynamic_configs.cluster_default == {"message.max.bytes": "7", "min.insync.replicas": "1"}
    assert legacy(broker, broker_resource("", ("log.dirs", SET, "/x"))) == [
        Outcome(ErrorCode.INVALID_REQUEST, "Cannot update these configs dynamically: [log.dirs]")]


def test_broker_logger_levels(broker: BrokerCore) -> None:
    logger = logging.getLogger("kemu.broker.storage")
    before = logger.level
    try:
        def loggers(*changes: tuple[str, int, str | None], name: str = "1") -> list[Outcome]:
            resource = ResourceChange(RESOURCE_BROKER_LOGGER, name, [ConfigChange(*c) for c in changes])
            return incremental(broker, resource)

        assert loggers(("kemu.broker.storage", SET, "TRACE")) == [Outcome()]
        assert logger.level == 5
        assert loggers(("kemu.broker.storage", DELETE, None)) == [Outcome()]
        assert logger.level == logging.NOTSET
        assert loggers(("kemu.broker.storage", SET, "LOUD")) == [Outcome(
            ErrorCode.INVALID_CONFIG, "Cannot set the log level of kemu.broker.storage to LOUD as it is not a "
                                      "supported log level. Valid log levels are "
                                      "DEBUG, ERROR, FATAL, INFO, TRACE, WARN")]
        assert loggers(("no.such.logger", SET, "INFO")) == [
            Outcome(ErrorCode.INVALID_CONFIG, "Logger no.such.logger does not exist!")]
        assert loggers(("root", DELETE, None)) == [
            Outcome(ErrorCode.INVALID_REQUEST, "Removing the log level of the root logger is not allowed")]
        assert loggers(("root", APPEND, "INFO")) == [
            Outcome(ErrorCode.INVALID_REQUEST, "APPEND operation is not allowed for the BROKER_LOGGER resource")]
        assert loggers(("root", SET, "INFO"), name="2") == [
            Outcome(ErrorCode.INVALID_REQUEST, "Unexpected node id. Expected 1, but received 1")]
    finally:
        logger.setLevel(before)


def test_lowered_retention_deletes_old_segments_on_the_next_pass(tmp_path: Path) -> None:
    clock = VirtualClock(1_700_000_000_000)
    broker = BrokerCore(BrokerConfig(data_dir=str(tmp_path / "data")), clock)
    try:
        create_topics(broker, [NewTopic("r", 1, configs=[("segment.ms", "1000")])])
        found = broker.partition("r", 0)
        assert found is not None
        for value in (b"a", b"b", b"c"):
            found.append(build_batch([NewRecord(value, timestamp=clock.now_ms())]))
            clock.advance(2_000)
        assert len(found.log.segments) == 3
        broker.storage.log_dir.run_retention()
        assert found.log.log_start_offset == 0  # a week's retention keeps everything

        assert incremental(broker, topic("r", ("retention.ms", SET, "3000"))) == [Outcome()]
        broker.storage.log_dir.run_retention()
        # Segments whose newest record is older than 3 s are gone; the active one always stays.
        assert found.log.log_start_offset == 2
    finally:
        broker.close()


def test_min_insync_replicas_is_the_clusters(broker: BrokerCore) -> None:
    """A new cluster starts with min.insync.replicas as a dynamic cluster default (ELR is on), which may be
    changed but not removed, and no broker may have its own."""
    assert broker.dynamic_configs.cluster_default == {"min.insync.replicas": "1"}
    assert incremental(broker, broker_resource("1", ("min.insync.replicas", SET, "1"))) == [
        Outcome(ErrorCode.INVALID_CONFIG, "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")]
    assert incremental(broker, broker_resource("", ("min.insync.replicas", DELETE, None))) == [
        Outcome(ErrorCode.INVALID_CONFIG, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")]
    assert incremental(broker, broker_resource("", ("min.insync.replicas", SET, "2"))) == [Outcome()]
    assert broker.dynamic_configs.cluster_default == {"min.insync.replicas": "2"}


def test_live_settings_follow_dynamic_changes(broker: BrokerCore) -> None:
    """producer.id.expiration.ms and transaction.partition.verification.enable are dynamic, as in Kafka: the
    broker runs with the value in force, and deleting it brings back the one it was started with."""
    assert incremental(broker, broker_resource("1", ("producer.id.expiration.ms", SET, "5000"),
                                               ("transaction.partition.verification.enable", SET, "false"))) == [
        Outcome()]
    assert (broker.config.producer_id_expiration_ms, broker.config.transaction_partition_verification_enable) == (
        5000, False)
    static = broker.config_layers().static
    assert "producer.id.expiration.ms" not in static  # still the default it was started with
    assert incremental(broker, broker_resource("1", ("producer.id.expiration.ms", DELETE, None),
                                               ("transaction.partition.verification.enable", DELETE, None))) == [
        Outcome()]
    assert (broker.config.producer_id_expiration_ms, broker.config.transaction_partition_verification_enable) == (
        86_400_000, True)
