"""Raw admin requests the metadata and topic-administration differential tests send to both brokers, and the
shaping of their answers into observations keyed by natural ids (topic name, partition, config name).

Kafka applies a topic creation through its controller, so a topic a CreateTopics answered for may be missing
from the broker's metadata for a moment; `ensure_topic` waits until every partition has a leader, on either
broker, before a test reads it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from compat_tests.differential.targets import Target

METADATA, CREATE_TOPICS, DELETE_TOPICS, DESCRIBE_CONFIGS = 3, 19, 20, 32
ALTER_CONFIGS, CREATE_PARTITIONS, INCREMENTAL_ALTER_CONFIGS, DESCRIBE_TOPIC_PARTITIONS = 33, 37, 44, 75
RESOURCE_TOPIC, RESOURCE_BROKER, RESOURCE_GROUP = 2, 4, 32
WAIT_S = 30.0
ZERO_UUID = uuid.UUID(int=0)

T = TypeVar("T")


def wait_for(read: Callable[[], T], done: Callable[[T], bool], what: str, timeout: float = WAIT_S) -> T:
    """Read until `done(value)`; the last value, or AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still {value!r} after {timeout:.0f} s")
        time.sleep(0.05)


def new_topic(name: str, partitions: int = -1, replication: int = -1,
              assignments: Iterable[tuple[int, list[int]]] = (),
              configs: dict[str, str | None] | None = None) -> dict[str, Any]:
    return {"name": name, "num_partitions": partitions, "replication_factor": replication,
            "assignments": [{"partition_index": index, "broker_ids": brokers} for index, brokers in assignments],
            "configs": [{"name": key, "value": value} for key, value in (configs or {}).items()]}


def create_topics(target: Target, topics: list[dict[str, Any]], version: int = 7,
                  validate_only: bool = False) -> dict[str, Any]:
    return target.request(CREATE_TOPICS, version, {"topics": topics, "timeout_ms": 30_000,
                                                   "validate_only": validate_only})


def metadata(target: Target, version: int, names: list[str] | None, *, auto_create: bool = False,
             topic_ids: list[uuid.UUID] | None = None, authorized_operations: bool = False) -> dict[str, Any]:
    topics: list[dict[str, Any]] | None
    if topic_ids is not None:
        topics = [{"name": None, "topic_id": topic_id} for topic_id in topic_ids]
    else:
        topics = None if names is None else [{"name": name, "topic_id": ZERO_UUID} for name in names]
    return target.request(METADATA, version, {
        "topics": topics, "allow_auto_topic_creation": auto_create,
        "include_cluster_authorized_operations": authorized_operations,
        "include_topic_authorized_operations": authorized_operations})


def topic_state(target: Target, name: str) -> dict[str, Any] | None:
    """The topic as Metadata v12 shows it once every partition has a leader, else None."""
    [topic] = metadata(target, 12, [name])["topics"]
    ready = topic["error_code"] == 0 and topic["partitions"] and all(
        p["error_code"] == 0 and p["leader_id"] >= 0 for p in topic["partitions"])
    return topic if ready else None


def ensure_topic(target: Target, name: str, partitions: int = 1,
                 configs: dict[str, str | None] | None = None) -> dict[str, Any]:
    """Create the topic unless it exists (an earlier test of the session may have made it); its metadata once
    every partition has a leader."""
    if topic_state(target, name) is None:
        answer = create_topics(target, [new_topic(name, partitions, 1, configs=configs)])
        [result] = answer["topics"]
        assert result["error_code"] in (0, 36), f"{target.name}: creating {name}: {result}"
    found = wait_for(lambda: topic_state(target, name), lambda state: state is not None,
                     f"{target.name}: topic {name} ready")
    assert found is not None
    return found


def delete_topics(target: Target, names: list[str]) -> dict[str, Any]:
    return target.request(DELETE_TOPICS, 6, {"topics": [{"name": name, "topic_id": ZERO_UUID} for name in names],
                                             "timeout_ms": 30_000})


def describe_configs(target: Target, resources: list[tuple[int, str, list[str] | None]], version: int = 4, *,
                     synonyms: bool = False, documentation: bool = False) -> dict[str, Any]:
    return target.request(DESCRIBE_CONFIGS, version, {
        "resources": [{"resource_type": kind, "resource_name": name, "configuration_keys": keys}
                      for kind, name, keys in resources],
        "include_synonyms": synonyms, "include_documentation": documentation})


def keyed(entries: Iterable[dict[str, Any]], key: str) -> dict[str, Any]:
    """A list of entries as a dict by one field (left out of each entry); a key seen again gets `#2`, `#3`..."""
    out: dict[str, Any] = {}
    for entry in entries:
        base = str(entry[key])
        name, count = base, 1
        while name in out:
            count += 1
            name = f"{base}#{count}"
        out[name] = {field: value for field, value in entry.items() if field != key}
    return out


def by_partition(topic: dict[str, Any]) -> dict[str, Any]:
    """A Metadata or DescribeTopicPartitions topic with its partitions keyed by index."""
    return {**topic, "partitions": keyed(topic.get("partitions", []), "partition_index")}
