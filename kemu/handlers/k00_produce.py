"""Produce (key 0), versions 3-13 (Kafka 4 dropped 0-2, the pre-record-batch formats, and closes the
connection on them, yet advertises v0 in ApiVersions: `versions.ADVERTISED_MIN`, KAFKA-18659).

v3 transactional_id and record batches (magic 2 only, one batch per partition); v5 log_start_offset in the
response; v7 zstd allowed (before it UNSUPPORTED_COMPRESSION_TYPE); v8 record_errors and error_message
(KIP-467); v9 flexible; v10 current_leader / node_endpoints, sent with NOT_LEADER_OR_FOLLOWER (KIP-951): a
partition sent to a node of the cluster that does not lead it; v11 may answer TRANSACTION_ABORTABLE; v12 is
v11 on the wire, sent by a transactions-version-2 client (KIP-890 part 2): the broker adds its partitions to
the transaction; v13 names topics by id both ways (KIP-516): an id no topic has is UNKNOWN_TOPIC_ID for its
partitions, before any other check (authorization included), and each partition of a known id is then handled
as by its name.

As KafkaApis.handleProduceRequest and ReplicaManager.appendRecords do it: transactional batches without a
transactional_id, or without WRITE on it, fail the whole request (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); per
partition, a topic without WRITE is TOPIC_AUTHORIZATION_FAILED, an unknown topic or partition
UNKNOWN_TOPIC_OR_PARTITION (Produce never creates topics), then `ProduceRequest.validateRecords`, then acks
other than -1, 0, 1 (INVALID_REQUIRED_ACKS), internal topics (INVALID_TOPIC_EXCEPTION unless the client id is
`__admin_client`), acks=-1 with an ISR smaller than `min.insync.replicas` or the replica count if smaller
(NOT_ENOUGH_REPLICAS), and the append itself: log validation (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE,
INVALID_RECORD / INVALID_TIMESTAMP with record errors...) and producer state (retried duplicates answered with
their first offsets, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE...). A
transactional batch that would open a transaction on a partition is first verified with the transaction
coordinator (KIP-890, `transaction.partition.verification.enable`): a partition not added to the transaction
is INVALID_TXN_STATE ("Partition was not added to the transaction"), or TRANSACTION_ABORTABLE from v11. From
v12 the coordinator adds the partition to the transaction instead, whatever the verification setting (a
stale epoch is INVALID_PRODUCER_EPOCH; CONCURRENT_TRANSACTIONS while the previous transaction completes is
tried again every `add.partitions.to.txn.retry.backoff.ms` until `add.partitions.to.txn.retry.backoff.max.ms`
(or `request.timeout.ms`, if less) has passed, as ReplicaManager does, and then answered as it is; kemu writes
due markers at once, so only held markers make a producer wait or see it), and a producer new to the partition
must start at sequence 0;
transactional batches of more than one producer in one request fail it with INVALID_PRODUCER_ID_MAPPING. The
followers are caught up the moment the leader appends (one log), so acks=-1 completes at once. acks=0 gets no
response — and, as in Kafka, any error closes the connection instead. `timeout_ms` is moot. Appends wake
long-polling fetches through the log's listeners."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

import trio

from kemu.broker.client_quotas import PRODUCER_BYTE_RATE, user_of
from kemu.broker.errors import ApiError
from kemu.broker.topic_names import is_internal
from kemu.handlers import _authorize as authz
from kemu.handlers._leadership import current_leader, leads, node_endpoints
from kemu.handlers._pacing import Pacer
from kemu.handlers.context import Continuation, RequestContext
from kemu.handlers.versions import NARROWED
from kemu.kafka_defaults import int_setting
from kemu.log import LogError
from kemu.log.producer_state import ProducerStateError
from kemu.txn.state import TV_2
from kemu.wire.buffers import Buffer
from kemu.wire.compression import CompressionType
from kemu.wire.errors import ErrorCode
from kemu.wire.records import (
    HEADER_SIZE,
    MAGIC_OFFSET,
    MAGIC_V2,
    BatchHeader,
    RecordsError,
    batch_slices,
    check_produce_records,
    whole_batch_header,
)

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k00_produce import (
        ProduceRequest,
        ProduceRequestTopicData,
        ProduceResponse,
        ProduceResponseResponses,
    )
    from kemu.wire.messages.k00_produce import (
        ProduceResponseResponsesPartitionResponses as PartitionResponse,
    )
    from kemu.wire.messages.k00_produce import (
        ProduceResponseResponsesPartitionResponsesRecordErrors as RecordError,
    )

KEY = 0
VERSIONS = NARROWED[KEY]

VALID_ACKS = frozenset({-1, 0, 1})
ZSTD_PRODUCE_VERSION = 7
TOPIC_ID_VERSION = 13  # topic ids instead of names, both ways (KIP-516)
FIRST_TV2_PRODUCE_VERSION = 12  # also in kemu.coordinators.txn_service, for verify_produce
_CODEC_IDS = frozenset(int(codec) for codec in CompressionType)
# A request this big appends its partitions with yields to the event loop between them (kemu.handlers._pacing):
# 50 MiB over 50 partitions held it for ~0.1 s of CRC checks and writes. Smaller ones never look at a clock.
PACED_BYTES = 1 << 20


class _Paused:
    """`_Partitions.produce` stopped between partitions: the pacer's budget is spent."""


PAUSED = _Paused()
ADMIN_CLIENT_ID = "__admin_client"  # Kafka's AdminUtils.ADMIN_CLIENT_ID: may write internal topics
# A topic as the request names it: by name, or from v13 by id.
TopicKey = str | uuid.UUID
# What _produce_partition is called with: kept for a partition retried while its transaction completes.
_Arguments = tuple[RequestContext, int, str, int, Buffer | None, BatchHeader | None, BatchHeader | None, int, bool,
                   str | None]
# Errors ReplicaManager answers without a log start offset (LogAppendInfo.UNKNOWN_LOG_APPEND_INFO); the
# others carry the partition's log start offset.
_WITHOUT_LOG_START = frozenset({
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.MESSAGE_TOO_LARGE,
    ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.CORRUPT_MESSAGE, ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.UNKNOWN_TOPIC_ID,
})


async def handle(ctx: RequestContext, request: Incoming[ProduceRequest],
                 ) -> ProduceResponse | Continuation[ProduceResponse] | None:
    body = request.body
    acks: int = body["acks"]
    transactional_id: str | None = body["transactional_id"]
    uses_ids = request.version >= TOPIC_ID_VERSION
    # A map, as Kafka's: a partition named twice keeps its first place and its last records. From v13 a topic
    # is keyed by its id, and `names` gives the name of each id the broker knows; before, each name with
    # partitions is its own.
    entries: dict[tuple[TopicKey, int], Buffer | None] = {}
    names: dict[TopicKey, str] = {}
    for topic in body["topic_data"]:
        if uses_ids:
            topic_key: TopicKey = _topic_key(ctx, topic, names)
        else:
            topic_key = name = topic["name"]
            if topic["partition_data"]:
                names[name] = name
        for partition in topic["partition_data"]:
            entries[(topic_key, partition["index"])] = partition["records"]
    # Each partition's first batch header, read once: the request-wide checks, KIP-890 and the append use it.
    # `wholes` holds the usual case, records that are exactly one whole v2 batch (whole_batch_header).
    firsts: dict[tuple[TopicKey, int], BatchHeader | None] = {}
    wholes: dict[tuple[TopicKey, int], BatchHeader] = {}
    for key, records in entries.items():
        whole = None if records is None else whole_batch_header(records)
        if whole is not None:
            wholes[key] = firsts[key] = whole
        else:
            firsts[key] = _first_header(records)
    transactional = [h for h in firsts.values() if h is not None and h.is_transactional]
    if transactional and (transactional_id is None
                          or not authz.allowed(ctx, authz.WRITE, authz.TRANSACTIONAL_ID, transactional_id)):
        raise ApiError(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    # ReplicaManager.handleProduceAppend: one request's transactional batches come from one producer.
    if len(transactional) > 1 and len({(h.producer_id, h.producer_epoch)
                                       for h in transactional if h.has_producer_id}) > 1:
        raise ApiError(ErrorCode.INVALID_PRODUCER_ID_MAPPING,
                       "Transactional records contained more than one producer ID")

    internal_allowed = ctx.client_id == ADMIN_CLIENT_ID
    writable = authz.allowed_names(ctx, authz.WRITE, authz.TOPIC, names.values())
    if request.version < ZSTD_PRODUCE_VERSION:
        _refuse_unknown_codec_ids(ctx, firsts, names, writable)
    responses: dict[TopicKey, list[PartitionResponse]] = {}
    pending = iter(entries.items())
    partitions = _Partitions(ctx, request.version, names, writable, firsts, wholes, acks, internal_allowed,
                             transactional_id, responses)
    pacer = Pacer() if ctx.request_size > PACED_BYTES else None
    blocked = partitions.produce(pending, pacer)
    if blocked is None:
        return _answer(ctx, request, acks, responses, partitions.failed)

    async def finish() -> ProduceResponse | None:
        retry_until = trio.current_time() + _add_retry_window_ms(ctx) / 1000
        waiting: tuple[TopicKey, _Arguments] | _Paused | None = blocked
        while waiting is not None:
            if isinstance(waiting, _Paused):
                assert pacer is not None
                await pacer.tick()
            else:
                topic_key, arguments = waiting
                result = await _retry_while_concurrent(ctx, partial(_produce_partition, *arguments), retry_until)
                partitions.record(topic_key, result)
            waiting = partitions.produce(pending, pacer)
        return _answer(ctx, request, acks, responses, partitions.failed)

    # Holding the connection's turn, as Kafka's muted channel does while it retries or yields: a producer's
    # later batches must not be appended before this one.
    return Continuation(finish, holds_turn=True)


def _answer(ctx: RequestContext, request: Incoming[ProduceRequest], acks: int,
            responses: dict[TopicKey, list[PartitionResponse]], failed: bool) -> ProduceResponse | None:
    # Only a refused partition names its current leader (NOT_LEADER_OR_FOLLOWER).
    moved = [r["current_leader"]["leader_id"] for parts in responses.values() for r in parts
             if "current_leader" in r] if failed else []
    throttling = ctx.broker.throttling
    if throttling is not None:
        # KafkaApis.handleProduceRequest: the request's bytes count against producer_byte_rate, whatever
        # became of them.
        ctx.throttle_ms = throttling.record(ctx.node_id, PRODUCER_BYTE_RATE, user_of(ctx.client.principal),
                                            ctx.client_id or "", ctx.request_size, ctx.clock.now_ms())
    if acks == 0:
        if failed:
            # Kafka closes the connection so the producer, which reads no response, notices.
            raise ApiError(ErrorCode.UNKNOWN_SERVER_ERROR, "acks=0 produce failed")
        return None
    return {"responses": [_topic_response(topic_key, parts) for topic_key, parts in responses.items()],
            "node_endpoints": node_endpoints(ctx.broker, moved), "throttle_time_ms": ctx.throttle_ms}


def _topic_response(topic_key: TopicKey, parts: list[PartitionResponse]) -> ProduceResponseResponses:
    """A topic's answer, named as the request named it: by id from v13 (the keys are then ids), else by name."""
    if isinstance(topic_key, uuid.UUID):
        return {"topic_id": topic_key, "partition_responses": parts}
    return {"name": topic_key, "partition_responses": parts}


def _topic_key(ctx: RequestContext, topic: ProduceRequestTopicData, names: dict[TopicKey, str]) -> uuid.UUID:
    """A v13 topic's id, its name noted in `names` when the broker has a topic of that id (Kafka's
    metadataCache.getTopicName)."""
    topic_id = topic["topic_id"]
    found = ctx.broker.topics.by_id(topic_id)
    if found is not None:
        names[topic_id] = found.name
    return topic_id


def _refuse_unknown_codec_ids(ctx: RequestContext, firsts: dict[tuple[TopicKey, int], BatchHeader | None],
                              names: dict[TopicKey, str], writable: set[str]) -> None:
    """Before v7, ProduceRequest.validateRecords asks a batch its codec (to refuse zstd), and for bits 0-2
    of 5-7 Java's CompressionType throws IllegalArgumentException: not an ApiException, so it fails the whole
    request with UNKNOWN_SERVER_ERROR, for a partition that is writable and exists (the ones it validates)."""
    for (topic_key, index), header in firsts.items():
        name = names[topic_key]  # before v7, the name itself
        if header is None or header.compression in _CODEC_IDS or name not in writable:
            continue
        topic = ctx.broker.topics.get(name)
        if topic is not None and 0 <= index < len(topic.partitions):
            raise ApiError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {header.compression}")


def _first_header(records: Buffer | None) -> BatchHeader | None:
    """The header of the partition's first batch when it is a whole v2 one (RequestUtils reads only the first
    batch for the transactional bit), for records that are not exactly one whole batch; a malformed size
    prefix fails the request, as Kafka's parse does."""
    if records is None:
        return None
    try:
        first = next(batch_slices(records), None)
    except RecordsError as exc:
        raise ApiError(exc.code, exc.message) from None
    if first is None or first[MAGIC_OFFSET] != MAGIC_V2 or len(first) < HEADER_SIZE:
        return None
    return BatchHeader.parse(first)


def _add_retry_window_ms(ctx: RequestContext) -> int:
    """ReplicaManager's retryTimeoutMs: add.partitions.to.txn.retry.backoff.max.ms, at most request.timeout.ms."""
    properties = ctx.broker.config.properties
    return min(int_setting(properties, "add.partitions.to.txn.retry.backoff.max.ms"),
               int_setting(properties, "request.timeout.ms"))


async def _retry_while_concurrent(ctx: RequestContext, attempt: partial[PartitionResponse],
                                  retry_until: float) -> PartitionResponse:
    """A TV2 Produce whose partition could not be added while the producer's previous transaction completes:
    tried again after each backoff until the window closes (the answer then is CONCURRENT_TRANSACTIONS), so
    the producer does not back off a whole retry.backoff.ms of its own for markers about to be written."""
    backoff_s = int_setting(ctx.broker.config.properties, "add.partitions.to.txn.retry.backoff.ms") / 1000
    while True:
        await trio.sleep(min(backoff_s, max(0.0, retry_until - trio.current_time())))
        result = attempt()
        if result["error_code"] != ErrorCode.CONCURRENT_TRANSACTIONS or trio.current_time() >= retry_until:
            return result


class _Partitions:
    """The request's partitions produced in order, up to one that must wait for its transaction to complete."""

    __slots__ = ("ctx", "version", "names", "writable", "firsts", "wholes", "acks", "internal_allowed",
                 "transactional_id", "responses", "failed")

    def __init__(self, ctx: RequestContext, version: int, names: dict[TopicKey, str], writable: set[str],
                 firsts: dict[tuple[TopicKey, int], BatchHeader | None],
                 wholes: dict[tuple[TopicKey, int], BatchHeader], acks: int, internal_allowed: bool,
                 transactional_id: str | None, responses: dict[TopicKey, list[PartitionResponse]]) -> None:
        self.ctx, self.version, self.names, self.writable = ctx, version, names, writable
        self.firsts, self.wholes, self.acks, self.internal_allowed = firsts, wholes, acks, internal_allowed
        self.transactional_id, self.responses, self.failed = transactional_id, responses, False

    def produce(self, pending: Iterator[tuple[tuple[TopicKey, int], Buffer | None]],
                pacer: Pacer | None = None) -> tuple[TopicKey, _Arguments] | _Paused | None:
        """Produce to `pending`'s partitions until one answers CONCURRENT_TRANSACTIONS from v12 (ReplicaManager
        then retries): that one's topic key and arguments, its answer not yet recorded; None when all are done;
        PAUSED after a partition once `pacer` is due."""
        for (topic_key, index), records in pending:
            name = self.names.get(topic_key)
            if name is None:  # v13: an id no topic has
                result = _failed(index, ErrorCode.UNKNOWN_TOPIC_ID)
            elif name in self.writable:
                arguments: _Arguments = (self.ctx, self.version, name, index, records, self.firsts[(topic_key, index)],
                             self.wholes.get((topic_key, index)), self.acks, self.internal_allowed,
                             self.transactional_id)
                result = _produce_partition(*arguments)
                if result["error_code"] == ErrorCode.CONCURRENT_TRANSACTIONS \
                        and self.version >= FIRST_TV2_PRODUCE_VERSION:
                    return topic_key, arguments
            else:
                result = _failed(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            self.record(topic_key, result)
            if pacer is not None and pacer.due():
                return PAUSED
        return None

    def record(self, topic_key: TopicKey, result: PartitionResponse) -> None:
        self.failed = self.failed or result["error_code"] != 0
        self.responses.setdefault(topic_key, []).append(result)


def _produce_partition(ctx: RequestContext, version: int, name: str, index: int, records: Buffer | None,
                       first: BatchHeader | None, whole: BatchHeader | None, acks: int, internal_allowed: bool,
                       transactional_id: str | None) -> PartitionResponse:
    partition = ctx.broker.partition(name, index)
    if partition is None:
        return _failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if not leads(ctx.node_id, partition):
        refused = _failed(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        refused["current_leader"] = current_leader(partition)
        return refused
    try:
        check_produce_records(version, records, whole)
    except RecordsError as exc:
        return _failed(index, exc.code)
    assert records is not None  # check_produce_records refuses none (INVALID_RECORD)
    if acks not in VALID_ACKS:
        return _failed(index, ErrorCode.INVALID_REQUIRED_ACKS)
    if is_internal(name) and not internal_allowed:
        return _failed(index, ErrorCode.INVALID_TOPIC_EXCEPTION)
    if acks == -1 and len(partition.isr) < partition.effective_min_isr:
        return _failed(index, ErrorCode.NOT_ENOUGH_REPLICAS, log_start_offset=partition.log_start_offset)
    transaction_version = 0
    if transactional_id and first is not None and partition.needs_verification(first):
        # KIP-890: a batch that would open a transaction here is first checked with the coordinator (from
        # v12, added by it), once.
        code, message = ctx.txn.verify_produce(transactional_id, version, name, index, first.producer_id,
                                               first.producer_epoch)
        if code is not ErrorCode.NONE:
            return _failed(index, code, message=message)
        if version >= FIRST_TV2_PRODUCE_VERSION:
            transaction_version = TV_2
    try:
        result = partition.append(records, whole=whole, transaction_version=transaction_version)
    except LogError as exc:
        log_start = -1 if exc.code in _WITHOUT_LOG_START else partition.log_start_offset
        return _failed(index, exc.code, log_start_offset=log_start, message=exc.response_message,
                       record_errors=[{"batch_index": e.batch_index, "batch_index_error_message": e.message}
                                      for e in exc.record_errors])
    except ProducerStateError as exc:
        return _failed(index, exc.code, log_start_offset=partition.log_start_offset)
    return {"index": index, "error_code": 0, "base_offset": result.base_offset,
            "log_append_time_ms": result.log_append_time, "log_start_offset": result.log_start_offset,
            "record_errors": [], "error_message": None}


def _failed(index: int, code: ErrorCode, *, log_start_offset: int = -1, message: str | None = None,
            record_errors: list[RecordError] | None = None) -> PartitionResponse:
    return {"index": index, "error_code": int(code), "base_offset": -1, "log_append_time_ms": -1,
            "log_start_offset": log_start_offset, "record_errors": record_errors or [], "error_message": message}


def error_response(request: Incoming[ProduceRequest], code: ErrorCode, message: str | None) -> ProduceResponse | None:
    """ProduceRequest.getErrorResponse: nothing for acks=0 (the connection is closed instead), else the
    error on every partition, with the exception's message — none when it was the error's default one, or
    the error is UNKNOWN_SERVER_ERROR (ApiError.fromThrowable), so an ApiError without a message of its own
    answers null."""
    if request.body["acks"] == 0:
        return None
    if message == code.message or code == ErrorCode.UNKNOWN_SERVER_ERROR:
        message = None
    uses_ids = request.version >= TOPIC_ID_VERSION
    responses: dict[TopicKey, dict[int, PartitionResponse]] = {}
    for topic in request.body["topic_data"]:
        topic_key: TopicKey = topic["topic_id"] if uses_ids else topic["name"]
        for partition in topic["partition_data"]:
            responses.setdefault(topic_key, {})[partition["index"]] = _failed(
                partition["index"], code, message=message)
    return {"responses": [_topic_response(topic_key, list(parts.values())) for topic_key, parts in responses.items()]}
