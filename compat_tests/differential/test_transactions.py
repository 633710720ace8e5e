"""Transactions, Kafka 4.3 against kemu, driven as a transaction-version-1 client drives them (txn_wire.py):
commit and abort, the markers in the log, watermarks and the last stable offset, read_committed and
read_uncommitted Fetch, several producers and partitions interleaved; and librdkafka's transactional
producer on the same paths.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import Producer

from compat_tests.differential import txn_wire as w
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target


def test_commit_and_abort_markers(pair: Pair) -> None:
    """One producer commits a transaction over two partitions (and a third it adds but never writes to), then
    aborts one: the markers, offsets, watermarks, aborted list and what each isolation level fetches."""
    topic, tid = w.unique("txn-markers"), w.unique("txn-markers-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 3)
        p = w.producer(target, tid)
        with p.connection:
            p.init()
            p.add("add-1", [(topic, 0), (topic, 1), (topic, 2)])
            p.produce("produce-1-p0", topic, 0, [b"a", b"b"])
            p.produce("produce-1-p1", topic, 1, [b"c"])
            p.note("describe-ongoing", w.describe(target, tid))
            p.end("commit", True)
            w.wait_complete(target, tid)
            p.note("describe-committed", w.describe(target, tid))
            p.add("add-2", [(topic, 0), (topic, 2)])
            p.produce("produce-2-p0", topic, 0, [b"d", b"e", b"f"])
            p.end("abort", False)
            w.wait_complete(target, tid)
            p.note("describe-aborted", w.describe(target, tid))
            partitions = [(topic, 0), (topic, 1), (topic, 2)]
            p.note("fetch-read-committed", w.fetch(target, partitions, w.READ_COMMITTED))
            p.note("fetch-read-uncommitted", w.fetch(target, partitions, w.READ_UNCOMMITTED))
            p.note("fetch-read-committed-from-3", w.fetch(target, partitions, w.READ_COMMITTED, offset=3))
            p.note("producers", w.describe_producers(target, partitions))
            return p.seen

    kafka, kemu = pair.both(scenario)
    check("transactions.commit_and_abort", kafka, kemu)


def test_interleaved_producers_hold_the_lso(pair: Pair) -> None:
    """Three producers over three partitions, their transactions open and closed out of order: the LSO each
    partition reports stops at the first offset of its earliest open transaction, and moves as they end."""
    topic = w.unique("txn-lso")
    tids = [w.unique(f"txn-lso-{n}") for n in range(3)]

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 3)
        producers = [w.producer(target, tid) for tid in tids]
        partitions = [(topic, n) for n in range(3)]
        a, b, c = producers
        seen: dict[str, Any] = {}
        try:
            for p in producers:
                p.init()
            a.add("add", partitions)
            b.add("add", [(topic, 0), (topic, 1)])
            c.add("add", [(topic, 1), (topic, 2)])
            a.produce("p0", topic, 0, [b"a0"])
            b.produce("p0", topic, 0, [b"b0", b"b0'"])
            c.produce("p1", topic, 1, [b"c1"])
            b.produce("p1", topic, 1, [b"b1"])
            a.produce("p1", topic, 1, [b"a1"])
            c.produce("p2", topic, 2, [b"c2"])
            a.produce("p2", topic, 2, [b"a2"])
            seen["all-open"] = w.fetch(target, partitions, w.READ_COMMITTED)
            names = {p.producer_id: name for p, name in zip(producers, "abc", strict=True)}
            seen["all-open-producers"] = w.describe_producers(target, partitions, names)
            b.end("abort", False)
            w.wait_complete(target, tids[1])
            seen["b-aborted"] = w.fetch(target, partitions, w.READ_COMMITTED)
            c.end("commit", True)
            w.wait_complete(target, tids[2])
            seen["c-committed"] = w.fetch(target, partitions, w.READ_COMMITTED)
            seen["ongoing-listed"] = w.list_transactions(target, "txn-lso-", states=["Ongoing"])
            a.end("abort", False)
            w.wait_complete(target, tids[0])
            seen["a-aborted"] = w.fetch(target, partitions, w.READ_COMMITTED)
            seen["a-aborted-uncommitted"] = w.fetch(target, partitions, w.READ_UNCOMMITTED)
            seen["a-aborted-first-batch"] = w.fetch(target, partitions, w.READ_COMMITTED, max_bytes=1)
            seen["a-aborted-from-2"] = w.fetch(target, partitions, w.READ_COMMITTED, offset=2, max_bytes=1)
            seen["producers"] = w.describe_producers(target, partitions, names)
            seen["describe"] = w.describe(target, *tids)
        finally:
            for p in producers:
                p.connection.close()
        seen["steps"] = [p.seen for p in producers]
        return seen

    kafka, kemu = pair.both(scenario)
    check("transactions.interleaved_lso", kafka, kemu)


def librdkafka_transactions(topic: str, tid: str) -> Any:
    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 2)
        producer = Producer({"bootstrap.servers": target.bootstrap, "transactional.id": tid, "linger.ms": 0,
                             "transaction.timeout.ms": 30000})
        producer.init_transactions(30)
        producer.begin_transaction()
        for n in range(3):
            producer.produce(topic, value=f"kept-{n}".encode(), partition=n % 2, timestamp=w.RECORD_TIME + n)
        producer.commit_transaction(30)
        producer.begin_transaction()
        producer.produce(topic, value=b"dropped", partition=1, timestamp=w.RECORD_TIME)
        producer.flush(30)
        producer.abort_transaction(30)
        w.wait_complete(target, tid)
        partitions = [(topic, 0), (topic, 1)]
        seen = {"committed": w.fetch(target, partitions, w.READ_COMMITTED),
                "uncommitted": w.fetch(target, partitions, w.READ_UNCOMMITTED),
                "describe": w.describe(target, tid), "producers": w.describe_producers(target, partitions)}
        return seen

    return scenario


def test_librdkafka_commit_then_abort(pair: Pair) -> None:
    """confluent-kafka's transactional producer: one transaction committed, one aborted."""
    kafka, kemu = pair.both(librdkafka_transactions(w.unique("txn-rdkafka"), w.unique("txn-rdkafka-id")))
    check("transactions.librdkafka_commit_then_abort", kafka, kemu)
