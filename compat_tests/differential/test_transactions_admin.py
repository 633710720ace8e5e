"""The transaction admin APIs, Kafka 4.3 against kemu: DescribeProducers (key 61), DescribeTransactions (65)
and ListTransactions (66) during and after transactions, with their filters, unknown ids and names."""

from __future__ import annotations

import time
from typing import Any

import pytest

from compat_tests.differential import txn_wire as w
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target

STATES = ["Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
          "PrepareEpochFence"]


def listings(target: Target, prefix: str, producer_ids: list[int], version: int) -> dict[str, Any]:
    """ListTransactions under every filter this test cares about."""
    seen = {"all": w.list_transactions(target, prefix, version=version),
            "unknown-state": w.list_transactions(target, prefix, states=["Bogus", "ongoing"], version=version),
            "by-producer": w.list_transactions(target, prefix, producer_ids=producer_ids[:1], version=version),
            "unknown-producer": w.list_transactions(target, prefix, producer_ids=[987654321], version=version)}
    for state in STATES:
        seen[f"state-{state}"] = w.list_transactions(target, prefix, states=[state], version=version)
    if version >= 1:
        # Transactions started more than an hour ago: only ids that never started one (start time -1).
        seen["older-than-an-hour"] = w.list_transactions(target, prefix, duration_ms=3_600_000, version=version)
        time.sleep(0.01)  # so that every transaction below started more than 1 ms ago
        seen["older-than-1ms"] = w.list_transactions(target, prefix, duration_ms=1, version=version)
        seen["state-and-duration"] = w.list_transactions(target, prefix, states=["Ongoing"], duration_ms=1,
                                                         version=version)
    if version >= 2:
        # KIP-1152: the whole id must match (RE2/J); a pattern it refuses fails the request.
        for name, pattern in (("whole", f"{prefix}-(ongoing|committed)"), ("prefix-only", prefix),
                              ("any", f"{prefix}.*"), ("empty", ""), ("bad", "(("), ("lookahead", "(?=x).*")):
            seen[f"pattern-{name}"] = w.list_transactions(target, prefix, pattern=pattern, version=version)
        seen["pattern-and-state"] = w.list_transactions(target, prefix, states=["Empty"], pattern=f"{prefix}.*",
                                                        version=version)
    return seen


@pytest.mark.parametrize("version", [0, 1, 2])
def test_list_and_describe_transactions(pair: Pair, version: int) -> None:
    prefix = w.unique("txn-admin")
    topic = prefix
    names = ["empty", "ongoing", "committed", "aborted"]
    tids = {name: f"{prefix}-{name}" for name in names}

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 2)
        producers = {name: w.producer(target, tid) for name, tid in tids.items()}
        seen: dict[str, Any] = {}
        try:
            for p in producers.values():
                p.init()
            for name in ("ongoing", "committed", "aborted"):
                producers[name].add("add", [(topic, 0), (topic, 1)])
                producers[name].produce("produce", topic, 0, [name.encode()])
            seen["describe-open"] = w.describe(target, *tids.values())
            producers["committed"].end("end", True)
            producers["aborted"].end("end", False)
            w.wait_complete(target, tids["committed"], tids["aborted"])
            names_by_pid = {p.producer_id: name for name, p in producers.items()}
            seen["list"] = listings(target, prefix, [producers["ongoing"].producer_id], version)
            seen["describe"] = w.describe(target, *tids.values(), f"{prefix}-unknown", "")
            seen["producers"] = w.describe_producers(target, [(topic, 0), (topic, 1), (topic, 2)], names_by_pid)
            producers["ongoing"].end("end", True)
            w.wait_complete(target, tids["ongoing"])
            seen["list-after"] = w.list_transactions(target, prefix, version=version)
            seen["describe-after"] = w.describe(target, tids["ongoing"])
            seen["producers-after"] = w.describe_producers(target, [(topic, 0), (topic, 1)], names_by_pid)
        finally:
            for p in producers.values():
                p.connection.close()
        seen["steps"] = {name: p.seen for name, p in producers.items()}
        # The listings hold each id's producer id; name them so the comparison needs no placeholder order.
        return rename_producer_ids(seen, {p.producer_id: f"<{name}>" for name, p in producers.items()})

    kafka, kemu = pair.both(scenario)
    check(f"transactions.list_and_describe.v{version}", kafka, kemu)


def rename_producer_ids(value: Any, names: dict[int, str]) -> Any:
    """Each producer id replaced by its producer's name; an error entry's producer id (0) is left alone,
    though a fresh kemu hands out 0 as its first producer id."""
    if isinstance(value, dict) and value.get("error_code", "NONE") != "NONE":
        return value
    if isinstance(value, dict):
        return {k: (names.get(v, v) if k == "producer_id" and isinstance(v, int) else rename_producer_ids(v, names))
                for k, v in value.items()}
    if isinstance(value, list):
        return [rename_producer_ids(item, names) for item in value]
    return value


def test_describe_producers_errors(pair: Pair) -> None:
    """DescribeProducers of a topic that does not exist, a partition that does not, an illegal topic name, an
    idempotent producer beside a transactional one."""
    topic, tid = w.unique("txn-producers"), w.unique("txn-producers-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 1)
        p = w.producer(target, tid)
        with p.connection:
            p.init()
            p.add("add", [(topic, 0)])
            p.produce("produce", topic, 0, [b"t"])
            idempotent = w.RawProducer(p.connection, None)
            idempotent.init("init-idempotent")
            p.note("init-idempotent", idempotent.seen["init-idempotent"])
            p.note("produce-idempotent", idempotent.produce("produce-idempotent", topic, 0, [b"i", b"j"],
                                                            transactional=False))
            names = {p.producer_id: "transactional", idempotent.producer_id: "idempotent"}
            p.note("producers", w.describe_producers(target, [(topic, 0), (topic, 3)], names))
            p.note("unknown-topic", w.describe_producers(target, [(topic + "-nope", 0)]))
            p.note("illegal-name", w.describe_producers(target, [("bad/name", 0)]))
            p.note("empty-name", w.describe_producers(target, [("", 0)]))
            p.end("abort", False)
            return p.seen

    kafka, kemu = pair.both(scenario)
    check("transactions.describe_producers_errors", kafka, kemu)
