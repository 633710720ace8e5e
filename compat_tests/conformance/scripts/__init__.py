"""The conformance scripts: the requests of the corpus, written here; the answers only ever come from Kafka.

Each module's `scripts()` returns its scripts. Helpers here build the set-up steps many scripts share (a topic
created and its leader known, records produced) and the version spreads (every version Kafka's spec has, and
below and above them the unsupported ones, in unsupported.py: Kafka closes the connection).
"""

from __future__ import annotations

from typing import Any

from compat_tests.conformance import protocol
from compat_tests.conformance.steps import Script, Step

# Error codes that only say Kafka is still settling: a new topic's leader not yet known to the broker, a
# coordinator still loading its partition, a transaction's markers still being written.
LEADER_SETTLING = (3, 5, 6)  # UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER
COORDINATOR_SETTLING = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR
CONCURRENT_TRANSACTIONS = (51,)
TIMESTAMP = 1_700_000_000_000
# The APIs kemu served when these scripts were written, each with the highest version it served then
# (its ApiVersions answer). Kept here rather than read from kemu, so that kemu gaining a version changes
# no request of the corpus: its answer is then compared with Kafka's recorded one. An API kemu serves that
# is not here fails test_replay_against_kemu until scripts for it are written.
KEMU_HIGHEST: dict[int, int] = {
    0: 11, 1: 17, 2: 10, 3: 12, 8: 9, 9: 9, 10: 6, 11: 9, 12: 4, 13: 5, 14: 5, 15: 5, 16: 5, 17: 1, 18: 4, 19: 7,
    20: 6, 21: 2, 22: 5, 23: 4, 24: 5, 25: 4, 26: 4, 27: 1, 28: 4, 29: 3, 30: 3, 31: 3, 32: 4, 33: 2, 35: 4, 36: 2,
    37: 3, 42: 2, 43: 2, 44: 1, 45: 0, 46: 0, 47: 0, 50: 0, 51: 0, 57: 2, 60: 1, 61: 0, 65: 0, 66: 1, 68: 1, 69: 0,
    75: 0,
    55: 2, 74: 1,  # added with their scripts (quorum.py)
    48: 1, 49: 1,  # added with their scripts (client_quotas.py)
    76: 1, 77: 1, 78: 2, 79: 2,  # added with their scripts (share.py)
    90: 1, 91: 0, 92: 0,  # added with their scripts (share_offsets.py)
    38: 3, 39: 2, 40: 2, 41: 3,  # added with their scripts (tokens.py)
    71: 0, 72: 0,  # added with their scripts (telemetry.py)
    34: 2, 64: 0, 80: 1, 81: 0,  # added with their scripts (operations.py)
    88: 0, 89: 0,  # added with their scripts (streams.py)
}
SETTLING_WHY = ("a new topic's leader reaches the broker's metadata, and then its replica manager, a moment after "
                "CreateTopics returns")


def spec_versions(api_key: int) -> range:
    valid = protocol.request_spec(api_key).valid
    return range(valid.low, valid.high + 1)


def versions(api_key: int) -> list[int]:
    """Every version Kafka's spec has (the versions only kemu declares are unsupported.py's), those kemu did
    not serve when the scripts were written last: a step Kafka answers and kemu closes on changes no state a
    later step reads."""
    return sorted(spec_versions(api_key), key=lambda version: (version > KEMU_HIGHEST[api_key], version))


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
        client_quotas,
        cluster,
        data,
        groups,
        limits,
        metadata,
        operations,
        quorum,
        security,
        share,
        share_offsets,
        streams,
        telemetry,
        tokens,
        transactions,
        unsupported,
    )
    found: list[Script] = []
    for module in (unsupported, metadata, admin, data, groups, transactions, security, authorizer, cluster, quorum,
                   limits, share, share_offsets, streams, tokens, telemetry, client_quotas, operations):
        found += module.scripts()
    names = [script.name for script in found]
    if len(set(names)) != len(names):
        raise ValueError("two conformance scripts share a name")
    return found
