"""DescribeTopicPartitions (75): topics in name order, the partition budget across topics and the cursor that
resumes it, as Kafka's DescribeTopicPartitionsRequestHandler pages them; errors for missing and illegal
topics and for a cursor outside the named topics."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from tests.handlers.harness import Broker, Connection, MakeBroker, broker_config

KEY = 75
ZERO = uuid.UUID(int=0)
ALL_TOPIC_OPERATIONS = 3576  # READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION, INVALID_REQUEST = 3, 17, 42


def create(broker: Broker, name: str, partitions: int) -> None:
    [outcome] = broker.call(create_topics, broker.broker, [NewTopic(name, partitions, 1)])
    assert outcome.error == 0


def ask(conn: Connection, *names: str, limit: int = 2000, cursor: tuple[str, int] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"topics": [{"name": name} for name in names], "response_partition_limit": limit}
    if cursor is not None:
        body["cursor"] = {"topic_name": cursor[0], "partition_index": cursor[1]}
    return conn.request(KEY, 0, body)


def pages(body: dict[str, Any]) -> list[tuple[str, list[int]]]:
    return [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in body["topics"]]


def cursor_of(body: dict[str, Any]) -> tuple[str, int] | None:
    cursor = body["next_cursor"]
    return None if cursor is None else (cursor["topic_name"], cursor["partition_index"])


@pytest.mark.real_socket
def test_a_topic_described_in_full(broker: Broker, conn: Connection) -> None:
    create(broker, "orders", 3)
    body = ask(conn, "orders")
    [topic] = body["topics"]
    assert (topic["error_code"], topic["name"], topic["is_internal"]) == (0, "orders", False)
    assert topic["topic_id"] == broker.broker.topics.get("orders").topic_id  # type: ignore[union-attr]
    assert topic["topic_authorized_operations"] == ALL_TOPIC_OPERATIONS
    assert [p["partition_index"] for p in topic["partitions"]] == [0, 1, 2]
    for partition in topic["partitions"]:
        assert (partition["error_code"], partition["leader_id"], partition["leader_epoch"]) == (0, 1, 0)
        assert (partition["replica_nodes"], partition["isr_nodes"], partition["offline_replicas"]) == ([1], [1], [])
        assert (partition["eligible_leader_replicas"], partition["last_known_elr"]) == ([], [])
    assert body["next_cursor"] is None


def test_topics_come_in_name_order_with_missing_and_illegal_ones(broker: Broker, conn: Connection) -> None:
    create(broker, "b-topic", 1)
    create(broker, "a-topic", 2)
    body = ask(conn, "zz-missing", "b-topic", "a-topic", "b-topic", "bad/name")
    assert pages(body) == [("a-topic", [0, 1]), ("b-topic", [0]), ("bad/name", []), ("zz-missing", [])]
    errors = {t["name"]: (t["error_code"], t["topic_id"], t["topic_authorized_operations"]) for t in body["topics"]}
    assert errors["zz-missing"] == (UNKNOWN_TOPIC_OR_PARTITION, ZERO, ALL_TOPIC_OPERATIONS)
    assert errors["bad/name"] == (INVALID_TOPIC_EXCEPTION, ZERO, ALL_TOPIC_OPERATIONS)
    assert body["next_cursor"] is None


def test_the_partition_limit_spans_topics_and_the_cursor_resumes(broker: Broker, conn: Connection) -> None:
    create(broker, "t1", 3)
    create(broker, "t2", 4)
    create(broker, "t3", 1)
    first = ask(conn, "t3", "t2", "t1", limit=5)
    # t1 fits whole (3 of 5), t2 does not: the answer stops inside it, at its first partition left out.
    assert pages(first) == [("t1", [0, 1, 2]), ("t2", [0, 1])]
    assert cursor_of(first) == ("t2", 2)
    second = ask(conn, "t3", "t2", "t1", limit=5, cursor=cursor_of(first))
    assert pages(second) == [("t2", [2, 3]), ("t3", [0])]
    assert second["next_cursor"] is None


def test_a_spent_budget_points_the_cursor_at_the_next_topic(broker: Broker, conn: Connection) -> None:
    create(broker, "t1", 2)
    create(broker, "t2", 2)
    body = ask(conn, "t1", "t2", limit=2)
    assert pages(body) == [("t1", [0, 1])]
    assert cursor_of(body) == ("t2", 0)


def test_the_broker_limit_caps_the_request_limit(make_broker: MakeBroker) -> None:
    with make_broker(broker_config(max_request_partition_size_limit=2)) as broker, broker.connect() as conn:
        create(broker, "wide", 5)
        body = ask(conn, "wide", limit=100)
        assert pages(body) == [("wide", [0, 1])]
        assert cursor_of(body) == ("wide", 2)


def test_all_topics_page_through_from_the_cursor_leaving_out_missing_ones(broker: Broker, conn: Connection) -> None:
    for name in ("alpha", "beta", "gamma"):
        create(broker, name, 2)
    seen: list[tuple[str, list[int]]] = []
    cursor: tuple[str, int] | None = None
    while True:
        body = ask(conn, limit=3, cursor=cursor)
        seen += pages(body)
        cursor = cursor_of(body)
        if cursor is None:
            break
    assert seen == [("alpha", [0, 1]), ("beta", [0]), ("beta", [1]), ("gamma", [0, 1])]
    # A cursor at a topic that no longer exists resumes at the next one.
    assert pages(ask(conn, cursor=("alpha-deleted", 1))) == [("beta", [0, 1]), ("gamma", [0, 1])]


def test_the_cursor_must_be_one_of_the_named_topics(broker: Broker, conn: Connection) -> None:
    create(broker, "t1", 1)
    body = ask(conn, "t1", "t2", cursor=("other", 0))
    assert [(t["name"], t["error_code"], t["partitions"]) for t in body["topics"]] == [
        ("t1", INVALID_REQUEST, []), ("t2", INVALID_REQUEST, [])]
    assert body["next_cursor"] is None
    # Topics before the cursor are not answered, even when they exist.
    assert pages(ask(conn, "t1", "t2", cursor=("t2", 0))) == [("t2", [])]


def test_a_cursor_past_the_last_partition_describes_none_of_it(broker: Broker, conn: Connection) -> None:
    create(broker, "t1", 2)
    create(broker, "t2", 1)
    body = ask(conn, "t1", "t2", cursor=("t1", 7))
    assert pages(body) == [("t1", []), ("t2", [0])]
    assert body["next_cursor"] is None


def test_a_limit_of_zero_or_less_is_one(broker: Broker, conn: Connection) -> None:
    create(broker, "t1", 2)
    create(broker, "t2", 1)
    for limit in (0, -1):
        body = ask(conn, "t1", "t2", limit=limit)
        assert (pages(body), cursor_of(body)) == ([("t1", [0])], ("t1", 1))


def test_internal_topics_are_described_as_internal(broker: Broker, conn: Connection) -> None:
    conn.request(10, 4, {"key_type": 0, "coordinator_keys": ["g"]})  # FindCoordinator creates __consumer_offsets
    body = ask(conn, "__consumer_offsets", limit=1)
    [topic] = body["topics"]
    assert (topic["name"], topic["is_internal"], len(topic["partitions"])) == ("__consumer_offsets", True, 1)
    assert cursor_of(body) == ("__consumer_offsets", 1)


def test_leaders_replicas_and_isr_agree_with_metadata_when_a_broker_stops(make_broker: MakeBroker) -> None:
    with make_broker(broker_config(brokers=3)) as broker, broker.connect() as conn:
        [outcome] = broker.call(create_topics, broker.broker, [NewTopic("spread", 3, 3)])
        assert outcome.error == 0
        broker.call(broker.broker.stop_node, 2)
        [topic] = ask(conn, "spread")["topics"]
        [expected] = conn.request(3, 12, {"topics": [{"name": "spread", "topic_id": ZERO}]})["topics"]
        fields = ("partition_index", "leader_id", "leader_epoch", "replica_nodes", "isr_nodes", "offline_replicas")
        described = [{f: p[f] for f in fields} for p in topic["partitions"]]
        assert described == [{f: p[f] for f in fields} for p in expected["partitions"]]
        assert all(p["leader_id"] != 2 and 2 not in p["isr_nodes"] and p["offline_replicas"] == [2]
                   for p in described)
        assert any(p["leader_epoch"] == 1 for p in described)  # the partition node 2 led moved on
