"""Fault scripts: the plain-data Fault and its JSON form, and each fault through a served broker — an error
for the next N requests by API and by filter (topic, partition, transactional id, group, client id), delay,
drop before and after, throttle, hits counted, faults kept across restart() and kill() — and the crash
points inside the two-phase commit stopping the broker dead, after which restart()/kill() complete the
transaction."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import pytest

from compat_tests.polling import wait_for
from kemu.coordinators.crash_points import CrashPoint
from kemu.testing import Broker
from kemu.testing.faults import Fault
from kemu.txn.state import TxnState
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch
from tests.server.kafka_socket import KafkaSocket
from tests.testing.support import markers

PRODUCE = 0
METADATA = 3
OFFSET_FETCH = 9
FIND_COORDINATOR = 10
INIT_PRODUCER_ID = 22
END_TXN = 26
CREATE_TOPICS = 19


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker() as broker:
        yield broker


def produce_body(topic: str, partition: int = 0, value: bytes = b"v") -> dict[str, object]:
    return {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition,
                                            "records": build_batch([NewRecord(value=value, timestamp=1)])}]}]}


def produce(conn: KafkaSocket, topic: str, partition: int = 0) -> int:
    body = conn.request(PRODUCE, 9, produce_body(topic, partition))
    return int(body["responses"][0]["partition_responses"][0]["error_code"])


def init_producer(conn: KafkaSocket, transactional_id: str) -> int:
    body = conn.request(INIT_PRODUCER_ID, 4, {"transactional_id": transactional_id, "transaction_timeout_ms": 60000,
                                              "producer_id": -1, "producer_epoch": -1})
    return int(body["error_code"])


def offset_fetch(conn: KafkaSocket, group: str) -> int:
    body = conn.request(OFFSET_FETCH, 7, {"group_id": group, "topics": None, "require_stable": False})
    return int(body["error_code"])


def wait_until(condition: Callable[[], bool], what: str) -> None:
    wait_for(condition, what=what, timeout=10.0)


# ---- the data ----------------------------------------------------------------------------------------------
def test_names_become_codes_and_keys() -> None:
    fault = Fault(api="EndTxn", error="concurrent_transactions", count=2)
    assert fault.api == END_TXN and fault.api_key == END_TXN
    assert fault.error is ErrorCode.CONCURRENT_TRANSACTIONS and fault.error_code is ErrorCode.CONCURRENT_TRANSACTIONS
    assert Fault(api="end_txn", drop="before").api == END_TXN
    assert Fault(api=0, delay_ms=5).api == PRODUCE
    assert Fault(crash="partial-markers").crash_point is CrashPoint.PARTIAL_MARKERS


@pytest.mark.parametrize(("kwargs", "complaint"), [
    ({"api": "Nope", "drop": "before"}, "no API named"),
    ({"api": 999, "drop": "before"}, "no API with key"),
    ({"error": "NOT_AN_ERROR"}, "no error code"),
    ({"drop": "sideways"}, "before' or 'after"),
    ({"api": "Produce"}, "something to do"),
    ({"crash": "whenever"}, "no crash point"),
    ({"crash": "after-prepare", "api": "EndTxn"}, "only a transactional_id"),
    ({"error": "NONE", "count": -1}, "at least 0"),
    ({"delay_ms": -1}, "not negative"),
])
def test_a_fault_that_makes_no_sense_is_refused(kwargs: dict[str, object], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        Fault(**kwargs)  # type: ignore[arg-type]


def test_json_round_trip_names_errors_and_apis() -> None:
    fault = Fault(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=None, topic="t", partition=1,
                  client_id="c", delay_ms=20, throttle_time_ms=100)
    fault.hits = 3
    data = fault.to_json()
    assert data == {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "count": None, "topic": "t",
                    "partition": 1, "client_id": "c", "delay_ms": 20, "throttle_time_ms": 100, "hits": 3}
    again = Fault.from_json(json.loads(json.dumps(data)))
    assert again.to_json() == data and again is not fault
    crash = Fault(crash=CrashPoint.BEFORE_COMPLETE, transactional_id="tx")
    assert crash.to_json() == {"count": 1, "transactional_id": "tx", "crash": "before-complete", "hits": 0}
    assert Fault.from_json(crash.to_json()).crash is CrashPoint.BEFORE_COMPLETE
    with pytest.raises(ValueError, match="unknown fault fields: colour"):
        Fault.from_json({"drop": "before", "colour": "red"})


def test_the_fault_list(broker: Broker) -> None:
    first = broker.faults.add(Fault(api="Metadata", throttle_time_ms=1))
    second = broker.faults.add(Fault(api="Metadata", throttle_time_ms=1))
    assert broker.faults.list() == [first, second] and len(broker.faults) == 2
    broker.faults.remove(first)
    assert list(broker.faults) == [second]
    assert broker.faults.to_json() == [second.to_json()]
    broker.faults.clear()
    assert broker.faults.list() == []


# ---- request faults through a served broker ------------------------------------------------------------------
def test_an_error_for_the_next_n_requests_then_normal_service(broker: Broker) -> None:
    broker.create_topic("t")
    fault = broker.faults.add(Fault(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=2))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        assert [produce(conn, "t") for _ in range(3)] == [ErrorCode.NOT_LEADER_OR_FOLLOWER.value] * 2 + [0]
    assert fault.hits == 2 and not fault.active
    assert [r.value for r in broker.records("t")] == [b"v"]  # the refused two never reached the log


def test_count_none_acts_until_removed(broker: Broker) -> None:
    broker.create_topic("t")
    fault = broker.faults.add(Fault(api="Produce", error="KAFKA_STORAGE_ERROR", count=None))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        assert {produce(conn, "t") for _ in range(5)} == {ErrorCode.KAFKA_STORAGE_ERROR.value}
        broker.faults.remove(fault)
        assert produce(conn, "t") == 0
    assert fault.hits == 5


def test_topic_and_partition_filters(broker: Broker) -> None:
    broker.create_topic("a", partitions=2)
    broker.create_topic("b")
    fault = broker.faults.add(Fault(api="Produce", error="NOT_ENOUGH_REPLICAS", count=None, topic="a", partition=1))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        assert produce(conn, "a", 0) == 0
        assert produce(conn, "b", 0) == 0
        assert produce(conn, "a", 1) == ErrorCode.NOT_ENOUGH_REPLICAS.value
    assert fault.hits == 1


def test_transactional_id_group_and_client_filters(broker: Broker) -> None:
    by_txn = broker.faults.add(Fault(api="InitProducerId", error="COORDINATOR_LOAD_IN_PROGRESS",
                                     transactional_id="tx-b"))
    by_group = broker.faults.add(Fault(api="OffsetFetch", error="COORDINATOR_LOAD_IN_PROGRESS", group="g-b"))
    # FindCoordinator names the id in its key: a transactional-id filter matches it too.
    by_key = broker.faults.add(Fault(api="FindCoordinator", error="COORDINATOR_NOT_AVAILABLE",
                                     transactional_id="tx-b"))
    by_client = broker.faults.add(Fault(api="Metadata", throttle_time_ms=9, client_id="the-one"))
    with KafkaSocket(("127.0.0.1", broker.port), client_id="someone") as conn:
        assert init_producer(conn, "tx-a") == 0
        assert init_producer(conn, "tx-b") == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS.value
        # Finding a group's coordinator makes __consumer_offsets, which OffsetFetch needs.
        assert conn.request(FIND_COORDINATOR, 3, {"key": "g-a", "key_type": 0})["error_code"] == 0
        assert offset_fetch(conn, "g-a") == 0
        assert offset_fetch(conn, "g-b") == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS.value
        found = conn.request(FIND_COORDINATOR, 3, {"key": "tx-b", "key_type": 1})
        assert found["error_code"] == ErrorCode.COORDINATOR_NOT_AVAILABLE.value
        assert conn.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})["throttle_time_ms"] == 0
    with KafkaSocket(("127.0.0.1", broker.port), client_id="the-one") as conn:
        assert conn.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})["throttle_time_ms"] == 9
    assert (by_txn.hits, by_group.hits, by_key.hits, by_client.hits) == (1, 1, 1, 1)


def test_the_first_matching_fault_acts_and_counts(broker: Broker) -> None:
    first = broker.faults.add(Fault(api="Metadata", throttle_time_ms=1))
    second = broker.faults.add(Fault(api="Metadata", throttle_time_ms=2))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        got = [conn.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})["throttle_time_ms"]
               for _ in range(3)]
    assert got == [1, 2, 0] and (first.hits, second.hits) == (1, 1)


def test_delay_drop_before_and_drop_after(broker: Broker) -> None:
    broker.create_topic("t")
    delayed = broker.faults.add(Fault(api="Produce", delay_ms=300))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        started = time.monotonic()
        assert produce(conn, "t") == 0
        assert time.monotonic() - started >= 0.3
    before = broker.faults.add(Fault(api="Produce", drop="before"))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        conn.send(PRODUCE, 9, produce_body("t", value=b"lost"))
        assert conn.closed_by_peer()
    after = broker.faults.add(Fault(api="Produce", drop="after"))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        conn.send(PRODUCE, 9, produce_body("t", value=b"kept"))
        assert conn.closed_by_peer()
    assert (delayed.hits, before.hits, after.hits) == (1, 1, 1)
    # Dropped before: never written. Dropped after: written, only the answer was lost.
    assert [r.value for r in broker.records("t")] == [b"v", b"kept"]


def test_faults_survive_restart_and_kill(broker: Broker) -> None:
    fault = broker.faults.add(Fault(api="Metadata", throttle_time_ms=5, count=None))
    for bounce in (broker.restart, broker.kill):
        bounce()
        with KafkaSocket(("127.0.0.1", broker.port)) as conn:
            body = conn.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})
        assert body["throttle_time_ms"] == 5
    assert fault.hits == 2


def test_an_error_for_an_acks_0_produce_closes_the_connection() -> None:
    with Broker() as broker:
        broker.faults.add(Fault(api="Produce", error="NOT_LEADER_OR_FOLLOWER"))
        with KafkaSocket(("127.0.0.1", broker.port)) as conn:
            conn.send(PRODUCE, 9, {**produce_body("t"), "acks": 0})
            # acks=0 wants no response: Kafka closes the connection so the client notices.
            assert conn.closed_by_peer()


# ---- crash points --------------------------------------------------------------------------------------------
def open_transaction(broker: Broker, tid: str, topic: str, partitions: int) -> tuple[int, int]:
    def run() -> tuple[int, int]:
        coordinator = broker.coordinators.txn.coordinator
        init = coordinator.init_producer_id(tid, 60_000)
        tps = [(topic, index) for index in range(partitions)]
        now = broker.clock.now_ms()  # not 1970: retention would delete the records on restart
        coordinator.add_partitions(tid, init.producer_id, init.producer_epoch, tps)
        for index in range(partitions):
            partition = broker.core.partition(topic, index)
            assert partition is not None
            partition.append(build_batch([NewRecord(value=f"{tid}-{index}".encode(), timestamp=now)],
                                         producer_id=init.producer_id, producer_epoch=init.producer_epoch,
                                         base_sequence=0, transactional=True))
        return init.producer_id, init.producer_epoch

    return broker.call(run)


def txn_state(broker: Broker, tid: str) -> TxnState:
    return broker.coordinators.txn.coordinator.txns[tid].state


@pytest.mark.parametrize(("point", "written"), [
    (CrashPoint.AFTER_PREPARE, [0, 0, 0]),
    (CrashPoint.PARTIAL_MARKERS, [1, 0, 0]),
    (CrashPoint.BEFORE_COMPLETE, [1, 1, 1]),
])
@pytest.mark.parametrize("recover", ["restart", "kill"])
def test_a_crash_point_stops_the_broker_dead_and_recovery_completes(point: CrashPoint, written: list[int],
                                                                     recover: str) -> None:
    with Broker() as broker:
        broker.create_topic("t", partitions=3)
        other = broker.faults.add(Fault(crash=point, transactional_id="someone-else"))
        crash = broker.faults.add(Fault(crash=point, transactional_id="tx"))
        pid, epoch = open_transaction(broker, "tx", "t", 3)
        assert broker.call(lambda: broker.coordinators.txn.coordinator.end_txn("tx", pid, epoch, commit=True)) \
            is ErrorCode.NONE
        wait_until(lambda: broker.crashed, "the crash point")
        assert crash.hits == 1 and other.hits == 0
        # Dead where it stopped: the prepare journaled, the markers so far and nothing after.
        assert markers(broker, "t", 3) == written
        assert txn_state(broker, "tx") is TxnState.PREPARE_COMMIT
        with pytest.raises(RuntimeError):
            broker.call(lambda: None)

        getattr(broker, recover)()
        assert not broker.crashed
        wait_until(lambda: broker.call(lambda: txn_state(broker, "tx")) is TxnState.COMPLETE_COMMIT,
                   "recovery to complete the commit")
        assert all(count >= 1 for count in broker.call(lambda: markers(broker, "t", 3)))
        assert sorted(r.value for r in broker.records("t", read_committed=True)) == [b"tx-0", b"tx-1", b"tx-2"]
        assert crash.hits == 1  # spent: recovery went through the same point untouched


def test_a_crash_point_for_an_abort_too_and_a_spent_fault_lets_the_next_through() -> None:
    with Broker() as broker:
        broker.create_topic("t", partitions=2)
        crash = broker.faults.add(Fault(crash="after-prepare"))
        pid, epoch = open_transaction(broker, "tx", "t", 2)
        broker.call(lambda: broker.coordinators.txn.coordinator.end_txn("tx", pid, epoch, commit=False))
        wait_until(lambda: broker.crashed, "the crash point")
        assert txn_state(broker, "tx") is TxnState.PREPARE_ABORT
        broker.restart()
        wait_until(lambda: broker.call(lambda: txn_state(broker, "tx")) is TxnState.COMPLETE_ABORT, "the abort")
        assert broker.records("t", read_committed=True) == []
        # The fault is spent: the next transaction commits without stopping.
        pid, epoch = open_transaction(broker, "tx2", "t", 2)
        broker.call(lambda: broker.coordinators.txn.coordinator.end_txn("tx2", pid, epoch, commit=True))
        wait_until(lambda: broker.call(lambda: txn_state(broker, "tx2")) is TxnState.COMPLETE_COMMIT, "the commit")
        assert not broker.crashed and crash.hits == 1


def test_partial_markers_needs_two_partitions() -> None:
    with Broker() as broker:
        broker.create_topic("t")
        crash = broker.faults.add(Fault(crash="partial-markers"))
        pid, epoch = open_transaction(broker, "tx", "t", 1)
        broker.call(lambda: broker.coordinators.txn.coordinator.end_txn("tx", pid, epoch, commit=True))
        wait_until(lambda: broker.call(lambda: txn_state(broker, "tx")) is TxnState.COMPLETE_COMMIT, "the commit")
        assert crash.hits == 0 and not broker.crashed


def test_without_crash_faults_markers_are_written_in_one_go(broker: Broker) -> None:
    # The hook is there but nothing is armed: the transaction completes as it always did.
    broker.create_topic("t", partitions=3)
    pid, epoch = open_transaction(broker, "tx", "t", 3)
    broker.call(lambda: broker.coordinators.txn.coordinator.end_txn("tx", pid, epoch, commit=True))
    wait_until(lambda: broker.call(lambda: txn_state(broker, "tx")) is TxnState.COMPLETE_COMMIT, "the commit")
    assert broker.call(lambda: markers(broker, "t", 3)) == [1, 1, 1]
