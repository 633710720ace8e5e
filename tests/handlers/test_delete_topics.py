from __future__ import annotations

import uuid

import pytest

from kemu.admin.topics import NewTopic, create_topics
from tests.handlers.harness import Broker, Connection, MakeBroker, broker_config

KEY = 20
ZERO = uuid.UUID(int=0)


def create(broker: Broker, *names: str) -> None:
    broker.call(create_topics, broker.broker, [NewTopic(name) for name in names])


@pytest.mark.parametrize("version", range(1, 6))
def test_delete_by_name(broker: Broker, conn: Connection, version: int) -> None:
    create(broker, "a", "b")
    body = conn.request(KEY, version, {"topic_names": ["a", "missing"], "timeout_ms": 1000})
    results = {r["name"]: (r["error_code"], r["error_message"]) for r in body["responses"]}
    # v5+ carries messages: an error without one of its own has its code's default, as Kafka's ApiError.
    missing = "This server does not host this topic-partition." if version >= 5 else None
    assert results == {"a": (0, None), "missing": (3, missing)}
    assert [t.name for t in broker.broker.topics] == ["b"]


@pytest.mark.real_socket
def test_v6_by_name_and_by_id(broker: Broker, conn: Connection) -> None:
    create(broker, "a", "b")
    a_id = broker.broker.topics.get("a").topic_id  # type: ignore[union-attr]
    b_id = broker.broker.topics.get("b").topic_id  # type: ignore[union-attr]
    unknown = uuid.uuid4()
    body = conn.request(KEY, 6, {"topics": [{"name": "a"}, {"name": None, "topic_id": b_id},
                                            {"name": None, "topic_id": unknown}, {"name": "gone"}]})
    assert {(r["name"], r["topic_id"], r["error_code"]) for r in body["responses"]} == {
        ("a", a_id, 0), ("b", b_id, 0), (None, unknown, 100), ("gone", ZERO, 3)}
    assert len(broker.broker.topics) == 0


def test_v6_invalid_requests(broker: Broker, conn: Connection) -> None:
    create(broker, "a")
    a_id = broker.broker.topics.get("a").topic_id  # type: ignore[union-attr]
    body = conn.request(KEY, 6, {"topics": [{"name": None}, {"name": "a", "topic_id": a_id}]})
    assert {(r["name"], r["error_code"], r["error_message"]) for r in body["responses"]} == {
        (None, 42, "Neither topic name nor id were specified."),
        ("a", 42, "You may not specify both topic name and topic id.")}
    assert "a" in broker.broker.topics


@pytest.mark.parametrize(("version", "code"), [(1, 42), (2, 42), (3, 73), (6, 73)])
def test_deletion_disabled(make_broker: MakeBroker, version: int, code: int) -> None:
    with make_broker(broker_config(delete_topic_enable=False)) as broker:
        create(broker, "a")
        with broker.connect() as conn:
            body = (conn.request(KEY, version, {"topics": [{"name": "a"}]}) if version >= 6
                    else conn.request(KEY, version, {"topic_names": ["a"]}))
        assert [(r["name"], r["error_code"]) for r in body["responses"]] == [("a", code)]
        assert "a" in broker.broker.topics
