"""Transaction errors, Kafka 4.3 against kemu: what InitProducerId, AddPartitionsToTxn, Produce, EndTxn,
AddOffsetsToTxn and TxnOffsetCommit answer to requests out of place, at the versions where the answer
changes (PRODUCER_FENCED from InitProducerId v4, AddPartitionsToTxn v2, EndTxn v2; TRANSACTION_ABORTABLE from
Produce v11 and TxnOffsetCommit v4)."""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential import txn_wire as w
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.polling import wait_for


@pytest.mark.parametrize("version", [0, 3, 4, 5])
def test_init_producer_id_errors(pair: Pair, version: int) -> None:
    """A timeout above transaction.max.timeout.ms (900000) or not positive, an empty transactional id."""
    tid = w.unique("txn-init-errors")

    def scenario(target: Target) -> dict[str, Any]:
        p = w.producer(target, tid)
        with p.connection:
            p.init("timeout-above-max", timeout_ms=900001, version=version)
            p.init("timeout-zero", timeout_ms=0, version=version)
            p.init("timeout-negative", timeout_ms=-5, version=version)
            p.init("timeout-at-max", timeout_ms=900000, version=version)
            if version >= 3:
                p.init("producer-id-without-epoch", expected=(p.producer_id, -1), version=version)
                p.init("epoch-without-producer-id", expected=(-1, 0), version=version)
            empty = w.RawProducer(p.connection, "")
            empty.init("empty-id", version=version)
            p.note("empty-id", empty.seen["empty-id"])
            p.note("describe", w.describe(target, tid))
            return p.seen

    kafka, kemu = pair.both(scenario)
    check(f"transactions.init_errors.v{version}", kafka, kemu)


@pytest.mark.parametrize("version", [1, 3])
def test_add_partitions_errors(pair: Pair, version: int) -> None:
    """AddPartitionsToTxn from an unknown transactional id, an unknown producer id, a wrong epoch, and with
    partitions that do not exist beside ones that do."""
    topic, tid = w.unique("txn-add-errors"), w.unique("txn-add-errors-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 2)
        p = w.producer(target, tid)
        with p.connection:
            p.init()
            stranger = w.RawProducer(p.connection, w.unique("txn-add-errors-never"), producer_id=p.producer_id,
                                     epoch=p.epoch)
            p.note("unknown-id", stranger.add("unknown-id", [(topic, 0)], version=version))
            p.add("unknown-producer-id", [(topic, 0)], producer_id=p.producer_id + 7777, version=version)
            p.add("epoch-above", [(topic, 0)], epoch=p.epoch + 1, version=version)
            p.add("unknown-partitions", [(topic, 0), (topic, 7), (topic + "-nope", 0), (topic, 1)],
                  version=version)
            p.note("describe-after-unknown", w.describe(target, tid))
            p.add("ok", [(topic, 0)], version=version)
            p.add("again", [(topic, 0), (topic, 1)], version=version)
            p.add("epoch-below", [(topic, 1)], epoch=p.epoch - 1, version=version)
            p.note("describe", w.describe(target, tid))
            p.end("abort", False)
            return p.seen

    kafka, kemu = pair.both(scenario)
    check(f"transactions.add_partitions_errors.v{version}", kafka, kemu)


@pytest.mark.parametrize("version", [1, 4])
def test_end_txn_errors(pair: Pair, version: int) -> None:
    """EndTxn with no transaction, with a wrong epoch or producer id, retried, and the other outcome."""
    topic, tid = w.unique("txn-end-errors"), w.unique("txn-end-errors-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic)
        p = w.producer(target, tid)
        with p.connection:
            p.init()
            p.end("commit-nothing", True, version=version)
            p.end("abort-nothing", False, version=version)
            p.add("add", [(topic, 0)])
            p.produce("produce", topic, 0, [b"x"])
            p.end("wrong-epoch", True, epoch=p.epoch + 1, version=version)
            other = w.RawProducer(p.connection, tid, producer_id=p.producer_id + 7777, epoch=p.epoch)
            p.note("wrong-producer-id", other.end("wrong-producer-id", True, version=version))
            p.end("commit", True, version=version)
            w.wait_complete(target, tid)
            p.end("commit-again", True, version=version)
            p.end("abort-after-commit", False, version=version)
            p.add("add-2", [(topic, 0)])
            p.end("abort", False, version=version)
            w.wait_complete(target, tid)
            p.end("abort-again", False, version=version)
            p.end("commit-after-abort", True, version=version)
            never = w.RawProducer(p.connection, w.unique("txn-end-errors-never"), producer_id=p.producer_id,
                                  epoch=p.epoch)
            p.note("unknown-id", never.end("unknown-id", True, version=version))
            p.note("describe", w.describe(target, tid))
            return p.seen

    kafka, kemu = pair.both(scenario)
    check(f"transactions.end_txn_errors.v{version}", kafka, kemu)


@pytest.mark.parametrize("version", [9, 11])
def test_produce_to_partition_not_added(pair: Pair, version: int) -> None:
    """A transactional batch for a partition the transaction did not add (KIP-890 verification), one with a
    wrong epoch, and one before any transaction began."""
    topic, tid = w.unique("txn-produce-errors"), w.unique("txn-produce-errors-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 2)
        p = w.producer(target, tid)
        with p.connection:
            p.init()
            p.init("init-again")  # epoch 1, so that there is an older epoch to send
            p.produce("before-begin", topic, 0, [b"x"], version=version)
            p.add("add", [(topic, 0)])
            p.produce("not-added", topic, 1, [b"y"], version=version)
            p.produce("added", topic, 0, [b"z"], version=version)
            p.produce("non-transactional-inside", topic, 0, [b"n"], version=version, transactional=False)
            p.produce("epoch-below", topic, 0, [b"w"], epoch=p.epoch - 1, version=version)
            p.end("commit", True)
            w.wait_complete(target, tid)
            p.produce("after-commit", topic, 0, [b"v"], version=version)
            p.note("fetch", w.fetch(target, [(topic, 0), (topic, 1)], w.READ_UNCOMMITTED))
            return p.seen

    kafka, kemu = pair.both(scenario)
    check(f"transactions.produce_not_added.v{version}", kafka, kemu)


@pytest.mark.parametrize("version", [2, 3, 4])
def test_offsets_in_transactions_errors(pair: Pair, version: int) -> None:
    """AddOffsetsToTxn and TxnOffsetCommit: before the group's partition is added, with a wrong epoch, for an
    unknown topic, then committed and aborted."""
    topic, tid, group = w.unique("txn-offsets"), w.unique("txn-offsets-id"), w.unique("txn-offsets-group")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 2)
        w.group_coordinator_ready(target, group)
        p = w.producer(target, tid)
        with p.connection:
            p.init()
            p.txn_offset_commit("commit-before-add", group, {(topic, 0): 5}, version=version)
            p.add_offsets("add-offsets-wrong-epoch", group, epoch=p.epoch + 1)
            p.add_offsets("add-offsets", group)
            p.note("describe-ongoing", w.describe(target, tid))
            p.txn_offset_commit("commit-wrong-epoch", group, {(topic, 0): 5}, epoch=p.epoch + 1, version=version)
            p.txn_offset_commit("commit-unknown-topic", group, {(topic, 0): 5, (topic + "-nope", 0): 1},
                                version=version)
            p.txn_offset_commit("commit", group, {(topic, 0): 5, (topic, 1): 7}, version=version)
            p.end("commit-txn", True)
            w.wait_complete(target, tid)
            p.note("offsets-committed", w.committed_offsets(target, group, [(topic, 0), (topic, 1)]))
            p.add_offsets("add-offsets-2", group)
            p.txn_offset_commit("commit-2", group, {(topic, 0): 9}, version=version)
            p.end("abort-txn", False)
            w.wait_complete(target, tid)
            p.note("offsets-after-abort", w.committed_offsets(target, group, [(topic, 0), (topic, 1)]))
            p.txn_offset_commit("commit-after-end", group, {(topic, 0): 11}, version=version)
            p.add_offsets("add-offsets-unknown-producer-id", group, producer_id=p.producer_id + 7777)
            p.add_offsets("add-offsets-3", group)
            p.txn_offset_commit("commit-empty-group", "", {(topic, 0): 3}, version=version)
            if version >= 3:
                p.txn_offset_commit("commit-unknown-member", group, {(topic, 0): 3}, version=version,
                                    generation_id=5, member_id="nobody")
            p.end("abort-txn-3", False)
            return p.seen

    kafka, kemu = pair.both(scenario)
    check(f"transactions.offsets_errors.v{version}", kafka, kemu)



def test_requests_right_after_end_txn(pair: Pair) -> None:
    """The request that follows EndTxn on the same connection, before the markers are written: Kafka answers
    CONCURRENT_TRANSACTIONS most times (its marker writer is a round trip away), kemu writes the markers first
    and answers as the completed transaction would (a known difference, see known_differences.json)."""
    topic, tid = w.unique("txn-window"), w.unique("txn-window-id")

    def scenario(target: Target) -> dict[str, Any]:
        w.create_topic(target, topic, 3)
        p = w.producer(target, tid)
        with p.connection:
            p.init()
            # A partition each, so that what one follow-up leaves in the log does not move the next's offsets.
            for partition, follow_up in enumerate(("add-partitions", "end-txn-again", "init-producer-id")):
                p.add(f"{follow_up}-add", [(topic, partition)])
                p.produce(f"{follow_up}-produce", topic, partition, [b"x"])
                p.end(f"{follow_up}-commit", True)
                if follow_up == "add-partitions":
                    p.add(follow_up, [(topic, partition)])
                elif follow_up == "end-txn-again":
                    p.end(follow_up, True)
                else:
                    p.note(follow_up, w.RawProducer(p.connection, tid).init(follow_up)["error_code"])
                settle(target, p)
            return p.seen

    kafka, kemu = pair.both(scenario)
    check("transactions.right_after_end_txn", kafka, kemu)


def settle(target: Target, p: w.RawProducer) -> None:
    """Until the markers are written; then abort the transaction a follow-up AddPartitionsToTxn may have begun
    (with a producer of its own, whose answers are not compared)."""
    states = ("Ongoing", *w.COMPLETE_STATES)
    wait_for(lambda: w.describe(target, p.transactional_id)[p.transactional_id]["transaction_state"] in states,
             what=f"{target.name}: {p.transactional_id} past its markers")
    if w.describe(target, p.transactional_id)[p.transactional_id]["transaction_state"] == "Ongoing":
        w.RawProducer(p.connection, p.transactional_id, producer_id=p.producer_id, epoch=p.epoch).end("clean-up", False)
        w.wait_complete(target, p.transactional_id)
