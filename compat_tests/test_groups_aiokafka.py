"""Consumer groups with aiokafka: the classic protocol, static membership, committed offsets across a
restart, and the admin view (aiokafka's admin client has no DeleteGroups)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment
from confluent_kafka import Producer

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
from compat_tests.polling import wait_for_async

CLASSIC = {"heartbeat_interval_ms": 500, "session_timeout_ms": 6000}


class Member(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, bootstrap: str, group: str, topic: str, **config: Any) -> None:
        self.consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                         enable_auto_commit=False, **config)
        self.topic = topic
        self.values: set[str] = set()
        self.next: dict[int, int] = {}
        self.assign_calls = 0
        self.revoke_calls = 0

    async def start(self) -> Member:
        await self.consumer.start()
        self.consumer.subscribe([self.topic], listener=self)
        return self

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.assign_calls += 1

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.revoke_calls += 1
        # What was read of a revoked partition is no longer this member's progress: if the partition comes
        # back, the consumer reads it again from the committed offset. Kept, a member that owned every
        # partition before a second one joined (a new group's first rebalance does not wait,
        # group.initial.rebalance.delay.ms=0) looked caught up while its positions were reset, and committed
        # nothing for them.
        for tp in revoked:
            self.next.pop(tp.partition, None)

    async def poll(self) -> None:
        for tp, records in (await self.consumer.getmany(timeout_ms=50)).items():
            self.values.update(record.value.decode() for record in records)
            self.next[tp.partition] = records[-1].offset + 1

    def assigned(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def received(self) -> set[str]:
        return self.values

    def read_up_to(self) -> dict[int, int]:
        return self.next

    async def committed(self) -> dict[int, int | None]:
        return {p: await self.consumer.committed(TopicPartition(self.topic, p)) for p in range(PARTITIONS)}

    @property
    def generation(self) -> int:
        generation: int = self.consumer._coordinator.generation
        return generation


async def poll_until(members: list[Member], condition: Callable[[], bool], what: str) -> None:
    async def step() -> bool:
        for member in members:
            await member.poll()
        return condition()

    await wait_for_async(step, what=what, timeout=30)


async def _split_and_take_over(bootstrap: str, topic: str) -> None:
    group = group_name()
    first = await Member(bootstrap, group, topic, **CLASSIC).start()
    second = await Member(bootstrap, group, topic, **CLASSIC).start()
    members = [first, second]
    try:
        await poll_until(members, lambda: split_and_caught_up(members),
                         "two members sharing the partitions, each at the end of its own")
        assert_disjoint_cover([first.assigned(), second.assigned()])
        for member in members:
            await member.consumer.commit()
        await first.consumer.stop()  # LeaveGroup
        members = [second]
        await poll_until(members, lambda: second.assigned() == ALL_PARTITIONS,
                         "the remaining member to own every partition")
        assert await second.committed() == {p: PER_PARTITION for p in range(PARTITIONS)}
    finally:
        for member in members:
            await member.consumer.stop()


def test_two_members_split_the_partitions_and_one_takes_over(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    asyncio.run(_split_and_take_over(kemu_server.bootstrap, topic_name))


async def _consume_and_commit(bootstrap: str, group: str, topic: str) -> None:
    member = await Member(bootstrap, group, topic, **CLASSIC).start()
    try:
        await poll_until([member], lambda: consumed_everything([member]), "every message consumed")
        await member.consumer.commit()
    finally:
        await member.consumer.stop()


async def _resume_after_restart(bootstrap: str, group: str, topic: str) -> None:
    member = await Member(bootstrap, group, topic, **CLASSIC).start()
    try:
        assert await member.committed() == {p: PER_PARTITION for p in range(PARTITIONS)}
        producer = Producer({"bootstrap.servers": bootstrap})
        producer.produce(topic, value=b"after-restart", partition=3)
        assert producer.flush(10) == 0
        await poll_until([member], lambda: "after-restart" in member.values, "the message produced after the restart")
        assert member.values == {"after-restart"}
    finally:
        await member.consumer.stop()


def test_committed_offsets_survive_a_restart(fresh_kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(fresh_kemu_server.bootstrap, topic_name)
    group = group_name()
    asyncio.run(_consume_and_commit(fresh_kemu_server.bootstrap, group, topic_name))
    fresh_kemu_server.restart()
    asyncio.run(_resume_after_restart(fresh_kemu_server.bootstrap, group, topic_name))


async def _static_rejoin(bootstrap: str, topic: str) -> None:
    group = group_name()
    dynamic = await Member(bootstrap, group, topic, **CLASSIC).start()
    static = await Member(bootstrap, group, topic, group_instance_id="static-1", **CLASSIC).start()
    members = [dynamic, static]
    try:
        await poll_until(members, lambda: split_is_complete([m.assigned() for m in members]),
                         "the two members sharing the partitions")
        kept, static_had = dynamic.assigned(), static.assigned()
        calls, generation = (dynamic.assign_calls, dynamic.revoke_calls), dynamic.generation

        await static.consumer.stop()  # a static member does not send LeaveGroup
        members = [dynamic]
        restarted = await Member(bootstrap, group, topic, group_instance_id="static-1", **CLASSIC).start()
        members = [dynamic, restarted]
        # A rebalance would make the dynamic member revoke (eager protocol) before the newcomer got anything.
        await poll_until(members, lambda: restarted.assigned() == static_had,
                         "the restarted static member's assignment")
        assert dynamic.assigned() == kept
        assert (dynamic.assign_calls, dynamic.revoke_calls) == calls
        assert dynamic.generation == restarted.generation == generation
    finally:
        for member in members:
            await member.consumer.stop()


def test_a_static_member_restarts_without_a_rebalance(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    asyncio.run(_static_rejoin(kemu_server.bootstrap, topic_name))


async def _admin_view(bootstrap: str, topic: str) -> None:
    group = group_name()
    members = [await Member(bootstrap, group, topic, client_id=f"member-{i}", **CLASSIC).start() for i in range(2)]
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await poll_until(members, lambda: split_and_caught_up(members), "two members sharing the partitions")
        for member in members:
            await member.consumer.commit()

        assert (group, "consumer") in await admin.list_consumer_groups()
        [response] = await admin.describe_consumer_groups([group])
        [described] = response.groups
        error_code, group_id, state, protocol_type, protocol, described_members = described
        assert (error_code, group_id, state, protocol_type, protocol) == (0, group, "Stable", "consumer", "roundrobin")
        assert sorted(m[1] for m in described_members) == ["member-0", "member-1"]
        assert {m[2] for m in described_members} == {"/127.0.0.1"}
        assignments = [ConsumerProtocolMemberAssignment.decode(m[4]) for m in described_members]
        assert_disjoint_cover([{tp.partition for tp in a.partitions()} for a in assignments])
        offsets = await admin.list_consumer_group_offsets(group)
        assert {tp: o.offset for tp, o in offsets.items()} == {
            TopicPartition(topic, p): PER_PARTITION for p in range(PARTITIONS)}
    finally:
        for member in members:
            await member.consumer.stop()
        await admin.close()


def test_admin_lists_and_describes_groups(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    asyncio.run(_admin_view(kemu_server.bootstrap, topic_name))
