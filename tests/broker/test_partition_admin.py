"""CreatePartitions in the core: growth only, manual assignments, validate_only, persistence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.admin import partitions as partitions_admin
from kemu.admin.partitions import NewPartitions, PartitionsOutcome, create_partitions
from kemu.admin.topics import NewTopic, create_topics
from kemu.broker.broker import BrokerCore
from kemu.broker.config import BrokerConfig
from kemu.clock import VirtualClock
from kemu.wire.errors import ErrorCode


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerCore]:
    created = BrokerCore(BrokerConfig(data_dir=str(tmp_path)), VirtualClock())
    create_topics(created, [NewTopic("t", 1, configs=[("max.message.bytes", "2000")])])
    yield created
    created.close()


def partitions(broker: BrokerCore, name: str = "t") -> int:
    found = broker.topics.get(name)
    assert found is not None
    return len(found.partitions)


def test_grow_from_one_to_three(broker: BrokerCore, tmp_path: Path) -> None:
    assert create_partitions(broker, [NewPartitions("t", 3)], False) == [PartitionsOutcome("t")]
    topic = broker.topics.get("t")
    assert topic is not None
    assert [(p.index, p.replicas, p.isr, p.leader_id, p.leader_epoch) for p in topic.partitions] == [
        (i, [1], [1], 1, 0) for i in range(3)]
    new_log = broker.partition("t", 2)
    assert new_log is not None and new_log.log.config.max_message_bytes == 2000  # the topic's configs apply
    assert (tmp_path / "t-2").is_dir()
    broker.close()
    reopened = BrokerCore(BrokerConfig(data_dir=str(tmp_path)), VirtualClock())
    try:
        assert partitions(reopened) == 3 and reopened.partition("t", 2) is not None
    finally:
        reopened.close()


def test_manual_assignment_and_validate_only(broker: BrokerCore) -> None:
    assert create_partitions(broker, [NewPartitions("t", 2, [[1]])], True) == [PartitionsOutcome("t")]
    assert partitions(broker) == 1 and broker.partition("t", 1) is None
    assert create_partitions(broker, [NewPartitions("t", 2, [[1]])], False) == [PartitionsOutcome("t")]
    assert partitions(broker) == 2


@pytest.mark.parametrize(("wanted", "error", "message"), [
    (NewPartitions("t", 1), ErrorCode.INVALID_PARTITIONS, "Topic already has 1 partition(s)."),
    (NewPartitions("t", 0), ErrorCode.INVALID_PARTITIONS, "The topic t currently has 1 partition(s); 0 would not be "
                                                         "an increase."),
    (NewPartitions("missing", 3), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None),
    (NewPartitions("t", 3, [[1]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT,
     "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."),
    (NewPartitions("t", 2, [[2]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT,
     "The manual partition assignment includes broker 2, but no such broker is registered."),
    (NewPartitions("t", 2, [[]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT,
     "The manual partition assignment includes an empty replica list."),
    (NewPartitions("t", 2, [[1, 1]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT,
     "The manual partition assignment includes the broker 1 more than once."),
])
def test_refusals(broker: BrokerCore, wanted: NewPartitions, error: ErrorCode, message: str | None) -> None:
    assert create_partitions(broker, [wanted], False) == [PartitionsOutcome(wanted.name, error, message)]
    assert partitions(broker) == 1


def test_duplicates_answer_first_and_others_go_on(broker: BrokerCore) -> None:
    create_topics(broker, [NewTopic("u")])
    outcomes = create_partitions(broker, [NewPartitions("u", 2), NewPartitions("t", 4), NewPartitions("u", 3)], False)
    assert outcomes == [
        PartitionsOutcome("u", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        PartitionsOutcome("t"),
    ]
    assert (partitions(broker, "t"), partitions(broker, "u")) == (4, 1)


def test_one_request_adds_at_most_ten_thousand(broker: BrokerCore) -> None:
    create_topics(broker, [NewTopic("u")])
    outcomes = create_partitions(broker, [NewPartitions("t", 6_000), NewPartitions("u", 6_000)], True)
    assert outcomes == [PartitionsOutcome("t"), PartitionsOutcome("u", ErrorCode.UNKNOWN_SERVER_ERROR)]


def test_a_count_of_two_to_the_31_is_refused_before_any_partition_is_planned(broker: BrokerCore) -> None:
    # CreatePartitions' count is the client's: the limit is checked before a replica list is built for each
    # requested partition (building 2^31 of them held the broker's thread and grew it without bound).
    create_topics(broker, [NewTopic("u")])
    [outcome] = create_partitions(broker, [NewPartitions("u", 2**31 - 1)], validate_only=False)
    assert outcome.error == ErrorCode.UNKNOWN_SERVER_ERROR
    assert len(broker.topics.get("u").partitions) == 1  # type: ignore[union-attr]


@pytest.mark.parametrize("validate_only", [False, True])
def test_the_topic_that_overflows_the_records_keeps_what_the_list_took(
        broker: BrokerCore, monkeypatch: pytest.MonkeyPatch, validate_only: bool) -> None:
    # Kafka keeps the PartitionRecords its BoundedList took before the overflow: the failing topic grows by
    # what was left, every later one that would add any fails. A limit of 10 stands for 10000.
    monkeypatch.setattr(partitions_admin, "MAX_RECORDS_PER_USER_OP", 10)
    create_topics(broker, [NewTopic("u"), NewTopic("v"), NewTopic("w")])
    outcomes = create_partitions(broker, [NewPartitions("t", 8), NewPartitions("u", 6), NewPartitions("v", 2),
                                          NewPartitions("w", 1)], validate_only)
    assert outcomes == [PartitionsOutcome("t"), PartitionsOutcome("u", ErrorCode.UNKNOWN_SERVER_ERROR),
                        PartitionsOutcome("v", ErrorCode.UNKNOWN_SERVER_ERROR),
                        PartitionsOutcome("w", ErrorCode.INVALID_PARTITIONS, "Topic already has 1 partition(s).")]
    grown = [partitions(broker, name) for name in "tuvw"]
    assert grown == ([1, 1, 1, 1] if validate_only else [8, 4, 1, 1])


def test_exactly_the_records_left_is_no_overflow(broker: BrokerCore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partitions_admin, "MAX_RECORDS_PER_USER_OP", 10)
    assert create_partitions(broker, [NewPartitions("t", 11)], False) == [PartitionsOutcome("t")]
    assert partitions(broker) == 11


def test_manual_assignments_past_the_records_keep_the_first(broker: BrokerCore,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partitions_admin, "MAX_RECORDS_PER_USER_OP", 2)
    outcomes = create_partitions(broker, [NewPartitions("t", 4, [[1], [1], [1]])], False)
    assert outcomes == [PartitionsOutcome("t", ErrorCode.UNKNOWN_SERVER_ERROR)]
    assert partitions(broker) == 3


def test_the_limit_is_ten_thousand_partitions_records(broker: BrokerCore) -> None:
    assert create_partitions(broker, [NewPartitions("t", 10_001)], True) == [PartitionsOutcome("t")]
    assert create_partitions(broker, [NewPartitions("t", 10_002)], True) == [
        PartitionsOutcome("t", ErrorCode.UNKNOWN_SERVER_ERROR)]
