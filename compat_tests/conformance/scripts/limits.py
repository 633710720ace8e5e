"""Strings longer than Kafka's own records can hold (a classic string's int16 length, 32767 bytes), sent in the
flexible versions whose compact strings could carry them: Kafka's generated readers refuse them ("string field
... had invalid length") and the broker closes the connection, before any group, transactional id or topic half
exists. One byte less is a request like any other. An answer that would quote a long name past 32767 bytes
(ElectLeaders' "No such topic as <name>") cannot be written: Kafka answers the request's error response,
UNKNOWN_SERVER_ERROR, instead, in a classic version as in a flexible one."""

from __future__ import annotations

from compat_tests.conformance.scripts import step
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
    ])]
