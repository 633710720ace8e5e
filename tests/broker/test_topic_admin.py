"""Topic creation and deletion in the core, with Kafka's checks, order of checks and messages."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from kemu.admin.topics import (
    DELETE_SLICE_PARTITIONS,
    DeleteOutcome,
    NewTopic,
    auto_create_topic,
    auto_create_topics,
    create_topics,
    delete_logs,
    delete_topics,
)
from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.broker.errors import ApiError
from kemu.broker.storage import TOPICS_FILE
from kemu.clock import VirtualClock
from kemu.wire.errors import ErrorCode

ZERO = uuid.UUID(int=0)


@pytest.fixture
def broker() -> Iterator[BrokerCore]:
    created = BrokerCore(BrokerConfig(), VirtualClock())
    yield created
    created.close()


def test_create_uses_broker_defaults(broker: BrokerCore) -> None:
    [outcome] = create_topics(broker, [NewTopic("t")])
    assert outcome.error == ErrorCode.NONE and outcome.message is None
    assert (outcome.num_partitions, outcome.replication_factor) == (1, 1)
    topic = broker.topics.get("t")
    assert topic is not None and topic.topic_id == outcome.topic_id != ZERO
    assert [(p.index, p.leader_id, p.leader_epoch, p.replicas, p.isr) for p in topic.partitions] == [
        (0, 1, 0, [1], [1])]


def test_num_partitions_broker_config(broker: BrokerCore) -> None:
    broker.config.num_partitions = 4
    [outcome] = create_topics(broker, [NewTopic("t", -1, -1)])
    assert outcome.num_partitions == 4


def test_validate_only_creates_nothing(broker: BrokerCore) -> None:
    [outcome] = create_topics(broker, [NewTopic("t", 3, 1)], validate_only=True)
    assert outcome.error == ErrorCode.NONE and outcome.num_partitions == 3
    assert "t" not in broker.topics


@pytest.mark.parametrize(("topic", "code", "message"), [
    (NewTopic("t", 0, 1), ErrorCode.INVALID_PARTITIONS,
     "Number of partitions was set to an invalid non-positive value."),
    (NewTopic("t", -2, 1), ErrorCode.INVALID_PARTITIONS,
     "Number of partitions was set to an invalid non-positive value."),
    (NewTopic("t", 1, 0), ErrorCode.INVALID_REPLICATION_FACTOR,
     "Replication factor must be larger than 0, or -1 to use the default value."),
    (NewTopic("t", 1, 3), ErrorCode.INVALID_REPLICATION_FACTOR,
     "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached because "
     "only 1 broker(s) are registered or some brokers have all their log directories cordoned."),
    (NewTopic("bad/name"), ErrorCode.INVALID_TOPIC_EXCEPTION,
     "Topic name is invalid: 'bad/name' contains one or more characters other than ASCII alphanumerics, "
     "'.', '_' and '-'"),
    (NewTopic(""), ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: the empty string is not allowed"),
    (NewTopic("t", configs=[("nope", "1")]), ErrorCode.INVALID_CONFIG, "Unknown topic config name: nope"),
    (NewTopic("t", assignments=[(0, [1])], replication_factor=1), ErrorCode.INVALID_REQUEST,
     "A manual partition assignment was specified, but replication factor was not set to -1."),
    (NewTopic("t", assignments=[(0, [1])], num_partitions=1), ErrorCode.INVALID_REQUEST,
     "A manual partition assignment was specified, but numPartitions was not set to -1."),
    (NewTopic("t", assignments=[(0, [2])]), ErrorCode.INVALID_REPLICA_ASSIGNMENT,
     "The manual partition assignment includes broker 2, but no such broker is registered."),
    (NewTopic("t", assignments=[(0, [1, 1])]), ErrorCode.INVALID_REPLICA_ASSIGNMENT,
     "The manual partition assignment includes the broker 1 more than once."),
    (NewTopic("t", assignments=[(0, [])]), ErrorCode.INVALID_REPLICA_ASSIGNMENT,
     "The manual partition assignment includes an empty replica list."),
    (NewTopic("t", assignments=[(0, [1]), (0, [1])]), ErrorCode.INVALID_REPLICA_ASSIGNMENT,
     "Found multiple manual partition assignments for partition 0"),
    (NewTopic("t", assignments=[(1, [1])]), ErrorCode.INVALID_REPLICA_ASSIGNMENT,
     "partitions should be a consecutive 0-based integer sequence"),
])
def test_create_errors(broker: BrokerCore, topic: NewTopic, code: ErrorCode, message: str) -> None:
    [outcome] = create_topics(broker, [topic])
    assert (outcome.error, outcome.message) == (code, message)
    assert outcome.topic_id == ZERO
    assert len(broker.topics) == 0


def test_manual_assignment(broker: BrokerCore) -> None:
    [outcome] = create_topics(broker, [NewTopic("t", assignments=[(1, [1]), (0, [1])])])
    assert outcome.error == ErrorCode.NONE and outcome.num_partitions == 2
    topic = broker.topics.get("t")
    assert topic is not None and [p.index for p in topic.partitions] == [0, 1]


def test_already_exists_and_collisions(broker: BrokerCore) -> None:
    create_topics(broker, [NewTopic("a.b")])
    outcomes = create_topics(broker, [NewTopic("a.b"), NewTopic("a_b")])
    assert [(o.error, o.message) for o in outcomes] == [
        (ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'a.b' already exists."),
        (ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic 'a_b' collides with existing topic: a.b"),
    ]


def test_name_checks_come_before_config_checks(broker: BrokerCore) -> None:
    [outcome] = create_topics(broker, [NewTopic("bad name", configs=[("nope", "1")])])
    assert outcome.error == ErrorCode.INVALID_TOPIC_EXCEPTION


def test_config_checks_come_before_partition_checks(broker: BrokerCore) -> None:
    [outcome] = create_topics(broker, [NewTopic("t", 0, 1, configs=[("nope", "1")])])
    assert outcome.error == ErrorCode.INVALID_CONFIG


def test_duplicates_and_cluster_metadata_are_invalid_requests_listed_last(broker: BrokerCore) -> None:
    outcomes = create_topics(broker, [NewTopic("d"), NewTopic("__cluster_metadata"), NewTopic("ok"), NewTopic("d")])
    assert [(o.name, o.error, o.message) for o in outcomes] == [
        ("ok", ErrorCode.NONE, None),
        ("d", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("__cluster_metadata", ErrorCode.INVALID_REQUEST,
         "Creation of internal topic __cluster_metadata is prohibited."),
    ]
    assert [t.name for t in broker.topics] == ["ok"]


def test_too_many_partitions_refuses_the_request(broker: BrokerCore) -> None:
    with pytest.raises(ApiError) as caught:
        create_topics(broker, [NewTopic("a", 6000, 1), NewTopic("b", 4001, 1)])
    assert caught.value.code == ErrorCode.POLICY_VIOLATION
    assert caught.value.message == "Excessively large number of partitions per request."
    assert len(broker.topics) == 0


def test_configs_are_stored_and_echoed(broker: BrokerCore) -> None:
    [outcome] = create_topics(broker, [NewTopic("t", configs=[("cleanup.policy", "compact")])])
    topic = broker.topics.get("t")
    assert topic is not None and topic.configs == {"cleanup.policy": "compact"}
    echoed = {c.name: (c.value, c.source) for c in outcome.configs}
    assert echoed["cleanup.policy"] == ("compact", 1)
    assert echoed["retention.ms"] == ("604800000", 5)


def test_auto_creation_answers_leader_not_available_then_exists(broker: BrokerCore) -> None:
    assert auto_create_topic(broker, "fresh") == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert "fresh" in broker.topics
    assert auto_create_topic(broker, "bad name") == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert "bad name" not in broker.topics


def test_internal_topics_are_auto_created_with_their_layout(broker: BrokerCore) -> None:
    auto_create_topic(broker, "__consumer_offsets")
    topic = broker.topics.get("__consumer_offsets")
    assert topic is not None and topic.is_internal and len(topic.partitions) == 50
    assert topic.configs["cleanup.policy"] == "compact"


def delete(broker: BrokerCore, names: list[str], by_state: list[tuple[str | None, uuid.UUID]],
           version: int) -> list[DeleteOutcome]:
    """DeleteTopics as its handler runs it: the answers, then every removed topic's logs deleted and saved."""
    outcomes, removed = delete_topics(broker, names, by_state, version=version)
    for _ in delete_logs(broker, removed):
        pass
    return outcomes


def test_deleting_many_topics_yields_between_slices_and_saves_once_at_the_end(broker: BrokerCore) -> None:
    create_topics(broker, [NewTopic(f"t{i}", 10) for i in range(40)])
    saved = (broker.data_dir / TOPICS_FILE).read_text()
    outcomes, removed = delete_topics(broker, [f"t{i}" for i in range(40)], [], version=5)
    assert len(removed) == 40 and len(broker.topics) == 0  # out of the registry at once ...
    slices = 0
    for _ in delete_logs(broker, removed):
        slices += 1
        assert (broker.data_dir / TOPICS_FILE).read_text() == saved  # ... saved only when every log is gone
    assert slices == 400 // DELETE_SLICE_PARTITIONS
    assert json.loads((broker.data_dir / TOPICS_FILE).read_text())["topics"] == []
    assert not [d for d in broker.data_dir.iterdir() if d.name.startswith("t") and d.is_dir()]
    assert {o.error for o in outcomes} == {ErrorCode.NONE}


def test_delete_by_name_and_unknowns(broker: BrokerCore) -> None:
    create_topics(broker, [NewTopic("t"), NewTopic("u")])
    t_id = broker.topics.get("t").topic_id  # type: ignore[union-attr]
    outcomes = delete(broker, ["t", "missing"], [], version=5)
    assert {(o.name, o.topic_id, o.error) for o in outcomes} == {
        ("t", t_id, ErrorCode.NONE), ("missing", ZERO, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)}
    assert [t.name for t in broker.topics] == ["u"]


def test_delete_by_id(broker: BrokerCore) -> None:
    create_topics(broker, [NewTopic("t")])
    t_id = broker.topics.get("t").topic_id  # type: ignore[union-attr]
    unknown = uuid.uuid4()
    outcomes = delete(broker, [], [(None, t_id), (None, unknown)], version=6)
    assert {(o.name, o.topic_id, o.error) for o in outcomes} == {
        ("t", t_id, ErrorCode.NONE), (None, unknown, ErrorCode.UNKNOWN_TOPIC_ID)}
    assert len(broker.topics) == 0


def test_delete_invalid_requests(broker: BrokerCore) -> None:
    create_topics(broker, [NewTopic("t"), NewTopic("u")])
    t_id = broker.topics.get("t").topic_id  # type: ignore[union-attr]
    u_id = broker.topics.get("u").topic_id  # type: ignore[union-attr]
    outcomes = delete(broker, [], [(None, ZERO), ("u", u_id), ("d", ZERO), ("d", ZERO), (None, t_id),
                                         ("t", ZERO)], version=6)
    assert {(o.name, o.topic_id, o.error, o.message) for o in outcomes} == {
        (None, ZERO, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified."),
        ("u", u_id, ErrorCode.INVALID_REQUEST, "You may not specify both topic name and topic id."),
        ("d", ZERO, ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("t", t_id, ErrorCode.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied."),
    }
    assert {t.name for t in broker.topics} == {"t", "u"}


def test_delete_disabled(broker: BrokerCore) -> None:
    broker.config.delete_topic_enable = False
    with pytest.raises(ApiError) as old:
        delete(broker, ["t"], [], version=2)
    assert (old.value.code, old.value.message) == (ErrorCode.INVALID_REQUEST, "Topic deletion is disabled.")
    with pytest.raises(ApiError) as new:
        delete(broker, ["t"], [], version=3)
    assert new.value.code == ErrorCode.TOPIC_DELETION_DISABLED


def test_recreated_topic_gets_a_new_id(broker: BrokerCore) -> None:
    [first] = create_topics(broker, [NewTopic("t")])
    delete(broker, ["t"], [], version=6)
    [second] = create_topics(broker, [NewTopic("t")])
    assert first.topic_id != second.topic_id


def test_too_many_records_refuses_the_request_and_releases_its_names(broker: BrokerCore) -> None:
    # More than one slice of topics (TopicPlan.SLICE), so names were reserved before the overflow.
    wanted = [NewTopic(f"t{index}", 1, 1) for index in range(100)] + [NewTopic("big", 9_900, 1)]
    with pytest.raises(ApiError) as caught:
        create_topics(broker, wanted)
    assert caught.value.code == ErrorCode.POLICY_VIOLATION
    assert caught.value.message == "Unable to perform excessively large batch operation."
    assert len(broker.topics) == 0 and not broker.creating
    [outcome] = create_topics(broker, [NewTopic("t0", 1, 1)])
    assert outcome.error == ErrorCode.NONE


def test_auto_creation_past_the_record_limit_creates_none() -> None:
    broker = BrokerCore(BrokerConfig(num_partitions=5_000), VirtualClock())  # two topics: 10002 records
    try:
        codes = auto_create_topics(broker, ["a", "b"])
        assert codes == {"a": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "b": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        assert len(broker.topics) == 0 and not broker.creating
    finally:
        broker.close()
