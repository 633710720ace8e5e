"""InitProducerId (key 22), versions 0-5.

v1 is v0; v2 is flexible; v3 adds the producer id and epoch a producer sends to bump its epoch after an
error (KIP-360: a retry of a bump whose answer was lost gets the current epoch back; another producer's
epoch is PRODUCER_FENCED); v4 may answer PRODUCER_FENCED, which v0-3 get as INVALID_PRODUCER_EPOCH, as
Kafka answers them; v5 may answer TRANSACTION_ABORTABLE (never needed here).

A null transactional id is an idempotent producer: a fresh producer id at epoch 0, whatever it sends. With
one, the transaction coordinator keeps the id's producer id and bumps its epoch, fencing older producers;
an ongoing transaction of theirs is aborted first and the caller told CONCURRENT_TRANSACTIONS to retry
(so the epoch it finally gets is bumped twice, as in Kafka); a transaction still completing is
CONCURRENT_TRANSACTIONS; a timeout above `transaction.max.timeout.ms` (or not positive) is
INVALID_TRANSACTION_TIMEOUT; an empty id INVALID_REQUEST. Only one of producer id / epoch set refuses the
request with INVALID_REQUEST. This broker coordinates every transactional id and loads them before it
listens, so NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS never occur.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.broker.errors import ApiError
from kemu.handlers import _authorize as authz
from kemu.handlers._shared import fenced_for_version
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import Fixed, error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k22_init_producer_id import InitProducerIdRequest, InitProducerIdResponse

KEY = 22
FIRST_FENCED_VERSION = 4
_NO_PRODUCER = (-1, -1)


async def handle(ctx: RequestContext, request: Incoming[InitProducerIdRequest]) -> InitProducerIdResponse:
    body = request.body
    producer_id, producer_epoch = body["producer_id"], body["producer_epoch"]
    authz.require_producer_id(ctx, body["transactional_id"])
    if (producer_id == -1) != (producer_epoch == -1):
        raise ApiError(ErrorCode.INVALID_REQUEST)
    transactional_id = body["transactional_id"]
    if transactional_id is not None:
        error = ctx.txn.coordinator_error(transactional_id, ctx.node_id)
        if error is not ErrorCode.NONE:
            return {"error_code": error, "producer_id": -1, "producer_epoch": -1}
    result = ctx.txn.init_producer_id(body["transactional_id"], body["transaction_timeout_ms"],
                                                         producer_id, producer_epoch)
    return {"error_code": fenced_for_version(result.error, request.version, FIRST_FENCED_VERSION),
            "producer_id": result.producer_id, "producer_epoch": result.producer_epoch}


# Kafka's InitProducerIdRequest.getErrorResponse: no producer id (the schema's default) and no epoch (not it).
error_response = error_responder(KEY, producer_epoch=Fixed(-1))
