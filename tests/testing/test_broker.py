"""kemu.testing.Broker in-process: ready on return, records arranged and read back, restart and kill on the
same data and port, broker time moved by the test, everything gone on close."""

from __future__ import annotations

import threading

import pytest

from kemu.testing import Broker, BrokerError
from kemu.txn.state import TxnState
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch
from tests.server.kafka_socket import KafkaSocket
from tests.testing.support import begin_on_coordinator

API_VERSIONS = 18


def test_ready_on_return_and_gone_on_close() -> None:
    threads = threading.active_count()
    with Broker() as broker:
        with KafkaSocket(("127.0.0.1", broker.port)) as conn:
            body = conn.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert body["error_code"] == 0
        assert broker.bootstrap_servers == f"127.0.0.1:{broker.port}"
        data_dir = broker.data_dir
    assert threading.active_count() == threads
    assert not data_dir.exists()


def test_produce_and_records_with_keys_headers_and_partitions() -> None:
    with Broker(config={"num.partitions": "2"}) as broker:
        broker.create_topic("t", partitions=2)
        assert broker.produce("t", "a", key="k", headers=[("h", b"1")]) == 0
        assert broker.produce("t", b"b", partition=1, timestamp=5) == 0
        assert broker.produce("t", None, key="k") == 1
        got = [(r.partition, r.offset, r.key, r.value, r.headers) for r in broker.records("t")]
        assert got == [(0, 0, b"k", b"a", (("h", b"1"),)), (0, 1, b"k", None, ()), (1, 0, None, b"b", ())]
        assert [r.timestamp for r in broker.records("t", 1)] == [5]
        with pytest.raises(BrokerError) as missing:
            broker.records("nope")
        assert missing.value.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        with pytest.raises(BrokerError) as exists:
            broker.create_topic("t")
        assert exists.value.code is ErrorCode.TOPIC_ALREADY_EXISTS


def test_a_bad_setting_is_refused_in_the_tests_thread() -> None:
    with pytest.raises(Exception, match="num.partitions"):
        Broker(config={"num.partitions": "zero"})


def test_restart_and_kill_keep_data_and_port() -> None:
    with Broker() as broker:
        broker.create_topic("t")
        broker.produce("t", "one")
        port = broker.port
        broker.restart()
        assert broker.port == port and [r.value for r in broker.records("t")] == [b"one"]
        broker.produce("t", "two")
        broker.kill()
        assert broker.port == port and [r.value for r in broker.records("t")] == [b"one", b"two"]


def test_read_committed_records_leave_out_aborted_and_open_transactions() -> None:
    with Broker(virtual_clock=True) as broker:
        broker.create_topic("t")
        txn = broker.coordinators

        def transaction(tid: str, commit: bool | None) -> None:
            coordinator = txn.txn.coordinator
            init = coordinator.init_producer_id(tid, 60_000)
            coordinator.add_partitions(tid, init.producer_id, init.producer_epoch, [("t", 0)])
            partition = broker.core.partition("t", 0)
            assert partition is not None
            partition.append(build_batch([NewRecord(value=tid.encode(), timestamp=1)], producer_id=init.producer_id,
                                         producer_epoch=init.producer_epoch, base_sequence=0, transactional=True))
            if commit is not None:
                coordinator.end_txn(tid, init.producer_id, init.producer_epoch, commit=commit)

        broker.call(transaction, "committed", True)
        broker.call(transaction, "aborted", False)
        broker.advance(0)  # the markers are written by the housekeeper
        broker.call(transaction, "open", None)
        assert [r.value for r in broker.records("t")] == [b"committed", b"aborted", b"open"]
        assert [r.value for r in broker.records("t", read_committed=True)] == [b"committed"]


def test_advance_fires_a_transaction_timeout_before_returning() -> None:
    with Broker(virtual_clock=True) as broker:
        broker.create_topic("t")

        def state() -> TxnState:
            return broker.coordinators.txn.coordinator.txns["slow"].state

        begin_on_coordinator(broker, "slow", 10_000, [("t", 0)])
        broker.advance(9)
        assert broker.call(state) is TxnState.ONGOING
        broker.advance(2)
        assert broker.call(state) is TxnState.COMPLETE_ABORT


def test_produce_refusals_carry_kafkas_error() -> None:
    with Broker() as broker:
        with pytest.raises(BrokerError) as missing:
            broker.produce("nope", "x")
        assert missing.value.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        broker.create_topic("small", config={"max.message.bytes": "100"})
        with pytest.raises(BrokerError) as large:
            broker.produce("small", b"x" * 200)
        assert large.value.code is ErrorCode.MESSAGE_TOO_LARGE
