from __future__ import annotations

import pytest

from kemu.log.producer_state import (
    INT32_MAX,
    ProducerStateError,
    ProducerStateManager,
    decode_snapshot,
    encode_snapshot,
    sequence_end,
)
from kemu.wire.errors import ErrorCode


def append(m: ProducerStateManager, pid: int, epoch: int, first_seq: int, count: int, offset: int,
           txn: bool = False) -> None:
    last_seq = sequence_end(first_seq, count)
    assert m.check_batch(producer_id=pid, epoch=epoch, first_seq=first_seq, last_seq=last_seq,
                         transactional=txn) is None
    m.record_batch(producer_id=pid, epoch=epoch, first_seq=first_seq, last_seq=last_seq,
                   first_offset=offset, last_offset=offset + count - 1, max_timestamp=1000 + offset,
                   transactional=txn)


def test_retried_batch_is_a_duplicate_with_its_original_offsets() -> None:
    m = ProducerStateManager("t-0")
    append(m, 7, 0, 0, 3, 0)
    append(m, 7, 0, 3, 2, 3)
    dup = m.check_batch(producer_id=7, epoch=0, first_seq=0, last_seq=2, transactional=False)
    assert dup is not None and (dup.first_offset, dup.last_offset) == (0, 2)


def test_only_the_last_five_batches_are_remembered() -> None:
    m = ProducerStateManager("t-0")
    for i in range(6):
        append(m, 7, 0, i, 1, i)
    with pytest.raises(ProducerStateError) as err:
        m.check_batch(producer_id=7, epoch=0, first_seq=0, last_seq=0, transactional=False)
    assert err.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert m.check_batch(producer_id=7, epoch=0, first_seq=1, last_seq=1, transactional=False) is not None


def test_gap_is_out_of_order_and_stale_epoch_is_invalid_producer_epoch() -> None:
    m = ProducerStateManager("t-0")
    append(m, 7, 2, 0, 1, 0)
    with pytest.raises(ProducerStateError) as gap:
        m.check_batch(producer_id=7, epoch=2, first_seq=2, last_seq=2, transactional=False)
    assert gap.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    with pytest.raises(ProducerStateError) as stale:
        m.check_batch(producer_id=7, epoch=1, first_seq=1, last_seq=1, transactional=False)
    assert stale.value.code == ErrorCode.INVALID_PRODUCER_EPOCH
    # A bumped epoch must restart at sequence 0.
    with pytest.raises(ProducerStateError) as bumped:
        m.check_batch(producer_id=7, epoch=3, first_seq=5, last_seq=5, transactional=False)
    assert bumped.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert m.check_batch(producer_id=7, epoch=3, first_seq=0, last_seq=0, transactional=False) is None


def test_sequences_wrap_at_int32_max() -> None:
    m = ProducerStateManager("t-0")
    append(m, 7, 0, INT32_MAX - 1, 2, 0)
    assert sequence_end(INT32_MAX, 3) == 1
    append(m, 7, 0, 0, 1, 2)


def test_open_transaction_holds_the_lso_until_its_marker() -> None:
    m = ProducerStateManager("t-0")
    append(m, 7, 0, 0, 2, 10, txn=True)
    append(m, 8, 0, 0, 1, 12)
    assert m.first_unstable_offset(13) == 10
    with pytest.raises(ProducerStateError) as err:
        m.check_batch(producer_id=7, epoch=0, first_seq=2, last_seq=2, transactional=False)
    assert err.value.code == ErrorCode.INVALID_TXN_STATE
    done = m.record_marker(producer_id=7, epoch=0, coordinator_epoch=0, offset=13, timestamp=5, commit=False)
    assert done is not None
    assert (done.first_offset, done.last_offset, done.aborted, done.last_stable_offset) == (10, 13, True, 14)
    assert m.first_unstable_offset(14) == 14


def test_marker_without_a_transaction_on_the_partition_completes_none() -> None:
    """A partition added to a transaction but never written to gets the marker and nothing else: no aborted
    entry (Kafka's ProducerAppendInfo emits no CompletedTxn), though the marker's epoch is remembered."""
    m = ProducerStateManager("t-0")
    assert m.record_marker(producer_id=7, epoch=1, coordinator_epoch=0, offset=0, timestamp=5, commit=False) is None
    assert m.producers[7].epoch == 1


def test_zombie_coordinator_marker_is_fenced() -> None:
    m = ProducerStateManager("t-0")
    append(m, 7, 0, 0, 1, 0, txn=True)
    m.record_marker(producer_id=7, epoch=0, coordinator_epoch=5, offset=1, timestamp=5, commit=True)
    with pytest.raises(ProducerStateError) as err:
        m.check_marker(producer_id=7, epoch=0, coordinator_epoch=4)
    assert err.value.code == ErrorCode.TRANSACTION_COORDINATOR_FENCED


def test_snapshot_round_trip_keeps_dedup_and_open_transactions() -> None:
    m = ProducerStateManager("t-0")
    append(m, 7, 1, 0, 3, 0)
    append(m, 9, 0, 0, 2, 3, txn=True)
    back = decode_snapshot(encode_snapshot(m), "t-0")
    dup = back.check_batch(producer_id=7, epoch=1, first_seq=0, last_seq=2, transactional=False)
    assert dup is not None and dup.first_offset == 0
    assert back.first_unstable_offset(99) == 3
    corrupt = bytearray(encode_snapshot(m))
    corrupt[-1] ^= 1
    with pytest.raises(ValueError):
        decode_snapshot(bytes(corrupt), "t-0")


def test_idle_producers_expire_but_not_with_an_open_transaction() -> None:
    m = ProducerStateManager("t-0")
    append(m, 7, 0, 0, 1, 0)
    append(m, 9, 0, 0, 1, 1, txn=True)
    assert m.expire(now_ms=10**9, expiration_ms=1000) == [7]


# ---- transactions version 2 (KIP-890 part 2) -----------------------------------------------------------

def marker(m: ProducerStateManager, pid: int, epoch: int, offset: int, *, version: int = 2) -> None:
    m.check_marker(producer_id=pid, epoch=epoch, coordinator_epoch=0, transaction_version=version)
    m.record_marker(producer_id=pid, epoch=epoch, coordinator_epoch=0, offset=offset, timestamp=5, commit=True)


def test_a_tv2_marker_moves_the_producer_to_its_epoch_and_sequence_zero() -> None:
    m = ProducerStateManager("t-0")
    append(m, 7, 0, 0, 3, 0, txn=True)
    marker(m, 7, 1, 3)
    # The next transaction, at the bumped epoch, starts at 0; its last sequence is forgotten with the epoch.
    (entry,) = m.active_producers()
    assert (entry.epoch, entry.last_seq, list(entry.batches)) == (1, -1, [])
    append(m, 7, 1, 0, 1, 4, txn=True)
    with pytest.raises(ProducerStateError) as err:
        m.check_batch(producer_id=7, epoch=1, first_seq=5, last_seq=5, transactional=True)
    assert err.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_a_tv2_marker_must_be_above_the_producers_epoch() -> None:
    m = ProducerStateManager("t-0")
    append(m, 7, 3, 0, 1, 0, txn=True)
    # One at the epoch of an open transaction is late: it would end the wrong transaction.
    with pytest.raises(ProducerStateError) as err:
        m.check_marker(producer_id=7, epoch=3, coordinator_epoch=0, transaction_version=2)
    assert err.value.code == ErrorCode.INVALID_PRODUCER_EPOCH
    # A TV1 marker carries the transaction's own epoch.
    m.check_marker(producer_id=7, epoch=3, coordinator_epoch=0, transaction_version=1)
    marker(m, 7, 4, 1)
    # The same marker again (a retry after a restart) with no transaction open is taken (KAFKA-19999).
    marker(m, 7, 4, 2)
    with pytest.raises(ProducerStateError):
        m.check_marker(producer_id=7, epoch=3, coordinator_epoch=0, transaction_version=2)


def test_a_partition_a_tv2_produce_added_wants_sequence_zero_from_a_new_producer() -> None:
    m = ProducerStateManager("t-0")
    with pytest.raises(ProducerStateError) as err:
        m.check_batch(producer_id=7, epoch=0, first_seq=3, last_seq=3, transactional=True, transaction_version=2)
    assert err.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    # Without TV2's verification a producer unknown here may start anywhere (its records may have gone).
    assert m.check_batch(producer_id=7, epoch=0, first_seq=3, last_seq=3, transactional=True) is None
    assert m.check_batch(producer_id=7, epoch=0, first_seq=0, last_seq=0, transactional=True,
                         transaction_version=2) is None
