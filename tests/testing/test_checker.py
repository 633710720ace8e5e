"""The exactly-once checker, shown able to fail: each rule is given a planted violation — a read_committed
fetch response carrying an undeclared aborted batch or an open transaction's records (crafted, and through
a real Fetch from a broker bent to forget its aborted index), an idempotent batch appended twice, offsets
skipped — and reports it; and the honest broker, through the same steps, gives it nothing to report."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from kemu.broker.partition import Partition
from kemu.log import AppendOrigin, FetchIsolation
from kemu.server.hooks import Intervention
from kemu.testing import Broker
from kemu.testing.checker import (
    AbortedRead,
    DuplicateAppend,
    ExactlyOnceChecker,
    OffsetGap,
    UncommittedRead,
    checker_for,
)
from kemu.wire.records import NewRecord, build_batch, build_end_txn_marker
from tests.server.kafka_socket import KafkaSocket

T = TypeVar("T")
FETCH, PRODUCE = 1, 0
READ_COMMITTED = {"isolation_level": 1}


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker() as running:
        running.create_topic("t")
        yield running


def past_producer_state(partition: Partition, data: bytes) -> int:
    """Append `data` as a broker whose producer state forgot every producer would (the log checks each batch
    against it): the planted fault the checker must see. Returns the base offset."""
    partition.producers.clear()
    return partition.append(data).base_offset


def on(broker: Broker, fn: Callable[[Partition], T]) -> T:
    """Run `fn(t-0)` on the broker's thread."""
    def run() -> T:
        partition = broker.core.partition("t", 0)
        assert partition is not None
        return fn(partition)

    return broker.call(run)


def batch(*values: bytes, pid: int = -1, epoch: int = 0, seq: int = -1, txn: bool = False) -> bytes:
    return build_batch([NewRecord(value=v, timestamp=1) for v in values], producer_id=pid,
                       producer_epoch=epoch if pid >= 0 else -1, base_sequence=seq, transactional=txn)


def append(broker: Broker, data: bytes) -> int:
    return on(broker, lambda p: p.append(data).base_offset)


def end(broker: Broker, pid: int, commit: bool, epoch: int = 0) -> int:
    marker = build_end_txn_marker(commit=commit, producer_id=pid, producer_epoch=epoch, coordinator_epoch=0,
                                  timestamp=1)
    return on(broker, lambda p: p.append(marker, origin=AppendOrigin.COORDINATOR).base_offset)


def response(records: bytes | memoryview, aborted: list[tuple[int, int]], topic: str = "t") -> dict[str, Any]:
    return {"responses": [{"topic": topic, "partitions": [{
        "partition_index": 0, "error_code": 0, "high_watermark": 0, "last_stable_offset": 0,
        "aborted_transactions": [{"producer_id": p, "first_offset": f} for p, f in aborted], "records": records}]}]}


def read(broker: Broker, isolation: FetchIsolation) -> bytes:
    return on(broker, lambda p: bytes(p.read(0, 1 << 20, isolation=isolation).records))


def judge(broker: Broker, request: dict[str, Any], answer: dict[str, Any]) -> None:
    broker.call(lambda: broker.checker.check_fetch(request, answer, client_id="planted", correlation_id=7))


# ---- aborted-read and uncommitted-read ---------------------------------------------------------------------
def test_an_undeclared_aborted_batch_in_a_read_committed_response_is_reported(broker: Broker) -> None:
    append(broker, batch(b"c", pid=1, seq=0, txn=True))
    end(broker, 1, commit=True)  # 1
    append(broker, batch(b"x", b"y", pid=2, seq=0, txn=True))  # 2-3
    end(broker, 2, commit=False)  # 4
    append(broker, batch(b"plain"))  # 5
    records = read(broker, FetchIsolation.TXN_COMMITTED)

    judge(broker, READ_COMMITTED, response(records, [(2, 2)]))  # what the broker answers: declared
    judge(broker, {"isolation_level": 0}, response(records, []))  # read_uncommitted may see it all
    assert broker.inspect().violations == []

    judge(broker, READ_COMMITTED, response(records, []))  # planted: the declaration left out
    judge(broker, READ_COMMITTED, response(records, [(1, 0)]))  # another producer's declaration covers nothing
    judge(broker, READ_COMMITTED, response(records, [(2, 4)]))  # declared from past the batch: too late
    planted = AbortedRead("t", 0, producer_id=2, first_offset=2, last_offset=3, transaction_first_offset=2,
                          abort_marker_offset=4, client_id="planted", correlation_id=7)
    assert broker.inspect().violations == [planted, planted, planted]
    assert str(planted) == (
        "aborted-read in t-0: a read_committed fetch (client 'planted', correlation id 7) returned offsets 2-3 "
        "of producer 2's transaction aborted at offset 4, and did not declare it aborted")


def test_a_declaration_from_an_earlier_fetch_offset_still_covers_the_batch(broker: Broker) -> None:
    """A fetch from the middle of an aborted transaction declares it by its first offset, below the fetch."""
    append(broker, batch(b"x", pid=2, seq=0, txn=True))  # 0
    append(broker, batch(b"y", pid=2, seq=1, txn=True))  # 1
    end(broker, 2, commit=False)  # 2
    append(broker, batch(b"z", pid=2, seq=0, epoch=1, txn=True))  # 3: the producer's next transaction
    end(broker, 2, commit=False, epoch=1)  # 4
    tail = on(broker, lambda p: bytes(p.read(1, 1 << 20, isolation=FetchIsolation.TXN_COMMITTED).records))
    judge(broker, READ_COMMITTED, response(tail, [(2, 0), (2, 3)]))
    assert broker.inspect().violations == []
    # The first transaction's declaration does not reach past its ABORT marker into the second.
    judge(broker, READ_COMMITTED, response(tail, [(2, 0)]))
    [late] = broker.inspect().violations
    assert isinstance(late, AbortedRead) and (late.first_offset, late.abort_marker_offset) == (3, 4)


def test_records_of_an_open_transaction_or_behind_it_are_reported(broker: Broker) -> None:
    append(broker, batch(b"before"))  # 0
    append(broker, batch(b"open", pid=3, seq=0, txn=True))  # 1
    append(broker, batch(b"behind"))  # 2
    assert on(broker, lambda p: p.last_stable_offset) == 1
    judge(broker, READ_COMMITTED, response(read(broker, FetchIsolation.TXN_COMMITTED), []))
    assert broker.inspect().violations == []

    judge(broker, READ_COMMITTED, response(read(broker, FetchIsolation.HIGH_WATERMARK), []))  # planted
    assert broker.inspect().violations == [
        UncommittedRead("t", 0, 3, 1, 1, last_stable_offset=1, open_transaction_first_offset=1, client_id="planted",
                        correlation_id=7),
        UncommittedRead("t", 0, -1, 2, 2, last_stable_offset=1, open_transaction_first_offset=None,
                        client_id="planted", correlation_id=7)]


def test_a_real_fetch_from_a_broker_that_forgets_its_aborted_index_is_caught(broker: Broker) -> None:
    """End to end, through the observer: the broker is bent so that one read_committed Fetch lets an aborted
    batch through undeclared — what a client would deliver to the application."""
    append(broker, batch(b"x", pid=2, seq=0, txn=True))
    end(broker, 2, commit=False)
    append(broker, batch(b"after"))
    fetch = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 1,
             "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
             "topics": [{"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 0,
                                                      "partition_max_bytes": 1 << 20}]}]}
    with KafkaSocket(("127.0.0.1", broker.port), client_id="bent") as conn:
        honest = conn.request(FETCH, 12, fetch)["responses"][0]["partitions"][0]
        assert honest["aborted_transactions"] == [{"producer_id": 2, "first_offset": 0}]
        assert broker.inspect().violations == []

        def forget(partition: Partition) -> None:
            partition.aborted_transactions = lambda fetch_offset, upper_bound_offset: []  # type: ignore[method-assign]

        on(broker, forget)
        # A response a fault kept from the client shows the client nothing: no violation.
        remove = broker.call(lambda: broker.hooks.intercept(
            lambda ctx, handler, request: Intervention(drop_after=True) if request.header.api_key == FETCH else None))
        conn.send(FETCH, 12, fetch)
        assert conn.closed_by_peer()
        broker.call(remove)
        assert broker.inspect().violations == []
    with KafkaSocket(("127.0.0.1", broker.port), client_id="bent") as conn:
        bent = conn.request(FETCH, 12, fetch)["responses"][0]["partitions"][0]
        assert bent["aborted_transactions"] == [] and bent["records"]
    [caught] = broker.inspect().violations
    assert caught == AbortedRead("t", 0, 2, 0, 0, 0, 1, client_id="bent", correlation_id=1)


# ---- duplicate-append -------------------------------------------------------------------------------------
def test_an_idempotent_batch_appended_twice_is_reported(broker: Broker) -> None:
    first = batch(b"a", b"b", b"c", pid=5, seq=0)
    assert append(broker, first) == 0
    assert append(broker, first) == 0  # the honest broker acknowledges the retry with its first offsets
    append(broker, batch(b"d", pid=5, seq=3))  # 3
    append(broker, batch(b"e", pid=5, seq=0, epoch=1))  # 4: a new epoch starts its sequences again
    append(broker, batch(b"f", pid=6, seq=0))  # 5: another producer
    assert broker.inspect().violations == []

    # Planted: the retry appended past the producer-state check.
    assert on(broker, lambda p: past_producer_state(p, first)) == 6
    # And a batch overlapping sequences already stored (3 again, and 4).
    on(broker, lambda p: past_producer_state(p, batch(b"g", b"h", pid=5, seq=3)))
    assert broker.inspect().violations == [
        DuplicateAppend("t", 0, 5, 0, 0, 2, (0, 2), (6, 8)),
        DuplicateAppend("t", 0, 5, 0, 3, 3, (3, 3), (9, 10)),
    ]
    assert str(broker.inspect().violations[0]) == (
        "duplicate-append in t-0: producer 5 epoch 0 sequences 0-2 were appended at offsets 0-2 and again at 6-8")


def test_a_duplicate_is_caught_as_its_produce_is_observed(broker: Broker) -> None:
    """The Produce observer reads the new batches at once: a duplicate is seen even if the log then loses it
    (DeleteRecords past it) before anyone inspects."""
    data = batch(b"a", pid=5, seq=0)
    append(broker, data)
    on(broker, lambda p: past_producer_state(p, data))  # planted
    request = {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
               "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch(b"next")}]}]}
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        assert conn.request(PRODUCE, 9, request)["responses"][0]["partition_responses"][0]["error_code"] == 0
    on(broker, lambda p: p.log.delete_records(3))
    assert broker.inspect().violations == [DuplicateAppend("t", 0, 5, 0, 0, 0, (0, 0), (1, 1))]


# ---- offset-gap -------------------------------------------------------------------------------------------
def skip(broker: Broker, offsets: int) -> None:
    """Planted: the log end jumps ahead, so the next batch leaves a hole."""
    def jump(partition: Partition) -> None:
        partition.log._log_end_offset += offsets

    on(broker, jump)


def test_an_offset_gap_is_reported(broker: Broker) -> None:
    broker.produce("t", "a")
    skip(broker, 3)
    broker.produce("t", "b")
    assert broker.inspect().violations == [OffsetGap("t", 0, expected_offset=1, found_offset=4)]
    assert str(broker.inspect().violations[0]) == "offset-gap in t-0: offsets 1-3 are missing from the log"


def test_a_gap_at_the_log_end_is_reported_once(broker: Broker) -> None:
    broker.produce("t", "a")
    skip(broker, 2)
    assert broker.inspect().violations == [OffsetGap("t", 0, 1, 3)]
    broker.produce("t", "b")
    assert broker.inspect().violations == [OffsetGap("t", 0, 1, 3)]


def test_delete_records_retention_and_restarts_are_no_gaps(broker: Broker) -> None:
    for value in "abcde":
        broker.produce("t", value)
    on(broker, lambda p: p.log.delete_records(2))  # inside the log: the start moves, no segment goes
    broker.produce("t", "f")
    assert broker.inspect().violations == []
    on(broker, lambda p: p.log.roll())
    broker.produce("t", "g")
    on(broker, lambda p: (p.log.delete_records(6), p.log.delete_old_segments()))
    assert on(broker, lambda p: p.log.segments[0].base_offset) == 6
    broker.produce("t", "h")
    assert broker.inspect().violations == []
    broker.restart()
    broker.produce("t", "i")
    broker.kill()
    broker.produce("t", "j")
    on(broker, lambda p: p.log.delete_records(-1))  # everything: the log is empty from its start
    assert broker.inspect().violations == []
    assert broker.inspect().partition("t").log_start_offset == 10


def test_a_recreated_topic_is_read_afresh(broker: Broker) -> None:
    append(broker, batch(b"a", pid=5, seq=0))
    assert broker.inspect().violations == []
    broker.call(lambda: broker.core.delete_topic(broker.core.topics.get("t").topic_id))  # type: ignore[union-attr]
    broker.create_topic("t")
    append(broker, batch(b"a", pid=5, seq=0))  # the same producer and sequence, in a new topic: no duplicate
    assert broker.inspect().violations == []


# ---- the checker's life -----------------------------------------------------------------------------------
def test_violations_outlive_a_restart_and_a_reset_clears_them(broker: Broker) -> None:
    broker.produce("t", "a")
    skip(broker, 1)
    broker.produce("t", "b")
    found = broker.inspect().violations
    assert found == [OffsetGap("t", 0, 1, 2)]
    broker.restart()
    assert broker.inspect().violations == found  # kept, and the log read again does not report it twice
    broker.reset()
    assert broker.inspect().violations == []


def test_a_served_core_without_the_handle_gets_a_checker_on_first_inspection(broker: Broker) -> None:
    assert broker.call(lambda: checker_for(broker.core)) is broker.checker
    other = ExactlyOnceChecker()
    assert other.violations == [] and other.core is None
    other.check_logs()  # attached to nothing: nothing to read


def test_violations_are_json(broker: Broker) -> None:
    broker.produce("t", "a")
    skip(broker, 1)
    broker.produce("t", "b")
    [gap] = broker.inspect().to_json()["violations"]
    assert gap == {"rule": "offset-gap", "topic": "t", "partition": 0, "expected_offset": 1, "found_offset": 2,
                   "description": "offsets 1-1 are missing from the log"}
    assert "- offset-gap in t-0: offsets 1-1 are missing from the log" in broker.inspect().render().splitlines()


def test_a_closed_broker_and_its_core_are_not_kept_alive_by_the_checker() -> None:
    # The checker's registry is keyed by the core weakly: a checker holding its core strongly kept every
    # core (and the handle, and all it held) alive to the end of the run.
    broker = Broker()
    assert broker.call(checker_for, broker.core) is broker.checker
    core, handle = weakref.ref(broker.core), weakref.ref(broker)
    broker.close()
    del broker
    gc.collect()
    assert core() is None and handle() is None
