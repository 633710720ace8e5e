"""__consumer_offsets and __transaction_state are compacted topics like any other: after a confluent-kafka
group committed a hundred times and a transactional producer ran twenty transactions, the cleaner shrinks
both, and a restarted broker rebuilds from what is left the same committed offsets and the same transaction
state (the producer's id and epoch, which a restarted producer then bumps)."""

from __future__ import annotations

import time
from typing import Any

from compat_tests.compaction_support import Compacting, alter_topic_configs, compacting
from compat_tests.polling import wait_for
from compat_tests.record_clients import create_topic

__all__ = ["compacting"]

COMMITS = 100
TRANSACTIONS = 20


def state_of(inspection: dict[str, Any], group: str, transactional_id: str) -> tuple[Any, ...]:
    [txn] = [t for t in inspection["transactions"] if t["transactional_id"] == transactional_id]
    [found] = [g for g in inspection["groups"] if g["group_id"] == group]
    return txn["producer_id"], txn["producer_epoch"], txn["state"], found["state"], found["offsets"]


def test_group_and_transaction_state_survive_compaction_and_restart(compacting: Compacting,
                                                                    topic_name: str) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    bootstrap = compacting.bootstrap
    create_topic(bootstrap, topic_name, configs={"cleanup.policy": "compact"})
    group, transactional_id = f"{topic_name}-group", f"{topic_name}-txn"
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 0})
    producer.init_transactions(30)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic_name, 0, 0)], asynchronous=False)
    # Both internal topics exist now; a live config change makes every further append roll a segment.
    for internal in ("__consumer_offsets", "__transaction_state"):
        alter_topic_configs(bootstrap, internal, {"segment.ms": "1"})

    for i in range(TRANSACTIONS):
        producer.begin_transaction()
        producer.produce(topic_name, key=b"k%d" % (i % 3), value=b"txn-%d" % i)
        producer.commit_transaction(30)
    for offset in range(1, COMMITS + 1):
        time.sleep(0.002)  # each commit in a new millisecond: its append rolls the segment (segment.ms=1)
        consumer.commit(offsets=[TopicPartition(topic_name, 0, offset)], asynchronous=False)
    consumer.close()
    before = state_of(compacting.inspect(), group, transactional_id)
    assert before[2] == "CompleteCommit" and before[4]

    cleaned = {(r["topic"], r["partition"]): r for r in compacting.clean()}
    internal = {key: r for key, r in cleaned.items() if key[0].startswith("__")}
    assert {topic for topic, _ in internal} == {"__consumer_offsets", "__transaction_state"}
    for result in internal.values():
        assert result["bytes_after"] < result["bytes_before"] / 2, result
    assert state_of(compacting.inspect(), group, transactional_id) == before

    compacting.restart()
    assert state_of(compacting.inspect(), group, transactional_id) == before
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    [committed] = reader.committed([TopicPartition(topic_name, 0)], timeout=30)
    reader.close()
    assert committed.offset == COMMITS
    again = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
    again.init_transactions(30)
    after = wait_for(lambda: state_of(compacting.inspect(), group, transactional_id), what="the re-initialised txn")
    assert (after[0], after[1]) == (before[0], before[1] + 1)
