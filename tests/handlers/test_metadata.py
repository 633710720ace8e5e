"""Metadata version by version, with Kafka's errors and auto-creation (in-process; the advertised endpoint
through a real socket)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kemu.admin.topics import NewTopic, create_topics
from tests.handlers.harness import Broker, Connection, MakeBroker, broker_config

KEY = 3
ZERO = uuid.UUID(int=0)
NOT_REQUESTED = -2147483648


def named(*names: str | None) -> dict[str, Any]:
    return {"topics": [{"name": name} for name in names]}


def create(broker: Broker, name: str, partitions: int = 1) -> None:
    [outcome] = broker.call(create_topics, broker.broker, [NewTopic(name, partitions, 1)])
    assert outcome.error == 0


@pytest.mark.parametrize("version", range(14))
def test_existing_topic_every_version(broker: Broker, conn: Connection, version: int) -> None:
    create(broker, "orders", 3)
    body = conn.request(KEY, version, named("orders"))
    assert body["brokers"] == [{"node_id": 1, "host": "127.0.0.1", "port": broker.port, "rack": None}]
    [topic] = body["topics"]
    assert (topic["error_code"], topic["name"], topic["is_internal"]) == (0, "orders", False)
    assert [p["partition_index"] for p in topic["partitions"]] == [0, 1, 2]
    for partition in topic["partitions"]:
        assert (partition["error_code"], partition["leader_id"]) == (0, 1)
        assert (partition["replica_nodes"], partition["isr_nodes"], partition["offline_replicas"]) == ([1], [1], [])
        assert partition["leader_epoch"] == (0 if version >= 7 else -1)
    topic_id = broker.broker.topics.get("orders").topic_id  # type: ignore[union-attr]
    assert topic["topic_id"] == (topic_id if version >= 10 else ZERO)
    assert body["cluster_id"] == (broker.broker.cluster_id if version >= 2 else None)
    assert body["controller_id"] == (1 if version >= 1 else -1)
    assert topic["topic_authorized_operations"] == NOT_REQUESTED
    assert body["error_code"] == 0  # v13's top-level error (absent before: the decoder's default)


@pytest.mark.parametrize("version", range(14))
def test_auto_creation_answers_leader_not_available_first(broker: Broker, conn: Connection,
                                                          version: int) -> None:
    [first] = conn.request(KEY, version, named("auto"))["topics"]
    assert (first["error_code"], first["name"], first["partitions"], first["topic_id"]) == (3, "auto", [], ZERO)
    [second] = conn.request(KEY, version, named("auto"))["topics"]
    assert second["error_code"] == 0 and len(second["partitions"]) == 1


def test_auto_created_topic_uses_num_partitions(make_broker: MakeBroker) -> None:
    with make_broker(broker_config(num_partitions=4)) as broker, broker.connect() as conn:
        conn.request(KEY, 12, named("auto"))
        [topic] = conn.request(KEY, 12, named("auto"))["topics"]
        assert len(topic["partitions"]) == 4


@pytest.mark.parametrize("version", range(4, 14))
def test_request_may_refuse_auto_creation(broker: Broker, conn: Connection, version: int) -> None:
    body = conn.request(KEY, version, {**named("nope"), "allow_auto_topic_creation": False})
    [topic] = body["topics"]
    assert (topic["error_code"], topic["name"]) == (3, "nope")
    assert "nope" not in broker.broker.topics


def test_broker_config_may_refuse_auto_creation(make_broker: MakeBroker) -> None:
    with make_broker(broker_config(auto_create_topics_enable=False)) as broker:
        with broker.connect() as conn:
            assert conn.request(KEY, 1, named("nope"))["topics"][0]["error_code"] == 3
            assert conn.request(KEY, 12, named("nope"))["topics"][0]["error_code"] == 3
        assert len(broker.broker.topics) == 0


@pytest.mark.parametrize("allow", [True, False])
@pytest.mark.parametrize("name", ["bad name", "", "..", "x" * 250])
def test_invalid_names(broker: Broker, conn: Connection, name: str, allow: bool) -> None:
    body = conn.request(KEY, 12, {**named(name), "allow_auto_topic_creation": allow})
    assert [(t["error_code"], t["name"]) for t in body["topics"]] == [(17, name)]
    assert len(broker.broker.topics) == 0


def test_all_topics(broker: Broker, conn: Connection) -> None:
    create(broker, "a")
    create(broker, "b")
    assert sorted(t["name"] for t in conn.request(KEY, 0, {"topics": []})["topics"]) == ["a", "b"]
    assert conn.request(KEY, 1, {"topics": []})["topics"] == []
    for version in (1, 4, 9, 12):
        body = conn.request(KEY, version, {"topics": None})
        assert sorted(t["name"] for t in body["topics"]) == ["a", "b"]
    assert len(broker.broker.topics) == 2  # asking for all topics creates none


def test_existing_topics_come_first_and_duplicates_once(broker: Broker, conn: Connection) -> None:
    create(broker, "there")
    body = conn.request(KEY, 12, {**named("missing", "there", "there"), "allow_auto_topic_creation": False})
    assert [(t["name"], t["error_code"]) for t in body["topics"]] == [("there", 0), ("missing", 3)]


def test_internal_topics_are_flagged(broker: Broker, conn: Connection) -> None:
    [first] = conn.request(KEY, 12, named("__consumer_offsets"))["topics"]
    assert (first["error_code"], first["is_internal"]) == (3, True)
    [topic] = conn.request(KEY, 12, named("__consumer_offsets"))["topics"]
    assert topic["is_internal"] and len(topic["partitions"]) == broker.config.offsets_topic_num_partitions


def test_authorized_operations_when_asked(broker: Broker, conn: Connection) -> None:
    create(broker, "t")
    body = conn.request(KEY, 10, {**named("t"), "include_topic_authorized_operations": True,
                                  "include_cluster_authorized_operations": True})
    # READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS
    assert body["topics"][0]["topic_authorized_operations"] == 3576
    # CREATE ALTER DESCRIBE CLUSTER_ACTION DESCRIBE_CONFIGS ALTER_CONFIGS IDEMPOTENT_WRITE
    assert body["cluster_authorized_operations"] == 8096
    plain = conn.request(KEY, 10, named("t"))
    assert plain["topics"][0]["topic_authorized_operations"] == NOT_REQUESTED
    assert plain["cluster_authorized_operations"] == NOT_REQUESTED


def test_v12_lookup_by_topic_id(broker: Broker, conn: Connection) -> None:
    create(broker, "t", 2)
    topic_id = broker.broker.topics.get("t").topic_id  # type: ignore[union-attr]
    unknown = uuid.uuid4()
    body = conn.request(KEY, 12, {"topics": [{"topic_id": topic_id, "name": None},
                                             {"topic_id": unknown, "name": None}]})
    assert [(t["name"], t["topic_id"], t["error_code"]) for t in body["topics"]] == [
        ("t", topic_id, 0), (None, unknown, 100)]


@pytest.mark.parametrize("version", [10, 11])
def test_topic_ids_or_null_names_before_v12_are_invalid_requests(conn: Connection, version: int) -> None:
    some_id = uuid.uuid4()
    body = conn.request(KEY, version, {"topics": [{"topic_id": some_id, "name": "t"}]})
    assert [(t["name"], t["topic_id"], t["error_code"], t["partitions"]) for t in body["topics"]] == [
        ("t", some_id, 42, [])]
    assert body["brokers"] == []
    body = conn.request(KEY, version, {"topics": [{"name": None}]})
    assert [(t["name"], t["error_code"]) for t in body["topics"]] == [("", 42)]


@pytest.mark.real_socket
def test_advertised_host_and_rack(make_broker: MakeBroker) -> None:
    """The port advertised is the one the listener bound."""
    config = broker_config(advertised_host="kafka.example", rack="r1", node_id=7)
    with make_broker(config) as broker, broker.connect() as conn:
        body = conn.request(KEY, 12, {"topics": None})
        assert body["brokers"] == [{"node_id": 7, "host": "kafka.example", "port": broker.port, "rack": "r1"}]
        assert body["controller_id"] == 7
