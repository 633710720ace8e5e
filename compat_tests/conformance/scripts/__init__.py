"""The conformance scripts: the requests of the corpus, written here; the answers only ever come from Kafka.

Each module's `scripts()` returns its scripts. Helpers here build the set-up steps many scripts share (a topic
created and its leader known, records produced) and the version spreads (every version Kafka's spec has, and
below and above them the unsupported ones, in unsupported.py: Kafka closes the connection).
"""

from __future__ import annotations

from typing import Any

from compat_tests.conformance import protocol
from compat_tests.conformance.steps import Script, Step
from kemu.wire.apis import VERSIONS as KEMU_VERSIONS

# Error codes that only say Kafka is still settling: a new topic's leader not yet known to the broker, a
# coordinator still loading its partition, a transaction's markers still being written.
LEADER_SETTLING = (3, 5, 6)  # UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER
COORDINATOR_SETTLING = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR
CONCURRENT_TRANSACTIONS = (51,)
TIMESTAMP = 1_700_000_000_000
SETTLING_WHY = ("a new topic's leader reaches the broker's metadata, and then its replica manager, a moment after "
                "CreateTopics returns")


def spec_versions(api_key: int) -> range:
    valid = protocol.request_spec(api_key).valid
    return range(valid.low, valid.high + 1)


def versions(api_key: int) -> list[int]:
    """Every version Kafka's spec has (the versions only kemu declares are unsupported.py's), those kemu
    does not declare last: a step Kafka answers and kemu closes on changes no state a later step reads."""
    kemu_high = KEMU_VERSIONS.get(api_key, (0, -1))[1]
    return sorted(spec_versions(api_key), key=lambda version: (version > kemu_high, version))


def step(name: str, api_key: int, version: int, request: dict[str, Any], **options: Any) -> Step:
    return Step(name, api_key, version, request, **options)


def create_topic(topic: str, partitions: int = 1, configs: dict[str, str] | None = None) -> list[Step]:
    """CreateTopics (v4: its answer holds no configs to compare again in every script), then Metadata until
    the broker knows the leader, capturing the topic id as `{$topic_id}`."""
    return [
        step(f"create {topic}", 19, 4, {
            "topics": [{"name": topic, "num_partitions": partitions, "replication_factor": 1,
                        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
            "timeout_ms": 30000, "validate_only": False}),
        step(f"leader of {topic}", 3, 12, {"topics": [{"name": topic}], "allow_auto_topic_creation": False},
             retry_on=LEADER_SETTLING, capture={"topic_id": "topics/0/topic_id"}, why=SETTLING_WHY),
        step(f"{topic} served", 2, 9, {"replica_id": -1, "isolation_level": 0, "timeout_ms": 30000, "topics": [
            {"name": topic, "partitions": [{"partition_index": index, "current_leader_epoch": -1, "timestamp": -1}
                                           for index in range(partitions)]}]},
             retry_on=LEADER_SETTLING, why=SETTLING_WHY, key_by={"topics": "name", "partitions": "partition_index"}),
    ]


def barrier(name: str) -> list[Step]:
    """A topic created and waited for: once the broker serves it, it has applied every metadata record written
    before it (a config just altered, partitions just added), the metadata log being one ordered log."""
    return create_topic(f"conf-barrier-{name}-{{run}}")


def batch(values: list[str], *, producer_id: int | str = -1, producer_epoch: int | str = -1,
          base_sequence: int = -1, transactional: bool = False) -> dict[str, Any]:
    return {"base_offset": 0, "partition_leader_epoch": -1, "attributes": 0x10 if transactional else 0,
            "last_offset_delta": len(values) - 1, "base_timestamp": TIMESTAMP,
            "max_timestamp": TIMESTAMP + len(values) - 1, "producer_id": producer_id,
            "producer_epoch": producer_epoch, "base_sequence": base_sequence,
            "records": [{"attributes": 0, "timestamp_delta": index, "offset_delta": index, "key": f"k{index}",
                         "value": value, "headers": [{"key": "h", "value": "v"}] if index == 0 else []}
                        for index, value in enumerate(values)]}


def produce(topic: str, values: list[str], version: int = 9, partition: int = 0, acks: int = -1,
            name: str | None = None, **batch_options: Any) -> Step:
    body: dict[str, Any] = {"transactional_id": batch_options.pop("transactional_id", None), "acks": acks,
                            "timeout_ms": 30000,
                            "topic_data": [{"name": topic, **({"topic_id": "{$topic_id}"} if version >= 13 else {}),
                                            "partition_data": [{"index": partition,
                                                                "records": [batch(values, **batch_options)]}]}]}
    return step(name or f"produce {len(values)} to {topic}", 0, version, body)


def all_scripts() -> list[Script]:
    from compat_tests.conformance.scripts import (
        admin,
        authorizer,
        cluster,
        data,
        groups,
        metadata,
        security,
        transactions,
        unsupported,
    )
    found: list[Script] = []
    for module in (unsupported, metadata, admin, data, groups, transactions, security, authorizer, cluster):
        found += module.scripts()
    names = [script.name for script in found]
    if len(set(names)) != len(names):
        raise ValueError("two conformance scripts share a name")
    return found
