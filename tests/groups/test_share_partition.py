"""The share-partition state machine (kemu.groups.share_partition) driven in-process, time passed in: what
Kafka 4.3's SharePartition does with acquisitions, acknowledgements, lock expiry, members leaving, the start
offset and read_committed."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kemu.groups.share_partition import (
    DEFAULT_DELIVERY_COUNT_LIMIT,
    DEFAULT_MAX_RECORD_LOCKS,
    DEFAULT_RECORD_LOCK_DURATION_MS,
    AcknowledgementBatch,
    AcquiredRecords,
    FetchedAbort,
    FetchedBatch,
    InFlightRecords,
    RecordState,
    ShareConfig,
    ShareOffsetError,
    SharePartition,
    fetched_batches,
    initial_start_offset,
    parse_auto_offset_reset,
    parse_iso_duration_ms,
)
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch, build_end_txn_marker

ACCEPT, RELEASE, REJECT, GAP, RENEW = 1, 2, 3, 0, 4
T0 = 1_000_000
LOCK = DEFAULT_RECORD_LOCK_DURATION_MS


def fetch(sp: SharePartition, member: str, batches: Sequence[FetchedBatch], now: int = T0, *,
          max_records: int = 500, batch_size: int = 500, read_committed: bool | None = None,
          aborted: Sequence[FetchedAbort] = ()) -> list[AcquiredRecords]:
    """A fetch as the broker makes it: from the next fetch offset, of what the log holds there."""
    offset = sp.next_fetch_offset()
    from_there = [b for b in batches if b.last_offset >= offset]
    return sp.acquire(member, from_there, fetch_offset=offset, now_ms=now, max_records=max_records,
                      batch_size=batch_size, read_committed=read_committed, aborted_transactions=aborted).records


def ack(sp: SharePartition, member: str, first: int, last: int, *types: int, now: int = T0) -> ErrorCode:
    return sp.acknowledge(member, [AcknowledgementBatch(first, last, list(types))], now_ms=now).error


def rows(sp: SharePartition) -> list[tuple[int, int, RecordState, str | None, int]]:
    return [(r.first_offset, r.last_offset, r.state, r.member_id, r.delivery_count) for r in sp.snapshot().in_flight]


LOG = [FetchedBatch(0, 4), FetchedBatch(5, 9), FetchedBatch(10, 14)]


def test_kafka_4_3_defaults() -> None:
    config = ShareConfig()
    assert (config.record_lock_duration_ms, config.delivery_count_limit, config.max_in_flight_records) == (
        30_000, 5, 2_000)
    assert (DEFAULT_RECORD_LOCK_DURATION_MS, DEFAULT_DELIVERY_COUNT_LIMIT, DEFAULT_MAX_RECORD_LOCKS) == (
        30_000, 5, 2_000)
    assert config.read_committed is False
    assert config.throttle_delivery_limit == 3


def test_acquisition_takes_whole_batches_with_a_first_delivery_and_a_lock() -> None:
    sp = SharePartition(0)
    assert fetch(sp, "a", LOG, max_records=7) == [AcquiredRecords(0, 9, 1)]  # the soft limit ends a batch
    state = sp.snapshot()
    assert (state.start_offset, state.end_offset) == (0, 9)
    assert state.in_flight == (InFlightRecords(0, 9, RecordState.ACQUIRED, "a", 1, T0 + LOCK, False),)
    assert sp.next_fetch_offset() == 10
    assert fetch(sp, "b", LOG) == [AcquiredRecords(10, 14, 1)]
    assert rows(sp)[-1] == (10, 14, RecordState.ACQUIRED, "b", 1)
    assert sp.next_lock_deadline() == T0 + LOCK


def test_batch_size_splits_new_ranges_on_batch_boundaries() -> None:
    sp = SharePartition(0)
    assert fetch(sp, "a", LOG, batch_size=5) == [
        AcquiredRecords(0, 4, 1), AcquiredRecords(5, 9, 1), AcquiredRecords(10, 14, 1)]
    assert [r[:2] for r in rows(sp)] == [(0, 4), (5, 9), (10, 14)]


def test_released_records_are_redelivered_with_delivery_count_2() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG[:1])
    assert ack(sp, "a", 0, 4, RELEASE) == ErrorCode.NONE
    assert rows(sp) == [(0, 4, RecordState.AVAILABLE, None, 1)]
    assert sp.next_fetch_offset() == 0
    assert fetch(sp, "b", LOG[:1]) == [AcquiredRecords(0, 4, 2)]
    assert rows(sp) == [(0, 4, RecordState.ACQUIRED, "b", 2)]


def test_accepted_records_move_the_start_offset_and_leave_the_cache() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG)
    assert ack(sp, "a", 0, 14, ACCEPT) == ErrorCode.NONE
    assert sp.snapshot() == (15, 15, ())
    assert sp.next_fetch_offset() == 15


def test_rejected_records_are_archived_and_never_acquired_again() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG[:2], batch_size=5)
    assert ack(sp, "a", 5, 9, REJECT) == ErrorCode.NONE
    assert rows(sp)[1] == (5, 9, RecordState.ARCHIVED, None, 1)
    assert ack(sp, "a", 0, 4, RELEASE) == ErrorCode.NONE
    assert sp.start_offset == 0
    assert fetch(sp, "a", LOG[:2]) == [AcquiredRecords(0, 4, 2)]  # 5-9 stay archived
    assert rows(sp)[1] == (5, 9, RecordState.ARCHIVED, None, 1)


def test_the_start_offset_advances_over_terminal_records_at_the_front_only() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG, batch_size=5)
    assert ack(sp, "a", 5, 9, ACCEPT) == ErrorCode.NONE
    assert sp.start_offset == 0  # 0-4 are still acquired
    assert ack(sp, "a", 0, 4, REJECT) == ErrorCode.NONE
    assert (sp.start_offset, sp.end_offset) == (10, 14)
    assert [r[:2] for r in rows(sp)] == [(10, 14)]


def test_per_offset_acknowledgement_splits_the_batch() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG[:1])
    assert ack(sp, "a", 0, 4, ACCEPT, ACCEPT, RELEASE, GAP, REJECT) == ErrorCode.NONE
    state = sp.snapshot()
    assert state.start_offset == 2
    assert [(r.first_offset, r.state, r.per_offset) for r in state.in_flight] == [
        (0, RecordState.ACKNOWLEDGED, True), (1, RecordState.ACKNOWLEDGED, True), (2, RecordState.AVAILABLE, True),
        (3, RecordState.ARCHIVED, True), (4, RecordState.ARCHIVED, True)]
    assert sp.next_fetch_offset() == 2
    assert fetch(sp, "b", LOG[:1]) == [AcquiredRecords(2, 2, 2)]


def test_a_lock_expires_at_its_exact_deadline() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG[:1], now=T0)
    assert sp.expire_locks(T0 + LOCK - 1) == 0
    assert rows(sp) == [(0, 4, RecordState.ACQUIRED, "a", 1)]
    assert sp.expire_locks(T0 + LOCK) == 5
    assert rows(sp) == [(0, 4, RecordState.AVAILABLE, None, 1)]
    assert sp.snapshot().in_flight[0].lock_deadline_ms is None
    assert sp.next_lock_deadline() is None
    assert ack(sp, "a", 0, 4, ACCEPT) == ErrorCode.INVALID_RECORD_STATE  # no longer held


def test_the_lock_duration_comes_from_the_config_and_renew_extends_it() -> None:
    sp = SharePartition(0, ShareConfig(record_lock_duration_ms=15_000))
    fetch(sp, "a", LOG[:1], now=T0)
    assert sp.next_lock_deadline() == T0 + 15_000
    renewed = sp.acknowledge("a", [AcknowledgementBatch(0, 4, [RENEW])], now_ms=T0 + 10_000, renew_allowed=True)
    assert renewed.ok
    assert sp.next_lock_deadline() == T0 + 25_000
    assert sp.expire_locks(T0 + 15_000) == 0
    assert rows(sp) == [(0, 4, RecordState.ACQUIRED, "a", 1)]


def test_the_delivery_count_limit_archives_instead_of_redelivering() -> None:
    sp = SharePartition(0)
    one = [FetchedBatch(0, 0)]
    now = T0
    for delivery in range(1, DEFAULT_DELIVERY_COUNT_LIMIT + 1):
        assert fetch(sp, "a", one, now=now) == [AcquiredRecords(0, 0, delivery)]
        now += LOCK
        assert sp.expire_locks(now) == 1
        if delivery < DEFAULT_DELIVERY_COUNT_LIMIT:
            assert rows(sp) == [(0, 0, RecordState.AVAILABLE, None, delivery)]
    assert sp.snapshot() == (1, 1, ())  # archived at the fifth expiry, then passed by the start offset
    assert fetch(sp, "a", one, now=now) == []


def test_release_at_the_delivery_limit_archives_too() -> None:
    sp = SharePartition(0, ShareConfig(delivery_count_limit=2))
    fetch(sp, "a", LOG[:1])
    ack(sp, "a", 0, 4, RELEASE)
    assert fetch(sp, "a", LOG[:1]) == [AcquiredRecords(0, 4, 2)]
    assert ack(sp, "a", 0, 4, RELEASE) == ErrorCode.NONE
    assert sp.snapshot() == (5, 5, ())


def test_records_near_the_limit_are_delivered_in_ever_smaller_sets() -> None:
    sp = SharePartition(0)  # limit 5: throttled from the third delivery, alone on the last
    log = [FetchedBatch(0, 7)]
    fetch(sp, "a", log)
    ack(sp, "a", 0, 7, RELEASE)
    fetch(sp, "a", log)
    ack(sp, "a", 0, 7, RELEASE)
    assert fetch(sp, "a", log) == [AcquiredRecords(0, 7, 3)]
    ack(sp, "a", 0, 7, RELEASE)
    # Delivered 3 times (the throttle limit, half of 5 rounded up): 8 >> 1 records at once, one per offset.
    assert fetch(sp, "a", log) == [AcquiredRecords(o, o, 4) for o in range(4)]
    assert sp.next_fetch_offset() == 4
    assert fetch(sp, "b", log) == [AcquiredRecords(o, o, 4) for o in range(4, 8)]
    ack(sp, "a", 0, 3, RELEASE)
    ack(sp, "b", 4, 7, RELEASE)
    # The last delivery goes alone.
    assert fetch(sp, "a", log) == [AcquiredRecords(0, 0, 5)]


def test_a_member_leaving_releases_only_its_records_keeping_their_delivery_count() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG[:1])
    fetch(sp, "b", LOG[:2])
    assert sp.release_acquired_records("a") == 5
    assert rows(sp) == [(0, 4, RecordState.AVAILABLE, None, 1), (5, 9, RecordState.ACQUIRED, "b", 1)]
    assert fetch(sp, "b", LOG[:2]) == [AcquiredRecords(0, 4, 2)]


def test_the_in_flight_limit_caps_acquisition_but_not_redelivery() -> None:
    sp = SharePartition(0, ShareConfig(max_in_flight_records=10))
    log = [FetchedBatch(o, o + 4) for o in range(0, 30, 5)]
    assert fetch(sp, "a", log) == [AcquiredRecords(0, 9, 1)]
    assert not sp.can_acquire_records()
    assert fetch(sp, "a", log) == []
    ack(sp, "a", 0, 9, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1)  # offset 0 released: the start offset stays
    assert sp.can_acquire_records()
    assert fetch(sp, "a", log) == [AcquiredRecords(0, 0, 2)]
    ack(sp, "a", 0, 0, ACCEPT)
    assert sp.snapshot() == (10, 10, ())
    assert fetch(sp, "a", log) == [AcquiredRecords(10, 19, 1)]


def test_read_committed_never_acquires_aborted_records() -> None:
    log = [
        FetchedBatch(0, 2),
        FetchedBatch(3, 5, producer_id=7, is_transactional=True),
        FetchedBatch(6, 6, producer_id=7, is_transactional=True, is_abort_marker=True),
        FetchedBatch(7, 9, producer_id=8, is_transactional=True),
    ]
    aborted = [FetchedAbort(producer_id=7, first_offset=3)]
    sp = SharePartition(0, ShareConfig(read_committed=True))
    assert fetch(sp, "a", log, aborted=aborted) == [AcquiredRecords(0, 2, 1), AcquiredRecords(6, 9, 1)]
    assert [(r.first_offset, r.state) for r in sp.snapshot().in_flight if r.first_offset in (3, 4, 5)] == [
        (3, RecordState.ARCHIVED), (4, RecordState.ARCHIVED), (5, RecordState.ARCHIVED)]
    assert ack(sp, "a", 0, 9, *[1, 1, 1, 0, 0, 0, 0, 1, 1, 1]) == ErrorCode.INVALID_RECORD_STATE  # 3-5: not acquired
    assert ack(sp, "a", 0, 2, ACCEPT) == ErrorCode.NONE
    assert ack(sp, "a", 6, 9, GAP, ACCEPT, ACCEPT, ACCEPT) == ErrorCode.NONE
    assert sp.snapshot() == (10, 10, ())
    uncommitted = SharePartition(0)
    assert fetch(uncommitted, "a", log, aborted=aborted) == [AcquiredRecords(0, 9, 1)]


def test_fetched_batches_read_the_transactional_marks_of_real_batches() -> None:
    data = build_batch([NewRecord(b"v", timestamp=0)], base_offset=0, producer_id=7, producer_epoch=0, base_sequence=0,
                       transactional=True)
    data += build_end_txn_marker(commit=False, producer_id=7, producer_epoch=0, coordinator_epoch=0,
                                 base_offset=1, timestamp=0)
    assert fetched_batches(data) == [FetchedBatch(0, 0, 7, True, False), FetchedBatch(1, 1, 7, True, True)]


def test_the_log_start_moving_archives_available_records_below_it() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG, batch_size=5)
    ack(sp, "a", 0, 4, RELEASE)
    sp.update_log_start_offset(7)
    assert sp.start_offset == 7
    assert rows(sp)[0] == (0, 4, RecordState.ARCHIVED, None, 1)
    assert sp.next_fetch_offset() == 15  # nothing AVAILABLE: 5-9 still acquired
    assert ack(sp, "a", 5, 9, ACCEPT) == ErrorCode.NONE  # 7-9 only: 5 and 6 are below the start offset
    assert ack(sp, "a", 10, 14, ACCEPT) == ErrorCode.NONE
    assert sp.start_offset == 7  # 5 and 6 are still acquired ...
    assert sp.expire_locks(T0 + LOCK) == 2  # ... until their lock expires, below the start: archived
    assert sp.snapshot() == (15, 15, ())
    empty = SharePartition(3)
    empty.update_log_start_offset(9)
    assert (empty.start_offset, empty.end_offset, empty.next_fetch_offset()) == (9, 9, 9)


@pytest.mark.parametrize(("batches", "error"), [
    ([AcknowledgementBatch(5, 4, [1])], ErrorCode.INVALID_REQUEST),  # first past last
    ([AcknowledgementBatch(0, 4, [1]), AcknowledgementBatch(2, 3, [1])], ErrorCode.INVALID_REQUEST),  # overlap
    ([AcknowledgementBatch(0, 4, [])], ErrorCode.INVALID_REQUEST),  # no types
    ([AcknowledgementBatch(0, 4, [1, 1])], ErrorCode.INVALID_REQUEST),  # types do not match the offsets
    ([AcknowledgementBatch(0, 4, [5])], ErrorCode.INVALID_REQUEST),  # unknown type
    ([AcknowledgementBatch(0, 4, [4])], ErrorCode.INVALID_REQUEST),  # RENEW without is_renew_ack
    ([AcknowledgementBatch(12, 20, [1])], ErrorCode.INVALID_REQUEST),  # first offset past what is in flight
    ([AcknowledgementBatch(5, 20, [1])], ErrorCode.INVALID_REQUEST),  # last offset past what is in flight
])
def test_malformed_acknowledgements_are_invalid_request(batches: list[AcknowledgementBatch],
                                                         error: ErrorCode) -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG[:2], batch_size=5)
    outcome = sp.acknowledge("a", batches, now_ms=T0)
    assert outcome.error == error and outcome.message
    assert rows(sp) == [(0, 4, RecordState.ACQUIRED, "a", 1), (5, 9, RecordState.ACQUIRED, "a", 1)]


def test_acknowledging_what_the_member_does_not_hold_is_invalid_record_state() -> None:
    sp = SharePartition(10)
    fetch(sp, "a", [FetchedBatch(10, 14), FetchedBatch(15, 19)], batch_size=5)
    assert ack(sp, "b", 10, 14, ACCEPT) == ErrorCode.INVALID_RECORD_STATE  # another member's batch
    assert ack(sp, "b", 11, 12, ACCEPT) == ErrorCode.INVALID_RECORD_STATE  # another member's offsets
    assert ack(sp, "a", 0, 12, ACCEPT) == ErrorCode.NONE  # 0-9 are below the start offset: only 10-12 count
    assert sp.start_offset == 13
    assert ack(SharePartition(10), "a", 10, 12, ACCEPT) == ErrorCode.INVALID_RECORD_STATE  # nothing in flight
    assert ack(sp, "a", 13, 14, ACCEPT) == ErrorCode.NONE
    assert ack(sp, "a", 15, 19, ACCEPT) == ErrorCode.NONE
    assert sp.snapshot() == (20, 20, ())
    sp2 = SharePartition(0)
    fetch(sp2, "a", LOG[:2], batch_size=5)
    ack(sp2, "a", 5, 9, RELEASE)
    bad = sp2.acknowledge("a", [AcknowledgementBatch(5, 9, [1])], now_ms=T0)
    assert (bad.error, bad.message) == (
        ErrorCode.INVALID_RECORD_STATE, "The batch cannot be acknowledged. The batch is not in the acquired state.")


def test_a_refused_acknowledgement_rolls_back_the_batches_before_it() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG[:2], batch_size=5)
    fetch(sp, "b", LOG)
    outcome = sp.acknowledge("a", [AcknowledgementBatch(0, 4, [1]), AcknowledgementBatch(10, 14, [1])], now_ms=T0)
    assert outcome == (ErrorCode.INVALID_RECORD_STATE, "Member is not the owner of batch record")
    assert rows(sp)[0] == (0, 4, RecordState.ACQUIRED, "a", 1)
    assert sp.start_offset == 0


def test_acknowledgements_below_the_start_offset_are_ignored() -> None:
    sp = SharePartition(0)
    fetch(sp, "a", LOG[:1])
    ack(sp, "a", 0, 4, ACCEPT)
    assert ack(sp, "a", 0, 4, ACCEPT) == ErrorCode.NONE
    assert sp.snapshot() == (5, 5, ())


class Log:
    def __init__(self, start: int, hw: int, by_time: dict[int, int]) -> None:
        self.start, self.hw, self.by_time = start, hw, by_time

    def log_start_offset(self) -> int:
        return self.start

    def high_watermark(self) -> int:
        return self.hw

    def offset_for_timestamp(self, timestamp_ms: int) -> int | None:
        return next((o for t, o in sorted(self.by_time.items()) if t >= timestamp_ms), None)


def test_the_initial_start_offset_follows_share_auto_offset_reset() -> None:
    log = Log(3, 40, {T0 - 3_600_000: 10, T0 - 60_000: 30})
    assert initial_start_offset("latest", log, T0) == 40
    assert initial_start_offset("earliest", log, T0) == 3
    assert initial_start_offset("by_duration:PT2H", log, T0) == 10
    assert initial_start_offset("by_duration:PT30M", log, T0) == 30
    with pytest.raises(ShareOffsetError):
        initial_start_offset("by_duration:PT1S", log, T0)
    sp = SharePartition(initial_start_offset("latest", log, T0))
    assert (sp.start_offset, sp.end_offset, sp.next_fetch_offset()) == (40, 40, 40)
    assert fetch(sp, "a", [FetchedBatch(40, 41)]) == [AcquiredRecords(40, 41, 1)]


def test_auto_offset_reset_values_and_durations() -> None:
    assert parse_auto_offset_reset("LATEST") == ("latest", None)
    assert parse_auto_offset_reset("by_duration:P1DT1H0.5S") == ("by_duration", 90_000_500)
    assert parse_iso_duration_ms("PT-1.5S") == -1_500
    for bad in ("none", "by_duration:", "by_duration:-PT1H", "by_duration:P1H"):
        with pytest.raises(ValueError):
            parse_auto_offset_reset(bad)


def test_a_restored_share_partition_keeps_finished_records_and_frees_held_ones() -> None:
    from kemu.groups.share_partition import RecordState, SharePartition

    share = SharePartition.restored(10, [(5, 9, RecordState.ACKNOWLEDGED, 1), (10, 12, RecordState.ACKNOWLEDGED, 1),
                                         (13, 14, RecordState.ACQUIRED, 2), (15, 15, RecordState.ARCHIVED, 5)])
    state = share.snapshot()
    assert (state.start_offset, state.end_offset) == (10, 15)
    assert [(r.first_offset, r.last_offset, r.state, r.member_id, r.delivery_count) for r in state.in_flight] == [
        (10, 12, RecordState.ACKNOWLEDGED, None, 1), (13, 14, RecordState.AVAILABLE, None, 2),
        (15, 15, RecordState.ARCHIVED, None, 5)]
    assert share.next_fetch_offset() == 13
