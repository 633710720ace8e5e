"""Incremental fetch sessions (KIP-227), kept as Kafka's FetchSession.scala keeps them. Sans I/O.

A Fetch names its session with (session_id, session_epoch):

- epoch 0 (INITIAL) is a FULL fetch: any session it names is closed, and a new one is created if the
  cache has room (`max.incremental.fetch.session.cache.slots`, 1000) or can evict one; its id comes back
  in the response (0 if none was created) and the next request must carry epoch 1.
- epoch -1 (FINAL) is a FULL fetch that closes the named session and creates none (sessionless; every
  client before Fetch v7 is sessionless this way).
- any other epoch is INCREMENTAL: the request lists only added or changed partitions plus the ones to
  forget, the session supplies the rest, and the response carries only partitions with something new
  (records, a changed high watermark or log start offset, an error). An unknown id is
  FETCH_SESSION_ID_NOT_FOUND, a wrong epoch INVALID_FETCH_SESSION_EPOCH, a switch between topic names
  (Fetch v12-) and topic ids (v13+) FETCH_SESSION_TOPIC_ID_ERROR; those responses carry no partitions.

Partitions that returned records are moved to the back of the session, so the next fetch serves the
others first (Kafka's round robin under the response size limit). A new session may evict one unused
for two minutes, or the smallest of those older than two minutes when it has more partitions.

Partition keys are `(topic, partition)` where topic is the name (v12-) or the topic id (v13+); the caller
resolves them. The fetch handler drives a context: `partitions()` says what to read, `respond(results)`
turns the per-partition response dicts into what goes on the wire (and updates the session).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kemu.kafka_defaults import int_default
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages.k01_fetch import FetchResponseResponsesPartitions

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
DEFAULT_CACHE_SLOTS = int_default("max.incremental.fetch.session.cache.slots")
EVICTION_MS = 120_000  # Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
_INT32_MAX = 0x7FFFFFFF

TopicKey = str | uuid.UUID
PartitionKey = tuple[TopicKey, int]
# Each partition's answer, in Fetch's response shape.
PartitionResults = list[tuple[PartitionKey, "FetchResponseResponsesPartitions"]]


def next_epoch(epoch: int) -> int:
    """Kafka's FetchMetadata.nextEpoch: after FINAL stays FINAL; wraps from Int32.MAX to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    if epoch == _INT32_MAX:
        return 1
    return epoch + 1


@dataclass(slots=True)
class PartitionFetch:
    """One partition's fetch parameters, as a request carries them and a session remembers them."""

    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    log_start_offset: int = -1  # the fetcher's own (followers)


@dataclass(slots=True)
class CachedPartition:
    fetch: PartitionFetch
    high_watermark: int = -1
    log_start_offset: int = -1  # this broker's, as last sent

    def must_respond(self, response: FetchResponseResponsesPartitions, update: bool) -> bool:
        """Kafka's CachedPartition.maybeUpdateResponseData."""
        respond = bool(response.get("records"))
        if self.high_watermark != response["high_watermark"]:
            respond = True
            if update:
                self.high_watermark = response["high_watermark"]
        if self.log_start_offset != response["log_start_offset"]:
            respond = True
            if update:
                self.log_start_offset = response["log_start_offset"]
        if response.get("preferred_read_replica", -1) != -1:
            respond = True
        if response["error_code"] != 0:
            # Forget the high watermark so the partition is sent again once the error is gone.
            if update:
                self.high_watermark = -1
            respond = True
        if response.get("diverging_epoch") is not None:
            respond = True
        return respond


class FetchSession:
    def __init__(self, session_id: int, partitions: dict[PartitionKey, CachedPartition], now_ms: int,
                 uses_topic_ids: bool) -> None:
        self.id = session_id
        self.partitions = partitions
        self.created_ms = now_ms
        self.last_used_ms = now_ms
        self.epoch = next_epoch(INITIAL_EPOCH)
        self.uses_topic_ids = uses_topic_ids
        # As of the last touch (Kafka files sessions in its evictable trees only when touched).
        self.cached_size = len(partitions)
        self.evictable = False

    def update(self, fetch: dict[PartitionKey, PartitionFetch], forget: list[PartitionKey]) -> None:
        for key, wanted in fetch.items():
            cached = self.partitions.get(key)
            if cached is None:
                self.partitions[key] = CachedPartition(wanted)
            else:
                cached.fetch = wanted
        for key in forget:
            self.partitions.pop(key, None)

    def __repr__(self) -> str:
        return (f"FetchSession(id={self.id}, epoch={self.epoch}, partitions={len(self.partitions)}, "
                f"uses_topic_ids={self.uses_topic_ids})")


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    """The top-level fields of the response and the partitions it carries, in order."""

    error: ErrorCode
    session_id: int
    partitions: PartitionResults


class FetchContext(Protocol):
    def partitions(self) -> list[tuple[PartitionKey, PartitionFetch]]:
        """The partitions to read, in the order Kafka reads them."""
        ...

    def respond(self, results: PartitionResults, now_ms: int) -> FetchOutcome:
        """The response for these per-partition results (in `partitions()` order, errors last)."""
        ...


class SessionErrorContext:
    def __init__(self, error: ErrorCode) -> None:
        self.error = error

    def partitions(self) -> list[tuple[PartitionKey, PartitionFetch]]:
        return []

    def respond(self, results: PartitionResults, now_ms: int) -> FetchOutcome:
        return FetchOutcome(self.error, INVALID_SESSION_ID, [])


class SessionlessContext:
    def __init__(self, fetch: dict[PartitionKey, PartitionFetch]) -> None:
        self.fetch = fetch

    def partitions(self) -> list[tuple[PartitionKey, PartitionFetch]]:
        return list(self.fetch.items())

    def respond(self, results: PartitionResults, now_ms: int) -> FetchOutcome:
        return FetchOutcome(ErrorCode.NONE, INVALID_SESSION_ID, results)


class FullContext:
    def __init__(self, cache: FetchSessionCache, fetch: dict[PartitionKey, PartitionFetch],
                 uses_topic_ids: bool) -> None:
        self.cache = cache
        self.fetch = fetch
        self.uses_topic_ids = uses_topic_ids

    def partitions(self) -> list[tuple[PartitionKey, PartitionFetch]]:
        return list(self.fetch.items())

    def respond(self, results: PartitionResults, now_ms: int) -> FetchOutcome:
        def cached() -> dict[PartitionKey, CachedPartition]:
            return {key: CachedPartition(self.fetch[key], data["high_watermark"], data["log_start_offset"])
                    for key, data in results}

        session_id = self.cache.maybe_create_session(now_ms, len(results), self.uses_topic_ids, cached)
        return FetchOutcome(ErrorCode.NONE, session_id, results)


class IncrementalContext:
    def __init__(self, session: FetchSession, request_epoch: int) -> None:
        self.session = session
        self.request_epoch = request_epoch

    def partitions(self) -> list[tuple[PartitionKey, PartitionFetch]]:
        return [(key, cached.fetch) for key, cached in self.session.partitions.items()]

    def respond(self, results: PartitionResults, now_ms: int) -> FetchOutcome:
        session = self.session
        if session.epoch != next_epoch(self.request_epoch):
            # Another request used the session meanwhile (a duplicate): the client must start over.
            return FetchOutcome(ErrorCode.INVALID_FETCH_SESSION_EPOCH, session.id, [])
        kept: PartitionResults = []
        for key, data in results:
            cached = session.partitions.get(key)
            if cached is None:  # forgotten by a later request while this one waited
                kept.append((key, data))
                continue
            if cached.must_respond(data, update=True):
                kept.append((key, data))
                if data.get("records"):
                    # To the back of the line, so the others are served first next time.
                    del session.partitions[key]
                    session.partitions[key] = cached
        return FetchOutcome(ErrorCode.NONE, session.id, kept)


class FetchSessionCache:
    def __init__(self, max_sessions: int = DEFAULT_CACHE_SLOTS, eviction_ms: int = EVICTION_MS,
                 rng: random.Random | None = None) -> None:
        self.max_sessions = max_sessions
        self.eviction_ms = eviction_ms
        self._sessions: dict[int, FetchSession] = {}
        self._random = rng or random.Random()

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    @property
    def total_partitions(self) -> int:
        return sum(s.cached_size for s in self._sessions.values())

    def new_context(self, session_id: int, epoch: int, *, uses_topic_ids: bool,
                    fetch: dict[PartitionKey, PartitionFetch], forget: list[PartitionKey],
                    now_ms: int) -> FetchContext:
        """Kafka's FetchManager.newContext."""
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                self._sessions.pop(session_id, None)  # a FULL fetch closes the session it names
            if epoch == FINAL_EPOCH:
                return SessionlessContext(fetch)
            return FullContext(self, fetch, uses_topic_ids)
        session = self._sessions.get(session_id)
        if session is None:
            return SessionErrorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return SessionErrorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return SessionErrorContext(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        session.update(fetch, forget)
        if not session.partitions:
            del self._sessions[session.id]
            return SessionlessContext(fetch)
        self._touch(session, now_ms)
        session.epoch = next_epoch(session.epoch)
        return IncrementalContext(session, epoch)

    def maybe_create_session(self, now_ms: int, size: int, uses_topic_ids: bool,
                             partitions: Callable[[], dict[PartitionKey, CachedPartition]]) -> int:
        """A new session's id, or INVALID_SESSION_ID when the cache is full and nothing may be evicted.
        `partitions` builds the session's partition map (only called when a session is created)."""
        if len(self._sessions) >= self.max_sessions and not self._try_evict(size, now_ms):
            return INVALID_SESSION_ID
        session = FetchSession(self._new_session_id(), partitions(), now_ms, uses_topic_ids)
        self._sessions[session.id] = session
        self._touch(session, now_ms)
        return session.id

    def remove(self, session_id: int) -> FetchSession | None:
        return self._sessions.pop(session_id, None)

    def _new_session_id(self) -> int:
        while True:
            candidate = self._random.randrange(1, _INT32_MAX)
            if candidate not in self._sessions:
                return candidate

    def _touch(self, session: FetchSession, now_ms: int) -> None:
        session.last_used_ms = now_ms
        session.cached_size = len(session.partitions)
        session.evictable = now_ms - session.created_ms > self.eviction_ms

    def _try_evict(self, size: int, now_ms: int) -> bool:
        """Kafka's FetchSessionCache.tryEvict for an unprivileged (consumer) session of `size` partitions:
        the least recently used session if it is stale, else the least valuable evictable one if the new
        session is worth more (more partitions)."""
        if not self._sessions:
            return False
        oldest = min(self._sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - oldest.last_used_ms > self.eviction_ms:
            del self._sessions[oldest.id]
            return True
        candidates = [s for s in self._sessions.values() if s.evictable]
        if not candidates:
            return False
        cheapest = min(candidates, key=lambda s: (s.cached_size, s.id))
        if (size, 0) < (cheapest.cached_size, cheapest.id):
            return False
        del self._sessions[cheapest.id]
        return True


__all__ = [
    "DEFAULT_CACHE_SLOTS",
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "INVALID_SESSION_ID",
    "CachedPartition",
    "FetchContext",
    "FetchOutcome",
    "FetchSession",
    "FetchSessionCache",
    "FullContext",
    "IncrementalContext",
    "PartitionFetch",
    "PartitionKey",
    "SessionErrorContext",
    "SessionlessContext",
    "next_epoch",
]
