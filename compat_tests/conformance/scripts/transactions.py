"""Transactions: FindCoordinator for a transactional id, InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
TxnOffsetCommit, DescribeTransactions, EndTxn at each version, ListTransactions, WriteTxnMarkers, and the
errors of a transaction used wrongly."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_SETTLING,
    create_topic,
    produce,
    step,
    versions,
)
from compat_tests.conformance.scripts.data import _fetch
from compat_tests.conformance.scripts.groups import find_coordinator
from compat_tests.conformance.steps import Script, Step

TOPIC = "conf-txn-{run}"
SETTLING = COORDINATOR_SETTLING + CONCURRENT_TRANSACTIONS
WHY = ("the transaction coordinator loads its partition on a fresh broker, and a transaction ended a moment ago "
       "is CONCURRENT_TRANSACTIONS until its markers are written")


def init(version: int, tid: str | None, name: str | None = None, timeout: int = 60000, **options: Any) -> Step:
    return step(name or f"init producer id v{version}", 22, version, {
        "transactional_id": tid, "transaction_timeout_ms": timeout, "producer_id": -1, "producer_epoch": -1,
        "enable2_pc": False, "keep_prepared_txn": False}, retry_on=SETTLING, why=WHY,
        **({"capture": {"pid": "producer_id", "epoch": "producer_epoch"}} | options))


def add_partitions(version: int, tid: str, topic: str = TOPIC, pid: int | str = "{$pid}",
                   epoch: int | str = "{$epoch}", name: str | None = None) -> Step:
    topics = [{"name": topic, "partitions": [0]}]
    return step(name or f"add partitions v{version}", 24, version, {
        "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid, "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": topics,
        "transactions": [{"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                          "verify_only": False, "topics": topics}]}, retry_on=CONCURRENT_TRANSACTIONS, why=WHY)


def end(version: int, tid: str, commit: bool, name: str | None = None, epoch: int | str = "{$epoch}") -> Step:
    return step(name or f"end v{version}", 26, version, {
        "transactional_id": tid, "producer_id": "{$pid}", "producer_epoch": epoch, "committed": commit})


def transaction(index: int) -> Script:
    # The group id is the same in every run: the partition of __consumer_offsets a transaction adds is its hash.
    tid, group = f"conf-tid-{index}-{{run}}", f"conf-txg-{index}"
    pick = {key: min(index, max(versions(key))) for key in (22, 24, 25, 26, 28)}
    commit = index % 2 == 0
    steps = [
        *create_topic(TOPIC),
        find_coordinator(min(index, 6), tid, key_type=1),
        init(pick[22], tid),
        add_partitions(pick[24] if pick[24] <= 3 else 3, tid),
        produce(TOPIC, ["t0", "t1"], producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=0,
                transactional=True, transactional_id=tid, name="produce in the transaction"),
        step(f"add offsets v{pick[25]}", 25, pick[25], {"transactional_id": tid, "producer_id": "{$pid}",
                                                       "producer_epoch": "{$epoch}", "group_id": group}),
        find_coordinator(4, group, name="find the group coordinator"),
        step(f"txn offset commit v{pick[28]}", 28, pick[28], {
            "transactional_id": tid, "group_id": group, "producer_id": "{$pid}", "producer_epoch": "{$epoch}",
            "generation_id": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 2,
                                                       "committed_leader_epoch": -1, "committed_metadata": ""}]}]}),
        step("describe ongoing", 65, 0, {"transactional_ids": [tid]}, key_by={"topics": "topic"}),
        step("list ongoing", 66, 1, {"state_filters": ["Ongoing"], "producer_id_filters": [], "duration_filter": -1},
             only_run=("transaction_states",)),
        end(pick[26], tid, commit, name=f"{'commit' if commit else 'abort'} v{pick[26]}"),
        init(pick[22], tid, name="init again", capture={"pid": "producer_id", "epoch": "producer_epoch"}),
        step("read committed", 1, 12, _fetch(12, isolation=1, topic=TOPIC)),
        step("read uncommitted", 1, 12, _fetch(12, isolation=0, topic=TOPIC)),
        step("committed offsets", 9, 8, {"groups": [{"group_id": group, "topics": [
            {"name": TOPIC, "partition_indexes": [0]}]}], "require_stable": True}),
    ]
    return Script(f"transactions.v{index}", steps)


def version_2() -> Script:
    """Transactions version 2 (KIP-890 part 2), as the Java 4.x producer runs them on a 4.x cluster: no
    AddPartitionsToTxn or AddOffsetsToTxn (Produce v12 and TxnOffsetCommit v5 add the partition and the group),
    an epoch bump at every EndTxn v5, which answers the epoch to go on with; retries of a lost answer, an abort
    with nothing begun, and the old epoch refused."""
    # The group id is fixed, as transaction()'s: the partition of __consumer_offsets the transaction adds is its hash.
    tid, group, topic, other = "conf-tv2-{run}", "conf-txg-6", "conf-tv2-{run}", "conf-tv2-b-{run}"
    txn_offsets = {"transactional_id": tid, "group_id": group, "producer_id": "{$pid}", "generation_id": -1,
                   "member_id": "", "group_instance_id": None,
                   "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 2,
                                                              "committed_leader_epoch": -1,
                                                              "committed_metadata": ""}]}]}

    def end_v5(name: str, commit: bool, epoch: str, capture: str | None = None) -> Step:
        return step(name, 26, 5, {"transactional_id": tid, "producer_id": "{$pid}", "producer_epoch": epoch,
                                  "committed": commit}, retry_on=CONCURRENT_TRANSACTIONS, why=WHY,
                    **({"capture": {capture: "producer_epoch"}} if capture else {}))

    return Script("transactions.tv2", [
        # Two topics of one partition each: DescribeTransactions lists a topic's partitions in a hash set's order.
        *create_topic(topic),
        *create_topic(other),
        find_coordinator(4, tid, key_type=1),
        init(5, tid),
        produce(topic, ["a0", "a1"], version=12, producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=0,
                transactional=True, transactional_id=tid, name="produce v12 adds the partition"),
        produce(topic, ["a2"], version=12, producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=2,
                transactional=True, transactional_id=tid, name="produce v12 again"),
        produce(other, ["b0"], version=12, producer_id="{$pid}", producer_epoch="{$epoch}",
                base_sequence=3, transactional=True, transactional_id=tid,
                name="produce v12 to a new partition from sequence 3"),
        find_coordinator(4, group, name="find the group coordinator"),
        step("txn offset commit v5 adds the group", 28, 5, {**txn_offsets, "producer_epoch": "{$epoch}"},
             retry_on=COORDINATOR_SETTLING, why=WHY),
        step("describe ongoing", 65, 0, {"transactional_ids": [tid]}, key_by={"topics": "topic"}),
        end_v5("commit v5", True, "{$epoch}", capture="epoch2"),
        end_v5("commit v5 retried", True, "{$epoch}"),
        end_v5("abort v5 with the epoch before", False, "{$epoch}"),
        end_v5("commit v5 with the bumped epoch and nothing begun", True, "{$epoch2}"),
        produce(topic, ["old"], version=12, producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=3,
                transactional=True, transactional_id=tid, name="produce v12 with the epoch before"),
        produce(topic, ["c0"], version=12, producer_id="{$pid}", producer_epoch="{$epoch2}", base_sequence=0,
                transactional=True, transactional_id=tid, name="produce v12 at the bumped epoch"),
        step("txn offset commit v5 with the epoch before", 28, 5, {**txn_offsets, "producer_epoch": "{$epoch}"}),
        end_v5("abort v5", False, "{$epoch2}", capture="epoch3"),
        end_v5("abort v5 retried", False, "{$epoch2}"),
        end_v5("abort v5 with nothing begun", False, "{$epoch3}", capture="epoch4"),
        end_v5("abort v5 with nothing begun, retried", False, "{$epoch3}"),
        end_v5("commit v5 after the abort", True, "{$epoch4}"),
        step("abort v4 with an epoch before", 26, 4, {"transactional_id": tid, "producer_id": "{$pid}",
                                                      "producer_epoch": "{$epoch3}", "committed": False}),
        step("describe complete", 65, 0, {"transactional_ids": [tid]}, key_by={"topics": "topic"}),
        step("read committed", 1, 12, _fetch(12, isolation=1, topic=topic)),
        step("read uncommitted", 1, 12, _fetch(12, isolation=0, topic=topic)),
        step("committed offsets", 9, 8, {"groups": [{"group_id": group, "topics": [
            {"name": topic, "partition_indexes": [0]}]}], "require_stable": True}),
    ])


def idempotent() -> Script:
    return Script("init_producer_id.idempotent", [init(version, None, name=f"v{version}")
                                                  for version in versions(22)])


def errors() -> Script:
    tid = "conf-txerr-{run}"
    return Script("transactions.errors", [
        *create_topic(TOPIC),
        find_coordinator(4, tid, key_type=1),
        init(4, tid, name="init with timeout 0", timeout=0),
        init(4, tid, name="init with a huge timeout", timeout=1_000_000_000),
        init(4, tid),
        end(4, tid, True, name="commit with no transaction"),
        end(4, tid, False, name="abort with no transaction"),
        add_partitions(3, tid, epoch=99, name="add partitions with a wrong epoch"),
        add_partitions(3, tid, pid=123456789, name="add partitions with an unknown producer id"),
        add_partitions(3, tid, topic="conf-txn-missing-{run}", name="add an unknown topic"),
        produce(TOPIC, ["x"], producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=0, transactional=True,
                transactional_id=tid, name="produce before adding the partition"),
        add_partitions(3, tid),
        end(4, tid, True, name="commit with a wrong epoch", epoch=77),
        step("add offsets with a wrong epoch", 25, 3, {"transactional_id": tid, "producer_id": "{$pid}",
                                                       "producer_epoch": 77, "group_id": "g-{run}"}),
        step("txn offset commit without add offsets", 28, 3, {
            "transactional_id": tid, "group_id": "conf-txerr-g-{run}", "producer_id": "{$pid}",
            "producer_epoch": "{$epoch}", "generation_id": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                       "committed_leader_epoch": -1, "committed_metadata": ""}]}]}),
        end(4, tid, False, name="abort"),
        init(4, tid, name="init again"),
        step("describe unknown", 65, 0, {"transactional_ids": ["conf-txerr-missing-{run}"]}),
        step("describe empty", 65, 0, {"transactional_ids": [tid]}),
        step("end unknown transactional id", 26, 4, {"transactional_id": "conf-txerr-missing-{run}",
                                                     "producer_id": 5, "producer_epoch": 0, "committed": True}),
        step("add offsets unknown transactional id", 25, 3, {"transactional_id": "conf-txerr-missing-{run}",
                                                             "producer_id": 5, "producer_epoch": 0, "group_id": "g"}),
        step("init with a wrong producer id", 22, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                                     "producer_id": 4242, "producer_epoch": 3}),
    ])


def listing() -> tuple[Script, Script]:
    tid = "conf-txlist-{run}"
    steps = [*create_topic(TOPIC), find_coordinator(4, tid, key_type=1), init(4, tid), add_partitions(3, tid)]
    for version in versions(66):
        steps.append(step(f"list v{version}", 66, version, {
            "state_filters": [], "producer_id_filters": [], "duration_filter": -1,
            "transactional_id_pattern": "conf-txlist-.*"}, only_run=("transaction_states",)))
    steps += [
        step("list by producer id", 66, 1, {"state_filters": [], "producer_id_filters": ["{$pid}"],
                                            "duration_filter": -1}, only_run=("transaction_states",)),
        step("list by unknown state", 66, 1, {"state_filters": ["Sleeping"], "producer_id_filters": [],
                                              "duration_filter": -1}, only_run=("transaction_states",)),
        step("list by long duration", 66, 1, {"state_filters": [], "producer_id_filters": [],
                                              "duration_filter": 3_600_000}, only_run=("transaction_states",)),
        step("list by bad pattern", 66, 2, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                                            "transactional_id_pattern": "(("}, only_run=("transaction_states",)),
        # KIP-1152: the pattern must match the whole id, and combines with the other filters.
        step("list by exact id", 66, 2, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                                         "transactional_id_pattern": tid}, only_run=("transaction_states",)),
        step("list by a prefix only", 66, 2, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                                              "transactional_id_pattern": "conf-txlist"},
             only_run=("transaction_states",)),
        step("list by pattern and state", 66, 2, {"state_filters": ["Empty"], "producer_id_filters": [],
                                                  "duration_filter": -1, "transactional_id_pattern": "conf-txlist-.*"},
             only_run=("transaction_states",)),
        step("describe", 65, 0, {"transactional_ids": [tid, "conf-txlist-missing-{run}"]}),
        end(4, tid, False, name="abort"),
    ]
    markers = [*create_topic(TOPIC)]
    for version in versions(27):
        markers.append(step(f"abort marker v{version}", 27, version, {"markers": [
            {"producer_id": 987654 + version, "producer_epoch": 0, "transaction_result": False,
             "topics": [{"name": TOPIC, "partition_indexes": [0]}], "coordinator_epoch": 0,
             "transaction_version": 1}]}))
    markers.insert(-1, step("marker for an unknown topic", 27, 1, {"markers": [
        {"producer_id": 987000, "producer_epoch": 0, "transaction_result": True,
         "topics": [{"name": "conf-wtm-missing-{run}", "partition_indexes": [0]}], "coordinator_epoch": 0}]}))
    markers.insert(-1, step("read uncommitted", 1, 12, _fetch(12, topic=TOPIC)))
    # v2's transaction version 2 (KIP-1228): a marker must carry an epoch newer than the transaction's (the
    # coordinator bumps it), unless the transaction on the partition is over already (a retry). A new
    # transactional id's first epoch is 0.
    tid = "conf-wtm-{run}"
    markers += [find_coordinator(4, tid, key_type=1, name="find the marker test's coordinator"), init(5, tid),
                add_partitions(3, tid),
                produce(TOPIC, ["m0"], producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=0,
                        transactional=True, transactional_id=tid, name="produce in the transaction")]
    for name, epoch, transaction_version in (("tv2 marker at the transaction's epoch", 0, 2),
                                             ("tv2 marker at the next epoch", 1, 2), ("tv2 marker retried", 1, 2),
                                             ("tv2 marker of an older epoch", 0, 2),
                                             ("tv1 marker at the producer's epoch", 1, 1)):
        markers.append(step(name, 27, 2, {"markers": [
            {"producer_id": "{$pid}", "producer_epoch": epoch, "transaction_result": True,
             "topics": [{"name": TOPIC, "partition_indexes": [0]}], "coordinator_epoch": 0,
             "transaction_version": transaction_version}]}))
    markers.append(step("read the markers", 1, 12, _fetch(12, topic=TOPIC),
                        varying={"base_timestamp": "any:timestamp", "max_timestamp": "any:timestamp"},
                        why="markers written within one millisecond share a timestamp, a moment later they do not"))
    return Script("list_transactions.versions", steps), Script("write_txn_markers.versions", markers)


def scripts() -> list[Script]:
    return [*(transaction(index) for index in range(6)), version_2(), idempotent(), errors(), *listing()]
