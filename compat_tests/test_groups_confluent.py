"""Consumer groups with confluent-kafka (librdkafka): the classic protocol, static membership, committed
offsets across a restart, the admin view, and KIP-848 (`group.protocol=consumer`)."""

from __future__ import annotations

from typing import Any

from confluent_kafka import Consumer, ConsumerGroupState, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from compat_tests.groups_support import (
    ALL_PARTITIONS,
    PARTITIONS,
    PER_PARTITION,
    assert_disjoint_cover,
    consumed_everything,
    create_topic_with_messages,
    group_name,
    split_and_caught_up,
    split_is_complete,
)
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for

CLASSIC = {"heartbeat.interval.ms": 500, "session.timeout.ms": 6000}


class Member:
    """One consumer, the messages it received and the rebalances it went through."""

    def __init__(self, bootstrap: str, group: str, topic: str, **config: Any) -> None:
        settings = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                    "enable.auto.commit": False, **config}
        self.consumer = Consumer(settings)
        self.topic = topic
        self.values: set[str] = set()
        self.next: dict[int, int] = {}
        self.assign_calls = 0
        self.revoke_calls = 0
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)

    def _on_assign(self, _consumer: Consumer, _partitions: list[TopicPartition]) -> None:
        self.assign_calls += 1

    def _on_revoke(self, _consumer: Consumer, _partitions: list[TopicPartition]) -> None:
        self.revoke_calls += 1

    def poll(self) -> None:
        message = self.consumer.poll(0.05)
        if message is not None and message.error() is None:
            value = message.value()
            assert value is not None
            self.values.add(value.decode())
            partition, offset = message.partition(), message.offset()
            assert partition is not None and offset is not None
            self.next[partition] = offset + 1

    def assigned(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def committed(self) -> dict[int, int]:
        """The group's committed offset of each partition of the topic."""
        found = self.consumer.committed([TopicPartition(self.topic, p) for p in range(PARTITIONS)], timeout=10)
        return {tp.partition: tp.offset for tp in found}

    def received(self) -> set[str]:
        return self.values

    def read_up_to(self) -> dict[int, int]:
        return self.next


def poll_until(members: list[Member], condition: Any, what: str, timeout: float = 30) -> None:
    def step() -> bool:
        for member in members:
            member.poll()
        return bool(condition())

    wait_for(step, what=what, timeout=timeout)


def test_two_members_split_the_partitions_and_one_takes_over(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    group = group_name()
    first = Member(kemu_server.bootstrap, group, topic_name, **CLASSIC)
    second = Member(kemu_server.bootstrap, group, topic_name, **CLASSIC)
    members = [first, second]
    try:
        poll_until(members, lambda: split_and_caught_up(members),
                   "two members sharing the partitions and consuming every message")
        assert_disjoint_cover([first.assigned(), second.assigned()])
        for member in members:
            member.consumer.commit(asynchronous=False)

        first.consumer.close()  # LeaveGroup: the other member takes everything at once
        members = [second]
        poll_until(members, lambda: second.assigned() == ALL_PARTITIONS, "the remaining member to own every partition")
        assert second.committed() == {p: PER_PARTITION for p in range(PARTITIONS)}
    finally:
        for member in members:
            member.consumer.close()


def consume_and_commit(bootstrap: str, group: str, topic: str) -> None:
    """One member of `group` reads every message, commits its positions and leaves."""
    member = Member(bootstrap, group, topic, **CLASSIC)
    try:
        poll_until([member], lambda: consumed_everything([member]), "every message consumed")
        member.consumer.commit(asynchronous=False)
    finally:
        member.consumer.close()


def test_committed_offsets_survive_a_restart(fresh_kemu_server: KemuServeProcess, topic_name: str) -> None:
    bootstrap = fresh_kemu_server.bootstrap
    create_topic_with_messages(bootstrap, topic_name)
    group = group_name()
    consume_and_commit(bootstrap, group, topic_name)

    fresh_kemu_server.restart()

    again = Member(bootstrap, group, topic_name, **CLASSIC)
    try:
        assert again.committed() == {p: PER_PARTITION for p in range(PARTITIONS)}
        # The group resumes from its committed offsets: only a new message arrives.
        producer = Producer({"bootstrap.servers": bootstrap})
        producer.produce(topic_name, value=b"after-restart", partition=2)
        assert producer.flush(10) == 0
        poll_until([again], lambda: "after-restart" in again.values, "the message produced after the restart")
        assert again.values == {"after-restart"}
    finally:
        again.consumer.close()


def test_committed_offsets_survive_kill_9(fresh_kemu_server: KemuServeProcess, topic_name: str) -> None:
    bootstrap = fresh_kemu_server.bootstrap
    create_topic_with_messages(bootstrap, topic_name)
    group = group_name()
    consume_and_commit(bootstrap, group, topic_name)

    fresh_kemu_server.kill()
    fresh_kemu_server.start()

    admin = AdminClient({"bootstrap.servers": bootstrap})
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(timeout=15)
    assert {tp.partition: tp.offset for tp in offsets.topic_partitions} == {p: PER_PARTITION for p in range(PARTITIONS)}
    description = admin.describe_consumer_groups([group], request_timeout=10)[group].result(timeout=15)
    assert (description.state, description.members) == (ConsumerGroupState.EMPTY, [])


def test_a_static_member_restarts_without_a_rebalance(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    group = group_name()
    dynamic = Member(kemu_server.bootstrap, group, topic_name, **CLASSIC)
    static = Member(kemu_server.bootstrap, group, topic_name, **{**CLASSIC, "group.instance.id": "static-1"})
    members = [dynamic, static]
    try:
        poll_until(members, lambda: split_is_complete([m.assigned() for m in members]),
                   "the two members sharing the partitions")
        kept, static_had = dynamic.assigned(), static.assigned()
        calls = (dynamic.assign_calls, dynamic.revoke_calls)
        admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})
        before = admin.describe_consumer_groups([group], request_timeout=10)[group].result(timeout=15)

        static.consumer.close()  # a static member does not leave the group when it closes
        members = [dynamic]
        restarted = Member(kemu_server.bootstrap, group, topic_name, **{**CLASSIC, "group.instance.id": "static-1"})
        members = [dynamic, restarted]
        # Had the rejoin started a rebalance, the eager protocol would make the dynamic member revoke its
        # partitions (in a poll, before it rejoins) before the restarted member could get any.
        poll_until(members, lambda: restarted.assigned() == static_had, "the restarted static member's assignment")
        assert dynamic.assigned() == kept
        assert (dynamic.assign_calls, dynamic.revoke_calls) == calls
        after = admin.describe_consumer_groups([group], request_timeout=10)[group].result(timeout=15)
        assert after.state == ConsumerGroupState.STABLE
        old_ids = {m.group_instance_id: m.member_id for m in before.members}
        new_ids = {m.group_instance_id: m.member_id for m in after.members}
        assert new_ids[None] == old_ids[None]  # the dynamic member is untouched
        assert new_ids["static-1"] != old_ids["static-1"]  # the static instance came back under a new id
    finally:
        for member in members:
            member.consumer.close()


def test_admin_lists_describes_and_deletes_groups(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    group = group_name()
    members = [Member(kemu_server.bootstrap, group, topic_name, **CLASSIC, **{"client.id": f"member-{i}"})
               for i in range(2)]
    admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})
    try:
        poll_until(members, lambda: split_and_caught_up(members),
                   "two members sharing the partitions")
        for member in members:
            member.consumer.commit(asynchronous=False)

        listed = admin.list_consumer_groups(request_timeout=10).result(timeout=15)
        mine = [g for g in listed.valid if g.group_id == group]
        assert [(g.state, g.is_simple_consumer_group) for g in mine] == [(ConsumerGroupState.STABLE, False)]

        description = admin.describe_consumer_groups([group], request_timeout=10)[group].result(timeout=15)
        assert description.state == ConsumerGroupState.STABLE
        assert description.partition_assignor == "range"
        assert sorted(m.client_id for m in description.members) == ["member-0", "member-1"]
        assert all(m.host == "/127.0.0.1" for m in description.members)
        assert_disjoint_cover([{tp.partition for tp in m.assignment.topic_partitions} for m in description.members])

        offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(timeout=15)
        assert {(tp.topic, tp.partition): tp.offset for tp in offsets.topic_partitions} == {
            (topic_name, p): PER_PARTITION for p in range(PARTITIONS)}
    finally:
        for member in members:
            member.consumer.close()

    def state() -> ConsumerGroupState:
        described: ConsumerGroupState = admin.describe_consumer_groups([group])[group].result(timeout=15).state
        return described

    wait_for(lambda: state() == ConsumerGroupState.EMPTY,
             what="the group to be empty once its members left")
    assert admin.delete_consumer_groups([group], request_timeout=10)[group].result(timeout=15) is None
    listed = admin.list_consumer_groups(request_timeout=10).result(timeout=15)
    assert group not in {g.group_id for g in listed.valid}


def test_kip848_consumer_protocol_group_of_two(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    group = group_name()
    members = [Member(kemu_server.bootstrap, group, topic_name, **{"group.protocol": "consumer"}) for _ in range(2)]
    try:
        poll_until(members, lambda: split_and_caught_up(members),
                   "two KIP-848 members sharing the partitions and consuming every message")
        assert_disjoint_cover([m.assigned() for m in members])
        for member in members:
            member.consumer.commit(asynchronous=False)
        admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})
        description = admin.describe_consumer_groups([group], request_timeout=10)[group].result(timeout=15)
        assert len(description.members) == 2
        offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(timeout=15)
        assert {tp.partition: tp.offset for tp in offsets.topic_partitions} == {
            p: PER_PARTITION for p in range(PARTITIONS)}
    finally:
        for member in members:
            member.consumer.close()


def test_kip848_regex_subscription_is_resolved_by_the_broker(kemu_server: KemuServeProcess, topic_name: str) -> None:
    matching = [f"{topic_name}-a", f"{topic_name}-b"]
    for name in [*matching, f"other-{topic_name}"]:
        create_topic_with_messages(kemu_server.bootstrap, name)
    consumer = Consumer({"bootstrap.servers": kemu_server.bootstrap, "group.id": group_name(),
                         "group.protocol": "consumer", "auto.offset.reset": "earliest"})
    seen: set[tuple[str, str]] = set()

    def poll() -> bool:
        message = consumer.poll(0.05)
        if message is not None and message.error() is None:
            value = message.value()
            assert value is not None
            seen.add((message.topic() or "", value.decode()))
        return len(seen) == 2 * PARTITIONS * PER_PARTITION

    try:
        # librdkafka sends a subscription starting with "^" as subscribed_topic_regex (KIP-848, RE2/J).
        consumer.subscribe([f"^{topic_name}-.*"])
        wait_for(poll, what="every message of the two matching topics", timeout=30)
        assert {topic for topic, _ in seen} == set(matching)
        assert {(tp.topic, tp.partition) for tp in consumer.assignment()} == {
            (topic, p) for topic in matching for p in range(PARTITIONS)}
    finally:
        consumer.close()
