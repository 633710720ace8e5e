"""Transactions version 2 (KIP-890 part 2), Kafka 4.3 against kemu, driven request by request as a TV2 client
drives them (txn_wire.py at Produce v12, TxnOffsetCommit v5, EndTxn v5; no AddPartitionsToTxn or
AddOffsetsToTxn): transactions committed and aborted with the epoch bumped at each end, retries of a lost
EndTxn answer, aborts with nothing begun, the old epoch refused everywhere; a producer fenced by a second
InitProducerId; and a transaction left past its timeout, whose abort bumps the epoch: what the stalled
producer's requests then answer, and how it goes on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compat_tests.differential import txn_wire as w
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.differential.test_transactions_fencing import QUICK_TIMEOUT_CHECKS, SHORT_TIMEOUT_MS
from compat_tests.polling import wait_for

V12, V5 = w.V_PRODUCE_TV2, w.V_END_TV2


def observe(p: w.RawProducer, target: Target, step: str, partitions: list[w.TopicPartition],
            group: str | None = None) -> None:
    """What the transaction left: the id described, each partition's batches either way, its producers."""
    tid = p.transactional_id
    assert tid is not None
    p.note(f"{step}-describe", w.describe(target, tid))
    p.note(f"{step}-fetch-committed", w.fetch(target, partitions, w.READ_COMMITTED))
    p.note(f"{step}-fetch-uncommitted", w.fetch(target, partitions, w.READ_UNCOMMITTED))
    p.note(f"{step}-producers", w.describe_producers(target, partitions))
    if group is not None:
        p.note(f"{step}-offsets", w.committed_offsets(target, group, [partitions[0]]))


def stale_requests(p: w.RawProducer, step: str, topic: str, group: str | None = None) -> None:
    """What a producer whose epoch the coordinator moved on may still send: a produce, its offsets, a commit,
    then an abort."""
    p.produce(f"{step}-produce", topic, 0, [b"stale"], version=V12)
    if group is not None:
        p.txn_offset_commit(f"{step}-txn-offset-commit", group, {(topic, 0): 1}, version=w.V_TXN_OFFSET_COMMIT_TV2)
    p.end(f"{step}-commit", True, version=V5)
    p.end(f"{step}-abort", False, version=V5)


def initialised(target: Target, topic: str, partitions: int, tid: str, group: str) -> w.RawProducer:
    """The topic created, the group's coordinator loaded, and a producer of `tid` initialised."""
    w.create_topic(target, topic, partitions)
    w.group_coordinator_ready(target, group)
    p = w.producer(target, tid)
    p.init()
    return p


def test_commit_abort_and_retries(pair: Pair) -> None:
    topic, tid, group = w.unique("txn2"), w.unique("txn2-id"), w.unique("txn2-group")
    partitions = [(topic, 0), (topic, 1)]

    def scenario(target: Target) -> dict[str, Any]:
        p = initialised(target, topic, 2, tid, group)
        with p.connection:
            p.produce("produce-p0", topic, 0, [b"a", b"b"], version=V12)
            p.produce("produce-p1", topic, 1, [b"c"], version=V12)
            p.txn_offset_commit("txn-offset-commit", group, {(topic, 0): 2}, version=w.V_TXN_OFFSET_COMMIT_TV2)
            p.note("describe-ongoing", w.describe(target, tid))
            before = p.epoch
            p.end("commit", True, version=V5)
            w.wait_complete(target, tid)
            p.end("commit-retried", True, epoch=before, version=V5)
            p.end("abort-with-the-epoch-before", False, epoch=before, version=V5)
            p.end("commit-with-nothing-begun", True, version=V5)
            p.produce("produce-with-the-epoch-before", topic, 0, [b"old"], epoch=before, version=V12)
            p.txn_offset_commit("txn-offset-commit-with-the-epoch-before", group, {(topic, 0): 9}, epoch=before,
                                version=w.V_TXN_OFFSET_COMMIT_TV2)
            p.end("end-v4-with-the-epoch-before", True, epoch=before)
            observe(p, target, "after-commit", partitions, group)
            p.produce("produce-next", topic, 0, [b"d"], version=V12)
            p.produce("produce-next-v11", topic, 1, [b"e"], version=w.V_PRODUCE)
            before = p.epoch
            p.end("abort", False, version=V5)
            w.wait_complete(target, tid)
            p.end("abort-retried", False, epoch=before, version=V5)
            p.end("abort-with-nothing-begun", False, version=V5)
            w.wait_complete(target, tid)
            p.end("commit-after-the-abort", True, version=V5)
            observe(p, target, "after-abort", partitions, group)
            return p.seen

    kafka, kemu = pair.both(scenario)
    check("transactions.v2.commit_abort", kafka, kemu)


def test_second_init_fences_a_tv2_producer(pair: Pair) -> None:
    topic, tid, group = w.unique("txn2-fence"), w.unique("txn2-fence-id"), w.unique("txn2-fence-group")

    def scenario(target: Target) -> dict[str, Any]:
        old = initialised(target, topic, 1, tid, group)
        new = w.producer(target, tid)
        with old.connection, new.connection:
            old.produce("produce", topic, 0, [b"zombie"], version=V12)
            new.init("fence")
            w.wait_complete(target, tid)
            new.init("init")
            stale_requests(old, "fenced", topic, group)
            new.produce("produce", topic, 0, [b"successor"], version=V12)
            new.end("commit", True, version=V5)
            w.wait_complete(target, tid)
            observe(new, target, "end", [(topic, 0)])
            return {"old": old.seen, "new": new.seen}

    kafka, kemu = pair.both(scenario)
    check("transactions.v2.fencing", kafka, kemu)


def test_timed_out_tv2_transaction(pair_with: Callable[[dict[str, str]], Pair]) -> None:
    """The coordinator aborts with a bumped epoch, as a TV2 EndTxn would: the stalled producer's produce is
    INVALID_PRODUCER_EPOCH and its commit INVALID_TXN_STATE, but its abort is a retry of the coordinator's,
    answered with the bumped epoch, at which it goes on."""
    topic, tid = w.unique("txn2-timeout"), w.unique("txn2-timeout-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic)
        p = w.producer(target, tid, timeout_ms=SHORT_TIMEOUT_MS)
        with p.connection:
            p.init()
            p.produce("produce", topic, 0, [b"late"], version=V12)
            wait_for(lambda: w.describe(target, tid)[tid]["transaction_state"] == "CompleteAbort",
                     what=f"{target.name}: the coordinator aborting {tid}", timeout=30)
            observe(p, target, "aborted", [(topic, 0)])
            stale_requests(p, "after", topic)
            p.produce("produce-again", topic, 0, [b"again"], version=V12)
            p.end("commit-again", True, version=V5)
            w.wait_complete(target, tid)
            observe(p, target, "end", [(topic, 0)])
            return p.seen

    kafka, kemu = pair_with(QUICK_TIMEOUT_CHECKS).both(scenario)
    check("transactions.v2.timeout", kafka, kemu)
