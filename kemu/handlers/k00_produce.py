"""Produce (key 0), versions 3-11 (Kafka 4 dropped 0-2, the pre-record-batch formats).

v3 transactional_id and record batches (magic 2 only, one batch per partition); v5 log_start_offset in
the response; v7 zstd allowed (before it UNSUPPORTED_COMPRESSION_TYPE); v8 record_errors and error_message
(KIP-467); v9 flexible; v10 current_leader / node_endpoints, sent only with NOT_LEADER_OR_FOLLOWER, which a
single broker never answers; v11 may answer TRANSACTION_ABORTABLE.

As KafkaApis.handleProduceRequest and ReplicaManager.appendRecords do it: transactional batches without
a transactional_id fail the whole request (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); per partition, an
unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION (Produce never creates topics), then
`ProduceRequest.validateRecords`, then acks other than -1, 0, 1 (INVALID_REQUIRED_ACKS), internal topics
(INVALID_TOPIC_EXCEPTION unless the client id is `__admin_client`), acks=-1 with an ISR smaller than
`min.insync.replicas` (NOT_ENOUGH_REPLICAS), and the append itself: log validation (CORRUPT_MESSAGE,
MESSAGE_TOO_LARGE, INVALID_RECORD / INVALID_TIMESTAMP with record errors...) and producer state (retried
duplicates answered with their first offsets, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH,
INVALID_TXN_STATE...). A transactional batch that would open a transaction on a partition is first
verified with the transaction coordinator (KIP-890, `transaction.partition.verification.enable`): a
partition not added to the transaction is INVALID_TXN_STATE ("Partition was not added to the
transaction"), or TRANSACTION_ABORTABLE from v11; transactional batches of more than one producer in one
request fail it with INVALID_PRODUCER_ID_MAPPING. With one replica, acks=-1 completes as acks=1. acks=0 gets no response — and, as in
Kafka, any error closes the connection instead. `timeout_ms` is moot. Appends wake long-polling fetches
through the log's listeners.
"""

from __future__ import annotations

from typing import Any

from kemu.broker.errors import ApiError
from kemu.broker.topic_names import is_internal
from kemu.handlers.context import RequestContext
from kemu.log import LogError
from kemu.txn.partition import TxnVerifier
from kemu.txn.producer_state import ProducerStateError
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode
from kemu.wire.records import (
    ATTRIBUTES_OFFSET,
    MAGIC_OFFSET,
    MAGIC_V2,
    TRANSACTIONAL_MASK,
    BatchHeader,
    RecordsError,
    batch_slices,
    check_produce_records,
)

KEY = 0
VERSIONS = (3, 11)

VALID_ACKS = frozenset({-1, 0, 1})
ADMIN_CLIENT_ID = "__admin_client"  # Kafka's AdminUtils.ADMIN_CLIENT_ID: may write internal topics
# Errors ReplicaManager answers without a log start offset (LogAppendInfo.UNKNOWN_LOG_APPEND_INFO); the
# others carry the partition's log start offset.
_WITHOUT_LOG_START = frozenset({
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.MESSAGE_TOO_LARGE,
    ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.CORRUPT_MESSAGE, ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.UNKNOWN_TOPIC_ID,
})


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any] | None:
    _broker, body = ctx.broker, request.body
    acks: int = body["acks"]
    # A map, as Kafka's: a partition named twice keeps its first place and its last records.
    entries: dict[tuple[str, int], Any] = {}
    for topic in body["topic_data"]:
        for partition in topic["partition_data"]:
            entries[(topic["name"], partition["index"])] = partition["records"]
    if body["transactional_id"] is None and _has_transactional_records(entries.values()):
        raise ApiError(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    verify = _verifier(ctx, body["transactional_id"], request.version, entries.values())

    internal_allowed = ctx.client_id == ADMIN_CLIENT_ID
    failed = False
    responses: dict[str, list[dict[str, Any]]] = {}
    for (name, index), records in entries.items():
        result = _produce_partition(ctx, request.version, name, index, records, acks, internal_allowed, verify)
        failed = failed or result["error_code"] != 0
        responses.setdefault(name, []).append(result)

    if acks == 0:
        if failed:
            # Kafka closes the connection so the producer, which reads no response, notices.
            raise ApiError(ErrorCode.UNKNOWN_SERVER_ERROR, "acks=0 produce failed")
        return None
    return {"responses": [{"name": name, "partition_responses": parts} for name, parts in responses.items()],
            "throttle_time_ms": 0}


def _has_transactional_records(all_records: Any) -> bool:
    """RequestUtils.hasTransactionalRecords: does any partition's first batch have the transactional bit?"""
    for records in all_records:
        if records is None:
            continue
        try:
            first = next(batch_slices(records), None)
        except RecordsError as exc:
            raise ApiError(exc.code, exc.message) from None
        if first is not None and first[MAGIC_OFFSET] == MAGIC_V2 and first[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_MASK:
            return True
    return False


class _NotVerified(Exception):
    """The transaction coordinator did not verify the partition (KIP-890)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        # ReplicaManager sends its own message only for the errors it translates.
        self.response_message = message if message != code.message else None


def _verifier(ctx: RequestContext, transactional_id: str | None, version: int,
              all_records: Any) -> TxnVerifier | None:
    """The coordinator's check for this request's transactional batches, which must all come from one
    producer (ReplicaManager.handleProduceAppend)."""
    producers = set()
    for records in all_records:
        if records is None:
            continue
        try:
            first = next(batch_slices(records), None)
        except RecordsError:
            continue
        if first is not None and first[MAGIC_OFFSET] == MAGIC_V2:
            header = BatchHeader.parse(first)
            if header.is_transactional and header.has_producer_id:
                producers.add((header.producer_id, header.producer_epoch))
    if len(producers) > 1:
        raise ApiError(ErrorCode.INVALID_PRODUCER_ID_MAPPING, "Transactional records contained more than one producer ID")
    if not producers:
        return None
    check = ctx.txn.produce_verifier(transactional_id, version)
    if check is None:
        return None
    verified = check

    def verify(topic: str, partition: int, producer_id: int, producer_epoch: int) -> None:
        try:
            verified(topic, partition, producer_id, producer_epoch)
        except ProducerStateError as exc:
            raise _NotVerified(exc.code, str(exc)) from None

    return verify


def _produce_partition(ctx: RequestContext, version: int, name: str, index: int, records: Any, acks: int,
                       internal_allowed: bool, verify: TxnVerifier | None) -> dict[str, Any]:
    topic = ctx.broker.topics.get(name)
    if topic is None or not 0 <= index < len(topic.partitions) or topic.partitions[index].log is None:
        return _failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    try:
        check_produce_records(version, records)
    except RecordsError as exc:
        return _failed(index, exc.code)
    if acks not in VALID_ACKS:
        return _failed(index, ErrorCode.INVALID_REQUIRED_ACKS)
    if is_internal(name) and not internal_allowed:
        return _failed(index, ErrorCode.INVALID_TOPIC_EXCEPTION)
    partition = topic.partitions[index]
    txn_log = partition.log
    assert txn_log is not None
    log = txn_log.log
    if acks == -1 and len(partition.isr) < log.config.min_insync_replicas:
        return _failed(index, ErrorCode.NOT_ENOUGH_REPLICAS, log_start_offset=log.log_start_offset)
    try:
        result = txn_log.append(records, verify=verify)
    except _NotVerified as exc:
        return _failed(index, exc.code, message=exc.response_message)
    except LogError as exc:
        log_start = -1 if exc.code in _WITHOUT_LOG_START else log.log_start_offset
        return _failed(index, exc.code, log_start_offset=log_start, message=exc.response_message,
                       record_errors=[{"batch_index": e.batch_index, "batch_index_error_message": e.message}
                                      for e in exc.record_errors])
    except ProducerStateError as exc:
        return _failed(index, exc.code, log_start_offset=log.log_start_offset)
    return {"index": index, "error_code": 0, "base_offset": result.base_offset,
            "log_append_time_ms": result.log_append_time, "log_start_offset": result.log_start_offset,
            "record_errors": [], "error_message": None}


def _failed(index: int, code: ErrorCode, *, log_start_offset: int = -1, message: str | None = None,
            record_errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"index": index, "error_code": int(code), "base_offset": -1, "log_append_time_ms": -1,
            "log_start_offset": log_start_offset, "record_errors": record_errors or [], "error_message": message}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any] | None:
    """ProduceRequest.getErrorResponse: nothing for acks=0 (the connection is closed instead), else the
    error on every partition, with the exception's message (Kafka's default one when it had none)."""
    if request.body["acks"] == 0:
        return None
    if message is None and code != ErrorCode.UNKNOWN_SERVER_ERROR:
        message = code.message
    responses: dict[str, dict[int, dict[str, Any]]] = {}
    for topic in request.body["topic_data"]:
        for partition in topic["partition_data"]:
            responses.setdefault(topic["name"], {})[partition["index"]] = _failed(
                partition["index"], code, message=message)
    return {"responses": [{"name": name, "partition_responses": list(parts.values())}
                          for name, parts in responses.items()],
            "throttle_time_ms": 0}
