"""DescribeTransactions (key 65), version 0 (KIP-664).

The coordinator's state of each transactional id: state name (Empty, Ongoing, PrepareCommit, ...), timeout,
start time of the current (or last) transaction (-1 before the first), producer id and epoch, and the
partitions in the transaction. An unknown id is TRANSACTIONAL_ID_NOT_FOUND, an empty one INVALID_REQUEST;
those entries carry nothing else, as Kafka's do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, each, error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k65_describe_transactions import (
        DescribeTransactionsRequest,
        DescribeTransactionsResponse,
        DescribeTransactionsResponseTransactionStates,
    )

KEY = 65


async def handle(ctx: RequestContext, request: Incoming[DescribeTransactionsRequest]) -> DescribeTransactionsResponse:
    service = ctx.txn
    states: list[DescribeTransactionsResponseTransactionStates] = []
    for transactional_id in request.body["transactional_ids"]:
        if not transactional_id:
            states.append(_error(transactional_id, ErrorCode.INVALID_REQUEST))
            continue
        if not authz.allowed(ctx, authz.DESCRIBE, authz.TRANSACTIONAL_ID, transactional_id):
            states.append(_error(transactional_id, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
            continue
        not_here = ctx.txn.coordinator_error(transactional_id, ctx.node_id)
        if not_here is not ErrorCode.NONE:
            states.append(_error(transactional_id, not_here))
            continue
        txn = service.describe(transactional_id)
        if txn is None:
            states.append(_error(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND))
            continue
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(txn.partitions):
            by_topic.setdefault(topic, []).append(partition)
        states.append({
            "error_code": 0, "transactional_id": transactional_id, "transaction_state": txn.state.kafka_name,
            "transaction_timeout_ms": txn.timeout_ms, "transaction_start_time_ms": txn.start_ms,
            "producer_id": txn.producer_id, "producer_epoch": txn.producer_epoch,
            "topics": [{"topic": topic, "partitions": partitions} for topic, partitions in by_topic.items()],
        })
    return {"transaction_states": states}


def _error(transactional_id: str, code: ErrorCode) -> DescribeTransactionsResponseTransactionStates:
    return {"error_code": code, "transactional_id": transactional_id, "transaction_state": "",
            "transaction_timeout_ms": 0, "transaction_start_time_ms": 0, "producer_id": 0, "producer_epoch": 0,
            "topics": []}


error_response = error_responder(KEY, transaction_states=each("transactional_ids", transactional_id=ITEM))
