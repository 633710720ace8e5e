"""Committed offsets as stock clients see them, Kafka against kemu: confluent-kafka's commit and committed (what
it reads back, and what it wrote, fetched raw), and offsets a transaction sends that stay unstable until it
ends (OffsetFetch require_stable)."""

from __future__ import annotations

from typing import Any

import confluent_kafka

from compat_tests.differential.compare import check
from compat_tests.differential.groups_wire import OFFSET_FETCH, create_topics, ready_coordinator, unique, wait_for
from compat_tests.differential.targets import Pair, Target

Body = dict[str, Any]
PARTITIONS = 2
PER_PARTITION = 3
UNSTABLE_OFFSET_COMMIT = 88


def produce(target: Target, topic: str) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": target.bootstrap, "linger.ms": 0})
    for partition in range(PARTITIONS):
        for n in range(PER_PARTITION):
            producer.produce(topic, value=f"p{partition}-{n}".encode(), partition=partition)
    assert producer.flush(20) == 0


def raw_fetch(target: Target, group: str, topic: str, version: int, require_stable: bool = False) -> Body:
    answer = target.request(OFFSET_FETCH, version, {"require_stable": require_stable, "groups": [
        {"group_id": group, "member_id": None, "member_epoch": -1,
         "topics": [{"name": topic, "partition_indexes": list(range(PARTITIONS))}]}]})
    [group_answer] = answer["groups"]
    return {"error_code": group_answer["error_code"], "partitions": {
        p["partition_index"]: p for t in group_answer["topics"] for p in t["partitions"]}}


def committed_view(partitions: list[Any]) -> dict[int, Body]:
    return {tp.partition: {"offset": tp.offset, "metadata": tp.metadata, "leader_epoch": tp.leader_epoch,
                           "error": None if tp.error is None else tp.error.name()} for tp in partitions}


def test_confluent_commit_and_committed(pair: Pair) -> None:
    topic, group = unique("offsets-confluent"), unique("offsets-confluent-group")

    def observe(target: Target) -> Body:
        create_topics(target, {topic: PARTITIONS})
        produce(target, topic)
        ready_coordinator(target, group)
        consumer = confluent_kafka.Consumer({
            "bootstrap.servers": target.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
        seen: Body = {}
        try:
            consumer.subscribe([topic])
            received: list[Any] = []

            def read_all() -> bool | None:
                message = consumer.poll(0.5)
                if message is not None and message.error() is None:
                    received.append(message)
                return True if len(received) == PARTITIONS * PER_PARTITION else None

            wait_for(f"{target.name}: the consumer reads {topic}", read_all)
            seen["assignment"] = sorted(tp.partition for tp in consumer.assignment())
            seen["before"] = committed_view(consumer.committed(
                [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10))
            last = {m.partition(): m for m in received}
            seen["commit_message"] = committed_view(consumer.commit(message=last[0], asynchronous=False))
            seen["commit_offsets"] = committed_view(consumer.commit(offsets=[
                confluent_kafka.TopicPartition(topic, 1, 2, metadata="half way")], asynchronous=False))
            seen["committed"] = committed_view(consumer.committed(
                [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10))
            seen["raw"] = raw_fetch(target, group, topic, 9)
        finally:
            consumer.close()
        other = confluent_kafka.Consumer({"bootstrap.servers": target.bootstrap, "group.id": group})
        try:
            seen["committed_by_another"] = committed_view(other.committed(
                [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10))
        finally:
            other.close()
        return seen

    check("offsets.clients.confluent_commit", *pair.both(observe))


def test_transactional_offsets_are_unstable_until_the_transaction_ends(pair: Pair) -> None:
    """send_offsets_to_transaction stages the group's offsets; OffsetFetch with require_stable says
    UNSTABLE_OFFSET_COMMIT for them until the commit, without it the offsets before the transaction."""
    topic, group, transactional_id = unique("offsets-txn"), unique("offsets-txn-group"), unique("offsets-txn-id")

    def observe(target: Target) -> Body:
        create_topics(target, {topic: PARTITIONS})
        ready_coordinator(target, group)
        seen: Body = {}
        producer = confluent_kafka.Producer({"bootstrap.servers": target.bootstrap,
                                             "transactional.id": transactional_id, "linger.ms": 0})
        consumer = confluent_kafka.Consumer({"bootstrap.servers": target.bootstrap, "group.id": group})
        try:
            consumer.commit(offsets=[confluent_kafka.TopicPartition(topic, 0, 1)], asynchronous=False)
            producer.init_transactions(20)
            producer.begin_transaction()
            producer.produce(topic, value=b"in the transaction", partition=1)
            producer.send_offsets_to_transaction([confluent_kafka.TopicPartition(topic, 0, 5),
                                                  confluent_kafka.TopicPartition(topic, 1, 6)],
                                                 consumer.consumer_group_metadata(), 20)
            for version in (7, 8, 9):
                seen[f"pending_stable_v{version}"] = (
                    raw_fetch(target, group, topic, version, require_stable=True) if version >= 8 else
                    target.request(OFFSET_FETCH, 7, {"group_id": group, "require_stable": True, "topics": [
                        {"name": topic, "partition_indexes": list(range(PARTITIONS))}]}))
            seen["pending_unstable_allowed"] = raw_fetch(target, group, topic, 9)
            producer.commit_transaction(20)

            def stable() -> Body | None:
                answer = raw_fetch(target, group, topic, 9, require_stable=True)
                unstable = any(p["error_code"] == UNSTABLE_OFFSET_COMMIT for p in answer["partitions"].values())
                return None if unstable else answer

            # Kafka's transaction coordinator writes the commit marker to __consumer_offsets after EndTxn has
            # answered: the offsets become stable a moment after commit_transaction returns.
            seen["committed_stable"] = wait_for(f"{target.name}: stable offsets of {group}", stable)
        finally:
            consumer.close()
        return seen

    check("offsets.clients.transactional", *pair.both(observe))
