"""Consumer groups as a stock client drives them, Kafka against kemu: two confluent-kafka consumers with
group.protocol=consumer (KIP-848) and the range assignor share a topic; what each is assigned, what they
read, what they commit and read back, and what ConsumerGroupDescribe shows of them.

librdkafka makes its member ids up (random), so members are named by the partitions they hold; the second
consumer starts once the first holds everything, so the epochs are deterministic. The pair is the KIP-848
scenarios' (groups_kip848.CONSUMER_GROUP_SETTINGS: heartbeats every 500 ms, so the revocation the second
join causes is noticed at once).
"""

from __future__ import annotations

from typing import Any

import confluent_kafka

from compat_tests.differential import groups_kip848
from compat_tests.differential.compare import check
from compat_tests.differential.groups_kip848 import describe, topics_setup
from compat_tests.differential.groups_wire import OFFSET_FETCH, ready_coordinator, unique, wait_for
from compat_tests.differential.targets import Pair, Target

Body = dict[str, Any]
cpair = groups_kip848.cpair  # the fixture: the pair with groups_kip848.CONSUMER_GROUP_SETTINGS
PARTITIONS = 4
PER_PARTITION = 2


class Reader:
    """A confluent-kafka consumer of the group and what it has read."""

    def __init__(self, target: Target, group: str, topic: str) -> None:
        self.consumer = confluent_kafka.Consumer({
            "bootstrap.servers": target.bootstrap, "group.id": group, "group.protocol": "consumer",
            "group.remote.assignor": "range", "auto.offset.reset": "earliest", "enable.auto.commit": False})
        self.consumer.subscribe([topic])
        self.values: set[str] = set()

    def poll(self) -> None:
        message = self.consumer.poll(0.1)
        if message is not None and message.error() is None:
            self.values.add(message.value().decode())

    def assigned(self) -> list[int]:
        return sorted(tp.partition for tp in self.consumer.assignment())


def test_two_consumers_share_a_topic(cpair: Pair) -> None:
    topic, group = unique("cg-clients"), unique("cg-clients-group")

    def observe(target: Target) -> Body:
        names = topics_setup(target, {topic: PARTITIONS})
        ready_coordinator(target, group)
        producer = confluent_kafka.Producer({"bootstrap.servers": target.bootstrap, "linger.ms": 0})
        for partition in range(PARTITIONS):
            for n in range(PER_PARTITION):
                producer.produce(topic, value=f"p{partition}-{n}".encode(), partition=partition)
        assert producer.flush(20) == 0
        seen: Body = {}
        first = Reader(target, group, topic)
        second: Reader | None = None
        try:
            def first_reads_all() -> bool | None:
                first.poll()
                return True if len(first.values) == PARTITIONS * PER_PARTITION else None

            wait_for(f"{target.name}: the first consumer reads everything", first_reads_all)
            seen["first_alone"] = first.assigned()
            second = Reader(target, group, topic)
            readers = (first, second)

            def shared() -> bool | None:
                for reader in readers:
                    reader.poll()
                return True if all(len(r.assigned()) == PARTITIONS // 2 for r in readers) else None

            wait_for(f"{target.name}: the consumers share the partitions", shared)
            seen["shared"] = sorted(r.assigned() for r in readers)

            def second_reads_its_half() -> bool | None:
                # Nothing was committed: the second reads its partitions from the earliest offset.
                second.poll()
                return True if len(second.values) == PER_PARTITION * PARTITIONS // 2 else None

            wait_for(f"{target.name}: the second consumer reads its partitions", second_reads_its_half)
            # Which half the second consumer holds follows librdkafka's random member ids (range sorts by id).
            seen["second_read_its_half"] = second.values == {
                f"p{p}-{n}" for p in second.assigned() for n in range(PER_PARTITION)}
            for reader in readers:
                reader.consumer.commit(offsets=[confluent_kafka.TopicPartition(topic, p, PER_PARTITION, "done")
                                                for p in reader.assigned()], asynchronous=False)
            committed = first.consumer.committed(
                [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
            seen["committed"] = {tp.partition: (tp.offset, tp.metadata, tp.error) for tp in committed}
            roles = {}
            for member in target.request(69, 0, {"group_ids": [group]})["groups"][0]["members"]:
                owned = [p for t in member["assignment"]["topic_partitions"] for p in t["partitions"]]
                roles[member["member_id"]] = f"owner of {min(owned)}" if owned else "owner of nothing"
            seen["described"] = describe(target, [group], names, roles)
        finally:
            for reader in (first, second):
                if reader is not None:
                    reader.consumer.close()
        seen["described_after_close"] = describe(target, [group], names)
        fetched = target.request(OFFSET_FETCH, 9, {"require_stable": True, "groups": [
            {"group_id": group, "member_id": None, "member_epoch": -1, "topics": None}]})
        seen["offsets_after_close"] = {p["partition_index"]: (p["committed_offset"], p["metadata"])
                                       for t in fetched["groups"][0]["topics"] for p in t["partitions"]}
        return seen

    check("groups.clients.confluent_consumer_protocol", *cpair.both(observe))
