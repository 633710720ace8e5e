"""Share groups (KIP-932) with confluent-kafka's ShareConsumer, against kemu and against the reference Kafka:
two consumers of one share group split a 3-partition topic with every record accepted exactly once; in explicit
mode a released record comes back with delivery count 2 and a rejected one never; with kemu's movable clock a
record left unacknowledged is redelivered to another consumer right after `advance` passes its lock."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for
from compat_tests.reference.kafka import ReferenceKafka
from kemu.testing import Broker

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(params=["kemu", "kafka"])
def bootstrap(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "kemu":
        with Broker() as broker:
            yield broker.bootstrap_servers
    else:
        kafka: ReferenceKafka = request.getfixturevalue("reference_kafka")
        host, port = kafka.addresses[0]
        yield f"{host}:{port}"


def setup(bootstrap: str, topic: str, group: str, partitions: int, values: list[str]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for index, value in enumerate(values):
        producer.produce(topic, value.encode(), partition=index % partitions)
    assert producer.flush(30) == 0


def share_consumer(bootstrap: str, group: str, topic: str, **config: Any) -> ShareConsumer:
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, **config})
    consumer.subscribe([topic])
    return consumer


def test_two_share_consumers_accept_every_record_once(bootstrap: str) -> None:
    topic, group = f"share-split-{uuid.uuid4().hex[:8]}", f"workers-{uuid.uuid4().hex[:8]}"
    values = [f"job-{n}" for n in range(10_000)]
    setup(bootstrap, topic, group, 3, values)
    consumers = [share_consumer(bootstrap, group, topic) for _ in range(2)]
    seen: Counter[str] = Counter()
    by_consumer = [0, 0]
    try:
        def drained() -> bool:
            for index, consumer in enumerate(consumers):
                for message in consumer.poll(0.2):
                    if message.error() is None:
                        seen[message.value().decode()] += 1
                        by_consumer[index] += 1
            return sum(seen.values()) >= len(values)

        wait_for(drained, what="every record delivered", timeout=120)
        for consumer in consumers:
            consumer.commit_sync(30)  # implicit mode: the last poll's records accepted
    finally:
        for consumer in consumers:
            consumer.close()
    assert set(seen) == set(values)
    assert max(seen.values()) == 1, [v for v, n in seen.items() if n > 1][:10]


def test_a_released_record_comes_back_with_delivery_count_two_and_a_rejected_one_never(bootstrap: str) -> None:
    topic, group = f"share-acks-{uuid.uuid4().hex[:8]}", f"acks-{uuid.uuid4().hex[:8]}"
    setup(bootstrap, topic, group, 1, ["release-me", "reject-me", "accept-me"])
    consumer = share_consumer(bootstrap, group, topic, **{"share.acknowledgement.mode": "explicit"})
    deliveries: list[tuple[str, int]] = []
    try:
        first: list[Any] = []
        wait_for(lambda: bool(first.extend(m for m in consumer.poll(0.5) if m.error() is None) or len(first) >= 3),
                 what="the three records", timeout=60)
        from confluent_kafka import AcknowledgeType

        for message in first:
            deliveries.append((message.value().decode(), message.delivery_count()))
            kind = {"release-me": AcknowledgeType.RELEASE, "reject-me": AcknowledgeType.REJECT}.get(
                message.value().decode(), AcknowledgeType.ACCEPT)
            consumer.acknowledge(message, kind)
        consumer.commit_sync(30)
        again: list[Any] = []
        wait_for(lambda: bool(again.extend(m for m in consumer.poll(0.5) if m.error() is None) or again),
                 what="the released record again", timeout=60)
        for message in again:
            deliveries.append((message.value().decode(), message.delivery_count()))
            consumer.acknowledge(message)
        consumer.commit_sync(30)
        assert [m for m in consumer.poll(2.0) if m.error() is None] == []
    finally:
        consumer.close()
    assert deliveries == [("release-me", 1), ("reject-me", 1), ("accept-me", 1), ("release-me", 2)]


def test_an_unacknowledged_record_is_redelivered_after_the_clock_passes_its_lock() -> None:
    with Broker(virtual_clock=True) as broker:
        topic, group = "share-locks", "lockers"
        setup(broker.bootstrap_servers, topic, group, 1, ["held"])
        holder = share_consumer(broker.bootstrap_servers, group, topic,
                                **{"share.acknowledgement.mode": "explicit"})
        other = share_consumer(broker.bootstrap_servers, group, topic)
        try:
            held: list[Any] = []

            def holder_got_it() -> bool:
                held.extend(m for m in holder.poll(0.5) if m.error() is None)
                if not held:
                    # A new share group's target assignment waits group.share.assignment.interval.ms (1 s) of
                    # the broker's clock, which only moves when the test moves it.
                    broker.advance(1)
                return bool(held)

            wait_for(holder_got_it, what="the record acquired by the first consumer", timeout=60)
            assert [(m.value(), m.delivery_count()) for m in held] == [(b"held", 1)]
            inspected = broker.inspect()
            share = inspected.share_partition(group, topic)
            [records] = share.in_flight
            assert (share.start_offset, records.first_offset, records.last_offset, records.state,
                    records.delivery_count) == (0, 0, 0, "acquired", 1)
            # Acquired at or before now, for share.record.lock.duration.ms (30 s).
            assert records.lock_deadline_ms is not None
            assert inspected.time_ms < records.lock_deadline_ms <= inspected.time_ms + 30_000
            assert records.member_id is not None and "Share records" in inspected.render()
            # The holder never acknowledges; the other consumer gets nothing while the lock (30 s) holds.
            assert [m for m in other.poll(1.0) if m.error() is None] == []
            broker.advance(31)
            redelivered: list[Any] = []
            wait_for(lambda: bool(redelivered.extend(m for m in other.poll(0.5) if m.error() is None)
                                  or redelivered), what="the record redelivered", timeout=30)
            assert [(m.value(), m.delivery_count()) for m in redelivered] == [(b"held", 2)]
            [again] = broker.inspect().share_partition(group, topic).in_flight
            assert (again.state, again.delivery_count) == ("acquired", 2) and again.member_id != records.member_id
        finally:
            other.close()
            holder.close()


def test_share_state_survives_kill_9(fresh_kemu_server: KemuServeProcess) -> None:
    """Records accepted before a SIGKILL are never delivered again, and none of the others is lost: the share
    coordinator's state in __share_group_state is read back by the restarted broker."""
    bootstrap = fresh_kemu_server.bootstrap
    topic, group = "share-durable", "durable-workers"
    values = [f"job-{n}" for n in range(300)]
    setup(bootstrap, topic, group, 2, values)
    first = share_consumer(bootstrap, group, topic)
    accepted: list[str] = []
    try:
        def some_accepted() -> bool:
            for message in first.poll(0.5):
                if message.error() is None:
                    accepted.append(message.value().decode())
            return len(accepted) >= 100

        wait_for(some_accepted, what="a first hundred records", timeout=60)
        first.commit_sync(30)  # implicit mode: everything polled so far is accepted
        fresh_kemu_server.kill()
    finally:
        first.close()
    fresh_kemu_server.start()

    after: list[str] = []
    second = share_consumer(bootstrap, group, topic)
    try:
        def the_rest() -> bool:
            for message in second.poll(0.5):
                if message.error() is None:
                    after.append(message.value().decode())
            return len(set(accepted) | set(after)) >= len(values)

        wait_for(the_rest, what="the records not accepted before the kill", timeout=90)
        second.commit_sync(30)
    finally:
        second.close()
    redelivered = set(accepted) & set(after)
    lost = set(values) - set(accepted) - set(after)
    assert (sorted(redelivered), sorted(lost)) == ([], [])
    assert len(after) == len(set(after))


def set_group(bootstrap: str, group: str, values: dict[str, str]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET) for name, value in values.items()])
    admin.incremental_alter_configs([resource])[resource].result(30)


def test_a_poison_record_is_archived_after_the_delivery_limit(bootstrap: str) -> None:
    topic, group = f"share-poison-{uuid.uuid4().hex[:8]}", f"poison-{uuid.uuid4().hex[:8]}"
    setup(bootstrap, topic, group, 1, ["poison", "fine"])
    set_group(bootstrap, group, {"share.delivery.count.limit": "2"})
    consumer = share_consumer(bootstrap, group, topic, **{"share.acknowledgement.mode": "explicit"})
    from confluent_kafka import AcknowledgeType

    deliveries: list[tuple[str, int]] = []
    try:
        def handle() -> bool:
            for message in consumer.poll(0.5):
                if message.error() is not None:
                    continue
                value = message.value().decode()
                deliveries.append((value, message.delivery_count()))
                consumer.acknowledge(message, AcknowledgeType.RELEASE if value == "poison" else AcknowledgeType.ACCEPT)
            consumer.commit_sync(30)
            return ("fine", 1) in deliveries and sum(v == "poison" for v, _ in deliveries) >= 2

        wait_for(handle, what="the poison record's deliveries", timeout=60)
        assert [m for m in consumer.poll(2.0) if m.error() is None] == []
    finally:
        consumer.close()
    assert sorted(deliveries) == [("fine", 1), ("poison", 1), ("poison", 2)]


def test_read_committed_share_groups_never_deliver_aborted_records(bootstrap: str) -> None:
    topic, group = f"share-txn-{uuid.uuid4().hex[:8]}", f"txn-{uuid.uuid4().hex[:8]}"
    setup(bootstrap, topic, group, 1, ["plain-before"])
    set_group(bootstrap, group, {"share.isolation.level": "read_committed"})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"share-txn-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(30)
    for outcome in ("aborted", "committed"):
        producer.begin_transaction()
        for n in range(3):
            producer.produce(topic, f"{outcome}-{n}".encode(), partition=0)
        producer.flush(30)
        if outcome == "aborted":
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
    plain = Producer({"bootstrap.servers": bootstrap})
    plain.produce(topic, b"plain-after", partition=0)
    assert plain.flush(30) == 0
    consumer = share_consumer(bootstrap, group, topic)
    seen: list[str] = []
    try:
        def everything() -> bool:
            seen.extend(m.value().decode() for m in consumer.poll(0.5) if m.error() is None)
            return "plain-after" in seen

        wait_for(everything, what="the records after the transactions", timeout=60)
        consumer.commit_sync(30)
    finally:
        consumer.close()
    assert seen == ["plain-before", "committed-0", "committed-1", "committed-2", "plain-after"]


@pytest.mark.parametrize("bent", [False, True], ids=["sound", "bent"])
def test_the_checker_catches_a_bent_broker_redelivering_accepted_records(
        bent: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exactly-once checker knows share delivery: a broker that forgets what a share group accepted (the
    planted bug: an acknowledgement answered as done that changes nothing) hands the records out again once
    their locks expire, and the checker reports it; the sound broker, the same run, has no violation."""
    from kemu.groups.share_partition import AckOutcome, SharePartition
    from kemu.testing import ShareRedelivered

    if bent:
        monkeypatch.setattr(SharePartition, "acknowledge", lambda self, *args, **kwargs: AckOutcome())
    with Broker(virtual_clock=True) as broker:
        topic, group = "share-checked", "checked"
        setup(broker.bootstrap_servers, topic, group, 1, ["a", "b"])
        consumer = share_consumer(broker.bootstrap_servers, group, topic, **{"share.acknowledgement.mode": "explicit"})
        seen: list[str] = []
        try:
            def accept_what_comes() -> bool:
                for message in consumer.poll(0.5):
                    if message.error() is None:
                        seen.append(message.value().decode())
                        consumer.acknowledge(message)
                if seen:
                    consumer.commit_sync(30)
                if len(seen) < 2:
                    broker.advance(1)  # the first target assignment waits group.share.assignment.interval.ms
                return len(seen) >= 2

            wait_for(accept_what_comes, what="both records accepted", timeout=60)
            broker.advance(31)  # past every lock: a broker that forgot the acceptance hands a and b out again
            again = [m.value() for m in consumer.poll(3.0) if m.error() is None]
        finally:
            consumer.close()
        violations = broker.inspect().violations
    if not bent:
        assert (again, violations) == ([], [])
    else:
        assert sorted(again) == [b"a", b"b"]
        assert violations and all(isinstance(v, ShareRedelivered) for v in violations)
        assert {(v.topic, v.partition, v.group_id, v.first_offset) for v in violations
                if isinstance(v, ShareRedelivered)} == {(topic, 0, group, 0)}


def test_a_share_consumer_gets_past_scripted_share_fetch_errors() -> None:
    """Faults script the share APIs like any other: two ShareFetch answers turned into SHARE_SESSION_NOT_FOUND
    (the client opens its session again) lose and duplicate nothing."""
    from kemu.testing import Fault

    with Broker() as broker:
        topic, group = "share-faults", "faulted"
        values = [f"job-{n}" for n in range(50)]
        setup(broker.bootstrap_servers, topic, group, 1, values)
        fault = broker.faults.add(Fault(api="ShareFetch", error="SHARE_SESSION_NOT_FOUND", count=2))
        consumer = share_consumer(broker.bootstrap_servers, group, topic)
        seen: Counter[str] = Counter()
        try:
            def drained() -> bool:
                for message in consumer.poll(0.5):
                    if message.error() is None:
                        seen[message.value().decode()] += 1
                return set(seen) == set(values)

            wait_for(drained, what="every record despite the faults", timeout=60)
            consumer.commit_sync(30)
        finally:
            consumer.close()
        assert fault.hits == 2
        assert max(seen.values()) == 1 and broker.inspect().violations == []
