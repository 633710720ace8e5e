"""The fetch session cache on its own: contexts, epochs, what an incremental response keeps, eviction."""

from __future__ import annotations

import random
from typing import Any

from kemu.broker.fetch_sessions import (
    EVICTION_MS,
    FINAL_EPOCH,
    FetchSessionCache,
    FullContext,
    IncrementalContext,
    PartitionFetch,
    PartitionKey,
    SessionErrorContext,
    SessionlessContext,
    next_epoch,
)
from kemu.wire.errors import ErrorCode


def response(hw: int = 0, start: int = 0, records: bytes = b"", error: int = 0) -> dict[str, Any]:
    return {"partition_index": 0, "error_code": error, "high_watermark": hw, "log_start_offset": start,
            "records": records, "preferred_read_replica": -1}


def create(cache: FetchSessionCache, size: int, now: int) -> int:
    fetch: dict[PartitionKey, PartitionFetch] = {("t", i): PartitionFetch(0, 100) for i in range(size)}
    context = cache.new_context(0, 0, uses_topic_ids=False, fetch=fetch, forget=[], now_ms=now)
    assert isinstance(context, FullContext)
    return context.respond([(key, response()) for key in fetch], now).session_id


def test_next_epoch() -> None:
    assert [next_epoch(e) for e in (0, 1, 0x7FFFFFFF, FINAL_EPOCH)] == [1, 2, 1, FINAL_EPOCH]


def test_context_kinds() -> None:
    cache = FetchSessionCache(rng=random.Random(1))
    assert isinstance(cache.new_context(0, -1, uses_topic_ids=False, fetch={}, forget=[], now_ms=0),
                      SessionlessContext)
    session = create(cache, 1, 0)
    context = cache.new_context(session, 1, uses_topic_ids=False, fetch={}, forget=[], now_ms=0)
    assert isinstance(context, IncrementalContext)
    assert cache.get(session).epoch == 2  # type: ignore[union-attr]
    missing = cache.new_context(session + 1, 1, uses_topic_ids=False, fetch={}, forget=[], now_ms=0)
    assert isinstance(missing, SessionErrorContext) and missing.error == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_forgetting_everything_ends_the_session() -> None:
    cache = FetchSessionCache()
    session = create(cache, 1, 0)
    context = cache.new_context(session, 1, uses_topic_ids=False, fetch={}, forget=[("t", 0)], now_ms=0)
    assert isinstance(context, SessionlessContext)
    assert cache.get(session) is None


def test_incremental_response_keeps_only_changes() -> None:
    cache = FetchSessionCache()
    session = create(cache, 3, 0)
    context = cache.new_context(session, 1, uses_topic_ids=False, fetch={}, forget=[], now_ms=0)
    outcome = context.respond([(("t", 0), response()), (("t", 1), response(hw=5)),
                               (("t", 2), response(error=1))], 0)
    assert [key for key, _ in outcome.partitions] == [("t", 1), ("t", 2)]
    # The error made the session forget partition 2's high watermark: it is sent again once fixed.
    again = cache.new_context(session, 2, uses_topic_ids=False, fetch={}, forget=[], now_ms=0)
    outcome = again.respond([(("t", 0), response()), (("t", 1), response(hw=5)), (("t", 2), response())], 0)
    assert [key for key, _ in outcome.partitions] == [("t", 2)]


def test_a_duplicate_request_fails_the_epoch_check_at_response_time() -> None:
    cache = FetchSessionCache()
    session = create(cache, 1, 0)
    first = cache.new_context(session, 1, uses_topic_ids=False, fetch={}, forget=[], now_ms=0)
    cache.new_context(session, 2, uses_topic_ids=False, fetch={}, forget=[], now_ms=0)
    outcome = first.respond([(("t", 0), response(hw=9))], 0)
    assert (outcome.error, outcome.session_id, outcome.partitions) == (ErrorCode.INVALID_FETCH_SESSION_EPOCH,
                                                                      session, [])


def test_full_cache_creates_no_session_until_one_may_be_evicted() -> None:
    cache = FetchSessionCache(max_sessions=2)
    small = create(cache, 1, 0)
    bigger = create(cache, 2, 0)
    assert create(cache, 5, 1000) == 0  # nobody is old enough to be evicted
    # Used again after two minutes, both become evictable — the smaller by any bigger newcomer...
    for session in (small, bigger):
        cache.new_context(session, 1, uses_topic_ids=False, fetch={}, forget=[], now_ms=EVICTION_MS + 10)
    assert create(cache, 1, EVICTION_MS + 20) == 0  # ...but not by one of the same size
    newcomer = create(cache, 5, EVICTION_MS + 30)
    assert newcomer != 0 and cache.get(small) is None and len(cache) == 2


def test_a_stale_session_is_evicted() -> None:
    cache = FetchSessionCache(max_sessions=1)
    stale = create(cache, 10, 0)
    fresh = create(cache, 1, EVICTION_MS + 1)
    assert fresh != 0 and cache.get(stale) is None
