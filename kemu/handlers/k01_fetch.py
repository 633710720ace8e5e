"""Fetch (key 1), versions 4-18 (Kafka 4 dropped 0-3).

v4 isolation_level, last_stable_offset and aborted_transactions; v5 log_start_offset; v7 fetch sessions
(KIP-227: session_id / session_epoch, forgotten topics, a top-level error code); v9 current_leader_epoch
(FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH); v10 marks zstd support (KIP-110), but Kafka 4, which no longer
converts fetched data down, returns zstd batches at every version (a zstd topic too); v11 rack_id and
preferred_read_replica (KIP-392: with replica.selector.class the RackAwareReplicaSelector, the leader sends a
consumer whose rack_id names another replica's rack there, with no records; a consumer may then fetch from
that follower); v12 flexible, last_fetched_epoch (a diverging epoch answers with diverging_epoch); v13 topic
ids instead of names (UNKNOWN_TOPIC_ID); v15 replica_state; v16 node_endpoints, v17 replica_directory_id; v18
the high watermark a fetching replica knows (KIP-1166), a follower's field kemu reads no more than the others. A
partition this node neither leads nor (for a v11+ consumer) follows in sync is NOT_LEADER_OR_FOLLOWER, and
that or FENCED_LEADER_EPOCH carries the current leader (v12+) and its endpoint (v16+), as KIP-951 has it.

As KafkaApis/ReplicaManager do it: partitions are read in request (or session) order, each up to its
`partition_max_bytes` and what is left of `max_bytes` (capped by `fetch.max.bytes`), except that the first
partition with data returns at least one whole batch; records are the log's raw bytes (the last batch may be
cut short). Unknown partitions come after the others. If nothing failed and fewer than `min_bytes` are ready,
the request waits up to `max_wait_ms`, re-checked on every change to one of its partitions (appends,
transaction markers moving the LSO), and is then read again. read_committed stops at the last stable offset
and lists the aborted transactions overlapping the returned data; read_uncommitted answers
aborted_transactions null. Followers' fields (replica_id, replica_state) are ignored beyond telling a consumer
(replica_id -1) apart: kemu's followers are metadata over the one log and never fetch. `max_wait_ms` runs on
real (Trio) time, not the broker's clock, so a paused virtual clock never leaves a client waiting; session
ages follow the broker's clock.
"""

from __future__ import annotations

import struct
import uuid
from typing import TYPE_CHECKING, NamedTuple

import trio

from kemu.broker.broker import BrokerCore
from kemu.broker.client_quotas import CONSUMER_BYTE_RATE, Throttling, user_of
from kemu.broker.errors import ApiError
from kemu.broker.fetch_sessions import (
    FetchContext,
    IncrementalContext,
    PartitionFetch,
    PartitionKey,
    PartitionResults,
    SessionErrorContext,
    TopicKey,
)
from kemu.broker.partition import Partition, StorageError
from kemu.handlers import _authorize as authz
from kemu.handlers._leadership import current_leader, leads, node_endpoints
from kemu.handlers._waiting import LogWatch
from kemu.handlers.context import Continuation, RequestContext
from kemu.handlers.error_responses import Fixed, each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.kafka_defaults import int_default
from kemu.log import FetchIsolation, LogClosedError, OffsetOutOfRangeError
from kemu.wire.errors import ErrorCode
from kemu.wire.file_region import FileRegion, Records

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k01_fetch import (
        FetchRequest,
        FetchResponse,
        FetchResponseResponses,
        FetchResponseResponsesPartitionsAbortedTransactions,
        FetchResponseResponsesPartitionsDivergingEpoch,
    )
    from kemu.wire.messages.k01_fetch import FetchResponseResponsesPartitions as PartitionData

KEY = 1
VERSIONS = NARROWED[KEY]

FETCH_MAX_BYTES = int_default("fetch.max.bytes")  # the broker's cap on a response's max_bytes (55 MiB)
READ_COMMITTED = 1
ISOLATION_LEVELS = (0, READ_COMMITTED)  # read_uncommitted, read_committed
NO_EPOCH = -1
FIRST_CLIENT_METADATA_VERSION = 11  # rack_id: a consumer may fetch from a follower (KIP-392)

# base offset (int64), batch length (int32), then 9 bytes to last_offset_delta (int32)
_BATCH_START = struct.Struct(">qi")



class _Target:
    """A partition the request reads: where it is, and how to read it."""

    __slots__ = ("key", "name", "topic_id", "index", "fetch")

    def __init__(self, key: PartitionKey, name: str, topic_id: uuid.UUID, index: int, fetch: PartitionFetch) -> None:
        self.key, self.name, self.topic_id, self.index, self.fetch = key, name, topic_id, index, fetch


async def handle(ctx: RequestContext, request: Incoming[FetchRequest]) -> FetchResponse | Continuation[FetchResponse]:
    broker, body, version = ctx.broker, request.body, request.version
    uses_ids = version >= 13
    wanted: dict[PartitionKey, PartitionFetch] = {}
    for entry in body["topics"]:
        topic_key: TopicKey = entry["topic_id"] if uses_ids else entry["topic"]
        for p in entry["partitions"]:
            wanted[(topic_key, p["partition"])] = PartitionFetch(
                p["fetch_offset"], p["partition_max_bytes"], p["current_leader_epoch"], p["last_fetched_epoch"],
                p["log_start_offset"])
    forget: list[PartitionKey] = [(t["topic_id"] if uses_ids else t["topic"], index)
                                  for t in body["forgotten_topics_data"] for index in t["partitions"]]
    sessions = broker.fetch_sessions
    context = sessions.new_context(body["session_id"], body["session_epoch"], uses_topic_ids=uses_ids,
                                   fetch=wanted, forget=forget, now_ms=broker.clock.monotonic_ms())

    targets: list[_Target] = []
    erroneous: PartitionResults = []
    # KafkaApis.handleFetchRequest: a follower needs CLUSTER_ACTION, else every partition it asks for is
    # TOPIC_AUTHORIZATION_FAILED; a consumer needs READ on each topic, asked before the topic is looked up, so
    # one it may not read is refused whether or not it exists (only an id no topic has is UNKNOWN_TOPIC_ID).
    follower = _replica_id(body, version) >= 0
    follower_denied = follower and not authz.allowed(ctx, authz.CLUSTER_ACTION, authz.CLUSTER)
    for key, fetch in context.partitions():
        topic_key, index = key
        if isinstance(topic_key, uuid.UUID):
            topic = broker.topics.by_id(topic_key)
            name = None if topic is None else topic.name
        else:
            topic, name = broker.topics.get(topic_key), topic_key
        if follower_denied or (not follower and name is not None
                               and not authz.allowed(ctx, authz.READ, authz.TOPIC, name)):
            erroneous.append((key, _refused_partition(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)))
        elif name is None:
            erroneous.append((key, _refused_partition(index, ErrorCode.UNKNOWN_TOPIC_ID)))
        elif topic is None or not 0 <= index < len(topic.partitions):
            erroneous.append((key, _refused_partition(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)))
        else:
            targets.append(_Target(key, topic.name, topic.topic_id, index, fetch))

    max_bytes = min(body["max_bytes"], FETCH_MAX_BYTES)
    throttling = broker.throttling
    consumer = throttling is not None and _replica_id(body, version) < 0
    if throttling is not None and consumer:
        # KafkaApis.handleFetch: no more than the quota lets through in one window with nothing recorded yet,
        # which would be throttled whatever came before.
        window = throttling.max_in_window(CONSUMER_BYTE_RATE, user_of(ctx.client.principal), ctx.client_id or "")
        if window is not None:
            max_bytes = min(max_bytes, int(window))
    min_bytes = min(body["min_bytes"], max_bytes)
    if targets and body["isolation_level"] not in ISOLATION_LEVELS:
        # KafkaApis builds its FetchParams (IsolationLevel.forId, which throws) only when some partition is
        # left to read: the whole request then fails as an unexpected error.
        raise ApiError(ErrorCode.UNKNOWN_SERVER_ERROR)
    read_committed = body["isolation_level"] == READ_COMMITTED
    where = _Fetcher(ctx.node_id, version >= FIRST_CLIENT_METADATA_VERSION and _replica_id(body, version) < 0,
                     body["rack_id"] if version >= FIRST_CLIENT_METADATA_VERSION else "",
                     _rack_aware(broker))
    results, ready, complete = _read_all(broker, targets, max_bytes, read_committed, where)
    max_wait_ms = body["max_wait_ms"]
    if targets and not complete and ready < min_bytes and max_wait_ms > 0:
        # Long poll: the wait runs after this returns, while the connection's next requests start.
        deadline = trio.current_time() + max_wait_ms / 1000
        seen = _versions(_partitions_of(broker, targets))

        async def finish() -> FetchResponse:
            results = await _long_poll(broker, targets, max_bytes, min_bytes, read_committed, where, deadline,
                                       seen)
            return _respond(ctx, version, context, results + erroneous, consumer)

        return Continuation(finish)
    return _respond(ctx, version, context, results + erroneous, consumer)


async def _long_poll(broker: BrokerCore, targets: list[_Target], max_bytes: int, min_bytes: int,
                     read_committed: bool, where: _Fetcher, deadline: float,
                     seen: list[tuple[Partition, int]]) -> PartitionResults:
    """Read again on every change to the targets' logs until min_bytes are ready or Trio's clock reaches
    `deadline`, and then once more. The first read is once the watch is in place, as Kafka's purgatory
    tries a delayed fetch again after watching it: whatever the connection ran between the handler's read
    and this task's start (a produce right behind the fetch) is seen. It is skipped when the logs are the
    ones the handler read (`seen`) and have told nothing since: it would read the same."""
    partitions = _partitions_of(broker, targets)
    with LogWatch(partitions) as watch:
        changed = _versions(partitions) != seen
        while True:
            if changed:
                results, ready, complete = _read_all(broker, targets, max_bytes, read_committed, where)
                if complete or ready >= min_bytes:
                    return results
            changed = True
            if not await watch.wait_until(deadline):
                break
    return _read_all(broker, targets, max_bytes, read_committed, where)[0]


def _respond(ctx: RequestContext, version: int, context: FetchContext, results: PartitionResults,
             consumer: bool) -> FetchResponse:
    broker = ctx.broker
    throttling = broker.throttling
    if consumer and throttling is not None:
        throttled = _throttle(ctx, throttling, context, results)
        if throttled is not None:
            return throttled
    outcome = context.respond(results, broker.clock.monotonic_ms())
    partitions = outcome.partitions
    moved = [data["current_leader"]["leader_id"] for _, data in partitions if "current_leader" in data]
    return {
        "error_code": int(outcome.error),
        "session_id": outcome.session_id,
        "responses": _group_by_topic(partitions),
        "node_endpoints": node_endpoints(broker, moved),
    }


def _throttle(ctx: RequestContext, throttling: Throttling, context: FetchContext,
              results: PartitionResults) -> FetchResponse | None:
    """KafkaApis.handleFetch's consumer_byte_rate: the response's bytes are recorded, and when they earn a
    throttle time they are taken back and the answer is the context's throttled one, with no partitions and
    the session left as it was (None: not throttled)."""
    size = sum(len(records) for _, data in results if (records := data.get("records")))
    user, client_id, now_ms = user_of(ctx.client.principal), ctx.client_id or "", ctx.clock.now_ms()
    throttle_ms = throttling.record(ctx.node_id, CONSUMER_BYTE_RATE, user, client_id, size, now_ms)
    if throttle_ms <= 0:
        return None
    throttling.unrecord(ctx.node_id, CONSUMER_BYTE_RATE, user, client_id, size, now_ms)
    ctx.throttle_ms = throttle_ms
    error, session_id = ErrorCode.NONE, 0
    if isinstance(context, IncrementalContext):
        session_id = context.session.id
    elif isinstance(context, SessionErrorContext):
        error = context.error
    return {"throttle_time_ms": throttle_ms, "error_code": int(error), "session_id": session_id, "responses": [],
            "node_endpoints": []}


class _Fetcher(NamedTuple):
    """Where the fetch arrived and what KIP-392 knows of the fetcher."""

    node_id: int
    client_metadata: bool  # a consumer's fetch with rack_id (v11+): it may read from a follower
    rack: str
    rack_aware: bool  # replica.selector.class is the RackAwareReplicaSelector


def _replica_id(body: FetchRequest, version: int) -> int:
    state = body.get("replica_state") if version >= 15 else None
    return int(state["replica_id"]) if state else int(body.get("replica_id", -1))


def _rack_aware(broker: BrokerCore) -> bool:
    selector = broker.config.properties.get("replica.selector.class") or ""
    return selector.endswith("RackAwareReplicaSelector")


def _partitions_of(broker: BrokerCore, targets: list[_Target]) -> list[Partition]:
    """The targets' open partitions (a partition's log is its own for its lifetime)."""
    partitions = []
    for target in targets:
        partition = broker.partition(target.name, target.index)
        if partition is not None:
            partitions.append(partition)
    return partitions


def _versions(partitions: list[Partition]) -> list[tuple[Partition, int]]:
    """Each partition with its log's count of changes told: equal lists mean the same logs, unchanged."""
    return [(partition, partition.changes) for partition in partitions]


def _read_all(broker: BrokerCore, targets: list[_Target], max_bytes: int,
              read_committed: bool, where: _Fetcher) -> tuple[PartitionResults, int, bool]:
    """ReplicaManager.readFromLog: (results, bytes read, whether to answer now regardless of min_bytes)."""
    results: PartitionResults = []
    remaining = max_bytes
    # Past the broker's bound on answers not yet sent (kemu.broker.owed_answers), records held in memory (the
    # cache's, or short reads) get what is left of it, the first batch at least; a region of a segment file
    # holds no memory and is not bounded by it, as Kafka's sendfile answers are not.
    memory_left = broker.owed_answers.left()
    min_one_batch = True
    total = 0
    complete = False
    for target in targets:
        data = _read_partition(broker, target, remaining, min_one_batch, read_committed, where)
        records = data["records"]  # never None in what _read_partition answers
        if records is not None and not isinstance(records, FileRegion):
            if len(records) > memory_left:
                # Read again within the bound: the log reads the same (no Trio checkpoint in between). The
                # answer then goes at once, whatever min_bytes asks: waiting would not free the bound.
                data = _read_partition(broker, target, min(remaining, max(memory_left, 0)), min_one_batch,
                                       read_committed, where)
                records = data["records"]
                complete = True
            if records is not None and not isinstance(records, FileRegion):
                memory_left -= len(records)
        size = len(records) if records is not None else 0
        if size:
            # After the first partition with data, the limits hold strictly.
            min_one_batch = False
            total += size
            remaining = max(0, remaining - size)
        if data["error_code"] or "diverging_epoch" in data or data["preferred_read_replica"] >= 0:
            complete = True
        results.append((target.key, data))
    return results, total, complete


def _read_partition(broker: BrokerCore, target: _Target, limit: int, min_one_batch: bool,
                    read_committed: bool, where: _Fetcher) -> PartitionData:
    topic = broker.topics.get(target.name)
    partition: Partition | None = None
    if topic is not None and topic.topic_id == target.topic_id and target.index < len(topic.partitions):
        partition = topic.partitions[target.index]
    if partition is None or not partition.is_open:
        return _error_partition(target.index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    fetch = target.fetch
    is_leader = leads(where.node_id, partition)
    # ReplicaManager.readFromLog: only a consumer with client metadata may read from a follower.
    if not is_leader and not (where.client_metadata and where.node_id in partition.isr):
        return _moved(target.index, ErrorCode.NOT_LEADER_OR_FOLLOWER, partition)
    epoch_error = _check_leader_epoch(partition, fetch.current_leader_epoch)
    if epoch_error is ErrorCode.FENCED_LEADER_EPOCH:
        return _moved(target.index, epoch_error, partition)
    if epoch_error is not ErrorCode.NONE:
        # UNKNOWN_LEADER_EPOCH: the fetcher knows a newer leader than this one; KafkaApis names no leader.
        return _error_partition(target.index, epoch_error)
    if is_leader and where.client_metadata and where.rack_aware:
        preferred = _preferred_read_replica(broker, partition, where.rack)
        if preferred != partition.leader_id:
            # The consumer is told where to read from and gets no records here (KIP-392).
            return {"partition_index": target.index, "error_code": 0, "high_watermark": partition.high_watermark,
                    "last_stable_offset": partition.last_stable_offset,
                    "log_start_offset": partition.log_start_offset,
                    "aborted_transactions": None, "preferred_read_replica": preferred, "records": b""}
    try:
        if fetch.last_fetched_epoch != NO_EPOCH:
            diverging = _diverging_epoch(partition, fetch)
            if diverging is not None:
                return {"partition_index": target.index, "error_code": 0,
                        "high_watermark": partition.high_watermark,
                        "last_stable_offset": partition.last_stable_offset,
                        "log_start_offset": partition.log_start_offset,
                        "diverging_epoch": diverging, "aborted_transactions": None,
                        "preferred_read_replica": -1, "records": b""}
        isolation = FetchIsolation.TXN_COMMITTED if read_committed else FetchIsolation.HIGH_WATERMARK
        max_bytes = min(fetch.partition_max_bytes, limit)
        data = partition.read(fetch.fetch_offset, max_bytes, isolation=isolation, min_one_batch=min_one_batch)
    except LogClosedError:
        return _error_partition(target.index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    except StorageError:
        return _error_partition(target.index, ErrorCode.KAFKA_STORAGE_ERROR)
    except OffsetOutOfRangeError:
        return _error_partition(target.index, ErrorCode.OFFSET_OUT_OF_RANGE)
    except ValueError:  # a negative partition_max_bytes: Kafka's read throws, the partition fails
        return _error_partition(target.index, ErrorCode.UNKNOWN_SERVER_ERROR)
    records = data.records
    aborted: list[FetchResponseResponsesPartitionsAbortedTransactions] | None = None
    if records and _first_batch_incomplete(records):
        # ReplicaManager.readFromLog: a first batch cut short is replaced by no records (the consumer asks
        # again with more room), and with it goes the aborted list.
        records = b""
    elif read_committed and (records or (max_bytes == 0 and fetch.fetch_offset < data.last_stable_offset)):
        # LocalLog.addAbortedTransactions: every aborted transaction below the offset index's first entry past
        # the bytes read (a read of no bytes at all included), not just below the batches returned.
        upper = partition.fetch_upper_bound(fetch.fetch_offset, len(records))
        aborted = [{"producer_id": txn.producer_id, "first_offset": txn.first_offset}
                   for txn in partition.aborted_transactions(fetch.fetch_offset, upper)]
    elif read_committed and fetch.fetch_offset >= data.last_stable_offset:
        aborted = []  # LocalLog.read's empty answer at (or past) the stable offset
    return {"partition_index": target.index, "error_code": 0, "high_watermark": data.high_watermark,
            "last_stable_offset": data.last_stable_offset, "log_start_offset": data.log_start_offset,
            "aborted_transactions": aborted, "preferred_read_replica": -1, "records": records}


def _preferred_read_replica(broker: BrokerCore, partition: Partition, rack: str) -> int:
    """RackAwareReplicaSelector: the leader when it is in the client's rack (or the client names none), else
    an in-sync replica in that rack (all are caught up: one log), else the leader."""
    if not rack:
        return partition.leader_id
    leader = broker.broker_node(partition.leader_id)
    if leader is not None and leader.rack == rack:
        return partition.leader_id
    for replica in partition.isr:
        node = broker.broker_node(replica)
        if node is not None and node.rack == rack:
            return replica
    return partition.leader_id


def _moved(index: int, code: ErrorCode, partition: Partition) -> PartitionData:
    """NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH with the current leader (KIP-951, tagged from v12)."""
    data = _error_partition(index, code)
    data["current_leader"] = current_leader(partition)
    return data


def _check_leader_epoch(partition: Partition, requested: int) -> ErrorCode:
    """Partition.checkCurrentLeaderEpoch: -1 means the client does not know (or care)."""
    if requested == NO_EPOCH:
        return ErrorCode.NONE
    if partition.leader_epoch > requested:
        return ErrorCode.FENCED_LEADER_EPOCH
    if partition.leader_epoch < requested:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return ErrorCode.NONE


def _diverging_epoch(partition: Partition,
                     fetch: PartitionFetch) -> FetchResponseResponsesPartitionsDivergingEpoch | None:
    """Partition.readRecords with a last fetched epoch: where the fetcher's log diverges from ours."""
    epoch, end_offset = partition.end_offset_for_epoch(fetch.last_fetched_epoch)
    if epoch == NO_EPOCH or end_offset == -1:
        raise OffsetOutOfRangeError(
            f"Could not determine the end offset of the last fetched epoch {fetch.last_fetched_epoch}")
    if fetch.fetch_offset < partition.log_start_offset:
        raise OffsetOutOfRangeError(f"Received request for offset {fetch.fetch_offset} below the log start")
    if epoch < fetch.last_fetched_epoch or end_offset < fetch.fetch_offset:
        return {"epoch": epoch, "end_offset": end_offset}
    return None


def _first_batch_incomplete(records: Records) -> bool:
    """Whether the bytes read end before the first batch does (Kafka's firstEntryIncomplete)."""
    if len(records) < _BATCH_START.size:
        return True
    start = records.read(_BATCH_START.size) if isinstance(records, FileRegion) else records
    _, length = _BATCH_START.unpack_from(start, 0)
    return bool(len(records) < length + _BATCH_START.size)


def _error_partition(index: int, code: ErrorCode) -> PartitionData:
    """FetchResponse.partitionResponse: the error, unknown offsets, no records."""
    return {"partition_index": index, "error_code": int(code), "high_watermark": -1, "last_stable_offset": -1,
            "log_start_offset": -1, "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}


def _refused_partition(index: int, code: ErrorCode) -> PartitionData:
    """A partition KafkaApis refuses before reading (unknown, unauthorized): FetchResponse.partitionResponse
    leaves aborted_transactions at the message's default, an empty list; the errors of a read (out of range,
    not the leader) come through LogReadResult, whose absent aborted list is null."""
    data = _error_partition(index, code)
    data["aborted_transactions"] = []
    return data


def _group_by_topic(partitions: PartitionResults) -> list[FetchResponseResponses]:
    """FetchResponse.toMessage: consecutive partitions of one topic share an entry; order is kept. A topic is
    named as the request names it: by id from v13 (the keys are then ids), else by name."""
    topics: list[FetchResponseResponses] = []
    last_key: TopicKey | None = None
    last: list[PartitionData] = []
    for (topic_key, _), data in partitions:
        if topics and last_key == topic_key:
            last.append(data)
        else:
            last_key, last = topic_key, [data]
            topics.append({"topic_id": topic_key, "partitions": last} if isinstance(topic_key, uuid.UUID)
                          else {"topic": topic_key, "partitions": last})
    return topics


# FetchRequest.getErrorResponse: the top-level error, and before v13 the same error on every requested
# partition, as FetchResponse.partitionResponse fills one: -1 high watermark, no records, and the other fields at
# the message's defaults (aborted_transactions an empty list, as _refused_partition).
error_response = error_responder(KEY, responses=each("topics", versions="0-12", topic="topic", partitions=each(
    "partitions", partition_index="partition", high_watermark=Fixed(-1), records=Fixed(b""))))
