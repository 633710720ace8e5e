"""AddPartitionsToTxn (key 24), versions 0-5.

v0-3 are the client's form: one transaction, answered per partition. Every partition must exist — if one
does not, it gets UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED, and nothing is added;
otherwise the coordinator's answer (PRODUCER_FENCED / INVALID_PRODUCER_ID_MAPPING / CONCURRENT_TRANSACTIONS
while the previous transaction is completing...) goes to every partition. v2 may answer PRODUCER_FENCED,
which v0-1 get as INVALID_PRODUCER_EPOCH. v3 is flexible.

v4+ is the broker's batched form (KIP-890 part 1): several transactions, each answered on its own, and with
`verify_only` only a check that the partitions are in the open transaction: NONE or TRANSACTION_ABORTABLE
per partition, or one error for all of them (PRODUCER_FENCED, INVALID_PRODUCER_ID_MAPPING,
CONCURRENT_TRANSACTIONS while completing) — the coordinator's answer, passed on as KafkaApis passes it.
v5 only adds TRANSACTION_ABORTABLE to what may be answered. Without an authorizer the CLUSTER_ACTION check of
v4+ always passes, so the top-level error is NONE. A v4+ add (verify_only false) is how Kafka's brokers add a
transactions-version-2 client's partitions for its Produce v12+ and TxnOffsetCommit v5+: the coordinator
takes it as transaction version 2 (TransactionVersion.transactionVersionForAddPartitionsToTxn), as kemu's
own broker does for those requests without the round trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import fenced_for_version
from kemu.handlers.context import RequestContext
from kemu.txn.state import TV_0, TV_2, TopicPartition
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k24_add_partitions_to_txn import (
        AddPartitionsToTxnRequest,
        AddPartitionsToTxnRequestTransactionsTopics,
        AddPartitionsToTxnResponse,
        AddPartitionsToTxnResponseResultsByTopicV3AndBelow,
        AddPartitionsToTxnResponseResultsByTopicV3AndBelowResultsByPartition,
        AddPartitionsToTxnResponseResultsByTransaction,
    )

KEY = 24
FIRST_FENCED_VERSION = 2
FIRST_BATCHED_VERSION = 4


async def handle(ctx: RequestContext, request: Incoming[AddPartitionsToTxnRequest]) -> AddPartitionsToTxnResponse:
    body, version = request.body, request.version
    if version < FIRST_BATCHED_VERSION:
        authz.require(ctx, authz.WRITE, authz.TRANSACTIONAL_ID, body["v3_and_below_transactional_id"])
        result = _one(ctx, version, body["v3_and_below_transactional_id"], body["v3_and_below_producer_id"],
                      body["v3_and_below_producer_epoch"], False, body["v3_and_below_topics"])
        return {"results_by_topic_v3_and_below": result}
    authz.require_cluster(ctx, authz.CLUSTER_ACTION)  # v4+ is the brokers' own verification
    results: list[AddPartitionsToTxnResponseResultsByTransaction] = [{"transactional_id": txn["transactional_id"],
                "topic_results": _one(ctx, version, txn["transactional_id"], txn["producer_id"],
                                      txn["producer_epoch"], txn["verify_only"], txn["topics"])}
               for txn in body["transactions"]]
    return {"error_code": 0, "results_by_transaction": results}


def _one(ctx: RequestContext, version: int, transactional_id: str, producer_id: int, producer_epoch: int,
         verify_only: bool, topics: Sequence[AddPartitionsToTxnRequestTransactionsTopics],
         ) -> list[AddPartitionsToTxnResponseResultsByTopicV3AndBelow]:
    # The two versions' topic structs have the same fields, in the request and in the response.
    partitions = _partitions(topics)
    writable = authz.allowed_names(ctx, authz.WRITE, authz.TOPIC, (topic for topic, _ in partitions))
    missing = {tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED if tp[0] not in writable else
               ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for tp in partitions
               if tp[0] not in writable or ctx.broker.partition(*tp) is None}
    service = ctx.txn
    not_here: ErrorCode = ctx.txn.coordinator_error(transactional_id, ctx.node_id)
    errors: dict[TopicPartition, ErrorCode]
    if missing:
        errors = {tp: missing.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED) for tp in partitions}
    elif not_here is not ErrorCode.NONE:
        errors = {tp: not_here for tp in partitions}
    elif verify_only:
        errors = service.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
    else:
        error = service.add_partitions(transactional_id, producer_id, producer_epoch, partitions,
                                       client_version=TV_2 if version >= FIRST_BATCHED_VERSION else TV_0)
        error = fenced_for_version(error, version, FIRST_FENCED_VERSION)
        errors = {tp: error for tp in partitions}
    return topic_results(errors)


def _partitions(topics: Sequence[AddPartitionsToTxnRequestTransactionsTopics]) -> list[TopicPartition]:
    # A set, as Kafka's request keeps them: a partition named twice is one partition.
    return list(dict.fromkeys((topic["name"], index) for topic in topics for index in topic["partitions"]))


def topic_results(errors: dict[TopicPartition, ErrorCode]) -> list[AddPartitionsToTxnResponseResultsByTopicV3AndBelow]:
    by_topic: dict[str, list[AddPartitionsToTxnResponseResultsByTopicV3AndBelowResultsByPartition]] = {}
    for (topic, index), error in errors.items():
        by_topic.setdefault(topic, []).append({"partition_index": index, "partition_error_code": error})
    return [{"name": name, "results_by_partition": results} for name, results in by_topic.items()]


def error_response(request: Incoming[Any], code: ErrorCode, message: str | None) -> AddPartitionsToTxnResponse:
    """Kafka's AddPartitionsToTxnRequest.getErrorResponse: the error on every partition (v0-3), or at the
    top with no transaction results (v4+)."""
    if request.version >= FIRST_BATCHED_VERSION:
        return {"error_code": code, "results_by_transaction": []}
    return {"results_by_topic_v3_and_below": topic_results(
        {tp: code for tp in _partitions(request.body["v3_and_below_topics"])})}
