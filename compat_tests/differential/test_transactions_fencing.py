"""Fencing and timeouts, Kafka 4.3 against kemu: a second InitProducerId on a transactional id with a
transaction open aborts it and bumps the epoch; what the fenced producer's requests then answer, by version;
KIP-360's epoch bump by a producer that names its id and epoch; a transaction left open past its timeout
aborted by the coordinator; and librdkafka's producer on both paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from compat_tests.differential import txn_wire as w
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.polling import wait_for

# Kafka checks for timed-out transactions every transaction.abort.timed.out.transaction.cleanup.interval.ms
# (10 s by default); kemu aborts at the deadline itself and ignores the setting.
QUICK_TIMEOUT_CHECKS = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"}
SHORT_TIMEOUT_MS = 1500


def fenced_requests(old: w.RawProducer, topic: str, group: str, step: str) -> None:
    """Everything the fenced producer may still send, at the versions before and after PRODUCER_FENCED."""
    old.produce(f"{step}-produce", topic, 0, [b"zombie"])
    old.add(f"{step}-add-v1", [(topic, 1)], version=1)
    old.add(f"{step}-add-v3", [(topic, 1)], version=3)
    old.end(f"{step}-end-v1", True, version=1)
    old.end(f"{step}-end-v4", True, version=4)
    old.add_offsets(f"{step}-add-offsets", group)
    old.txn_offset_commit(f"{step}-txn-offset-commit", group, {(topic, 0): 1})


def test_second_init_fences_and_aborts(pair: Pair) -> None:
    topic, tid, group = w.unique("txn-fence"), w.unique("txn-fence-id"), w.unique("txn-fence-group")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 2)
        w.group_coordinator_ready(target, group)
        old, new = w.producer(target, tid), w.producer(target, tid)
        with old.connection, new.connection:
            old.init()
            old.add("add", [(topic, 0), (topic, 1)])
            old.produce("produce-p0", topic, 0, [b"a", b"b"])
            old.produce("produce-p1", topic, 1, [b"c"])
            # Kafka aborts the open transaction with a bumped epoch and answers CONCURRENT_TRANSACTIONS.
            new.init("fence")
            w.wait_complete(target, tid)
            new.note("describe-after-fence", w.describe(target, tid))
            fenced_requests(old, topic, group, "fenced")
            # Kafka 4.3 aborted it the transaction-version-2 way, remembering the fenced epoch as the last one:
            # the old producer's KIP-360 re-init passes for a retry and gets the fencing epoch.
            old.init("retry-with-fenced-epoch", expected=(old.producer_id, old.epoch))
            new.init("init")
            old.init("fenced-init-v3-expected", expected=(old.producer_id, old.epoch), version=3)
            old.init("fenced-init-v4-expected", expected=(old.producer_id, old.epoch), version=4)
            fenced_requests(old, topic, group, "fenced-again")
            new.add("add", [(topic, 0)])
            new.produce("produce", topic, 0, [b"d"])
            new.end("commit", True)
            w.wait_complete(target, tid)
            # KIP-360: the producer names its id and epoch; a retry of that bump (its answer lost) is answered
            # with the same epoch, and an older epoch is fenced.
            bumped_from = new.epoch
            new.init("bump-expected", expected=(new.producer_id, bumped_from))
            new.init("bump-retried", expected=(new.producer_id, bumped_from))
            new.init("bump-stale", expected=(new.producer_id, bumped_from - 1))
            new.init("bump-other-producer-id", expected=(new.producer_id + 7777, new.epoch))
            new.note("describe", w.describe(target, tid))
            partitions = [(topic, 0), (topic, 1)]
            new.note("fetch-committed", w.fetch(target, partitions, w.READ_COMMITTED))
            new.note("fetch-uncommitted", w.fetch(target, partitions, w.READ_UNCOMMITTED))
            new.note("producers", w.describe_producers(target, partitions))
            return {"old": old.seen, "new": new.seen}

    kafka, kemu = pair.both(scenario)
    check("transactions.fencing", kafka, kemu)


def librdkafka_error(action: Callable[[], object]) -> dict[str, Any]:
    """What a confluent-kafka call raised, as the application sees it: the error's name and its flags."""
    try:
        action()
    except KafkaException as exc:
        error: KafkaError = exc.args[0]
        return {"name": error.name(), "fatal": error.fatal(), "retriable": error.retriable(),
                "txn_requires_abort": error.txn_requires_abort()}
    return {"name": "NONE"}


def test_librdkafka_fenced_by_a_second_producer(pair: Pair) -> None:
    topic, tid = w.unique("txn-rdkafka-fence"), w.unique("txn-rdkafka-fence-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic)
        config = {"bootstrap.servers": target.bootstrap, "transactional.id": tid, "linger.ms": 0}
        first, second = Producer(config), Producer(config)
        first.init_transactions(30)
        first.begin_transaction()
        first.produce(topic, value=b"fenced", timestamp=w.RECORD_TIME)
        first.flush(30)
        second.init_transactions(30)
        seen = {"commit-fenced": librdkafka_error(lambda: first.commit_transaction(30))}
        second.begin_transaction()
        second.produce(topic, value=b"kept", timestamp=w.RECORD_TIME)
        second.commit_transaction(30)
        w.wait_complete(target, tid)
        seen["describe"] = w.describe(target, tid)
        seen["fetch"] = w.fetch(target, [(topic, 0)], w.READ_COMMITTED)
        return seen

    kafka, kemu = pair.both(scenario)
    check("transactions.librdkafka_fenced", kafka, kemu)


def test_timed_out_transaction_is_aborted(pair_with: Callable[[dict[str, str]], Pair]) -> None:
    """A transaction open past its timeout: the coordinator aborts it with a bumped epoch, and the producer
    finds itself fenced; a KIP-360 re-init with its old epoch gets it going again."""
    topic, tid = w.unique("txn-timeout"), w.unique("txn-timeout-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 2)
        p = w.producer(target, tid, timeout_ms=SHORT_TIMEOUT_MS)
        with p.connection:
            p.init()
            p.add("add", [(topic, 0), (topic, 1)])
            p.produce("produce", topic, 0, [b"late"])
            p.note("describe-open", w.describe(target, tid))
            wait_for(lambda: w.describe(target, tid)[tid]["transaction_state"] == "CompleteAbort",
                     what=f"{target.name}: the coordinator aborting {tid}", timeout=30)
            p.note("describe-aborted", w.describe(target, tid))
            p.note("fetch", w.fetch(target, [(topic, 0), (topic, 1)], w.READ_COMMITTED))
            p.note("producers", w.describe_producers(target, [(topic, 0), (topic, 1)]))
            p.produce("produce-after", topic, 1, [b"later"])
            p.add("add-after-v3", [(topic, 1)])
            p.end("commit-after-v1", True, version=1)
            p.end("commit-after-v4", True, version=4)
            p.init("reinit-expected", expected=(p.producer_id, p.epoch))
            p.note("describe-reinit", w.describe(target, tid))
            return p.seen

    kafka, kemu = pair_with(QUICK_TIMEOUT_CHECKS).both(scenario)
    check("transactions.timeout", kafka, kemu)


def test_librdkafka_transaction_timed_out(pair_with: Callable[[dict[str, str]], Pair]) -> None:
    topic, tid = w.unique("txn-rdkafka-timeout"), w.unique("txn-rdkafka-timeout-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic)
        producer = Producer({"bootstrap.servers": target.bootstrap, "transactional.id": tid, "linger.ms": 0,
                             "transaction.timeout.ms": SHORT_TIMEOUT_MS})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(topic, value=b"too-late", timestamp=w.RECORD_TIME)
        producer.flush(30)
        wait_for(lambda: w.describe(target, tid)[tid]["transaction_state"] == "CompleteAbort",
                 what=f"{target.name}: the coordinator aborting {tid}", timeout=30)
        seen = {"commit": librdkafka_error(lambda: producer.commit_transaction(30))}
        if seen["commit"].get("txn_requires_abort"):
            seen["abort"] = librdkafka_error(lambda: producer.abort_transaction(30))
            producer.begin_transaction()
            producer.produce(topic, value=b"again", timestamp=w.RECORD_TIME)
            seen["commit-again"] = librdkafka_error(lambda: producer.commit_transaction(30))
            w.wait_complete(target, tid)
        seen["describe"] = w.describe(target, tid)
        seen["fetch"] = w.fetch(target, [(topic, 0)], w.READ_COMMITTED)
        return seen

    kafka, kemu = pair_with(QUICK_TIMEOUT_CHECKS).both(scenario)
    check("transactions.librdkafka_timeout", kafka, kemu)
