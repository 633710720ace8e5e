"""Strings longer than Kafka's own records can hold (a classic string's int16 length, 32767 bytes), sent in the
flexible versions whose compact strings could carry them: Kafka's generated readers refuse them ("string field
... had invalid length") and the broker closes the connection, before any group, transactional id or topic half
exists. One byte less is a request like any other. An answer that would quote a long name past 32767 bytes
(ElectLeaders' "No such topic as <name>") cannot be written: Kafka answers the request's error response,
UNKNOWN_SERVER_ERROR, instead, in a classic version as in a flexible one."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import create_topic, step
from compat_tests.conformance.scripts.admin import _create
from compat_tests.conformance.scripts.groups import find_coordinator, join
from compat_tests.conformance.steps import Script, fresh_run

LONGEST = 0x7FFF


def long_name(prefix: str, length: int) -> str:
    """A name of `length` bytes once `{run}` is filled in."""
    return prefix + "{run}" + "x" * (length - len(prefix) - len(fresh_run()))


def scripts() -> list[Script]:
    over = LONGEST + 1
    return [Script("limits.long_strings", [
        join(9, long_name("conf-group-", over), name="join with a group id of 32768 bytes"),
        step("init producer id with a transactional id of 32768 bytes", 22, 5,
             {"transactional_id": long_name("conf-tid-", over), "transaction_timeout_ms": 60000,
              "producer_id": -1, "producer_epoch": -1}),
        find_coordinator(6, long_name("conf-key-", over), name="find coordinator of a key of 32768 bytes"),
        step("create a topic named with 32768 bytes", 19, 7, _create(long_name("conf-topic-", over), 7)),
        find_coordinator(6, long_name("conf-key-", LONGEST), name="find coordinator of a key of 32767 bytes"),
        *(step(f"elect leaders of an unknown topic of 32760 bytes v{version}", 43, version, {
            "election_type": 0, "timeout_ms": 30000,
            "topic_partitions": [{"topic": long_name("conf-el-", LONGEST - 7), "partitions": [0]}]})
          for version in (1, 2)),
    ]), batch_records_create_topics(),
            batch_records_create_partitions()]


# The KRaft controller builds the metadata records of one user operation in a BoundedList of
# MAX_RECORDS_PER_USER_OP (10000) records. A topic CreateTopics makes costs its TopicRecord, one ConfigRecord per
# config key, a ClearElrRecord for min.insync.replicas (eligible.leader.replicas.version is 1) and one
# PartitionRecord per partition; validate_only builds them too before it drops them.
MAX_RECORDS = 10_000


def _new_topic(name: str, partitions: int, configs: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    return {"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
            "configs": [{"name": k, "value": v} for k, v in configs or []]}


def _creating(*topics: dict[str, Any], validate_only: bool = True) -> dict[str, Any]:
    return {"topics": list(topics), "timeout_ms": 30000, "validate_only": validate_only}


def batch_records_create_topics() -> Script:
    """One over the limit refuses the whole request (the overflow escapes createTopics' per-topic catch of
    ApiException): every topic POLICY_VIOLATION "Unable to perform excessively large batch operation.", with
    or without validate_only. Past 10000 partitions the earlier check answers instead ("Excessively large
    number of partitions per request."). A topic refused on its own (existing, a bad config, a name given
    twice) writes no records."""
    big = "conf-batch-big-{run}"
    existing = "conf-batch-exists-{run}"
    return Script("limits.batch_records_create_topics", [
        step("9999 partitions, validate only", 19, 7, _creating(_new_topic(big, MAX_RECORDS - 1)),
             key_by={"configs": "name"}),
        step("10000 partitions, validate only", 19, 7, _creating(_new_topic(big, MAX_RECORDS))),
        step("10000 partitions", 19, 7, _creating(_new_topic(big, MAX_RECORDS), validate_only=False)),
        step("10001 partitions", 19, 7, _creating(_new_topic(big, MAX_RECORDS + 1), validate_only=False)),
        step("the refused topic is not created", 3, 12, {"topics": [{"name": big}],
                                                          "allow_auto_topic_creation": False}),
        step("9998 partitions and a config, validate only", 19, 7,
             _creating(_new_topic(big, MAX_RECORDS - 2, [("retention.ms", "1000")])), key_by={"configs": "name"}),
        step("9998 partitions and a config named twice, validate only", 19, 7,
             _creating(_new_topic(big, MAX_RECORDS - 2, [("retention.ms", "1000"), ("retention.ms", "2000")])),
             key_by={"configs": "name"}),
        step("9998 partitions and min.insync.replicas, validate only", 19, 7,
             _creating(_new_topic(big, MAX_RECORDS - 2, [("min.insync.replicas", "1")]))),
        step("9997 partitions and min.insync.replicas, validate only", 19, 7,
             _creating(_new_topic(big, MAX_RECORDS - 3, [("min.insync.replicas", "1")])),
             key_by={"configs": "name"}),
        step("9999 partitions beside a topic of 1, validate only", 19, 7,
             _creating(_new_topic(big, MAX_RECORDS - 1), _new_topic("conf-batch-small-{run}", 1))),
        step("9999 partitions beside a topic of 1", 19, 4,
             _creating(_new_topic(big, MAX_RECORDS - 1), _new_topic("conf-batch-small-{run}", 1),
                       validate_only=False)),
        *create_topic(existing),
        step("9999 partitions beside an existing topic, validate only", 19, 7,
             _creating(_new_topic(big, MAX_RECORDS - 1), _new_topic(existing, 1)), key_by={"configs": "name"}),
        step("9999 partitions beside a name given twice, validate only", 19, 7,
             _creating(_new_topic(big, MAX_RECORDS - 1), _new_topic("conf-batch-twice-{run}", 1),
                       _new_topic("conf-batch-twice-{run}", 1)), key_by={"configs": "name"}),
        step("9999 partitions beside a bad config, validate only", 19, 7,
             _creating(_new_topic(big, MAX_RECORDS - 1), _new_topic("conf-batch-bad-{run}", 1,
                                                                         [("cleanup.policy", "bogus")])),
             key_by={"configs": "name"}),
        step("delete the existing topic", 20, 6, {"topics": [{"name": existing, "topic_id": "AAAAAAAAAAAAAAAAAAAAAA"}],
                                                  "timeout_ms": 30000}),
    ])


def batch_records_create_partitions() -> Script:
    """CreatePartitions builds its records in the same kind of list, but catches the BoundedListTooLongException
    per topic as an unexpected error: UNKNOWN_SERVER_ERROR, no message. Without validate_only the records the
    list took before it overflowed are still committed (a 1-partition topic asked for 10002 is answered so and
    has 10001 partitions after, in Kafka 4.3.1): not a step here, kemu making 10000 logs outlasting a step's
    15 s on a loaded machine; tests/broker/test_partition_admin.py has it, with a smaller limit."""
    name = "conf-batch-cp-{run}"

    def grow(count: int, validate_only: bool = True) -> dict[str, Any]:
        return {"topics": [{"name": name, "count": count, "assignments": None}], "timeout_ms": 30000,
                "validate_only": validate_only}

    return Script("limits.batch_records_create_partitions", [
        *create_topic(name),
        step("to 10001, validate only", 37, 3, grow(MAX_RECORDS + 1)),
        step("to 10002, validate only", 37, 3, grow(MAX_RECORDS + 2)),
        step("still 1 partition", 37, 3, grow(1)),
    ])

