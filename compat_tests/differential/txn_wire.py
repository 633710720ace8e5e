"""Raw transactional requests for the differential transaction tests, by default at the versions of the
transaction-version-1 way: InitProducerId v5, AddPartitionsToTxn v3 (the clients' form), Produce v11 (so
partitions are verified against the transaction, not added implicitly as v12 does under TV2), EndTxn v4,
AddOffsetsToTxn v4, TxnOffsetCommit v4 (test_transactions_v2.py sends the TV2 ones: Produce v12,
TxnOffsetCommit v5, EndTxn v5); and what a test observes afterwards: Fetch's raw batches
(control attributes, marker key and value, offsets), the partition's watermarks and aborted list, and the
admin views (DescribeProducers, DescribeTransactions, ListTransactions).

No test here: test_transactions*.py drive these against both brokers and compare what they saw.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from compat_tests.differential.targets import Target
from compat_tests.polling import wait_for
from kemu.hashing import partition_for
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch, iter_batches
from tests.server.kafka_socket import KafkaSocket

PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_FETCH, FIND_COORDINATOR, CREATE_TOPICS = 0, 1, 2, 3, 9, 10, 19
INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = 22, 24, 25, 26, 28
DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 61, 65, 66
V_INIT, V_ADD, V_ADD_OFFSETS, V_END, V_PRODUCE, V_FETCH, V_TXN_OFFSET_COMMIT = 5, 3, 4, 4, 11, 12, 4
# What a transactions-version-2 client sends instead (KIP-890 part 2): no AddPartitionsToTxn or
# AddOffsetsToTxn; the broker adds what these name.
V_END_TV2, V_PRODUCE_TV2, V_TXN_OFFSET_COMMIT_TV2 = 5, 12, 5
READ_UNCOMMITTED, READ_COMMITTED = 0, 1
# Records carry fixed timestamps so that data batches are byte-comparable; only markers carry the brokers'.
RECORD_TIME = 1_700_000_000_000
TRANSACTION_STATE_PARTITIONS = 50  # transaction.state.log.num.partitions, the default on both
COMPLETE_STATES = ("CompleteCommit", "CompleteAbort", "Empty")

TopicPartition = tuple[str, int]


def unique(prefix: str) -> str:
    """A name for one test, the same on both brokers (the caller makes it once and passes it to both)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def clock(ms: int) -> int | str:
    """A time the broker took from its clock (a marker's, a transaction's start) as one token: the
    normaliser numbers distinct timestamps, and whether two such times fell in the same millisecond is
    chance. The records' own times (RECORD_TIME on) and the "none" values stay as they are."""
    if ms in (-1, 0) or RECORD_TIME <= ms < RECORD_TIME + 1_000_000:
        return ms
    return "<clock>"


def error_name(code: int) -> str:
    return ErrorCode(code).name


# ---- set-up ----------------------------------------------------------------------------------------------
def create_topic(target: Target, name: str, partitions: int = 1) -> None:
    body = target.request(CREATE_TOPICS, 7, {"topics": [{"name": name, "num_partitions": partitions,
                                                          "replication_factor": 1}], "timeout_ms": 30000})
    [result] = body["topics"]
    assert result["error_code"] == 0, f"{target.name}: creating {name}: {result}"

    def leaders_known() -> bool:
        meta = target.request(METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
        [topic] = meta["topics"]
        return (topic["error_code"] == 0 and len(topic["partitions"]) == partitions
                and all(p["leader_id"] >= 0 for p in topic["partitions"]))

    wait_for(leaders_known, what=f"{target.name}: leaders of {name}")

    def partitions_online() -> bool:
        # Kafka's Metadata names a leader before its ReplicaManager has made the partitions leaders (Produce
        # answers NOT_LEADER_OR_FOLLOWER until then); ListOffsets asks the ReplicaManager.
        body = target.request(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": name, "partitions": [{"partition_index": n, "current_leader_epoch": -1, "timestamp": -1}
                                          for n in range(partitions)]}]})
        return all(p["error_code"] == 0 for t in body["topics"] for p in t["partitions"])

    wait_for(partitions_online, what=f"{target.name}: partitions of {name} online")


def coordinator_ready(target: Target, transactional_id: str) -> None:
    """Until the coordinator of `transactional_id` has loaded every `__transaction_state` partition: Kafka
    creates the topic on the first FindCoordinator and answers NOT_COORDINATOR, then
    COORDINATOR_LOAD_IN_PROGRESS, while it loads (DescribeTransactions may already say
    TRANSACTIONAL_ID_NOT_FOUND). A probe id on the same partition initialises once it is loaded, and
    ListTransactions answers once none is loading."""
    probe = next(f"probe-{n}-{transactional_id}" for n in range(10_000)
                 if partition_for(f"probe-{n}-{transactional_id}", TRANSACTION_STATE_PARTITIONS)
                 == partition_for(transactional_id, TRANSACTION_STATE_PARTITIONS))

    def loaded() -> bool:
        body = target.request(FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": [transactional_id]})
        if body["coordinators"][0]["error_code"] != 0:
            return False
        init = target.request(INIT_PRODUCER_ID, V_INIT, {"transactional_id": probe, "transaction_timeout_ms": 60000})
        listed = target.request(LIST_TRANSACTIONS, 0, {"state_filters": ["Ongoing"]})
        return bool(init["error_code"] == 0 and listed["error_code"] == 0)

    wait_for(loaded, what=f"{target.name}: the transaction coordinator of {transactional_id}")


# ---- a raw transactional producer ------------------------------------------------------------------------
@dataclass
class RawProducer:
    """One transactional id driven request by request on one connection; every answer is kept by step
    name in `seen` for the comparison, so a test compares the whole conversation."""

    connection: KafkaSocket
    transactional_id: str | None  # None: an idempotent producer
    timeout_ms: int = 60000
    producer_id: int = -1
    epoch: int = -1
    sequences: dict[TopicPartition, int] = field(default_factory=dict)
    seen: dict[str, Any] = field(default_factory=dict)

    def note(self, step: str, value: Any) -> Any:
        assert step not in self.seen, f"step {step} observed twice"
        self.seen[step] = value
        return value

    def init(self, step: str = "init", *, timeout_ms: int | None = None, expected: tuple[int, int] | None = None,
             version: int = V_INIT) -> dict[str, Any]:
        body = self.connection.request(INIT_PRODUCER_ID, version, {
            "transactional_id": self.transactional_id,
            "transaction_timeout_ms": self.timeout_ms if timeout_ms is None else timeout_ms,
            "producer_id": -1 if expected is None else expected[0],
            "producer_epoch": -1 if expected is None else expected[1]})
        if body["error_code"] == 0:
            self.producer_id, self.epoch = body["producer_id"], body["producer_epoch"]
            self.sequences.clear()
        body.pop("throttle_time_ms", None)
        return self.note(step, {**body, "error_code": error_name(body["error_code"])})

    def add(self, step: str, partitions: Iterable[TopicPartition], *, version: int = V_ADD,
            producer_id: int | None = None, epoch: int | None = None) -> dict[str, str]:
        by_topic: dict[str, list[int]] = {}
        for topic, index in partitions:
            by_topic.setdefault(topic, []).append(index)
        body = self.connection.request(ADD_PARTITIONS, version, {
            "v3_and_below_transactional_id": self.transactional_id,
            "v3_and_below_producer_id": self.producer_id if producer_id is None else producer_id,
            "v3_and_below_producer_epoch": self.epoch if epoch is None else epoch,
            "v3_and_below_topics": [{"name": t, "partitions": p} for t, p in by_topic.items()]})
        return self.note(step, {f"{t['name']}/{p['partition_index']}": error_name(p["partition_error_code"])
                                for t in body["results_by_topic_v3_and_below"] for p in t["results_by_partition"]})

    def produce(self, step: str, topic: str, partition: int, values: Iterable[bytes], *, epoch: int | None = None,
                version: int = V_PRODUCE, transactional: bool = True) -> dict[str, Any]:
        tp = (topic, partition)
        items = [NewRecord(value, timestamp=RECORD_TIME + i) for i, value in enumerate(values)]
        sequence = self.sequences.get(tp, 0)
        data = build_batch(items, producer_id=self.producer_id, producer_epoch=self.epoch if epoch is None else epoch,
                           base_sequence=sequence, transactional=transactional)
        body = self.connection.request(PRODUCE, version, {
            "transactional_id": self.transactional_id if transactional else None, "acks": -1, "timeout_ms": 10000,
            "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": data}]}]})
        [topic_response] = body["responses"]
        [answer] = topic_response["partition_responses"]
        if answer["error_code"] == 0:
            self.sequences[tp] = sequence + len(items)
        return self.note(step, produce_answer(answer))

    def end(self, step: str, commit: bool, *, epoch: int | None = None, version: int = V_END) -> Any:
        """EndTxn: its error's name; from v5 (transactions version 2) with the producer id and epoch it
        answers, which the producer then goes on with."""
        body = self.connection.request(END_TXN, version, {
            "transactional_id": self.transactional_id, "producer_id": self.producer_id,
            "producer_epoch": self.epoch if epoch is None else epoch, "committed": commit})
        if version < V_END_TV2:
            return self.note(step, error_name(body["error_code"]))
        if body["error_code"] == 0 and body["producer_id"] >= 0:
            self.producer_id, self.epoch = body["producer_id"], body["producer_epoch"]
            self.sequences.clear()
        return self.note(step, {"error_code": error_name(body["error_code"]), "producer_id": body["producer_id"],
                                "producer_epoch": body["producer_epoch"]})

    def add_offsets(self, step: str, group_id: str, *, epoch: int | None = None,
                    producer_id: int | None = None) -> str:
        body = self.connection.request(ADD_OFFSETS, V_ADD_OFFSETS, {
            "transactional_id": self.transactional_id,
            "producer_id": self.producer_id if producer_id is None else producer_id,
            "producer_epoch": self.epoch if epoch is None else epoch, "group_id": group_id})
        return self.note(step, error_name(body["error_code"]))

    def txn_offset_commit(self, step: str, group_id: str, offsets: dict[TopicPartition, int], *,
                          epoch: int | None = None, version: int = V_TXN_OFFSET_COMMIT, generation_id: int = -1,
                          member_id: str = "") -> dict[str, str]:
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (topic, index), offset in offsets.items():
            by_topic.setdefault(topic, []).append({"partition_index": index, "committed_offset": offset,
                                                   "committed_leader_epoch": -1, "committed_metadata": ""})
        body = self.connection.request(TXN_OFFSET_COMMIT, version, {
            "transactional_id": self.transactional_id, "group_id": group_id, "producer_id": self.producer_id,
            "producer_epoch": self.epoch if epoch is None else epoch, "generation_id": generation_id,
            "member_id": member_id, "group_instance_id": None,
            "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()]})
        return self.note(step, {f"{t['name']}/{p['partition_index']}": error_name(p["error_code"])
                                for t in body["topics"] for p in t["partitions"]})


def produce_answer(answer: dict[str, Any]) -> dict[str, Any]:
    return {"error_code": error_name(answer["error_code"]), "error_message": answer.get("error_message"),
            "base_offset": answer["base_offset"],
            "record_errors": answer.get("record_errors")}


def producer(target: Target, transactional_id: str, timeout_ms: int = 60000) -> RawProducer:
    coordinator_ready(target, transactional_id)
    return RawProducer(target.connect(), transactional_id, timeout_ms)


# ---- observing -------------------------------------------------------------------------------------------
def describe(target: Target, *transactional_ids: str) -> dict[str, Any]:
    body = target.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": list(transactional_ids)})
    out = {}
    for state in body["transaction_states"]:
        entry = {k: v for k, v in state.items() if k != "transactional_id"}
        entry["error_code"] = error_name(entry["error_code"])
        entry["topics"] = {t["topic"]: sorted(t["partitions"]) for t in entry["topics"]}
        entry["transaction_start_time_ms"] = clock(entry["transaction_start_time_ms"])
        out[state["transactional_id"]] = entry
    return out


def wait_complete(target: Target, *transactional_ids: str) -> None:
    """Until every id's markers are written (its state is CompleteCommit/CompleteAbort): EndTxn answers
    once PrepareCommit/PrepareAbort is journaled, and both brokers write the markers after."""
    def complete() -> bool:
        states = describe(target, *transactional_ids)
        return all(states[t]["transaction_state"] in COMPLETE_STATES for t in transactional_ids)

    wait_for(complete, what=f"{target.name}: transactions {transactional_ids} complete")


def list_transactions(target: Target, prefix: str, *, states: Iterable[str] = (), producer_ids: Iterable[int] = (),
                      duration_ms: int = -1, pattern: str | None = None, version: int = 1) -> dict[str, Any]:
    """ListTransactions, the ids of this test only (others' ids are on the same brokers), keyed by id."""
    request: dict[str, Any] = {"state_filters": list(states), "producer_id_filters": list(producer_ids)}
    if version >= 1:
        request["duration_filter"] = duration_ms
    if version >= 2:
        request["transactional_id_pattern"] = pattern
    body = target.request(LIST_TRANSACTIONS, version, request)
    return {"error_code": error_name(body["error_code"]), "unknown_state_filters": body["unknown_state_filters"],
            "transactions": {t["transactional_id"]: {"producer_id": t["producer_id"],
                                                     "transaction_state": t["transaction_state"]}
                             for t in body["transaction_states"] if t["transactional_id"].startswith(prefix)}}


def describe_producers(target: Target, partitions: Iterable[TopicPartition],
                       names: dict[int, str] | None = None) -> dict[str, Any]:
    """DescribeProducers; the active producers keyed by `names[producer id]` where given (their order is
    a hash map's on both brokers), else listed by the first offset of their open transaction."""
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    body = target.request(DESCRIBE_PRODUCERS, 0, {"topics": [{"name": t, "partition_indexes": p}
                                                             for t, p in by_topic.items()]})
    out = {}
    for topic in body["topics"]:
        for p in topic["partitions"]:
            producers = [{**entry, "last_timestamp": clock(entry["last_timestamp"])} for entry in p["active_producers"]]
            listed: Any = sorted(producers, key=lambda entry: entry["current_txn_start_offset"])
            if names is not None:
                listed = {names.get(entry["producer_id"], str(entry["producer_id"])): entry for entry in producers}
            out[f"{topic['name']}/{p['partition_index']}"] = {
                "error_code": error_name(p["error_code"]), "error_message": p["error_message"],
                "active_producers": listed}
    return out


def fetch(target: Target, partitions: Iterable[TopicPartition], isolation_level: int,
          offset: int = 0, max_bytes: int = 1 << 20) -> dict[str, Any]:
    """One Fetch from `offset` of each partition: watermarks, aborted list and every batch, raw. A small
    `max_bytes` returns the first batch alone, and bounds the aborted list by the offset after it."""
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append({"partition": index, "fetch_offset": offset,
                                               "partition_max_bytes": max_bytes, "log_start_offset": -1})
    body = target.request(FETCH, V_FETCH, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 22, "isolation_level": isolation_level,
        "session_id": 0, "session_epoch": -1, "topics": [{"topic": t, "partitions": p} for t, p in by_topic.items()],
        "forgotten_topics_data": [], "rack_id": ""})
    out = {}
    for topic in body["responses"]:
        for p in topic["partitions"]:
            aborted = p["aborted_transactions"]
            out[f"{topic['topic']}/{p['partition_index']}"] = {
                "error_code": error_name(p["error_code"]), "high_watermark": p["high_watermark"],
                "last_stable_offset": p["last_stable_offset"], "log_start_offset": p["log_start_offset"],
                "aborted_transactions": None if aborted is None else [dict(a) for a in aborted],
                # Whole batches below; the size shows a trailing partial one too.
                "records_size": len(p["records"] or b""), "batches": raw_batches(p["records"])}
    return out


def raw_batches(records: bytes | None) -> list[dict[str, Any]]:
    out = []
    for batch in iter_batches(records or b""):
        header = batch.header
        out.append({
            "base_offset": header.base_offset, "last_offset_delta": header.last_offset_delta,
            "partition_leader_epoch": header.partition_leader_epoch, "attributes": header.attributes,
            "is_transactional": header.is_transactional, "is_control": header.is_control,
            "producer_id": header.producer_id, "producer_epoch": header.producer_epoch,
            "base_sequence": header.base_sequence, "first_timestamp": clock(header.first_timestamp),
            "max_timestamp": clock(header.max_timestamp),
            "records": [{"offset": r.offset, "key": r.key, "value": r.value, "timestamp": clock(r.timestamp),
                         "headers": [list(h) for h in r.headers]} for r in batch.records()]})
    return out


def group_coordinator_ready(target: Target, group_id: str) -> None:
    """Until the group's coordinator has loaded its `__consumer_offsets` partition (Kafka creates the topic on
    the first FindCoordinator; OffsetFetch answers COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR while it
    loads)."""
    def loaded() -> bool:
        body = target.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group_id]})
        if body["coordinators"][0]["error_code"] != 0:
            return False
        return bool(target.request(OFFSET_FETCH, 7, {"group_id": group_id, "topics": None})["error_code"] == 0)

    wait_for(loaded, what=f"{target.name}: the group coordinator of {group_id}")


def committed_offsets(target: Target, group_id: str, partitions: Iterable[TopicPartition]) -> dict[str, Any]:
    """OffsetFetch v7 with require_stable."""
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    body = target.request(OFFSET_FETCH, 7, {"group_id": group_id, "require_stable": True,
                                            "topics": [{"name": t, "partition_indexes": p}
                                                       for t, p in by_topic.items()]})
    return {"error_code": error_name(body["error_code"]),
            "partitions": {f"{t['name']}/{p['partition_index']}": {
                "committed_offset": p["committed_offset"], "metadata": p["metadata"],
                "error_code": error_name(p["error_code"])} for t in body["topics"] for p in t["partitions"]}}
