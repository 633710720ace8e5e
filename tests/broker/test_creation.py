"""Partition creation in steps (kemu.broker.creation): nothing is visible before `finish`, each step is
bounded, a name being created is taken, and a kill midway leaves a data dir that restarts clean."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.admin.partitions import NewPartitions, plan_partitions
from kemu.admin.topics import NewTopic, create_topics, ensure_internal_topic, plan_topics
from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.broker.topic_names import GROUP_METADATA_TOPIC
from kemu.clock import VirtualClock
from kemu.wire.errors import ErrorCode


def make_broker(data_dir: Path) -> BrokerCore:
    return BrokerCore(BrokerConfig(port=0, data_dir=str(data_dir)), VirtualClock())


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerCore]:
    made = make_broker(tmp_path)
    yield made
    made.close()


def test_steps_open_a_bounded_number_of_logs_and_nothing_shows_before_finish(broker: BrokerCore) -> None:
    [outcome], creation = plan_topics(broker, [NewTopic("big", 40, 1)])
    assert outcome.error == ErrorCode.NONE and outcome.num_partitions == 40
    assert not creation.step(16)
    assert len(broker.storage.log_dir) == 16
    assert "big" not in broker.topics and broker.partition("big", 0) is None
    assert not creation.step(16)
    assert creation.step(16)
    assert "big" not in broker.topics
    creation.finish()
    topic = broker.topics.get("big")
    assert topic is not None and [p.index for p in topic.partitions] == list(range(40))
    assert all(p.is_open for p in topic.partitions)
    assert not broker.creating


def test_a_name_being_created_is_taken(broker: BrokerCore) -> None:
    _, creation = plan_topics(broker, [NewTopic("big", 20, 1), NewTopic(GROUP_METADATA_TOPIC, 3, 1)])
    creation.step(1)
    [again] = create_topics(broker, [NewTopic("big", 1, 1)])
    assert (again.error, again.message) == (ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'big' already exists.")
    assert ensure_internal_topic(broker, GROUP_METADATA_TOPIC) is False  # COORDINATOR_NOT_AVAILABLE meanwhile
    while not creation.step():
        pass
    creation.finish()
    assert len(broker.topics.get("big").partitions) == 20  # type: ignore[union-attr]
    assert ensure_internal_topic(broker, GROUP_METADATA_TOPIC) is True


def test_partitions_added_to_a_topic_deleted_meanwhile_are_removed(broker: BrokerCore, tmp_path: Path) -> None:
    create_topics(broker, [NewTopic("t", 1, 1)])
    [outcome], creation = plan_partitions(broker, [NewPartitions("t", 5)], validate_only=False)
    assert outcome.error == ErrorCode.NONE
    [busy], _ = plan_partitions(broker, [NewPartitions("t", 6)], validate_only=False)
    assert (busy.error, busy.message) == (ErrorCode.REASSIGNMENT_IN_PROGRESS, "Partitions are being added to t.")
    creation.step(2)
    broker.delete_topic(broker.topics.get("t").topic_id)  # type: ignore[union-attr]
    while not creation.step():
        pass
    creation.finish()
    assert "t" not in broker.topics and len(broker.storage.log_dir) == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("t-")]


def test_a_kill_midway_leaves_no_topic_and_the_same_topic_can_be_created_after(tmp_path: Path) -> None:
    first = make_broker(tmp_path)
    create_topics(first, [NewTopic("kept", 2, 1)])
    _, creation = plan_topics(first, [NewTopic("big", 30, 1)])
    creation.step(10)
    first.abandon()  # kill -9: nothing more is written
    second = make_broker(tmp_path)
    try:
        assert "big" not in second.topics and len(second.topics.get("kept").partitions) == 2  # type: ignore[union-attr]
        [outcome] = create_topics(second, [NewTopic("big", 30, 1)])
        assert outcome.error == ErrorCode.NONE
        partition = second.partition("big", 3)
        assert partition is not None and partition.log.log_end_offset == 0
    finally:
        second.close()
    third = make_broker(tmp_path)
    try:
        assert len(third.topics.get("big").partitions) == 30  # type: ignore[union-attr]
    finally:
        third.close()
