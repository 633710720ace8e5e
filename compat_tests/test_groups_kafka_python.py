"""Consumer groups with kafka-python: the classic protocol, static membership, committed offsets across a
restart, and the admin view."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from confluent_kafka import Producer
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.consumer.subscription_state import ConsumerRebalanceListener

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

CLASSIC = {"heartbeat_interval_ms": 500, "session_timeout_ms": 6000}


class Member(ConsumerRebalanceListener):  # type: ignore[misc]
    """One KafkaConsumer driven by a thread of its own, as applications run consumers.

    kafka-python 3.0 drops the result of a JoinGroup/SyncGroup round trip that completes while its consumer is
    not inside poll() (it starts a new join instead), so two consumers polled in turn from one thread can
    rejoin forever; a thread per consumer keeps each one polling.

    Each member also knows its topic's partitions before its first poll. kafka-python 3.0.12's join loop
    (`join_group_async`) stops as soon as `need_rejoin()` turns false and leaves an in-flight JoinGroup/SyncGroup
    unawaited (the Java client also waits while a join is pending; kafka-python had that check until its join
    became a coroutine). When a leader's first JoinGroup is answered before its topic metadata arrives (the
    initial rebalance delay is 0, as in Kafka's shipped server.properties), it assigns nothing, rejoins once the
    metadata comes, and that rejoin's assignment is then dropped: the member keeps its empty assignment with
    heartbeats off until the session times out, and never rejoins (the client's own logic, whichever broker answers).
    """

    def __init__(self, bootstrap: str, group: str, topic: str, **config: Any) -> None:
        self.values: set[str] = set()
        self._next: dict[int, int] = {}
        self.assign_calls = 0
        self.revoke_calls = 0
        self._assigned: frozenset[int] = frozenset()
        self._lock = threading.Lock()
        self._requests: queue.Queue[tuple[Callable[[KafkaConsumer], Any], Future[Any]]] = queue.Queue()
        self._stop = threading.Event()
        created: Future[KafkaConsumer] = Future()
        self._thread = threading.Thread(target=self._run, args=(bootstrap, group, topic, config, created),
                                        name=f"member-{group}", daemon=True)
        self._thread.start()
        created.result(timeout=30)

    def _run(self, bootstrap: str, group: str, topic: str, config: dict[str, Any],
             created: Future[KafkaConsumer]) -> None:
        try:
            consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                     enable_auto_commit=False, **config)
            consumer.subscribe([topic], listener=self)
            if not consumer.partitions_for_topic(topic):
                raise AssertionError(f"kafka-python found no partitions for {topic}")
        except BaseException as error:
            created.set_exception(error)
            return
        created.set_result(consumer)
        while not self._stop.is_set():
            while not self._requests.empty():
                action, result = self._requests.get()
                try:
                    result.set_result(action(consumer))
                except BaseException as error:
                    result.set_exception(error)
            if self._stop.is_set():
                break
            batches = consumer.poll(timeout_ms=50)
            with self._lock:
                for tp, records in batches.items():
                    self.values.update(record.value.decode() for record in records)
                    self._next[tp.partition] = records[-1].offset + 1
                self._assigned = frozenset(tp.partition for tp in consumer.assignment())

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.assign_calls += 1

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.revoke_calls += 1

    def call(self, action: Callable[[KafkaConsumer], Any]) -> Any:
        """Run `action(consumer)` on the member's thread, between two polls."""
        result: Future[Any] = Future()
        self._requests.put((action, result))
        return result.result(timeout=30)

    def assigned(self) -> set[int]:
        with self._lock:
            return set(self._assigned)

    def read_up_to(self) -> dict[int, int]:
        with self._lock:
            return dict(self._next)

    def received(self) -> set[str]:
        with self._lock:
            return set(self.values)

    def close(self) -> None:
        if self._thread.is_alive():
            self.call(self._close_on_thread)
            self._thread.join(timeout=30)

    def _close_on_thread(self, consumer: KafkaConsumer) -> None:
        # Stop is set on the member's own thread before close, so its loop cannot poll a closed consumer.
        self._stop.set()
        consumer.close()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    wait_for(condition, what=what, timeout=30)


def committed_offsets(member: Member, topic: str) -> dict[int, int | None]:
    offsets: dict[int, int | None] = member.call(
        lambda consumer: {p: consumer.committed(TopicPartition(topic, p)) for p in range(PARTITIONS)})
    return offsets


def generation_of(member: Member) -> int:
    generation: int = member.call(lambda consumer: consumer._coordinator._generation.generation_id)
    return generation


def test_two_members_split_the_partitions_and_one_takes_over(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    group = group_name()
    first = Member(kemu_server.bootstrap, group, topic_name, **CLASSIC)
    second = Member(kemu_server.bootstrap, group, topic_name, **CLASSIC)
    members = [first, second]
    try:
        wait_until(lambda: split_and_caught_up(members),
                   "two members sharing the partitions and consuming every message")
        assert_disjoint_cover([first.assigned(), second.assigned()])
        for member in members:
            member.call(lambda consumer: consumer.commit())

        first.close()  # LeaveGroup
        members = [second]
        wait_until(lambda: second.assigned() == ALL_PARTITIONS, "the remaining member to own every partition")
        assert committed_offsets(second, topic_name) == {p: PER_PARTITION for p in range(PARTITIONS)}
    finally:
        for member in members:
            member.close()


def test_committed_offsets_survive_a_restart(fresh_kemu_server: KemuServeProcess, topic_name: str) -> None:
    bootstrap = fresh_kemu_server.bootstrap
    create_topic_with_messages(bootstrap, topic_name)
    group = group_name()
    member = Member(bootstrap, group, topic_name, **CLASSIC)
    wait_until(lambda: consumed_everything([member]), "every message consumed")
    member.call(lambda consumer: consumer.commit())
    member.close()

    fresh_kemu_server.restart()

    again = Member(bootstrap, group, topic_name, **CLASSIC)
    try:
        assert committed_offsets(again, topic_name) == {p: PER_PARTITION for p in range(PARTITIONS)}
        producer = Producer({"bootstrap.servers": bootstrap})
        producer.produce(topic_name, value=b"after-restart", partition=1)
        assert producer.flush(10) == 0
        wait_until(lambda: "after-restart" in again.received(), "the message produced after the restart")
        assert again.received() == {"after-restart"}
    finally:
        again.close()


def test_a_static_member_restarts_without_a_rebalance(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    group = group_name()
    admin = KafkaAdminClient(bootstrap_servers=kemu_server.bootstrap)
    dynamic = Member(kemu_server.bootstrap, group, topic_name, **CLASSIC)
    static = Member(kemu_server.bootstrap, group, topic_name, group_instance_id="static-1", **CLASSIC)
    members = [dynamic, static]
    try:
        wait_until(lambda: split_is_complete([m.assigned() for m in members]),
                   "the two members sharing the partitions")
        kept, static_had = dynamic.assigned(), static.assigned()
        calls = (dynamic.assign_calls, dynamic.revoke_calls)
        generation = generation_of(dynamic)
        before = {m["group_instance_id"]: m["member_id"] for m in admin.describe_groups([group])[group]["members"]}

        static.close()  # a static member does not send LeaveGroup
        members = [dynamic]
        restarted = Member(kemu_server.bootstrap, group, topic_name, group_instance_id="static-1", **CLASSIC)
        members = [dynamic, restarted]
        # A rebalance would make the dynamic member revoke (eager protocol) before the newcomer got anything.
        wait_until(lambda: restarted.assigned() == static_had, "the restarted static member's assignment")
        assert dynamic.assigned() == kept
        assert (dynamic.assign_calls, dynamic.revoke_calls) == calls
        assert generation_of(dynamic) == generation
        assert generation_of(restarted) == generation
        described = admin.describe_groups([group])[group]
        assert described["group_state"] == "Stable"
        after = {m["group_instance_id"]: m["member_id"] for m in described["members"]}
        assert after[None] == before[None] and after["static-1"] != before["static-1"]
    finally:
        for member in members:
            member.close()
        admin.close()


def test_admin_lists_describes_and_deletes_groups(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    group = group_name()
    members = [Member(kemu_server.bootstrap, group, topic_name, client_id=f"member-{i}", **CLASSIC) for i in range(2)]
    admin = KafkaAdminClient(bootstrap_servers=kemu_server.bootstrap)
    try:
        wait_until(lambda: split_and_caught_up(members),
                   "two members sharing the partitions")
        for member in members:
            member.call(lambda consumer: consumer.commit())

        listed = [g for g in admin.list_groups() if g["group_id"] == group]
        assert [(g["group_state"], g["protocol_type"], g["group_type"]) for g in listed] == [
            ("Stable", "consumer", "classic")]
        described = admin.describe_groups([group])[group]
        assert (described["group_state"], described["protocol_type"], described["protocol_data"]) == (
            "Stable", "consumer", "range")
        assert sorted(m["client_id"] for m in described["members"]) == ["member-0", "member-1"]
        assert all(m["member_metadata"]["topics"] == [topic_name] for m in described["members"])
        assert_disjoint_cover([{p for entry in m["member_assignment"]["assigned_partitions"]
                                for p in entry["partitions"]} for m in described["members"]])
        offsets = admin.list_group_offsets({group: None})[group]
        assert {tp: o.offset for tp, o in offsets.items()} == {
            TopicPartition(topic_name, p): PER_PARTITION for p in range(PARTITIONS)}
    finally:
        for member in members:
            member.close()

    try:
        wait_for(lambda: admin.describe_groups([group])[group]["group_state"] == "Empty",
                 what="the group to be empty once its members left")
        assert admin.delete_groups([group]) == {group: "OK"}
        assert group not in {g["group_id"] for g in admin.list_groups()}
    finally:
        admin.close()
